"""Property-based: random kernels with branches on active values, min/max/abs and powers.

Such kernels are only piecewise smooth, so an example whose test point lies within a finite-difference step of
a switch is discarded (second differences reveal it) rather than judged; elsewhere the AD gradient must
follow the branch taken and match finite differences.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nestgrad import ad
from ad_test_kernels import numerics as nm

NTHETA = 3
DATA = np.linspace(-1.0, 1.0, 4)
THETA = [f"theta[{k}]" for k in range(NTHETA)]

UNARY = [
    "abs({0})",
    "math.tanh({0})",
    "({0} ** 2)",
    "({0} ** 3)",
    "math.sqrt(1.0 + {0} * {0})",
    "math.exp(-{0} * {0})",
]
BINARY = [
    "({0} + {1})",
    "({0} * {1})",
    "min({0}, {1})",
    "max({0}, {1})",
    "({0} if {0} > {1} else {1} * 0.5)",
    "((1.5 + {0} * {0}) ** math.tanh({1}))",
    "math.pow(1.25 + abs({0}), {1} * 0.5)",
]


def expressions(names):
    leaves = st.one_of(st.sampled_from(names), st.sampled_from(["0.5", "1.5", "-0.25"]))

    def extend(children):
        unary = st.builds(lambda t, a: t.format(a), st.sampled_from(UNARY), children)
        binary = st.builds(lambda t, a, b: t.format(a, b), st.sampled_from(BINARY), children, children)
        return st.one_of(unary, binary)

    return st.recursive(leaves, extend, max_leaves=5)


@st.composite
def kernels(draw):
    a = draw(expressions(THETA))
    b = draw(expressions(THETA + ["a"]))
    cond = draw(st.sampled_from(["a > b", "a < 0.0 or b > 1.0", "not (a > 0.5) and b < 2.0", "a * b > 0.1"]))
    body = draw(expressions(THETA + ["a", "x[i]"]))
    lines = [
        "import math", "", "", "def k(theta, x):",
        f"    a = {a}",
        f"    b = {b}",
        f"    if {cond}:",
        "        c = a * b",
        "    elif b > a:",
        "        c = b - a",
        "    else:",
        "        c = math.sin(a)",
        "    s = 0.0",
        "    for i in range(x.shape[0]):",
        f"        s += {body}",
        "    return s + c",
    ]
    return "\n".join(lines) + "\n"


def _function(text):
    namespace = {}
    exec(compile(text, "<hypothesis kernel>", "exec"), namespace)
    return namespace["k"]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(text=kernels(), theta=st.lists(st.floats(-1.5, 1.5), min_size=NTHETA, max_size=NTHETA))
def test_random_branchy_kernel_gradients(text, theta):
    theta = np.array(theta)
    fn = _function(text)
    want = fn(theta, DATA)
    assume(np.isfinite(want))
    assume(nm.smooth_at(fn, [theta, DATA], [0]))  # no branch switch within a step of the point
    fd, steps = nm.finite_difference_gradient(fn, [theta, DATA], [0])

    d = ad.differentiate_source(text, "k", wrt="theta", filename="hypothesis_branches.py")
    grad = np.full(NTHETA, np.nan)
    value = d.value_and_grad(theta, DATA, grad)
    assert value == pytest.approx(want, rel=1e-12, abs=1e-12), text
    problems = nm.fd_mismatch([grad], fd, steps, want)
    assert not problems, text + "\n" + "\n".join(problems)
