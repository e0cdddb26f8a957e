"""Issue 14: classes of kernels the differentiator got wrong (or crashed on), several kernels per class.

Every kernel either gives the value and gradient of the plain kernel (finite differences via ``ad.check_gradient``,
the jit in float64 and, where integers matter, float32) or is rejected by ``ad.differentiate`` with a message that
starts ``file:line:col:``.  The classes: (1) integer state through loops, (2) zero adjoint x infinite partial,
(3) integer overflow, (4) comparisons used as numbers, (5) guard flags and ``and``/``or`` values; (6), compile time
of long straight-line kernels, is in test_reproducer_compile_time.py.
"""
import math
import re

import numpy as np
import pytest

from nestgrad import ad
from jit_agreement import assert_jit_agrees

RNG = np.random.default_rng(14)
X7 = np.linspace(-1.0, 1.0, 7)


def _points(k, n=8, lo=0.5, hi=1.5):
    return [RNG.uniform(lo, hi, k) for _ in range(n)]


def _agree(fn, thetas, *consts, dtypes=("float64",), rtol=1e-6):
    """check_gradient at every point, and the jit (each dtype) against the pure-Python derivative."""
    d = ad.differentiate(fn)
    for theta in thetas:
        check = ad.check_gradient(fn, theta, *consts, rtol=rtol)
        assert check.ok, f"{fn.__name__} at {theta}:\n{check}"
        g = np.zeros_like(theta)
        v = d.value_and_grad(theta, *consts, g)
        for dt in dtypes:
            assert_jit_agrees(d.jit(dtype=dt), dt, theta, consts, v, g, fn.__name__)
    return d


def _rejected(fn, words):
    with pytest.raises(ad.KernelError) as info:
        ad.differentiate(fn)
    msg = str(info.value)
    assert re.match(r"^.+:\d+:\d+: ", msg) and info.value.lineno > 0, msg
    assert words in msg, msg
    return info.value


# ---- 1. integer state carried through loops, used as an index --------------------------------------------------
def int_state_lcg(theta, x):
    j = 12345
    y = theta[0]
    for i in range(40):
        j = (j * 48271) % 2147483647
        y = y * math.cos(theta[1] * x[j % x.shape[0]]) + 0.1
    return y


def int_state_wide(theta, x):
    """State above 2**24 (float32 cannot hold it) and up to 2**40 (needs all three stored digits)."""
    j = 987654321
    y = theta[0]
    for i in range(30):
        j = (j * 48271 + 11) % 1099511627776
        y = y * (1.0 + 0.1 * math.sin(theta[1] * x[j % x.shape[0]])) + 0.01 * y * y
    return y


def int_state_negative(theta, x):
    """Negative integer state (floor division and modulo of negatives when stored and read back)."""
    k = -3
    y = theta[0]
    for i in range(25):
        k = (k * 7 - 5) % 97 - 60
        y = y * math.exp(-0.05 * theta[1] * x[k % x.shape[0]] * y)
    return y


def int_counter_index(theta, x):
    """A counter that only advances when a data-dependent test passes, then indexes."""
    k = 0
    y = 1.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            k = k + 2
        y = y * theta[0] + x[k % x.shape[0]] * theta[1] * y
    return y


def int_state_nested(theta, x):
    j = 7
    s = theta[0]
    for i in range(4):
        for m in range(5):
            j = (j * 31 + i) % 1000003
            s = s * math.cos(theta[1] * x[j % x.shape[0]]) + 0.2
    return s


@pytest.mark.parametrize("fn", [int_state_lcg, int_state_wide, int_state_negative, int_counter_index,
                                int_state_nested])
def test_integer_state_in_loops(fn):
    _agree(fn, _points(2, 4), X7, dtypes=("float64", "float32"))


def test_integer_state_is_stored_exactly():
    # the LCG's index sequence decides the value: recompute it independently in Python
    theta = np.array([0.9, 1.1])
    j, y = 12345, theta[0]
    for _ in range(40):
        j = (j * 48271) % 2147483647
        y = y * math.cos(theta[1] * X7[j % 7]) + 0.1
    d = ad.differentiate(int_state_lcg)
    g = np.zeros(2, np.float32)
    assert abs(d.jit(dtype="float32").value_and_grad(theta.astype(np.float32), X7.astype(np.float32), g) - y) < 1e-5


# ---- 2. a zero adjoint times an infinite partial ------------------------------------------------------------
def binary_power(theta, n):
    x = theta[0]
    z = 1.0
    base = x
    m = n
    if n < 0:
        m = -n
    for k in range(31):
        if m % 2 == 1:
            z *= base
        base = base * base
        m = m // 2
    if n < 0:
        z = 1 / z
    return z


def min_of_overflow(theta):
    """v * v overflows to inf but is not the minimum: the partial of v (inf) meets a zero adjoint."""
    v = (theta[0] * 1e200) * (theta[0] * 1e200)
    return min(theta[0] * theta[0], v * v)


def overflow_in_untaken_branch(theta, x):
    u = theta[0] * 1e200
    v = u * u
    w = v * v * theta[1]
    r = theta[1] * theta[0]
    if x[0] < 0.0:
        r = w
    return r


def squaring_ladder(theta):
    """Sum of the first three repeated squares; the later squares overflow and do not matter."""
    acc = 0.0
    base = theta[0] + 1.0
    for k in range(14):
        if k < 3:
            acc += base
        base = base * base
    return acc


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("n", [5, -3, 0, 1, 7, -6])
def test_binary_power(n):
    d = _agree(binary_power, _points(1), n)
    for theta in _points(1, 4):
        g = np.zeros(1)
        d.value_and_grad(theta, n, g)
        assert g[0] == pytest.approx(n * theta[0] ** (n - 1), rel=1e-12)  # analytic


def test_overflowing_values_that_do_not_matter():
    with np.errstate(over="ignore", invalid="ignore"):
        _agree(min_of_overflow, _points(1))
        _agree(overflow_in_untaken_branch, _points(2), np.array([1.0]))
        d = _agree(squaring_ladder, _points(1))
        g = np.zeros(1)
        t = 1.2
        d.value_and_grad(np.array([t - 1.0]), g)
        assert g[0] == pytest.approx(1 + 2 * t + 4 * t ** 3, rel=1e-12)


# ---- 3. integer arithmetic that overflows int64 --------------------------------------------------------------
def int_overflow(theta):
    c = 1
    for i in range(45):
        c = c * 3
    return theta[0] * c * 1e-21


def int_constant_overflow(theta):
    return theta[0] * 2 ** 70


def factorial_25(theta):
    f = 1
    for i in range(25):
        f = f * (i + 1)
    return theta[0] / f


def factorial_20(theta):
    f = 1
    for i in range(20):
        f = f * (i + 1)
    return theta[0] * 1e-18 * f


def float_power_of_three(theta):
    c = 1.0
    for i in range(45):
        c = c * 3
    return theta[0] * c * 1e-21


def counter_over_data(theta, x):
    k = 0
    s = 0.0
    for i in range(x.shape[0]):
        k += 1
        s += theta[0] * k * x[i]
    return s


def test_integer_overflow_is_rejected_at_its_line():
    err = _rejected(int_overflow, "int64")
    assert err.lineno == int_overflow.__code__.co_firstlineno + 3
    _rejected(int_constant_overflow, "int64")
    err = _rejected(factorial_25, "int64")
    assert err.lineno == factorial_25.__code__.co_firstlineno + 3


def test_bounded_integer_arithmetic_is_accepted():
    d = _agree(factorial_20, _points(1, 3))
    assert d.value(np.array([1.0])) == pytest.approx(1e-18 * math.factorial(20), rel=1e-15)
    assert d.jit().value(np.array([1.0])) == d.value(np.array([1.0]))
    _agree(float_power_of_three, _points(1, 3))
    _agree(counter_over_data, _points(1, 3), X7)


# ---- 4. comparisons used as numbers ------------------------------------------------------------------------
# numpy's bool + bool is a logical or, Python's is 2: ambiguous, so rejected; a boolean mixed with a number is not
def compare_as_numbers(theta):
    x, y = theta[0], theta[1]
    return (x == y) + (x != y) + (x <= y) + (x >= y) + (x < y) + (x > y) + x * 0.0


def compare_difference(theta):
    return (theta[0] < theta[1]) - (theta[0] > theta[1]) + 0.0 * theta[0]


def compare_product(theta):
    return (theta[0] < theta[1]) * (theta[1] < 1.0) + theta[0]


def compare_negated(theta):
    return -(theta[0] < theta[1]) + theta[0]


def compare_counted(theta):
    x, y = theta[0], theta[1]
    return float(x == y) + float(x != y) + float(x <= y) + float(x >= y) + float(x < y) + float(x > y) + x * 0.0


def compare_selects(theta):
    x, y = theta[0], theta[1]
    return (x < y) * x + (x >= y) * y + 2 * (x > 1.0) + (y > 1.0) * 0.5


def test_boolean_arithmetic_is_rejected():
    for fn in (compare_as_numbers, compare_difference, compare_product, compare_negated):
        err = _rejected(fn, "booleans")
        assert err.lineno == fn.__code__.co_firstlineno + (2 if fn is compare_as_numbers else 1)


def test_booleans_mixed_with_numbers():
    _agree(compare_selects, _points(2, 6))
    d = _agree(compare_counted, _points(2, 3))
    for theta in _points(2, 4) + [np.array([1.0, 1.0])]:
        want = compare_counted(theta)  # numpy scalars: float() of each comparison, then a float sum
        assert d.value(theta) == want == d.jit().value(theta)
        assert want == (3.0 if theta[0] == theta[1] else 3.0)


# ---- 5. guard flags through loops; `and`/`or` values -------------------------------------------------------
def guard_flag(theta):
    res = 0.0
    stop = False
    for c in range(4):
        if not stop:
            res = res * theta[0] + 1.0
            if res > 2.0:
                stop = True
    return res


def guard_flags_nested(theta, x):
    """An outer flag stops the outer loop, an inner one each inner loop; the flag is read after the loop too."""
    total = 0.0
    done = False
    for i in range(x.shape[0]):
        if not done:
            s = theta[0]
            hit = False
            for k in range(6):
                if not hit:
                    s = s * theta[1] + x[i]
                    hit = s > 2.5
            total += s * theta[0]
            if total > 6.0:
                done = True
    if done:
        total = total * 0.5
    return total


def guard_flag_counted(theta, x):
    """The flag decides which later loop runs and how much: a flag set in one loop and read in another."""
    found = False
    where = 0
    for i in range(x.shape[0]):
        if not found and x[i] * theta[0] > 0.3:
            found = True
            where = i
    y = theta[1]
    for i in range(x.shape[0]):
        if found and i >= where:
            y = y * (1.0 + theta[0] * x[i])
    return y


def and_or_values(theta):
    v = theta[0] and theta[1]
    w = theta[2] or 2.0
    u = (theta[0] > 0) and theta[2]
    return v * 2.0 + w * w + u


def and_or_chains(theta, x):
    a = theta[0] > 1.0 and theta[1] > 1.0 or theta[2] < 0.8
    v = x[0] and theta[0] and theta[1] * theta[2]
    w = x[1] or x[0] or theta[2]
    z = (theta[0] < theta[1] < theta[2]) or not (theta[2] > 1.2)
    r = theta[0] * theta[1]
    if a and z:
        r = r + theta[2] * theta[2]
    if not a or not z:
        r = r - theta[0]
    return r + v * w


def test_guard_flags():
    _agree(guard_flag, _points(1, 10, 0.3, 1.8), dtypes=("float64", "float32"))
    # res = 1, 1 + t, 1 + t + t^2 ... stops after the first value above 2: the gradient is that polynomial's
    d = ad.differentiate(guard_flag)
    for t in (0.3, 0.9, 1.3, 1.8):
        g = np.zeros(1)
        v = d.value_and_grad(np.array([t]), g)
        r, dr, stop = 0.0, 0.0, False
        for _ in range(4):
            if not stop:
                r, dr = r * t + 1.0, dr * t + r
                stop = r > 2.0
        assert (v, g[0]) == pytest.approx((r, dr), rel=1e-14)
    _agree(guard_flags_nested, _points(2, 6, 0.6, 1.4), X7, dtypes=("float64", "float32"))
    _agree(guard_flag_counted, _points(2, 6), X7)


def test_and_or_return_operand_values():
    _agree(and_or_values, _points(3, 6))
    _agree(and_or_values, [np.array([-0.5, 1.2, 0.9])])
    # at theta[0] = theta[2] = 0 the kernel jumps (finite differences mean nothing): v = theta[0], w = 2.0,
    # u = False, so the value is the plain kernel's and the gradient that of the branch taken, 2 * dv
    d = ad.differentiate(and_or_values)
    g = np.zeros(3)
    theta = np.array([0.0, 0.7, 0.0])
    assert d.value_and_grad(theta, g) == and_or_values(theta) == 4.0
    assert list(g) == [2.0, 0.0, 0.0]
    d = _agree(and_or_chains, _points(3, 10, 0.5, 1.5), np.array([0.0, 0.5]))
    _agree(and_or_chains, _points(3, 4, 0.5, 1.5), np.array([1.5, 0.0]))
    theta = np.array([0.0, 0.7, 0.9])
    assert d.value(theta, np.array([2.0, 0.0])) == and_or_chains(theta, np.array([2.0, 0.0]))


# ---- 2 (continued): JAX as the reference for zero adjoints ------------------------------------------------
@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_zero_adjoint_against_jax():
    """JAX's symbolic zeros never multiply a zero cotangent by the overflowed partial: the reference."""
    import jax

    def jax_binary_power(x, n):  # the same loop; `m` is a Python int, so the branches are concrete
        z, base, m = 1.0, x, abs(n)
        for _ in range(31):
            if m % 2 == 1:
                z = z * base
            base = base * base
            m = m // 2
        return 1 / z if n < 0 else z

    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        for n in (5, -3, 7):
            d = ad.differentiate(binary_power)
            for theta in _points(1, 3):
                g = np.zeros(1)
                d.value_and_grad(theta, n, g)
                want = float(jax.grad(jax_binary_power)(jax.numpy.float64(theta[0]), n))
                assert np.isfinite(want) and g[0] == pytest.approx(want, rel=1e-12)
    finally:
        jax.config.update("jax_enable_x64", x64)


# ---- fuzz findings F3, F4 (tests/ad/fuzz/FINDINGS.md) ------------------------------------------------------------
def constant_comparisons(theta, x):
    """F3: comparisons of constants (`k == k` once `k = 2` is propagated) decided at lowering; in the generated
    code numba's dead-branch pruning folded them and rejected a later branch's adjoint as undefined."""
    k = 2
    f0 = 0.3 * (theta[0] >= theta[1])
    f1 = theta[1] * theta[0]
    f0, f1 = f1, f0
    a = 0.5 * (k == 2) + theta[0] * (k > 3) + theta[1] * (1 < k <= 2) + 1.0 * (3 > k and 5)
    b = (k < 1) and theta[0]
    c = (k < 1) or theta[1]
    if k == k or ((-0.75 * (x[2] >= 0.3)) * k) > max(x[1], -0.75):
        return f0 + a + b + c
    return f0 + f1 + (-(x[0] if k <= x.shape[0] else theta[1]))


def int_through_inner_loop(theta, x):
    """F4: an integer carried unchanged through an inner loop, then used as an index: the optimiser's invariant
    copy of it was emitted as a float (IndexError in Python, a numba typing error in jit)."""
    n = x.shape[0]
    f2 = theta[0]
    k0 = 1
    for i in range(n):
        for j in range(2):
            k0 += 0
            f2 += theta[1] * x[j]
        f2 *= x[k0]
    return f2


@pytest.mark.parametrize("fn", [constant_comparisons, int_through_inner_loop])
def test_fuzz_findings_f3_f4(fn):
    _agree(fn, _points(2, 3), np.array([0.4, -0.6, 0.9]), dtypes=("float64", "float32"))
