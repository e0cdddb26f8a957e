"""Dead-code elimination: ``grad`` (value not needed) drops everything that only feeds the value."""
import numpy as np

from nestgrad import ad
from test_core_helpers import assert_gradient_ok

POISSON = '''
import math

def poisson_shared(theta, c):
    s = 0.0
    for i in range(c.shape[0]):
        lam = theta[0]
        s += c[i] * math.log(lam) - lam - math.lgamma(c[i] + 1.0)
    return s

def poisson_each(theta, c):
    s = 0.0
    for i in range(c.shape[0]):
        lam = theta[i]
        s += c[i] * math.log(lam) - lam - math.lgamma(c[i] + 1.0)
    return s
'''


def function_text(source, name):
    start = source.index(f"def {name}(")
    end = source.find("\ndef ", start + 1)
    return source[start:] if end < 0 else source[start:end]


def ns():
    out = {}
    exec(compile(POISSON, "<poisson>", "exec"), out)
    return out


def test_poisson_grad_has_no_lgamma_and_no_log():
    for name, theta in (("poisson_shared", np.array([2.5])), ("poisson_each", np.array([1.5, 2.0, 3.5, 0.7]))):
        d = ad.differentiate_source(POISSON, name, filename="<poisson>")
        for fn in ("grad", "raw_grad"):
            text = function_text(d.source, fn)
            assert "lgamma" not in text and "log(" not in text, text
        assert "lgamma" in function_text(d.source, "value_and_grad")
        c = np.array([1.0, 3.0, 0.0, 2.0])
        assert_gradient_ok(d, ns()[name], (theta, c))


def test_unused_statements_are_removed_from_the_primal():
    text = "import math\n\ndef k(theta, x):\n    waste = math.lgamma(theta[1])\n    return theta[0] * 2.0\n"
    d = ad.differentiate_source(text, "k", filename="<dead>")
    assert "lgamma" not in d.source


DEAD_LOOP = '''
def h(a, x, k):
    for i in range(len(x)):
        t = 0 if a else 0
        a = x[k % len(x)]
    return 1.5

def k(theta, x):
    n = x.shape[0]
    return h(2, x, n) * theta[0] + theta[1]
'''


def test_dead_loop_state_is_removed_to_a_fixpoint():
    """A dead branch at the top of a loop body reads a carried value that is only computed at its end: one
    round of elimination kept that computation (``x[k % len(x)]``) but dropped the shape it needs before the
    loop, and type inference then took the missing ``k`` for a float (fuzz seed 186, FINDINGS.md F2)."""
    from nestgrad.ad import dce
    from nestgrad.ad.ir import Assign, Const, For, If
    body = [Assign("n", "shape", ["x", Const(0)]),
            Assign("a", "copy", [Const(2)]),
            For("i", Const(0), "n", Const(1), [
                If("a", [Assign("s", "copy", [Const(0)])], [Assign("s", "copy", [Const(1)])]),
                Assign("j", "mod", ["n", Const(3)]),
                Assign("b", "index", ["x", "j"]),
                Assign("a", "copy", ["b"])]),
            Assign("r", "copy", [Const(1.5)])]
    assert dce.eliminate(body, {"r"}) == [body[-1]]
    d = ad.differentiate_source(DEAD_LOOP, "k", filename="<dead_loop>")
    assert "% " not in d.source and " if " not in d.source
    g = np.zeros(2)
    assert d.value_and_grad(np.array([0.5, 0.25]), np.array([0.1, 0.2, 0.3]), g) == 1.5 * 0.5 + 0.25
    np.testing.assert_allclose(g, [1.5, 1.0])
