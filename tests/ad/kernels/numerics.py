"""Reference numerics for the corpus tests: finite differences and tolerance-aware comparisons.

Kept next to the kernels because every test module of the corpus (and the hypothesis tests) compares against
the same references with the same tolerances.
"""
import inspect

import numpy as np

# Central differences with one Richardson step: truncation error O(h^4), rounding ~ eps |f| / h.
FD_STEP = 1e-4


def active_positions(fn, wrt):
    """Positions of the active arguments (in ``wrt`` order) among the kernel's parameters."""
    names = list(inspect.signature(fn).parameters)
    return [names.index(name) for name in wrt]


def _central(f, args, pos, j, h):
    plus = [a.copy() if k == pos else a for k, a in enumerate(args)]
    minus = [a.copy() if k == pos else a for k, a in enumerate(args)]
    plus[pos][j] += h
    minus[pos][j] -= h
    return (f(*plus) - f(*minus)) / (2.0 * h)


def finite_difference_gradient(f, args, positions):
    """Richardson-extrapolated central differences of ``f(*args)`` for each active argument.

    Returns ``(grads, steps)``: one float64 array per active argument, and the step used per component (the
    rounding noise of a component scales with ``|f| * eps / step``).
    """
    grads, steps = [], []
    for pos in positions:
        x = np.asarray(args[pos], dtype=np.float64)
        g, hs = np.empty_like(x), np.empty_like(x)
        for j in range(x.shape[0]):
            h = FD_STEP * max(abs(x[j]), 0.1)
            d1 = _central(f, args, pos, j, h)
            d2 = _central(f, args, pos, j, 0.5 * h)
            g[j] = (4.0 * d2 - d1) / 3.0
            hs[j] = h
        grads.append(g)
        steps.append(hs)
    return grads, steps


def fd_mismatch(ad_grads, fd_grads, steps, value, rel=1e-6):
    """Components where the AD gradient and the finite differences disagree, as readable strings.

    Tolerance per component: ``rel`` relative to the component (floored at 1e-3 of the largest component, so
    a component that is ~0 is not judged on relative error alone), plus the finite differences' own rounding
    noise ``~ 1e-12 |f| / step``.
    """
    largest = max(float(np.max(np.abs(g))) if g.size else 0.0 for g in fd_grads)
    problems = []
    for k, (ga, gf, hs) in enumerate(zip(ad_grads, fd_grads, steps)):
        for j in range(gf.shape[0]):
            tol = rel * max(abs(gf[j]), 1e-3 * largest) + 1e-12 * (1.0 + abs(value)) / hs[j]
            if not abs(ga[j] - gf[j]) <= tol:
                problems.append(f"arg {k} [{j}]: ad {ga[j]!r} vs fd {gf[j]!r} (|diff| {abs(ga[j] - gf[j]):.3g}"
                                f" > tol {tol:.3g})")
    return problems


def scale_of(value, grads):
    """A magnitude for absolute tolerances: the largest of 1, |value| and the gradient components."""
    return max([1.0, abs(float(value))] + [float(np.max(np.abs(g))) for g in grads if np.size(g)])


def close_mismatch(got, want, rtol, atol):
    """Indices/values where ``got`` and ``want`` differ by more than ``rtol |want| + atol``."""
    got, want = np.atleast_1d(np.asarray(got, np.float64)), np.atleast_1d(np.asarray(want, np.float64))
    bad = ~(np.abs(got - want) <= rtol * np.abs(want) + atol)
    return [f"[{j}] {got[j]!r} vs {want[j]!r}" for j in np.flatnonzero(bad)]


def to_dtype(args, dtype):
    """Cast float arrays and float scalars to ``dtype``; integers (scalars and arrays) stay integers."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating):
            out.append(np.ascontiguousarray(a, dtype=dtype))
        elif isinstance(a, (float, np.floating)):
            out.append(np.dtype(dtype).type(a))
        else:
            out.append(a)
    return tuple(out)


def smooth_at(f, args, positions):
    """False where ``f`` is not smooth within a finite-difference step of the point (in any direction).

    Two signatures of smoothness, both at rounding-level tolerance: the second difference
    ``f(x+h) - 2 f(x) + f(x-h)`` shrinks 4x when h halves (only 2x at a kink, not at all at a jump), and the
    error of central differences shrinks 4x too (only 2x where f is C1 but not C2, e.g. ``t * abs(t)`` at 0,
    which the symmetric second difference cannot see).
    """
    f0 = f(*args)
    noise = 1e-13 * (1.0 + abs(f0))  # a few hundred ulps of f: rounding, not structure

    def at(pos, j, delta):
        moved = [a.copy() if k == pos else a for k, a in enumerate(args)]
        moved[pos][j] += delta
        return f(*moved)

    def shrinks_fourfold(big, small, floor):
        return abs(big) <= floor or abs(big - 4.0 * small) <= 0.5 * abs(big) + floor

    for pos in positions:
        x = np.asarray(args[pos], dtype=np.float64)
        for j in range(x.shape[0]):
            h = 4.0 * FD_STEP * max(abs(x[j]), 0.1)
            steps = (h, 0.5 * h, 0.25 * h)
            plus = [at(pos, j, s) for s in steps]
            minus = [at(pos, j, -s) for s in steps]
            second = [p - 2.0 * f0 + m for p, m in zip(plus, minus)]
            central = [(p - m) / (2.0 * s) for p, m, s in zip(plus, minus, steps)]
            if not shrinks_fourfold(second[0], second[1], noise):
                return False
            if not shrinks_fourfold(central[0] - central[1], central[1] - central[2], 4.0 * noise / steps[2]):
                return False
    return True
