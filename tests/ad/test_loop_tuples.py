"""F1 (tests/ad/fuzz/FINDINGS.md): tuple assignments inside loops whose right-hand sides read the targets.

``a, b = b, a`` in a loop body used to become ``a = b; b = a``: lowering copied the body's final values back
into the carried names one at a time (``lower.py``), and reduction fusion took a swap of two pure sums for two
independent sums (``fusion.py``).  Every kernel here is checked against the plain kernel's value, central finite
differences (``ad.check_gradient``), the jit in float64 and (where integers or a cheap compile allow it) float32.
"""
import math

import numpy as np
import pytest

from nestgrad import ad
from jit_agreement import assert_jit_agrees

RNG = np.random.default_rng(1401)
X5 = np.array([0.25, -0.5, 0.75, 0.1, -0.3])
Z = np.array([[-0.835, 0.94, 0.128, 0.5], [0.289, 0.154, -0.049, -0.7]])


def _points(k, n=4, lo=0.5, hi=1.5):
    return [RNG.uniform(lo, hi, k) for _ in range(n)]


def _agree(fn, thetas, *consts, jit=True, dtypes=("float64",), rtol=1e-6):
    d = ad.differentiate(fn)
    jitted = {dt: d.jit(dtype=dt) for dt in dtypes} if jit else {}
    for theta in thetas:
        want = fn(theta, *consts)
        g = np.zeros_like(theta)
        v = d.value_and_grad(theta, *consts, g)
        assert abs(v - want) <= 1e-12 * (1.0 + abs(want)), (fn.__name__, theta, v, want)
        g2 = np.zeros_like(theta)
        d.grad(theta, *consts, g2)
        np.testing.assert_allclose(g2, g, rtol=1e-12, atol=1e-14)
        check = ad.check_gradient(fn, theta, *consts, rtol=rtol)
        assert check.ok, f"{fn.__name__} at {theta}:\n{check}"
        for dt, j in jitted.items():
            assert_jit_agrees(j, dt, theta, consts, v, g, fn.__name__)
    return d


# ---- the findings' kernels ---------------------------------------------------------------------------------------
def swap3(theta):
    a = theta[0]
    b = 2.0 * theta[1]
    for i in range(3):
        a, b = b, a
    return a


def test_swap_exact_values():
    d = ad.differentiate(swap3)
    g = np.zeros(2)
    assert d.value_and_grad(np.array([0.3, 0.7]), g) == pytest.approx(1.4)
    np.testing.assert_allclose(g, [0.0, 2.0])
    j = d.jit()
    gj = np.zeros(2)
    assert j.value_and_grad(np.array([0.3, 0.7]), gj) == pytest.approx(1.4)
    np.testing.assert_allclose(gj, [0.0, 2.0])


def swap_n(theta, x):                      # fuzz seed 39, with parameters in the state
    n = x.shape[0]
    f0 = 0.5 * theta[0]
    f1 = 3.0 * theta[1]
    for i in range(n):
        f0, f1 = (f1, f0)
    return f0 * f0 + math.sin(f1)


def swap_stride(theta, x):                 # fuzz seed 112
    n = x.shape[0]
    f0 = 1.25 * theta[0]
    f1 = f0 * theta[1]
    for i in range(0, n, 2):
        f0 -= 0.5 * x[i]
        f0, f1 = (f1, f0 * theta[2])
    return f0 + 0.1 * f1


def shift_in(theta, z):                    # fuzz seed 18
    n = z.shape[1]
    f2 = theta[0]
    f1, f3 = (theta[1], f2)
    for i in range(1, n):
        f1, f2 = (z[1, i] * theta[2], f1)
    return f2 * f3


@pytest.mark.parametrize("fn, consts", [(swap3, ()), (swap_n, (X5,)), (swap_n, (X5[:4],)),
                                        (swap_stride, (X5,)), (shift_in, (Z,))],
                         ids=["swap3", "swap_odd", "swap_even", "swap_stride", "shift_in"])
def test_findings(fn, consts):
    k = 2 if fn in (swap3, swap_n) else 3
    _agree(fn, _points(k), *consts, jit=fn is not swap_n)


# ---- the class: parallel assignment with targets on the right ----------------------------------------------------
def rotate3(theta, x):
    a, b, c = theta[0], theta[1], theta[2]
    for i in range(x.shape[0]):
        a, b, c = c, a, b
    return a + 2.0 * b + 3.0 * c * c


def rotate3_nonlinear(theta, x):
    a, b, c = theta[0], theta[1], theta[2]
    for i in range(x.shape[0]):
        a, b, c = c * theta[0], a + x[i], math.sin(b)
    return a * b + c


def fibonacci(theta, x):
    a = theta[0]
    b = theta[1]
    for i in range(x.shape[0]):
        a, b = b, a + b * theta[2] * x[i]
    return a - 0.5 * b


def self_and_other(theta, x):
    a, b = theta[0], theta[1]
    for i in range(x.shape[0]):
        a, b = a * b, a + b        # both right-hand sides read both targets
        a, b = b * 0.5, b          # a target read twice, one target unchanged
    return a + b


def swapped_sums(theta, x):
    """Two pure sums that trade places: looks like a fusable reduction, is not."""
    s = 0.0
    t = theta[2]
    for i in range(x.shape[0]):
        s, t = t + theta[0] * x[i], s + theta[1] * x[i] * x[i]
    return 3.0 * s + t


def chained_sums(theta, x):
    s = 0.0
    t = 0.0
    for i in range(x.shape[0]):
        s, t = s + theta[0] * x[i], t + s
    return s + 2.0 * t


def rotate_with_sum(theta, x):
    s, u, w = 0.0, theta[0], theta[1]
    for i in range(x.shape[0]):
        s, u, w = u + s, w * x[i], s
    return s * theta[2] + u + w


@pytest.mark.parametrize("fn", [rotate3, rotate3_nonlinear, fibonacci, self_and_other, swapped_sums,
                                chained_sums, rotate_with_sum])
def test_parallel_assignment_in_loop(fn):
    _agree(fn, _points(3), X5)


# ---- nested loops, branches, helpers ---------------------------------------------------------------------------
def nested_swaps(theta, x):
    a, b, c = theta[0], theta[1], theta[2]
    for i in range(x.shape[0]):
        a, b = b, a
        for j in range(3):
            b, c = c + x[i] * theta[0], b
        a, c = c, a * x[i]
    return a + 2.0 * b + 5.0 * c


def inner_loop_swap_outer_sum(theta, x):
    acc = 0.0
    for i in range(x.shape[0]):
        p, q = theta[0], theta[1] * x[i]
        for j in range(3):
            p, q = q, p * theta[2] + x[j]
        acc += p * q
    return acc


def branch_swaps(theta, x):
    a, b = theta[0], theta[1]
    for i in range(x.shape[0]):
        if x[i] * theta[2] > 0.0:
            a, b = b, a * theta[2]
        elif x[i] < -0.4:
            b, a = a + 1.0, b
        else:
            a = a + x[i]
    return a * b


def branch_half_swap(theta, x):
    a, b = theta[0], theta[1]
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            a, b = b, a          # swapped in one branch only: the merge and the copy-back both permute
        a = a * theta[2] + x[i]
    return a - b


def _step(a, b, t):
    return b, a * t


def _rotate_helper(u, v, w, n):
    for k in range(n):
        u, v, w = w, u, v
    return u + 0.5 * v + 0.25 * w


def helper_swap(theta, x):
    a, b = theta[0], theta[1]
    for i in range(x.shape[0]):
        a, b = _step(a, b, theta[2])
        b += x[i]
    return a + 3.0 * b


def helper_with_loop(theta, x):
    total = 0.0
    for i in range(x.shape[0]):
        total += _rotate_helper(theta[0] * x[i], theta[1], theta[2], i)
    return total


def int_state_swap(theta, x):
    j, k = 0, 1
    y = theta[0]
    n = x.shape[0]
    for i in range(7):
        j, k = k, (j + k) % n
        y = y * math.cos(theta[1] * x[j]) + theta[2] * x[k]
    return y


@pytest.mark.parametrize("fn", [nested_swaps, inner_loop_swap_outer_sum, branch_swaps, branch_half_swap,
                                helper_swap, helper_with_loop])
def test_structured_parallel_assignment(fn):
    _agree(fn, _points(3), X5)


def test_integer_state_swap_float32():
    _agree(int_state_swap, _points(3), X5, dtypes=("float64", "float32"))


def test_outside_loop_still_correct():
    def kern(theta):
        a, b, c = theta[0], 2.0 * theta[1], theta[2]
        a, b, c = c, a, b
        a, b = b * a, a
        return a + 10.0 * b + 100.0 * c
    _agree(kern, _points(3), jit=False)
