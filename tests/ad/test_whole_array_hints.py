"""Whole-array operations the differentiator does not turn into loops (np.max, np.prod, np.linalg.norm, `@`,
indexing a call's result, a comparison inside np.sum, a local holding `x * theta[0]`, an array argument used as a
number) are refused at their ``file:line:col`` with the per-element loop to write instead -- before: "call to
'np.max': it has no derivative rule and no Python source", "the operator `@` is not supported: use + - * /",
"`Compare` is not supported inside np.sum/np.dot", "'y' is not an array argument", or, for an array passed where
the kernel computes with a number, Python's "only 0-dimensional arrays can be converted to Python scalars"."""
import math

import numpy as np
import pytest

from nestgrad import ad

LOOP = "write it as a loop over the elements, e.g. `"

# (id, kernel body after `def k(theta, x):`, (line, 1-based col) of the offending spot, words in the message)
REFUSED = [
    ("np_max", "    return np.max(x) * theta[0]\n", (5, 12),
     ["call to 'np.max'", "`m = x[0]` and `for i in range(1, x.shape[0]): m = max(m, x[i])`"]),
    ("np_prod", "    return np.prod(x - theta[0])\n", (5, 12), ["call to 'np.prod'", "p *= x[i] - mu"]),
    ("np_linalg_norm", "    return np.linalg.norm(x - theta[0])\n", (5, 12),
     ["call to 'np.linalg.norm'", LOOP + "total = 0.0` and `for i in range(x.shape[0]): total += (x[i] - mu) ** 2`"]),
    ("matmul", "    return np.sum(x @ x) * theta[0]\n", (5, 19), ["matrix products `a @ b`", LOOP]),
    ("indexed_call", "    return np.log(x)[0] * theta[0]\n", (5, 12),
     ["`np.log(x)[0]` indexes the result of a whole-array operation", "`np.log(x[i])`", LOOP]),
    ("comparison_in_sum", "    return np.sum(np.where(x > theta[0], x, 0.0))\n", (5, 28),
     ["a comparison is not supported inside np.sum", "an `if` in its body", LOOP]),
    ("indexed_whole_array_local", "    y = x * theta[0]\n    return y[0]\n", (6, 12),
     ["'y' is not an array argument", "`y = np.zeros(x.shape[0])` and `for i in range(x.shape[0]): y[i] = "]),
    ("reduced_whole_array_local", "    y = x * theta[0]\n    return np.sum(y)\n", (6, 12),
     ["this reduction has no array operand", "`np.sum(x * theta[0])`", LOOP]),
    ("array_argument_as_number", "    return (x[0] + x) * theta[0]\n", (5, 13),
     ["the array argument 'x' is used as a number here", "x[i]", LOOP]),
]


def _text(body):
    return "import math\nimport numpy as np\n\ndef k(theta, x):\n" + body


@pytest.mark.parametrize("name, body, where, words", REFUSED, ids=[r[0] for r in REFUSED])
def test_whole_array_operations_get_the_loop_to_write(name, body, where, words):
    with pytest.raises(ad.KernelError) as info:
        ad.differentiate_source(_text(body), "k", filename="arrays.py")
    err = info.value
    assert (err.filename, err.lineno, err.col) == ("arrays.py",) + where, str(err)
    for w in words:
        assert w in str(err), str(err)


def scaled(theta, x):
    return x * theta[0]  # x is never indexed: the kernel computes with it as a number


@pytest.mark.parametrize("call", ["value_and_grad", "check_gradient"])
def test_an_array_passed_for_a_number_names_the_argument_and_the_loop(call):
    x = np.linspace(0.5, 2.0, 5)
    with pytest.raises(ad.KernelError) as info:
        if call == "value_and_grad":
            ad.differentiate(scaled).value_and_grad(np.array([0.3]), x, np.zeros(1))
        else:
            ad.check_gradient(scaled, np.array([0.3]), x)
    err, text = info.value, str(info.value)
    assert err.filename == __file__ and err.lineno == scaled.__code__.co_firstlineno + 1 and err.col == 12, text
    assert "scaled() uses its argument 'x' as a number here" in text and "shape (5,)" in text, text
    assert LOOP in text, text


def test_a_number_for_a_number_still_works():
    grad = np.zeros(1)
    assert ad.differentiate(scaled).value_and_grad(np.array([0.3]), 2.0, grad) == pytest.approx(0.6)
    assert grad[0] == pytest.approx(2.0)


def logs(theta, x):
    return np.sum(math.log(x) * theta[0])  # the differentiator reads math.log elementwise; Python cannot


def test_a_kernel_that_python_cannot_run_is_named_by_check_gradient():
    """Finite differences run the plain function: it failed with Python's bare "only 0-dimensional arrays can be
    converted to Python scalars"; now the message names the kernel's line and the usual cause."""
    with pytest.raises(TypeError) as info:
        ad.check_gradient(logs, np.array([0.3]), np.linspace(0.5, 2.0, 5))
    text = str(info.value)
    assert f"the kernel logs does not run as plain Python at {__file__}:{logs.__code__.co_firstlineno + 1}" in text
    assert "`math.log(x[i])`" in text, text


LEN_ONLY = '''
import numpy as np

def count(theta, x):
    s = 0.0
    for i in range(len(x)):
        s += theta[0] * i
    return s

def zeros_of_len(theta, x):
    b = np.zeros(len(x) + 1)
    for i in range(b.shape[0]):
        b[i] = theta[0] * i
    return b[2]
'''


@pytest.mark.parametrize("name, value, grad", [("count", 10.5, 15.0), ("zeros_of_len", 1.4, 2.0)])
def test_len_of_an_array_the_kernel_never_indexes(name, value, grad):
    """len(x) makes x an array as x.shape[0] does: it was taken for a number (a KernelError on the Python path, a
    numba TypingError from jit())."""
    d = ad.differentiate_source(LEN_ONLY, name, filename="<len_only>")
    x = np.linspace(0.0, 1.0, 6)
    for derivative in (d, d.jit()):
        g = np.zeros(1)
        assert derivative.value_and_grad(np.array([0.7]), x, g) == pytest.approx(value, rel=1e-12)
        assert g[0] == pytest.approx(grad, rel=1e-12)
