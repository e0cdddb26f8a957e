"""Fence pass: constructs outside the subset are rejected before any transformation, at exact positions
(1-based line and column, as ad/errors.py documents)."""
import numpy as np
import pytest

from nestgrad import ad
from test_core_helpers import from_text

HEADER = "import math\n\n"


def error_of(body, name="k"):
    text = HEADER + body
    with pytest.raises(ad.KernelError) as info:
        from_text(text, name)
    return info.value, text.splitlines()


def test_while_loop_position_and_advice():
    err, lines = error_of("def k(theta, x):\n    s = 0.0\n    while s < 1.0:\n        s += theta[0]\n    return s\n")
    assert isinstance(err, ad.UnsupportedError)
    assert (err.lineno, err.col) == (5, 5)
    assert lines[err.lineno - 1][err.col - 1:].startswith("while")
    assert str(err).startswith(f"{err.filename}:5:5: ")
    assert "range" in str(err)
    assert "for _ in range(max_iter)" in str(err) and "break" in str(err), "the hint shows the bounded form"


def test_array_write_points_at_the_subscript():
    err, lines = error_of("def k(theta, x):\n    x[0] = theta[0]\n    return x[0]\n")
    assert isinstance(err, ad.UnsupportedError)
    assert (err.lineno, err.col) == (4, 5)
    assert "writing into arrays" in str(err)


def test_return_inside_loop_says_what_to_write():
    err, _ = error_of("def k(theta, x):\n    for i in range(3):\n        return theta[0]\n    return 0.0\n")
    assert (err.lineno, err.col) == (5, 9)
    assert "accumulate in a variable and return after the loop" in str(err)


def test_continue_inside_branch_of_loop():
    # `break` is supported (breaks.py, tests/ad/kernels/early_exit.py); `continue` is still rejected
    err, lines = error_of("def k(theta, x):\n    s = 0.0\n    for i in range(3):\n        if i > 1:\n"
                          "            continue\n        s += theta[0]\n    return s\n")
    assert isinstance(err, ad.UnsupportedError)
    assert (err.lineno, err.col) == (7, 13)
    assert lines[err.lineno - 1][err.col - 1:].startswith("continue")


def test_fence_runs_before_lowering():
    # an undefined name comes first in the text, the `while` later: the fence reports the `while`
    err, _ = error_of("def k(theta, x):\n    s = undefined_name\n    while True:\n        pass\n    return s\n")
    assert isinstance(err, ad.UnsupportedError)
    assert err.lineno == 5


def test_undefined_name_is_a_kernel_error_with_position():
    err, _ = error_of("def k(theta, x):\n    s = theta[0] + missing\n    return s\n")
    assert not isinstance(err, ad.UnsupportedError)
    assert (err.lineno, err.col) == (4, 20)
    assert "missing" in str(err)


def test_call_without_rule_or_source():
    err, _ = error_of("import numpy as np\n\ndef k(theta, x):\n    return np.linalg.det(x) * theta[0]\n")
    assert isinstance(err, ad.UnsupportedError)
    assert err.lineno == 6
    assert "@ad.rule" in str(err)


def test_global_array_is_rejected():
    err, _ = error_of("import numpy as np\nTABLE = np.ones(3)\n\ndef k(theta, x):\n    return theta[0] * TABLE[0]\n")
    assert isinstance(err, ad.UnsupportedError)
    assert err.lineno == 7
    assert "argument" in str(err)


def test_variable_first_assigned_in_loop_cannot_be_read_after():
    err, _ = error_of("def k(theta, x):\n    for i in range(3):\n        last = theta[0] * i\n    return last\n")
    assert err.lineno == 6
    assert "before" in str(err)


def test_fence_checks_the_helpers_a_kernel_calls_before_lowering():
    # the kernel's first statement is a lowering error; the helper it calls has a `while`: the fence pass sees the
    # helper first and reports the `while` at the helper's own position
    err, lines = error_of("def helper(a):\n    while a > 1.0:\n        a = a / 2.0\n    return a\n\n"
                          "def k(theta, x):\n    s = undefined_name\n    return helper(theta[0]) + s\n")
    assert isinstance(err, ad.UnsupportedError)
    assert (err.lineno, err.col) == (4, 5)
    assert lines[err.lineno - 1][err.col - 1:].startswith("while")


def test_fence_checks_the_partials_of_a_registered_rule():
    err, lines = error_of("from nestgrad import ad\n\ndef f(a):\n    return a * a\n\n@ad.rule(f)\n"
                          "def f_partials(a):\n    d = [2.0 * a]\n    return (d[0],)\n\n"
                          "def k(theta, x):\n    return f(theta[0]) * x[0]\n")
    assert isinstance(err, ad.UnsupportedError)
    assert (err.lineno, err.col) == (10, 9)
    assert "lists are not supported" in str(err)


def test_helper_returning_a_tuple_is_accepted_only_where_it_is_unpacked():
    helper = "def pair(a):\n    return a, 2.0 * a\n\n"
    d = from_text(HEADER + helper + "def k(theta, x):\n    p, q = pair(theta[0])\n    return p * q\n", "k")
    g = np.zeros(1)
    assert d.value_and_grad(np.array([1.5]), np.zeros(1), g) == pytest.approx(4.5) and g[0] == pytest.approx(6.0)
    err, _ = error_of(helper + "def k(theta, x):\n    return pair(theta[0]) + 1.0\n")
    assert isinstance(err, ad.UnsupportedError)
    assert (err.lineno, err.col) == (4, 12)  # the tuple in the helper's return
