"""ad.special against scipy.special, in plain Python, numba njit and CUDA (PTX type check + simulator run)."""
import json
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.special as sc
from numba import cuda

from nestgrad.ad import special

REPO = Path(__file__).resolve().parents[2]

UNARY = ["digamma", "trigamma", "tetragamma", "log1pexp", "expit"]
BINARY = ["logaddexp", "xlogy", "lbeta"]

POSITIVE = np.concatenate([np.geomspace(1e-3, 1e4, 2001), np.linspace(1.2, 1.7, 301)])
# negative non-integers: spread over decades plus points just off the poles
NEGATIVE = np.concatenate([-np.geomspace(1e-3, 100.0, 1501) * (1.0 + 1e-9), -np.arange(1, 60) + 1e-6,
                           -np.arange(1, 60) - 1e-6, -np.arange(1, 60) - 0.5])


def plain(name, *arrays):
    fn = getattr(special, name)
    return np.array([fn(*map(float, values)) for values in zip(*arrays)])


def rel_err(ours, ref, scale=None):
    scale = np.abs(ref) if scale is None else scale
    return np.abs(ours - ref) / scale


def polygamma_ref(n):
    return sc.digamma if n == 0 else (lambda x: sc.polygamma(n, x))


def reflection_scale(n, x):
    """Size of the two terms the reflection formula adds for x < 0: the error is relative to these."""
    r = x - np.floor(x + 0.5)
    s, c = np.sin(np.pi * r), np.sin(np.pi * (0.5 - np.abs(r)))
    trig = [np.pi * c / s, np.pi ** 2 / s ** 2, 2 * np.pi ** 3 * c / s ** 3][n]
    return np.abs(polygamma_ref(n)(1.0 - x)) + np.abs(trig)


@pytest.mark.parametrize("n, name", [(0, "digamma"), (1, "trigamma"), (2, "tetragamma")])
def test_polygamma_matches_scipy_for_positive_arguments(n, name):
    assert rel_err(plain(name, POSITIVE), polygamma_ref(n)(POSITIVE)).max() <= 1e-12


@pytest.mark.parametrize("n, name", [(0, "digamma"), (1, "trigamma"), (2, "tetragamma")])
def test_polygamma_matches_scipy_for_negative_non_integers(n, name):
    # scipy's digamma loses digits next to the negative poles (1e-6 off -9: 8e-11), see the exact test below
    # and scipy's tetragamma sums a cancelling series at half-integers (5e-12 at -50.5), checked exactly below
    near_pole = np.abs(NEGATIVE - np.round(NEGATIVE)) < 1e-4
    x = NEGATIVE[~near_pole] if n == 0 else NEGATIVE
    x = x[np.abs(x - np.floor(x) - 0.5) > 1e-9] if n == 2 else x
    assert rel_err(plain(name, x), polygamma_ref(n)(x), reflection_scale(n, x)).max() <= 1e-12


def test_digamma_for_negative_arguments_matches_exact_recurrence():
    # psi(x) = psi(x + k) - sum_{j<k} 1/(x + j) with x + k in (0, 1]; the sum in exact rational arithmetic
    for x in NEGATIVE:
        k = math.ceil(-x)
        terms = sum(Fraction(1) / (Fraction(float(x)) + j) for j in range(k))
        base = sc.digamma(x + k)  # x + k is exact (Sterbenz) and positive, where scipy is accurate
        expected = base - float(terms)
        scale = abs(base) + abs(float(terms))
        assert abs(special.digamma(float(x)) - expected) <= 1e-12 * scale, x


def test_half_integer_reflection_is_exact():
    # at x = -m - 1/2 the trigonometric terms are exactly 0 (psi, psi2) or pi^2 (psi1)
    m = np.arange(0, 80)
    x, mirror = -m - 0.5, m + 1.5
    assert rel_err(plain("digamma", x), sc.digamma(mirror)).max() <= 1e-13
    assert rel_err(plain("trigamma", x), np.pi ** 2 - sc.polygamma(1, mirror)).max() <= 1e-13
    assert rel_err(plain("tetragamma", x), sc.polygamma(2, mirror)).max() <= 1e-13


def test_digamma_recurrence_holds_across_zero_and_far_out():
    # psi(x + 1) = psi(x) + 1/x checks the reflection branch against the positive branch (x in (-1, 0))
    # and at large |x|, where the exact argument reduction of the trigonometric term matters
    x = np.concatenate([-np.linspace(0.01, 0.99, 99), -1e4 - np.linspace(0.1, 0.9, 9), np.geomspace(0.01, 1e3, 50)])
    lhs, rhs = plain("digamma", x + 1.0), plain("digamma", x) + 1.0 / x
    assert rel_err(lhs, rhs, np.abs(lhs) + np.abs(1.0 / x)).max() <= 1e-12


def test_poles_and_non_finite_inputs_match_scipy_conventions():
    assert special.digamma(0.0) == -math.inf and math.isnan(special.digamma(-3.0))
    assert special.trigamma(0.0) == math.inf and special.trigamma(-3.0) == math.inf
    assert special.tetragamma(0.0) == -math.inf and math.isnan(special.tetragamma(-3.0))
    assert math.isnan(special.digamma(-math.inf)) and special.digamma(math.inf) == math.inf
    for name in UNARY:
        assert math.isnan(getattr(special, name)(math.nan)), name


def test_logaddexp_log1pexp_expit_match_numpy_and_scipy_including_extremes():
    x = np.linspace(-700.0, 700.0, 4001)  # beyond -708 the results are subnormal and lose relative precision
    assert rel_err(plain("log1pexp", x), np.logaddexp(0.0, x)).max() <= 1e-12
    assert rel_err(plain("expit", x), sc.expit(x)).max() <= 1e-12
    extremes = [-math.inf, -800.0, 800.0, math.inf]
    assert plain("log1pexp", extremes).tolist() == [0.0, 0.0, 800.0, math.inf]
    assert plain("expit", extremes).tolist() == [0.0, 0.0, 1.0, 1.0]
    a, b = np.meshgrid(np.linspace(-700.0, 700.0, 61), np.concatenate([np.linspace(-700.0, 700.0, 60), [-1e-3]]))
    a, b = a.ravel(), b.ravel()
    ref = np.logaddexp(a, b)
    assert rel_err(plain("logaddexp", a, b), ref, np.maximum(np.abs(ref), 1e-300)).max() <= 1e-12
    assert special.logaddexp(-math.inf, -math.inf) == -math.inf
    assert special.logaddexp(-math.inf, 2.0) == 2.0 and special.logaddexp(math.inf, math.inf) == math.inf


def test_xlogy_matches_scipy_including_zero_cases():
    x = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 3.5, 1e-300, 7.0])
    y = np.array([0.0, 2.0, 1e300, 0.0, 0.0, 0.25, 1e-300, 1e5])
    ours, ref = plain("xlogy", x, y), sc.xlogy(x, y)
    assert np.array_equal(np.isinf(ours), np.isinf(ref)) and np.all(np.sign(ours) == np.sign(ref))
    finite = np.isfinite(ref) & (ref != 0)
    assert rel_err(ours[finite], ref[finite]).max() <= 1e-14
    assert math.isnan(special.xlogy(0.0, math.nan))


def test_lbeta_matches_scipy_where_scipy_is_accurate():
    # below a + b = 171 scipy takes the log of a product of gamma functions: accurate to rounding
    grid = np.geomspace(1e-3, 85.0, 41)
    a, b = (v.ravel() for v in np.meshgrid(grid, grid))
    assert rel_err(plain("lbeta", a, b), sc.betaln(a, b), np.maximum(np.abs(sc.betaln(a, b)), 1.0)).max() <= 1e-12
    # scipy switches to its own asymptotic form for a > 1e6 * b, a > 1e6
    a, b = np.geomspace(2e6, 1e12, 20), np.geomspace(1e-3, 1.0, 20)
    assert rel_err(plain("lbeta", a, b), sc.betaln(a, b)).max() <= 1e-12


def test_lbeta_recurrence_holds_across_the_large_argument_branch():
    # B(a + 1, b) = B(a, b) * a / (a + b) is exact, so lbeta(a, b) - lbeta(a + 1, b) = log1p(b / a)
    a = np.concatenate([np.geomspace(10.0, 1e9, 40), [9.0, 9.5, 9.999]])  # the Stirling branch starts at 10
    for b in [1e-3, 0.5, 3.0, 1e3, 1e6]:
        lhs = plain("lbeta", a, np.full_like(a, b)) - plain("lbeta", a + 1.0, np.full_like(a, b))
        scale = np.abs(plain("lbeta", a, np.full_like(a, b)))
        assert (np.abs(lhs - np.log1p(b / a)) / np.maximum(scale, 1.0)).max() <= 1e-13, b


def central_difference(fn, x, rel_step=1e-3):
    """Richardson-extrapolated central difference: truncation error O(h^4)."""
    h = rel_step * max(abs(x), 1e-2)
    d1 = (fn(x + h) - fn(x - h)) / (2 * h)
    d2 = (fn(x + h / 2) - fn(x - h / 2)) / h
    return (4 * d2 - d1) / 3


@pytest.mark.parametrize("fn, derivative, points", [
    (special.digamma, special.trigamma, [0.05, 0.7, 1.46, 3.3, 9.9, 10.1, 250.0, -0.3, -2.7]),
    (special.trigamma, special.tetragamma, [0.05, 0.7, 1.46, 3.3, 9.9, 10.1, 250.0, -0.3, -2.7]),
    (special.log1pexp, special.expit, [-40.0, -20.0, -1.0, 0.0, 0.5, 17.9, 18.1, 30.0, 34.0]),
    (math.lgamma, special.digamma, [0.05, 0.7, 1.46, 3.3, 9.9, 10.1, 250.0, -0.3, -2.7]),
])
def test_derivative_identities_by_finite_differences(fn, derivative, points):
    for x in points:
        fd = central_difference(fn, x)
        assert abs(fd - derivative(x)) <= 1e-7 * max(abs(fd), 1e-3 * abs(fn(x)), 1e-12), (fn.__name__, x)


def test_binary_partials_by_finite_differences():
    for a, b in [(0.3, 2.0), (-5.0, 3.0), (40.0, -1.0)]:
        fd = central_difference(lambda t: special.logaddexp(t, b), a)
        assert abs(fd - special.expit(a - b)) <= 1e-8 * abs(fd)
    for a, b in [(0.3, 2.0), (5.0, 3.0), (2e4, 7.0), (3.0, 5e5)]:
        fd = central_difference(lambda t: special.lbeta(t, b), a)
        exact = special.digamma(a) - special.digamma(a + b)
        assert abs(fd - exact) <= 1e-7 * abs(exact), (a, b)
    fd = central_difference(lambda t: special.xlogy(2.5, t), 0.7)
    assert abs(fd - 2.5 / 0.7) <= 1e-8 * abs(fd)


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_njit_float64_agrees_with_plain_python(name):
    fn = getattr(special, name)
    jitted = numba.njit(fn)
    if name in UNARY:
        args = [(float(x),) for x in np.concatenate([POSITIVE[::40], NEGATIVE[::40], [0.0, -2.0, math.nan]])]
    else:
        args = [(float(a), float(b)) for a in (-3.0, 0.0, 0.5, 7.0, 2e4) for b in (0.0, 0.25, 3.0, 1e5)]
    for values in args:
        got = jitted(*values)
        try:
            expected = fn(*values)
        except ValueError:  # plain-Python math domain error (a pole of lgamma): numba gives NaN or inf
            assert not math.isfinite(got), (values, got)
            continue
        assert got == expected or (math.isnan(got) and math.isnan(expected)) or \
            abs(got - expected) <= 1e-13 * abs(expected), (values, got, expected)


@pytest.mark.parametrize("n, name", [(0, "digamma"), (1, "trigamma"), (2, "tetragamma")])
def test_njit_float32_is_accurate_to_single_precision(n, name):
    jitted = numba.njit(f"float32(float32)")(getattr(special, name))
    x = np.concatenate([np.geomspace(1e-3, 1e4, 400), np.linspace(2.0, 9.0, 50)]).astype(np.float32)
    x = x[np.abs(x - 1.4616) > 0.05]  # float32 rounding of x itself dominates next to the root of digamma
    ours = np.array([jitted(v) for v in x], dtype=np.float64)
    assert rel_err(ours, polygamma_ref(n)(x.astype(np.float64))).max() <= 2e-6


@pytest.mark.parametrize("name", UNARY + BINARY)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cuda_ptx_type_checks(name, dtype):
    arity = 1 if name in UNARY else 2
    signature = f"{dtype}({', '.join([dtype] * arity)})"
    ptx, return_type = cuda.compile_ptx(getattr(special, name), signature, device=True, cc=(9, 0))
    assert str(return_type) == dtype and ".func" in ptx


SIMULATOR_SCRIPT = r"""
import json, sys
import numpy as np
from numba import cuda
from nestgrad.ad import special

def make_kernel(fn, arity):
    if arity == 1:
        @cuda.jit
        def kernel(x, y, out):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = fn(x[i])
    else:
        @cuda.jit
        def kernel(x, y, out):
            i = cuda.grid(1)
            if i < x.size:
                out[i] = fn(x[i], y[i])
    return kernel

names = json.loads(sys.argv[1])
x, y = (np.array(v) for v in json.loads(sys.argv[2]))
result = {}
for name, arity in names:
    out = np.zeros_like(x)
    make_kernel(cuda.jit(device=True)(getattr(special, name)), arity)[4, 16](x, y, out)
    result[name] = out.tolist()
print(json.dumps(result))
"""


def test_cuda_simulator_run_matches_scipy():
    x = np.concatenate([np.geomspace(1e-3, 1e4, 40), [-0.3, -2.7, -10.5, -33.25]])
    y = np.concatenate([np.geomspace(50.0, 1e-2, 40), [0.5, 3.0, 7.25, 1e3]])
    names = [(name, 1) for name in UNARY] + [(name, 2) for name in BINARY]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", SIMULATOR_SCRIPT, json.dumps(names),
                           json.dumps([x.tolist(), y.tolist()])], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    positive = x > 0
    refs = {"digamma": sc.digamma(x), "trigamma": sc.polygamma(1, x), "tetragamma": sc.polygamma(2, x),
            "log1pexp": np.logaddexp(0.0, x), "expit": sc.expit(x), "logaddexp": np.logaddexp(x, y),
            "xlogy": sc.xlogy(x, y), "lbeta": np.where(positive, sc.betaln(np.abs(x), y), np.nan)}
    for name, _ in names:
        ours, ref = np.array(got[name]), refs[name]
        scale = np.maximum(np.abs(ref), 1.0 if name == "lbeta" else 1e-300)
        if name in ("digamma", "trigamma", "tetragamma"):
            scale[~positive] = reflection_scale(["digamma", "trigamma", "tetragamma"].index(name), x[~positive])
        # lbeta: scipy is accurate where it multiplies gamma functions (a + b < 171), see the lbeta tests above
        keep = positive & (x + y < 171.0) if name == "lbeta" else np.ones_like(positive)
        assert rel_err(ours[keep], ref[keep], scale[keep]).max() <= 1e-12, name
