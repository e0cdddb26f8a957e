"""Lowering pass: desugaring keeps Python's meaning (checked by running the generated primal), and the IR has
one assignment per straight-line name."""
import math

import numpy as np
import pytest

from nestgrad import ad
from nestgrad.ad import ir, parse
from nestgrad.ad.lower import lower_function
from test_core_helpers import assert_gradient_ok

SRC = '''
import math

def swap(theta, x):
    a, b = theta[0], theta[1]
    a, b = b, 2.0 * a
    return a - 3.0 * b

def early(theta, x):
    s = theta[0] * theta[1]
    if s <= 0.0:
        return -math.inf
    elif s > 10.0:
        return 10.0 * math.log(s)
    t = math.log(s)
    return t * t

def conditional(theta, x):
    y = theta[0] if theta[1] > 0.0 else -theta[0] * theta[0]
    return y * theta[1] + (1.0 if x[0] > 0 else 2.0)

def shortcircuit(theta, x):
    s = 0.0
    # math.log of a negative number raises in plain Python: `and` must not evaluate it
    if theta[0] > 0.0 and math.log(theta[0]) > -1.0:
        s = math.log(theta[0])
    if theta[1] < 0.0 or math.sqrt(theta[1]) > 0.5:
        s += theta[1] * theta[1]
    return s

def augmented(theta, x):
    t = theta[0]
    t += 1.0
    t *= theta[1]
    t -= theta[0] / 3.0
    t /= 1.0 + theta[1] * theta[1]
    t **= 2
    return t

def chained(theta, x):
    r = 0.0
    if -1.0 < theta[0] < 1.0 <= theta[1] + 1.0:
        r = theta[0] * theta[1]
    return r
'''


def module():
    ns = {}
    exec(compile(SRC, "<lower-test>", "exec"), ns)
    return ns


@pytest.mark.parametrize("name,theta", [
    ("swap", [0.3, -1.2]), ("early", [1.5, 2.0]), ("early", [-1.0, 2.0]), ("early", [4.0, 3.0]),
    ("conditional", [0.7, 0.4]), ("conditional", [0.7, -0.4]), ("shortcircuit", [-0.5, -0.2]),
    ("shortcircuit", [2.0, 0.36]), ("augmented", [0.4, 1.3]), ("chained", [0.2, 0.5]), ("chained", [0.2, -0.5]),
])
def test_desugared_kernel_keeps_value_and_gradient(name, theta):
    fn = module()[name]
    d = ad.differentiate_source(SRC, name, filename="<lower-test>")
    args = (np.array(theta), np.array([0.5, -1.0]))
    expected = fn(*args)
    assert d.value(*args) == pytest.approx(expected, rel=1e-15, abs=0) or (math.isinf(expected) and
                                                                             d.value(*args) == expected)
    if math.isfinite(expected):
        assert_gradient_ok(d, fn, args)


def test_straight_line_names_are_assigned_once():
    src = parse.from_text(SRC, "augmented", "<lower-test>")
    body, ret, ctx = lower_function(src)
    top = [s.dst for s in body if isinstance(s, ir.Assign)]
    assert len(top) == len(set(top))
    assert ret in top


def test_loop_carried_names_are_copied_in_and_back():
    text = ("def k(theta, x):\n    s = 0.0\n    for i in range(x.shape[0]):\n        s += theta[0] * x[i]\n"
            "    return s\n")
    body, ret, _ = lower_function(parse.from_text(text, "k", "<carried>"))
    loop = next(s for s in body if isinstance(s, ir.For))
    # the carried name is assigned before the loop and at the end of the body, and returned after the loop
    before = [s for s in body[:body.index(loop)] if isinstance(s, ir.Assign) and s.dst == ret]
    assert before and loop.body[-1].dst == ret


def test_early_return_is_restructured_into_if_else():
    src = parse.from_text(SRC, "early", "<lower-test>")
    body, ret, _ = lower_function(src)
    assert not any(isinstance(s, ir.Return) for s in ir.walk(body))
    branches = [s for s in body if isinstance(s, ir.If)]
    assert branches and branches[-1].orelse


def test_helper_and_special_functions_are_inlined():
    text = ("import math\nfrom ad import special\n\ndef helper(a, b):\n    return a * math.exp(b)\n\n"
            "def k(theta, x):\n    return helper(theta[0], theta[1]) + special.digamma(theta[0])\n")
    d = ad.differentiate_source(text, "k", filename="<inline-test>")
    assert "def helper" not in d.source and "special." not in d.source and "digamma(" not in d.source
    ns = {}
    exec(compile(text, "<inline-test>", "exec"), ns)
    assert_gradient_ok(d, ns["k"], (np.array([1.3, 0.2]), np.zeros(1)))


def test_float_modulo_and_floor_division():
    text = ("import math\n\ndef k(theta, x):\n    a = theta[0] % 0.7\n    b = theta[1] % theta[0]\n"
            "    c = theta[1] // 0.3\n    return a * b + c * theta[0]\n")
    d = ad.differentiate_source(text, "k", filename="<mod>")
    ns = {}
    exec(compile(text, "<mod>", "exec"), ns)
    assert_gradient_ok(d, ns["k"], (np.array([1.1, 2.5]), np.zeros(1)))
