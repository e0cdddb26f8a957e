"""Property-based: random expression kernels, written out as source text, differentiate correctly.

Each example is a small kernel with a few temporaries and optionally a reduction loop over data, built from
+ - * / and exp/log/sin/cos/tanh/sqrt/atan on arguments kept inside their domains by construction. The AD
gradient (pure-Python path: a numba compile per example would be too slow) must match finite differences.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nestgrad import ad
from ad_test_kernels import numerics as nm

NTHETA = 3
DATA = np.linspace(-1.0, 1.0, 5)

# unary templates: every argument a float (domain-safe for any real input)
UNARY = [
    "math.exp(math.tanh({}))",
    "math.log(1.0 + {0} * {0})",
    "math.sin({})",
    "math.cos({})",
    "math.tanh({})",
    "math.sqrt(1.5 + {0} * {0})",
    "math.atan({})",
    "(-{})",
]
BINARY = ["({0} + {1})", "({0} - {1})", "({0} * {1})", "({0} / (1.5 + {1} * {1}))"]


def expressions(names):
    leaves = st.one_of(
        st.sampled_from(names),
        st.sampled_from(["0.5", "1.25", "2.0", "-0.75"]),
    )

    def extend(children):
        unary = st.builds(lambda t, a: t.format(a), st.sampled_from(UNARY), children)
        binary = st.builds(lambda t, a, b: t.format(a, b), st.sampled_from(BINARY), children, children)
        return st.one_of(unary, binary)

    return st.recursive(leaves, extend, max_leaves=6)


THETA = [f"theta[{k}]" for k in range(NTHETA)]


@st.composite
def kernels(draw):
    """Source text of ``k(theta, x)`` plus a description used in failure messages."""
    t0 = draw(expressions(THETA))
    t1 = draw(expressions(THETA + ["t0"]))
    lines = ["import math", "", "", "def k(theta, x):", f"    t0 = {t0}", f"    t1 = {t1}", "    s = 0.0"]
    if draw(st.booleans()):
        body = draw(expressions(THETA + ["t0", "t1", "x[i]"]))
        op = draw(st.sampled_from(["+=", "-="]))
        lines += ["    for i in range(x.shape[0]):", f"        s {op} {body}"]
    tail = draw(expressions(THETA + ["t0", "t1"]))
    lines.append(f"    return s + t0 * t1 + {tail}")
    return "\n".join(lines) + "\n"


def _namespace_function(text):
    namespace = {}
    exec(compile(text, "<hypothesis kernel>", "exec"), namespace)
    return namespace["k"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=kernels(), theta=st.lists(st.floats(-1.5, 1.5), min_size=NTHETA, max_size=NTHETA))
def test_random_expression_kernel_gradients(text, theta):
    theta = np.array(theta)
    fn = _namespace_function(text)
    d = ad.differentiate_source(text, "k", wrt="theta", filename="hypothesis_kernel.py")
    grad = np.full(NTHETA, np.nan)
    value = d.value_and_grad(theta, DATA, grad)
    want = fn(theta, DATA)
    assert value == pytest.approx(want, rel=1e-12, abs=1e-12), text
    fd, steps = nm.finite_difference_gradient(fn, [theta, DATA], [0])
    problems = nm.fd_mismatch([grad], fd, steps, want)
    assert not problems, text + "\n" + "\n".join(problems)
    only = np.full(NTHETA, np.nan)
    d.grad(theta, DATA, only)
    assert not nm.close_mismatch(only, grad, 1e-12, 1e-12 * nm.scale_of(value, [grad])), text
