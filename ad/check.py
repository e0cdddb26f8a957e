"""Gradient cross-checks: the AD gradient against central finite differences and an analytic gradient.

``check_gradient`` is what a user runs before trusting a kernel's gradient, and what ``likelihoods`` runs per
sample point. Everything is evaluated in float64 with the pure-Python kernel and the pure-Python generated
derivative, so the comparison is about the mathematics, not the compiler.

Error metric (one number per parameter, for AD vs finite differences and AD vs analytic alike)::

    rel_err_i = |a_i - b_i| / max(|a_i|, |b_i|, atol_scale_i)

A component much larger than ``atol_scale_i`` is compared relatively; a component near zero is compared
absolutely, ``|a_i - b_i| <= rtol * atol_scale_i``. The default ``atol_scale_i`` is 1e-3 of the largest gradient
component, raised where needed to ``noise_i / rtol`` with ``noise_i = 16 eps (1 + |f|) / h_i``, the size the
rounding error of the extrapolated difference quotient can reach. A gradient component that is truly zero thus
passes when finite differences give rounding noise, while a wrong component larger than that noise fails.

Step: adaptive per component by default (``_ridders``: a ladder of halving steps, extrapolated, the estimate
whose neighbours agree best wins), so a kernel whose gradient varies fast in one parameter (a period over a
long baseline) and slowly in another is differenced well in both; ``step=`` fixes one relative step instead.
"""
import inspect
import math
from dataclasses import dataclass

import numpy as np

from .derivative import differentiate

_EPS = np.finfo(np.float64).eps
_LADDER_START = 0.1      # relative size of the largest step Ridders' ladder tries
_LADDER_LEVELS = 18      # halvings: the smallest step is 0.1 / 2^17 ~ 8e-7 of |x|
_TABLEAU_COLUMNS = 6     # extrapolation orders h^2 .. h^10
_SAFE = 2.0              # stop once the newest order is this much worse than the best estimate ...
_CONVERGED = 1e-6        # ... and the best estimate's error is below this fraction of it
_ZERO_SCALE_FRACTION = 1e-3
_NOISE_FACTOR = 16.0


@dataclass(frozen=True, eq=False)
class GradientCheck:
    """Result of ``check_gradient``. Arrays are per parameter, concatenated over the active arguments.

    names: parameter labels (``theta[0]``... or the names given). ad / fd / analytic: the AD gradient, the
    finite-difference gradient and the analytic one (None when not given). rel_err_fd / rel_err_analytic: the
    metric of the module docstring for AD vs each. value / ad_value: the kernel's value and the value returned by
    the derivative, value_rel_err their relative difference. rtol: the tolerance ``ok`` used.
    """

    names: tuple
    ad: np.ndarray
    fd: np.ndarray
    analytic: object
    rel_err_fd: np.ndarray
    rel_err_analytic: object
    atol_scale: np.ndarray
    value: float
    ad_value: float
    value_rel_err: float
    rtol: float

    @property
    def max_rel_err(self):
        errs = [self.rel_err_fd.max(initial=0.0), self.value_rel_err]
        if self.rel_err_analytic is not None:
            errs.append(self.rel_err_analytic.max(initial=0.0))
        return float(max(errs)) if not any(np.isnan(errs)) else math.nan

    @property
    def ok(self):
        # written so that NaN anywhere fails (every comparison with NaN is false)
        return bool(self.max_rel_err <= self.rtol)

    def problems(self):
        """One line per disagreement, naming the parameter; empty when ``ok``."""
        lines = []
        if not math.isfinite(self.value):
            lines.append(f"the kernel's value at theta is {self.value}: check at a point inside its support")
        if not self.value_rel_err <= self.rtol:
            lines.append(f"value: derivative returns {self.ad_value!r}, kernel returns {self.value!r}")
        for i, name in enumerate(self.names):
            if not self.rel_err_fd[i] <= self.rtol:
                lines.append(f"{name}: AD {self.ad[i]:.10g} vs finite differences {self.fd[i]:.10g} "
                             f"(rel err {self.rel_err_fd[i]:.2e})")
            if self.rel_err_analytic is not None and not self.rel_err_analytic[i] <= self.rtol:
                lines.append(f"{name}: AD {self.ad[i]:.10g} vs analytic {self.analytic[i]:.10g} "
                             f"(rel err {self.rel_err_analytic[i]:.2e})")
        return lines

    def __str__(self):
        header = ("parameter", "AD", "analytic", "finite diff", "rel err")
        rows = []
        for i, name in enumerate(self.names):
            err = self.rel_err_fd[i]
            if self.rel_err_analytic is not None:
                err = max(err, self.rel_err_analytic[i]) if not np.isnan(err) else err
            analytic = "-" if self.analytic is None else f"{self.analytic[i]:.12g}"
            flag = "" if err <= self.rtol else "  <-- disagrees"
            rows.append((name, f"{self.ad[i]:.12g}", analytic, f"{self.fd[i]:.12g}", f"{err:.2e}{flag}"))
        widths = [max(len(r[k]) for r in rows + [header]) for k in range(5)]
        fmt = lambda r: " | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
        lines = [fmt(header), "-+-".join("-" * w for w in widths)] + [fmt(r) for r in rows]
        compared = "finite differences" + (" and the analytic gradient" if self.analytic is not None else "")
        if self.ok:
            lines.append(f"OK: AD agrees with {compared}, max rel err {self.max_rel_err:.2e} <= rtol {self.rtol:g}")
        else:
            lines.append(f"FAILED (rtol {self.rtol:g}): " + "; ".join(self.problems()))
        return "\n".join(lines)


def finite_difference_gradient(fn, theta, *consts, wrt_index=0, step=None):
    """Central finite-difference gradient of ``fn(theta, *consts)`` w.r.t. argument ``wrt_index`` (float64).

    Default (``step=None``): the adaptive step of :func:`_ridders`, per component. A number ``step`` fixes the
    relative step ``h_i = step * |x_i|`` (``step`` where ``x_i == 0``) and combines ``h`` and ``h/2`` by one
    Richardson extrapolation, ``(4 D(h/2) - D(h)) / 3``.
    """
    args = _float64_args(theta, consts, (wrt_index,))
    return _fd(fn, args, wrt_index, step)[0]


def check_gradient(fn, theta, *consts, analytic=None, wrt="theta", rtol=1e-6, step=None, derivative=None,
                   names=None, atol_scale=None):
    """Compare the AD gradient of ``fn`` at ``(theta, *consts)`` with finite differences (and ``analytic``).

    analytic: ``analytic(theta, *consts, out)`` filling ``out`` or returning the gradient (with several active
    arguments: one ``out`` per argument, or a returned tuple). derivative: an object with the pure-Python
    ``value_and_grad`` to test instead of ``ad.differentiate(fn, wrt=wrt)``. names: labels of the parameters.
    atol_scale: the per-parameter zero scale of the error metric (module docstring), scalar or array.
    """
    arg_names = _argument_names(fn, derivative)
    wrt_names = (wrt,) if isinstance(wrt, str) else tuple(wrt)
    active = []
    for w in wrt_names:
        if w not in arg_names:
            raise ValueError(f"check_gradient: wrt={w!r} is not an argument of {_fn_name(fn)}"
                             f"({', '.join(arg_names)}); pass wrt= one of those names")
        active.append(arg_names.index(w))
    args = _float64_args(theta, consts, active)
    if derivative is None:
        derivative = differentiate(fn, wrt=wrt)
    problem = derivative.argument_problem(args) if hasattr(derivative, "argument_problem") else None
    if problem is not None:  # before the plain kernel runs on it (math.log of an array: a bare TypeError)
        raise problem

    value = _evaluate(fn, args, "at the given point")
    fds, noises = zip(*(_fd(fn, args, k, step, value) for k in active))
    fd, noise = np.concatenate(fds), np.concatenate(noises)

    outs = [np.zeros(args[k].shape) for k in active]
    ad_value = float(derivative.value_and_grad(*args, *outs))
    ad = np.concatenate([o.ravel() for o in outs])
    exact = None if analytic is None else _analytic_gradient(analytic, args, active)

    magnitudes = [np.abs(ad), np.abs(fd)] + ([] if exact is None else [np.abs(exact)])
    largest = max(float(np.nanmax(m, initial=0.0)) for m in magnitudes)
    if atol_scale is None:
        atol = np.maximum(_ZERO_SCALE_FRACTION * largest, noise / rtol)
    else:
        atol = np.broadcast_to(np.asarray(atol_scale, dtype=np.float64), fd.shape).copy()
    atol = np.maximum(atol, np.finfo(np.float64).tiny)

    labels = tuple(names) if names is not None else tuple(
        f"{arg_names[k]}[{i}]" for k in active for i in range(args[k].size))
    if len(labels) != fd.size:
        raise ValueError(f"check_gradient: {len(labels)} names given for {fd.size} parameters")
    value_scale = max(abs(value), abs(ad_value), np.finfo(np.float64).tiny)
    return GradientCheck(
        names=labels, ad=ad, fd=fd, analytic=exact,
        rel_err_fd=relative_error(ad, fd, atol),
        rel_err_analytic=None if exact is None else relative_error(ad, exact, atol),
        atol_scale=atol, value=value, ad_value=ad_value,
        value_rel_err=float(abs(ad_value - value) / value_scale) if ad_value != value else 0.0,
        rtol=float(rtol),
    )


def relative_error(a, b, atol):
    """The metric of the module docstring, elementwise (broadcasting ``atol``)."""
    return np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), atol)


def _fd(fn, args, k, step, value=None):
    """Gradient w.r.t. ``args[k]`` and the rounding-noise level of each component (``step``: see
    :func:`finite_difference_gradient`)."""
    x = args[k]
    if value is None:
        value = _evaluate(fn, args, "at the given point")
    grad = np.empty(x.size)
    noise = np.empty(x.size)
    for i in range(x.size):
        shifted = lambda delta: _shifted(fn, args, k, i, delta)  # noqa: E731
        if step is None:
            grad[i], h = _ridders(shifted, x.flat[i], i)
        else:
            h = _step(x.flat[i], step, i)
            d1 = (shifted(h) - shifted(-h)) / (2.0 * h)
            d2 = (shifted(h / 2) - shifted(-h / 2)) / h
            grad[i] = (4.0 * d2 - d1) / 3.0
        noise[i] = _NOISE_FACTOR * _EPS * (1.0 + abs(value)) / h
    return grad, noise


def _step(xi, rel_step, i):
    """A step ``rel_step * |xi|`` (``rel_step`` at 0) that is exactly representable around ``xi``."""
    h = rel_step * (abs(xi) if xi != 0.0 else 1.0)
    h = (xi + h) - xi
    if h == 0.0:
        raise ValueError(f"check_gradient: step {rel_step:g} is too small for parameter {i} = {xi!r}")
    return h


def _ridders(shifted, xi, i):
    """Ridders' adaptive central difference of one component: ``(estimate, step of the estimate)``.

    Central differences ``D(h) = (f(x+h) - f(x-h)) / 2h`` on the ladder ``h_m = LADDER_START |x| / 2^m``
    are extrapolated to ``h -> 0`` in a Neville tableau (``T[m][j] = (4^j T[m][j-1] - T[m-1][j-1]) / (4^j - 1)``,
    each column removing the next even power of ``h``). Each entry's error is estimated by how far it moved from
    its two neighbours; the entry with the smallest estimate wins. A large step for a kernel that varies fast
    (a long time baseline against a short period) sits outside the asymptotic regime and disagrees with its
    neighbours, a tiny one drowns in rounding: both lose. Steps where the kernel fails or is not finite (near
    the edge of its domain) are skipped and the tableau restarts below them. Numerical Recipes §5.7 (dfridr).
    """
    best, best_err, best_h, previous, last_error = math.nan, math.inf, None, None, None
    for m in range(_LADDER_LEVELS):
        try:
            h = _step(xi, _LADDER_START / 2.0 ** m, i)
            row = [(shifted(h) - shifted(-h)) / (2.0 * h)]
        except ValueError as error:  # the kernel failed there: try a smaller step
            previous, last_error = None, error
            continue
        if not math.isfinite(row[0]):
            previous = None
            continue
        if best_h is None:
            best, best_h = row[0], h  # a plain difference until the tableau has something better
        factor = 4.0
        for j in range(1, min(len(previous or ()) + 1, _TABLEAU_COLUMNS)):
            row.append((factor * row[j - 1] - previous[j - 1]) / (factor - 1.0))
            factor *= 4.0
            err = max(abs(row[j] - row[j - 1]), abs(row[j] - previous[j - 1]))
            if err <= best_err:
                best, best_err, best_h = row[j], err, h
        converged = best_err <= _CONVERGED * abs(best)
        if previous is not None and converged and abs(row[-1] - previous[-1]) >= _SAFE * best_err:
            break  # higher order got worse than the best by a margin: rounding has taken over
        previous = row
    if best_h is None:
        raise last_error if last_error is not None else ValueError(
            f"check_gradient: the kernel is not finite around parameter {i} = {xi!r} at any step")
    return best, best_h


def _shifted(fn, args, k, i, delta):
    x = args[k].copy()
    x.flat[i] += delta
    shifted = list(args)
    shifted[k] = x
    return _evaluate(fn, shifted, f"with parameter {i} shifted by {delta:+.3g} to {x.flat[i]!r}")


def _evaluate(fn, args, where):
    try:
        return float(fn(*args))
    except (ValueError, ZeroDivisionError, OverflowError) as exc:
        raise ValueError(f"check_gradient: the kernel {_fn_name(fn)} failed {where} ({exc}); check at a point "
                         f"further from the edge of its domain, or pass a smaller step=") from None
    except TypeError as exc:  # the plain function cannot run at all: say where, and the usual cause
        raise TypeError(f"check_gradient: the kernel {_fn_name(fn)} does not run as plain Python{_line_of(fn, exc)} "
                        f"({exc}); finite differences call the Python function itself, so it must run on these "
                        f"arguments: a `math` function of a whole array (`math.log(x)`, also inside np.sum) is "
                        f"one cause: index the array in a loop, `math.log(x[i])`") from None


def _line_of(fn, exc):
    """`` at file:line`` of the last line of ``fn``'s file in the traceback of ``exc`` (empty when none)."""
    code, tb, found = getattr(fn, "__code__", None), exc.__traceback__, ""
    while code is not None and tb is not None:
        if tb.tb_frame.f_code.co_filename == code.co_filename:
            found = f" at {code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _analytic_gradient(analytic, args, active):
    outs = [np.zeros(args[k].shape) for k in active]
    returned = analytic(*args, *outs)
    if returned is not None:
        parts = returned if isinstance(returned, tuple) else (returned,)
        if len(parts) != len(active):
            raise ValueError(f"check_gradient: analytic returned {len(parts)} gradients for {len(active)} "
                             f"active arguments")
        outs = [np.asarray(p, dtype=np.float64).reshape(args[k].shape) for p, k in zip(parts, active)]
    return np.concatenate([o.ravel() for o in outs])


def _float64_args(theta, consts, active):
    """Copies in float64: active arguments as 1-D arrays, and floating-point data too, because under numpy's
    promotion rules a float32 array element times a Python float stays float32 and would spoil the differences."""
    args = [theta, *consts]
    for k, arg in enumerate(args):
        if isinstance(arg, np.ndarray) and np.issubdtype(arg.dtype, np.floating):
            args[k] = arg.astype(np.float64)
        elif isinstance(arg, np.floating):
            args[k] = float(arg)
    for k in active:
        x = np.array(args[k], dtype=np.float64)  # a copy: the check never writes into the caller's arrays
        if x.ndim != 1:
            raise ValueError(f"check_gradient: active argument {k} must be a 1-D array of parameters, "
                             f"got shape {x.shape}")
        args[k] = x
    return args


def _argument_names(fn, derivative):
    names = getattr(derivative, "arg_names", None)
    if names:
        return tuple(names)
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        raise ValueError(f"check_gradient: cannot read the arguments of {fn!r}; pass a Python function") from None


def _fn_name(fn):
    return getattr(fn, "__name__", repr(fn))
