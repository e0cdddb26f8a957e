"""Loop classification, scratch sizing and the report's fixed phrases."""
import re

import numpy as np
import pytest

from nestgrad import ad
from test_core_helpers import assert_gradient_ok, from_text

GAUSS4D = '''
import math

def gauss4d(theta, x):
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    quad = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        quad += d1 * d1 + d2 * d2
    return -0.5 * quad - n * (math.log(s1) + math.log(s2)) - n * math.log(2.0 * math.pi)
'''

EULER = '''
def euler(theta, obs, dt):
    k = theta[0]
    y = theta[1]
    s = 0.0
    for step in range(obs.shape[0]):
        y = y - dt * k * y
        s -= (y - obs[step]) ** 2
    return s
'''

PRODUCT = '''
def product(theta, x):
    q = 1.0
    for i in range(x.shape[0]):
        q *= 1.0 + theta[0] * x[i]
    return q
'''

NESTED = '''
def nested(theta, x, nsub):
    u = theta[1]
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(nsub):
            u = u + 0.1 * theta[0] * u * (1.0 - u)
        s -= (u - x[i]) ** 2
    return s
'''


def ns_of(text):
    ns = {}
    exec(compile(text, "<loops>", "exec"), ns)
    return ns


def test_gauss4d_reduction_needs_nothing():
    d = from_text(GAUSS4D, "gauss4d")
    rep = d.report()
    assert "independent-iteration reduction" in rep and "nothing stored" in rep
    assert "scratch: 0 bytes per sample" in rep
    assert "loop-carried state" not in rep
    assert not d.needs_scratch
    x = np.random.default_rng(1).normal(size=(2, 30))
    assert d.scratch_size(np.ones(4), x) == 0
    assert_gradient_ok(d, ns_of(GAUSS4D)["gauss4d"], (np.array([0.2, -0.1, 1.3, 0.7]), x))


def test_euler_state_is_stored_per_iteration():
    d = from_text(EULER, "euler")
    assert d.needs_scratch
    rep = d.report()
    assert "loop-carried state" in rep and "stored in scratch" in rep
    m = re.search(r"scratch: (\d+)\*\((.*)\) bytes per sample", rep)
    assert m and m.group(1) == "8" and "obs.shape[0]" in m.group(2)
    obs = np.linspace(1.0, 0.2, 25)
    n = d.scratch_size(np.array([0.5, 1.0]), obs, 0.05)
    assert n == 25  # one carried value (y) per iteration
    assert f"scratch: {8 * n} bytes per sample" in d.report(np.array([0.5, 1.0]), obs, 0.05)
    assert_gradient_ok(d, ns_of(EULER)["euler"], (np.array([0.7, 1.2]), obs, 0.05))


def test_raw_function_uses_the_callers_scratch():
    d = from_text(EULER, "euler")
    obs = np.linspace(1.0, 0.2, 10)
    theta = np.array([0.7, 1.2])
    scratch = np.full(d.scratch_size(theta, obs, 0.05), np.nan)
    g1, g2 = np.zeros(2), np.zeros(2)
    v1 = d.raw_value_and_grad(theta, obs, 0.05, g1, scratch)
    v2 = d.value_and_grad(theta, obs, 0.05, g2)
    assert v1 == v2 and np.array_equal(g1, g2)
    assert not np.isnan(scratch).any()  # every slot was written before it was read


def test_product_accumulator_is_handled_exactly():
    d = from_text(PRODUCT, "product")
    x = np.linspace(-0.5, 0.8, 9)
    assert_gradient_ok(d, ns_of(PRODUCT)["product"], (np.array([0.3]), x))


def test_nested_loop_with_inner_state():
    d = from_text(NESTED, "nested")
    rep = d.report()
    assert rep.count("loop at line") == 2 and "loop-carried state" in rep
    x = np.linspace(0.3, 0.6, 6)
    assert_gradient_ok(d, ns_of(NESTED)["nested"], (np.array([0.8, 0.2]), x, 3))


def test_reduction_fused_only_when_the_accumulator_adjoint_is_known_before_the_loop():
    linear = from_text(GAUSS4D, "gauss4d").report()
    assert "fused with the forward pass" in linear
    text = ("import math\n\ndef k(theta, x):\n    s = 0.0\n    for i in range(x.shape[0]):\n"
            "        s += math.exp(theta[0] * x[i])\n    return math.log(s)\n")
    d = from_text(text)
    assert "replayed in reverse order" in d.report()
    assert_gradient_ok(d, ns_of(text)["k"], (np.array([0.4]), np.linspace(-1, 1, 7)))


def test_storing_loop_with_bounds_from_an_outer_index_gets_the_largest_trip_count():
    """A triangular loop: its scratch region is sized for the most iterations it makes (loops.bounds_prelude)."""
    text = ("def k(theta, x):\n    s = 0.0\n    for i in range(x.shape[0]):\n        y = theta[0]\n"
            "        for j in range(i):\n            y = y * y * 0.5 + 0.1\n        s += y\n    return s\n")
    d = from_text(text)
    x = np.linspace(0.3, 0.6, 6)
    assert d.scratch_size(np.array([0.8]), x) == 5, "range(i) for i < 6 makes at most 5 iterations"
    assert_gradient_ok(d, ns_of(text)["k"], (np.array([0.8]), x))


def test_storing_loop_with_bounds_from_a_carried_value_is_rejected():
    text = ("def k(theta, x):\n    s = 0.0\n    m = 1\n    for i in range(x.shape[0]):\n        y = theta[0]\n"
            "        m = m + i\n        for j in range(m):\n            y = y * y * 0.5 + 0.1\n        s += y\n"
            "    return s\n")
    with pytest.raises(ad.UnsupportedError) as info:
        from_text(text)
    assert info.value.lineno == 7 and "trip count" in str(info.value)


INTEGER_STATE = '''
import math

def polar(r, phi):
    return r * math.cos(phi), r * math.sin(phi)

def k(theta, x, idx):
    a, b = polar(theta[0], theta[1])
    j = 0
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[j] + b * x[idx[i]]
        j = j + 1
    t = 1.0
    for i in range(5, -1, -2):
        t = t * (1.0 + theta[0] * x[i]) + min(theta[1], x[i]) + max(abs(theta[0] - x[i]), 0.1)
    return s + t + theta[0] ** theta[1] + math.pow(abs(theta[1]), 1.5)
'''


def test_integer_state_index_arrays_strided_reversed_range_and_tuple_helper():
    d = from_text(INTEGER_STATE)
    x = np.linspace(-1, 1, 8)
    idx = np.array([3, 1, 4, 1, 5, 0, 2, 6])
    assert d.scratch_size(np.zeros(2), x, idx) == 8 + 3  # j per iteration of the first loop, t of the second
    assert_gradient_ok(d, ns_of(INTEGER_STATE)["k"], (np.array([0.7, 0.4]), x, idx))


TWO_LOOPS = '''
def k(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += theta[0] * x[i]
    t = 0.0
    for i in range(x.shape[0]):
        t += s * x[i] * theta[1]
    return t
'''


def test_a_reduction_read_by_a_later_fused_loop_is_not_fused():
    # the first accumulator's adjoint comes from the second loop's reverse: it cannot be known before the loop
    d = from_text(TWO_LOOPS)
    lines = [line for line in d.report().splitlines() if "loop at line" in line]
    assert "replayed in reverse order" in lines[0] and "fused with the forward pass" in lines[1]
    assert_gradient_ok(d, ns_of(TWO_LOOPS)["k"], (np.array([0.5, 1.5]), np.linspace(0.1, 1.0, 5)))


NESTED_SUMS = '''
import math

def diag(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            d = (x[i, j] - theta[j]) / theta[x.shape[1] + j]
            s += d * d
    return -0.5 * s - x.shape[0] * (math.log(theta[2]) + math.log(theta[3]))

def late(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        t = 0.0
        for j in range(x.shape[1]):
            t += theta[0] * x[i, j]
        s += x[i, 0] * t * theta[1]
    return s
'''


@pytest.mark.parametrize("name,fused", [("diag", ["fused", "fused"]), ("late", ["fused", "replayed"])])
def test_nested_reductions_fuse_when_the_inner_adjoint_is_known(name, fused):
    # in `late` the inner accumulator's adjoint needs x[i, 0], read after the inner loop: it is replayed
    d = from_text(NESTED_SUMS, name)
    lines = [line for line in d.report().splitlines() if "loop at line" in line]
    assert [("fused" if "fused with" in line else "replayed") for line in lines] == fused
    x = np.random.default_rng(5).uniform(0.1, 1.0, (4, 2))
    assert_gradient_ok(d, ns_of(NESTED_SUMS)[name], (np.array([0.3, -0.2, 0.8, 1.3]), x))
