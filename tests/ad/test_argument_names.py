"""Kernel arguments spelled like the generated module's own names (ad/names.py).

The generated module names the arguments as the kernel does, next to its imports (``np``, ``math``, ``cuda``),
builtins (``range``, ``float``), loop variables (``zero_k``), functions (``value``, ``scratch_size``), helpers
(``_nz_mul``) and IR temporaries (``t__1``, ``x__f``). A data argument with one of those names used to be the
module's own variable (a TypeError in Python, a TypingError in numba, a compile_ptx failure); now it is renamed
in the generated code, and every backend returns the plain kernel's value and its gradient.
"""
import ast
import keyword

import numba
import numpy as np
import pytest
from numba import cuda

from nestgrad import ad
from nestgrad.ad import derivative, ieee, names, pipeline
from nestgrad.likelihoods import Likelihood

# Every kind of generated name: imports, builtins, loop variables, functions, helpers and the footers' names,
# IR temporaries (a reader's first, a scalar's float copy, an optimiser name, an adjoint), the gradient and
# scratch parameters.
NAMES = ("zero_k", "copy_k", "np", "math", "cuda", "numba", "selects", "_nz_mul", "_nz_div", "_external",
         "_ext_0123", "_ieee_div", "_OPTIONS", "py_value", "rows_need0", "value", "grad", "raw_value",
         "raw_grad", "raw_value_and_grad", "scratch_size", "float", "int", "range", "max", "abs", "len",
         "t__1", "y__2", "p__o1", "s__f", "t__3_b", "scratch", "grad_theta")
# compiled for numba and compile_ptx: one of each kind (compiling all would take minutes)
COMPILED = ("zero_k", "copy_k", "np", "math", "cuda", "_nz_mul", "scratch_size", "range", "t__1", "s__f")

# ``{a}``: the array argument, ``{s}``: the scalar one (the other name is an ordinary one). ``mod`` is numpy
# under a name no test argument takes; np.sin and np.exp differentiate to math.cos and math.exp, and the local
# array takes scratch (zeroed and copied by the generated loops over zero_k and copy_k).
TEMPLATE = '''
import numpy as mod


def k(theta, {a}, {s}):
    n = {a}.shape[0]
    buf = mod.zeros(n)
    total = 0.0
    for i in range(n):
        buf[i] = theta[0] * mod.exp(theta[1] * {a}[i])
    for i in range(n):
        r = {a}[i] - buf[i] - mod.sin(theta[1]) / {s}
        total += -0.5 * r * r
    return total
'''
# for an argument named ``range`` (the kernel cannot loop then): the same sum as a reduction, which the
# generated code runs as a loop over range()
REDUCTION = '''
import numpy as mod


def k(theta, {a}, {s}):
    c = mod.sin(theta[1]) / {s}
    return -0.5 * mod.sum(({a} - theta[0] * mod.exp(theta[1] * {a}) - c) ** 2)
'''
THETA = np.array([0.4, -0.3])
X = np.array([0.5, 1.5, -1.0, 2.0])
S = 1.7


def _kernel(name, as_scalar):
    a, s = ("x", name) if as_scalar else (name, "s")
    text = (REDUCTION if name == "range" else TEMPLATE).format(a=a, s=s)
    filename = f"<argument named {name}{' (scalar)' if as_scalar else ''}>"
    namespace = {}
    exec(compile(text, filename, "exec"), namespace)
    return namespace["k"], ad.differentiate_source(text, "k", filename=filename), (a, s)


def _fd(fn, h=1e-6):
    out = np.empty(2)
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        out[j] = (fn(THETA + e, X, S) - fn(THETA - e, X, S)) / (2 * h)
    return out


def _check(obj, fn, dtype, rtol):
    g = np.full(2, np.nan, dtype)
    v = obj.value_and_grad(THETA.astype(dtype), X.astype(dtype), dtype(S), g)
    np.testing.assert_allclose(float(v), fn(THETA, X, S), rtol=rtol)
    np.testing.assert_allclose(g, _fd(fn), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("as_scalar", [False, True], ids=["array", "scalar"])
@pytest.mark.parametrize("name", NAMES)
def test_python(name, as_scalar):
    fn, d, _ = _kernel(name, as_scalar)
    _check(d, fn, np.float64, 1e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", COMPILED)
def test_jit(name, dtype):
    fn, d, _ = _kernel(name, as_scalar=False)
    _check(d.jit(dtype=np.dtype(dtype).name), fn, dtype, 1e-7 if dtype is np.float64 else 2e-3)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", COMPILED)
def test_compile_ptx(name, dtype):
    _, d, _ = _kernel(name, as_scalar=name == "s__f")
    f = numba.from_dtype(np.dtype(dtype))
    arr = numba.types.Array(f, 1, "C")
    ptx, result = cuda.compile_ptx(d.cuda(dtype=dtype).python["raw_value_and_grad"], (arr, arr, f, arr, arr),
                                   device=True, cc=(9, 0))
    assert result == f and ".func" in ptx


@pytest.mark.parametrize("backend,dtype", [("python", "float64"), ("cpu", "float64"), ("cpu", "float32")])
@pytest.mark.parametrize("name", ["zero_k", "np", "math", "t__1"])
def test_likelihood(name, backend, dtype):
    fn, _, (a, s) = _kernel(name, as_scalar=False)
    like = Likelihood(fn, ["a", "b"], {a: X, s: S}, backend=backend, dtype=dtype)
    thetas = np.array([THETA, THETA[::-1]])
    v, g = like.logl_and_grad(thetas.astype(dtype))
    rtol = 1e-7 if dtype == "float64" else 2e-3
    for row, theta in enumerate(thetas):
        np.testing.assert_allclose(v[row], fn(theta, X, S), rtol=rtol)
    np.testing.assert_allclose(g[0], _fd(fn), rtol=rtol, atol=rtol)


def test_renaming_is_invisible():
    """Messages and reports name the argument as the kernel does; the signature keeps the user's names."""
    _, d, _ = _kernel("np", as_scalar=False)
    assert d.arg_names == ("theta", "np", "s")
    assert "np__arg" in d.source and "np__arg" not in d.report(THETA, X, S)
    text = "def k(theta, np):\n    return theta[0] * np[0] + np[0, 1]\n"
    with pytest.raises(ad.KernelError, match=r"array 'np' is indexed with 2 indices here but 1 elsewhere"):
        ad.differentiate_source(text, "k")


def _free_names(source):
    """Names a module binds or reads as variables (not attributes, keywords or strings)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.alias):
            found.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef):
            found.add(node.name)
    return found


def test_generated_names_are_reserved():
    """Every name a generated module uses that is not an IR variable (those contain ``__``), the gradient or
    scratch parameter, or an argument kept as it is, is one ``names.needs_renaming`` renames arguments away
    from: a new generated name outside ``names.RESERVED`` fails here instead of colliding with an argument."""
    _, d, _ = _kernel("x", as_scalar=False)
    c = d._c
    sources = [d.source, ieee.twin_source(d.source), derivative.module_source_primal(c)]
    sources += [pipeline.module_source(c, "float32", "cpu", wide_sums=True) + derivative._cpu_footer(True),
                pipeline.module_source(c, "float32", "cuda") + derivative._cuda_footer()]
    own = set(c.ir_args) | set(c.grad_names) | {c.scratch, c.name, "nestgrad"}
    for source in sources:
        loose = {n for n in _free_names(source) - own if "__" not in n and not keyword.iskeyword(n)}
        assert {n for n in loose if not names.needs_renaming(n)} == set()
