"""Dead-code elimination: ``grad`` (value not needed) drops everything that only feeds the value."""
import numpy as np

import ad
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
