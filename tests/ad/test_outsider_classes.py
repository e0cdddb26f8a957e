"""Classes of kernels an outsider's battery (112 kernels after Tangent's, autograd's, Clad's and ADOL-C's tests and
Python's own corner cases) found wrong, several kernels per class:

(7) negative indices into local arrays (Python counts them from the end; the generated code read the slot before
    the array: ``buf[-1]`` gave 0 and a zero gradient, the compiled code read foreign memory);
(8) a zero exponent at a zero base: ``y ** k`` from ``k = 0`` at ``y = 0`` has the partial ``k y^(k-1) = 0 * inf``,
    a NaN gradient where the true one is finite;
(9) the pure-Python derivative raised ``ZeroDivisionError``/``ValueError`` where the compiled one returns the
    right numbers (``0.0 * math.sqrt(y)`` at ``y = 0``: the partial is inf, its adjoint 0);
(10) integer data as indices: a local array read at ``idx[i]`` did not compile in float32 (the element was cast
    to float32 first), ``theta[2 + grp[i]]`` was rejected as a float index, and ``x[int(idx[i])]`` in float32 read
    ``x[16777216]`` for ``idx[i] = 16777217``;
(11) rules at the edges: ``xlogy``'s x-derivative was 0 at x = 0 (log y is right: a Beta likelihood at a = 1 had
    d/da 6.0 for 3.24), ``np.maximum``/``np.minimum``/``np.clip`` dropped a NaN in the second argument (a bad
    sample came back finite), ``max(a, nan)`` sent its gradient to neither argument, and ``expit``'s derivative
    ``r (1 - r)`` lost every digit from x ~ 37;
(12) textbook derivative formulas at the edges: atan2's ``b / (a a + b b)`` was NaN below 1e-162, ``1 - tanh^2``
    and ``expm1 + 1`` were 0 far out, asinh's was 0 above 1e154, and acosh's, atanh's and asin's lost digits near 1;
(13) tuple assignment into local-array elements (``buf[0], buf[1] = ...``) crashed the differentiator.

Every kernel's value is the plain kernel's, and its gradient matches central differences (or the analytic one at
a point where differences straddle a kink), in pure Python, the float64 jit and the float32 jit."""
import math

import numpy as np
import pytest

from nestgrad import ad
from nestgrad.ad import special
from jit_agreement import assert_jit_agrees

X3 = np.array([1.0, 2.0, 3.0])


# ---- 7. negative indices into local arrays -----------------------------------------------------------------------
def negative_constant(theta, x):
    buf = np.zeros(x.shape[0])
    buf[0] = theta[0]
    buf[2] = theta[1] * 3.0
    return buf[-1] + buf[-3] * 10.0


def negative_2d(theta, x):
    a = np.zeros((2, 2))
    a[1, 1] = theta[0]
    a[0, 0] = theta[1]
    a[-2, -1] = theta[0] * theta[1]
    return a[-1, -1] * 2.0 + a[0, 0] + a[0, 1] * 5.0


def previous_element(theta, x):
    n = x.shape[0]
    buf = np.zeros(n)
    for i in range(n):
        buf[i] = buf[i - 1] * theta[0] + x[i]  # i = 0 reads buf[-1], the last element (still 0 here)
    return np.sum(buf) * theta[1] + buf[-1]


def written_from_the_end(theta, x):
    n = x.shape[0]
    buf = np.zeros(n)
    for i in range(n):
        buf[-1 - i] = x[i] * theta[0] ** (i + 1)
    total = 0.0
    for i in range(n):
        total += buf[i] * (i + 1.0) + theta[1] * buf[i - n]
    return total


# ---- 8. zero exponent at a zero base -----------------------------------------------------------------------------
def power_series(theta, c):
    y = theta[0] - c
    s = 0.0
    for k in range(4):
        s += y ** k * theta[1]
    return s


def float_zero_exponent(theta, c):
    y = theta[0] - c
    return y ** 0.0 + y * theta[1] + y ** 2.0


def math_pow_series(theta, c):
    y = theta[0] - c
    s = 0.0
    for k in range(3):
        s += math.pow(y, k)
    return s + theta[1]


def exponent_from_data(theta, c, e):
    y = theta[0] - c
    s = theta[1]
    for i in range(e.shape[0]):
        s += y ** e[i]
    return s


def integer_argument_exponent(theta, c, n):
    y = theta[0] - c
    return y ** n + y ** (n + 1) * theta[1]


# ---- 9. IEEE arithmetic in the pure-Python derivative -----------------------------------------------------------
def zero_times_sqrt(theta, c):
    y = theta[0] - c
    return 0.0 * math.sqrt(y) + theta[0] * theta[1]


def zero_times_acos(theta, c):
    return 0.0 * math.acos(theta[0] - c + 1.0) + theta[1] * theta[0]


def zero_times_root(theta, c):
    y = theta[0] - c
    return 0.0 * y ** 0.5 + 0.0 * math.acosh(1.0 + y) + theta[1] + theta[0]


def _derivatives(fn, theta, consts):
    d = ad.differentiate(fn)
    g = np.zeros_like(theta)
    v = d.value_and_grad(theta, *consts, g)
    return d, float(v), g


def _central(fn, theta, consts, h=1e-6):
    out = np.zeros_like(theta)
    for i in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[i] += h
        down[i] -= h
        out[i] = (fn(up, *consts) - fn(down, *consts)) / (2 * h)
    return out


@pytest.mark.parametrize("fn", [negative_constant, negative_2d, previous_element, written_from_the_end],
                         ids=lambda f: f.__name__)
def test_negative_local_array_indices_count_from_the_end(fn):
    rng = np.random.default_rng(7)
    for theta in rng.uniform(0.5, 1.5, (4, 2)):
        d, v, g = _derivatives(fn, theta, (X3,))
        assert v == pytest.approx(fn(theta, X3), rel=1e-12)
        assert np.allclose(g, _central(fn, theta, (X3,)), rtol=1e-6, atol=1e-8), (theta, g)
        for dtype in ("float64", "float32"):
            assert_jit_agrees(d.jit(dtype=dtype), dtype, theta, (X3,), v, g, fn.__name__)


@pytest.mark.parametrize("fn, consts", [
    (power_series, (1.0,)), (float_zero_exponent, (1.0,)), (math_pow_series, (1.0,)),
    (exponent_from_data, (1.0, np.array([0.0, 1.0, 2.0, 3.0]))), (integer_argument_exponent, (1.0, 0))],
    ids=["power_series", "float_zero_exponent", "math_pow_series", "exponent_from_data", "integer_argument"])
def test_a_zero_exponent_at_a_zero_base_has_a_finite_gradient(fn, consts):
    theta = np.array([1.0, 0.7])  # theta[0] - c == 0 exactly
    d, v, g = _derivatives(fn, theta, consts)
    assert v == pytest.approx(fn(theta, *consts), rel=1e-12)
    assert np.all(np.isfinite(g)), g
    # Central differences are exact for these polynomials in y (up to y^3) at any step
    assert np.allclose(g, _central(fn, theta, consts, h=1e-4), rtol=1e-6, atol=1e-7), g
    for dtype in ("float64", "float32"):
        assert_jit_agrees(d.jit(dtype=dtype), dtype, theta, consts, v, g, fn.__name__)


@pytest.mark.parametrize("fn", [zero_times_sqrt, zero_times_acos, zero_times_root], ids=lambda f: f.__name__)
def test_the_python_derivative_gives_the_compiled_answer_where_plain_python_raises(fn):
    theta = np.array([1.0, 0.7])  # the partial is infinite (or the value's factor -inf) exactly here
    d, v, g = _derivatives(fn, theta, (1.0,))
    compiled = np.zeros(2)
    vj = d.jit().value_and_grad(theta, 1.0, compiled)
    assert np.all(np.isfinite(g)), g
    assert (v, g.tolist()) == (vj, compiled.tolist()) or (math.isnan(v) and math.isnan(vj))
    assert g.tolist() == pytest.approx([theta[1], theta[0]] if fn is zero_times_sqrt else
                                       ([theta[1], theta[0]] if fn is zero_times_acos else [1.0, 1.0]))
    # away from the edge, the plain-Python path itself runs (no IEEE twin needed) and agrees
    theta = np.array([1.5, 0.7]) if fn is not zero_times_acos else np.array([0.5, 0.7])
    _, v, g = _derivatives(fn, theta, (1.0,))
    assert np.allclose(g, _central(fn, theta, (1.0,)), rtol=1e-6)


# ---- 10. integer data as indices ---------------------------------------------------------------------------------
def local_gather(theta, idx):
    t = np.zeros(2)
    t[0] = theta[0]
    t[1] = theta[1] * theta[0]
    s = 0.0
    for i in range(idx.shape[0]):
        s += t[idx[i]] * (i + 1.0)
    return s


def offset_groups(theta, grp, y):
    s = 0.0
    for i in range(y.shape[0]):
        r = y[i] - theta[0] - theta[1 + grp[i]]
        s -= 0.5 * r * r
    return s


def local_scatter(theta, idx):
    acc = np.zeros(3)
    for i in range(idx.shape[0]):
        acc[idx[i]] += theta[0] * (i + 1.0)
    return acc[0] * theta[1] + acc[1] + acc[2] * acc[2]


@pytest.mark.parametrize("fn, consts", [
    (local_gather, (np.array([0, 1, 1, 0]),)),
    (offset_groups, (np.array([0, 1, 1, 0, 1]), np.array([0.3, 1.2, 0.9, 0.1, 1.5]))),
    (local_scatter, (np.array([2, 0, 1, 2]),))], ids=["local_gather", "offset_groups", "local_scatter"])
def test_integer_data_index_local_arrays_and_offsets(fn, consts):
    rng = np.random.default_rng(11)
    for theta in rng.uniform(0.5, 1.5, (3, 3)):
        d, v, g = _derivatives(fn, theta, consts)
        assert v == pytest.approx(fn(theta, *consts), rel=1e-12)
        assert np.allclose(g, _central(fn, theta, consts), rtol=1e-6, atol=1e-8), (theta, g)
        for dtype in ("float64", "float32"):
            assert_jit_agrees(d.jit(dtype=dtype), dtype, theta, consts, v, g, fn.__name__)


def converted_index(theta, x, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        s += theta[0] * x[int(idx[i])]
    return s


def test_an_index_above_float32s_integers_reads_its_own_element_in_float32():
    x = np.zeros(2 ** 24 + 3, np.float32)
    x[2 ** 24 + 1] = 2.0  # float32 cannot hold 16777217: through it the read landed on x[16777216] (0 here)
    idx = np.array([2 ** 24 + 1])
    d = ad.differentiate(converted_index)
    g = np.zeros(1, np.float32)
    assert d.jit(dtype="float32").value_and_grad(np.array([1.5], np.float32), x, idx, g) == 3.0 and g[0] == 2.0


# ---- a helper that fills a local array and returns nothing (as Python code writes it) ---------------------------
def _fill(buf, theta, x):
    for i in range(x.shape[0]):
        buf[i] = theta[0] * x[i] + theta[1]


def filled_by_helper(theta, x):
    buf = np.zeros(x.shape[0])
    _fill(buf, theta, x)
    s = 0.0
    for i in range(x.shape[0]):
        s += buf[i] * buf[i]
    return -s


def helper_value_used(theta, x):
    buf = np.zeros(x.shape[0])
    return _fill(buf, theta, x) + theta[0]


def test_a_helper_that_fills_a_local_array_needs_no_return():
    theta = np.array([0.5, 0.2])
    d, v, g = _derivatives(filled_by_helper, theta, (X3,))
    assert v == pytest.approx(filled_by_helper(theta, X3)) and np.allclose(g, _central(filled_by_helper, theta, (X3,)))
    assert_jit_agrees(d.jit(), "float64", theta, (X3,), v, g, "filled_by_helper")
    # used as a value it returns None in Python: still an error, at the helper
    with pytest.raises(ad.KernelError, match=r":\d+:\d+: _fill does not return a value on every path"):
        ad.differentiate(helper_value_used)


# ---- 11. rules at the edges --------------------------------------------------------------------------------------
def beta_loglike(theta, x):
    a, b = theta[0], theta[1]
    total = 0.0
    for i in range(x.shape[0]):
        total += special.xlogy(a - 1.0, x[i]) + special.xlogy(b - 1.0, 1.0 - x[i]) - special.lbeta(a, b)
    return total


def test_xlogy_at_a_zero_first_argument_has_the_log_as_its_derivative():
    x = np.array([0.2, 0.5, 0.7, 0.9])
    for theta in (np.array([1.0, 2.0]), np.array([2.5, 1.0]), np.array([1.0, 1.0])):  # a - 1 or b - 1 is 0
        d, v, g = _derivatives(beta_loglike, theta, (x,))
        assert np.allclose(g, _central(beta_loglike, theta, (x,)), rtol=1e-7), (theta, g)
        assert_jit_agrees(d.jit(), "float64", theta, (x,), v, g, "beta_loglike")


def nan_aware(theta, x):
    total = 0.0
    for i in range(x.shape[0]):
        total += np.maximum(theta[0], x[i]) + np.minimum(theta[1], x[i]) + np.clip(theta[0], 0.0, x[i])
    return total


def clipped_index(theta, x):
    """np.clip and np.maximum of integers stay integers (indices)."""
    s = 0.0
    for i in range(x.shape[0]):
        j = np.clip(i - 1, 0, x.shape[0] - 1)
        k = np.maximum(i - 2, 0)
        s += x[j] * theta[0] + x[k] * theta[1]
    return s


def test_numpy_extrema_of_integers_are_integers():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    theta = np.array([0.5, 1.5])
    d, v, g = _derivatives(clipped_index, theta, (x,))
    assert v == pytest.approx(clipped_index(theta, x)) and g.tolist() == pytest.approx([8.0, 5.0])
    for dtype in ("float64", "float32"):
        assert_jit_agrees(d.jit(dtype=dtype), dtype, theta, (x,), v, g, "clipped_index")


def python_max(theta, x):
    return max(theta[0], x[0]) + min(theta[1], x[0])


def test_numpy_extrema_propagate_a_nan_and_python_extrema_keep_the_first_argument():
    theta = np.array([0.7, 0.4])
    d = ad.differentiate(nan_aware)
    x = np.array([1.0, np.nan, 0.5])
    for flavour in (d, d.jit()):
        g = np.zeros(2)
        assert math.isnan(flavour.value_and_grad(theta, x, g))  # as the plain kernel: a bad sample stays bad
    assert math.isnan(nan_aware(theta, x))
    x = np.array([1.0, 0.2, 0.5])  # without NaN: values and gradients as before
    d, v, g = _derivatives(nan_aware, theta, (x,))
    assert v == pytest.approx(nan_aware(theta, x)) and np.allclose(g, _central(nan_aware, theta, (x,)))
    x = np.array([np.nan])  # Python's max(a, nan) and min(a, nan) are a: so are the gradients' shares
    d, v, g = _derivatives(python_max, theta, (x,))
    assert v == pytest.approx(theta.sum()) == python_max(theta, x) and g.tolist() == [1.0, 1.0]
    assert_jit_agrees(d.jit(), "float64", theta, (x,), v, g, "python_max")


def logistic(theta):
    return special.expit(theta[0])


def test_the_logistic_derivative_keeps_its_relative_accuracy_far_out():
    d = ad.differentiate(logistic)
    for x in (20.0, 30.0, 37.5, 60.0):
        exact = math.exp(-x) / (1.0 + math.exp(-x)) ** 2
        for flavour in (d, d.jit()):
            g = np.zeros(1)
            flavour.value_and_grad(np.array([x]), g)
            assert g[0] == pytest.approx(exact, rel=1e-12, abs=0.0), (x, g[0], exact)


# ---- 12. derivatives of math functions where a textbook formula loses its digits --------------------------------
def tanh_of(theta):
    return math.tanh(theta[0])


def expm1_of(theta):
    return math.expm1(theta[0])


def asinh_of(theta):
    return math.asinh(theta[0])


def acosh_of(theta):
    return math.acosh(theta[0])


def atanh_of(theta):
    return math.atanh(theta[0])


def asin_of(theta):
    return math.asin(theta[0])


def angle(theta):
    return math.atan2(theta[0], theta[1])


EXACT_EDGES = [  # (kernel, point, exact gradient): the formulas 1 - tanh^2, expm1 + 1, 1 / sqrt(a a + 1),
    # 1 / sqrt(a a - 1), 1 / (1 - a a), 1 / sqrt(1 - a a) and b / (a a + b b) gave 0, 0, 0 or lost digits here
    (tanh_of, [20.0], [1.0 / math.cosh(20.0) ** 2]),
    (tanh_of, [-25.0], [1.0 / math.cosh(25.0) ** 2]),
    (expm1_of, [-40.0], [math.exp(-40.0)]),
    (asinh_of, [1e200], [1e-200]),
    (acosh_of, [1.0 + 2.0 ** -30], [1.0 / math.sqrt(2.0 ** -30 * (2.0 + 2.0 ** -30))]),
    (atanh_of, [1.0 - 2.0 ** -30], [1.0 / (2.0 ** -30 * (2.0 - 2.0 ** -30))]),
    (asin_of, [1.0 - 2.0 ** -30], [1.0 / math.sqrt(2.0 ** -30 * (2.0 - 2.0 ** -30))]),
    (angle, [1e-200, 1e-200], [5e199, -5e199]),
    (angle, [3e-170, -1e-170], [-1e169, -3e169]),
    (angle, [1e200, 3e200], [3e-201, -1e-201]),
    (angle, [0.3, -2.0], [-2.0 / 4.09, -0.3 / 4.09]),
]


@pytest.mark.parametrize("fn, point, exact", EXACT_EDGES, ids=lambda v: getattr(v, "__name__", None))
def test_math_derivatives_keep_their_relative_accuracy_at_the_edges(fn, point, exact):
    """An outsider's battery: the gradient of atan2 below 1e-162 was NaN (so the sample's likelihood too), tanh's
    from |x| ~ 19 on and expm1's below -37 exactly 0; with and without fastmath (the likelihoods' builds use it,
    which reorders a rescaled formula back into underflow)."""
    d = ad.differentiate(fn)
    theta = np.array(point)
    for flavour in (d, d.jit(fastmath=False), d.jit(fastmath=True)):
        g = np.zeros(theta.size)
        flavour.value_and_grad(theta, g)
        assert np.allclose(g, exact, rtol=1e-12, atol=0.0), (fn.__name__, point, g, exact)


# ---- 13. tuple assignment into local-array elements ----------------------------------------------------------------
def swapped(theta, x):
    buf = np.zeros(2)
    buf[0], buf[1] = theta[0] * x[0], theta[1] ** 2
    buf[0], buf[1] = buf[1], buf[0]  # both right-hand sides first, as Python does
    return buf[0] * 3.0 + buf[1]


def into_input(theta, x):
    x[0], a = theta[0], theta[1]
    return a


def test_tuple_assignment_into_local_array_elements():
    """``mean[0], mean[1] = theta[0], theta[1]`` ended in a bare AttributeError inside the differentiator."""
    theta, x = np.array([0.7, -1.3]), np.array([2.0])
    d, v, g = _derivatives(swapped, theta, (x,))
    assert v == pytest.approx(swapped(theta, x)) and np.allclose(g, _central(swapped, theta, (x,)), rtol=1e-7)
    assert_jit_agrees(d.jit(), "float64", theta, (x,), v, g, "swapped")
    with pytest.raises(ad.KernelError, match=r"outsider_classes.py:\d+:\d+: writing into arrays is not supported "
                                             r"for inputs"):
        ad.differentiate(into_input)
