"""Activity analysis: active = varied (depends on wrt) ∩ useful (reaches the result)."""

from nestgrad.ad import parse
from nestgrad.ad.pipeline import compile_kernel
from nestgrad.ad.report import user_name

TEXT = '''
import math

def k(theta, x, w):
    a = theta[0] * 2.0          # varied and useful
    unused = theta[1] * 3.0     # varied, not useful
    data = x[0] * w             # useful, not varied
    flag = theta[1] > 0.0       # varied, but boolean: never active
    r = a * data
    if flag:
        r = r + 1.0
    return r
'''


def compiled(wrt="theta", text=TEXT):
    return compile_kernel(parse.from_text(text, "k", "<activity>"), wrt)


def active_user_names(c):
    return {user_name(v) for v in c.activity.active}


def test_varied_and_useful_intersection():
    c = compiled()
    names = active_user_names(c)
    assert "a" in names and "r" in names
    assert "unused" not in names  # eliminated before activity (it does not reach the result)
    assert "data" not in names and "flag" not in names


def test_data_arguments_get_no_shadow():
    c = compiled()
    assert c.wrt == ("theta",)
    assert c.grad_names == ("grad_theta",)
    assert "grad_x" not in "".join(str(s) for s in c.vg_ir)


def test_multiple_active_arguments_in_wrt_order():
    text = "def k(a, x, b):\n    return a[0] * b[1] + x[0]\n"
    c = compile_kernel(parse.from_text(text, "k", "<two>"), ("b", "a"))
    assert c.grad_names == ("grad_b", "grad_a")
    assert set(c.activity.active_args) == {"a", "b"}


def test_active_argument_that_does_not_reach_the_result():
    text = "def k(a, b):\n    return a[0] * 2.0\n"
    c = compile_kernel(parse.from_text(text, "k", "<zero>"), ("a", "b"))
    assert c.activity.active_args == ("a",)


def test_integer_values_are_never_active():
    text = "def k(theta, x):\n    n = x.shape[0]\n    m = n * 2\n    return theta[0] * m\n"
    c = compile_kernel(parse.from_text(text, "k", "<int>"), "theta")
    assert all(c.types.types.get(v) == "float" for v in c.activity.active)
