"""The compiled code's floating-point semantics for the pure-Python variant of a generated module.

numba compiles generated code with ``error_model='numpy'``: ``x / 0.0`` is inf or NaN, ``math.log(0.0)`` is -inf,
``math.sqrt(-1.0)`` NaN, ``0.0 ** -1.0`` inf. Plain Python raises ``ZeroDivisionError``, ``ValueError`` or
``OverflowError`` for each, so the pure-Python ``value_and_grad`` failed where ``jit()`` gave the right gradient:
``0.0 * math.sqrt(y)`` at ``y = 0`` has the partial ``0.5 / sqrt(y)`` times a zero adjoint, which the guarded
product (``selects``) drops -- once the partial exists.

The Python variant stays plain Python (readable, as fast as Python gets) and runs as it is; only a call that raises
one of those errors is run again in a twin of the module (:func:`twin_source`) whose divisions, powers and ``math``
functions follow IEEE arithmetic (:data:`math`, :func:`div`, :func:`pow_`).
"""
import ast
import functools
import math as _math
import types

import numpy as np

_ERRORS = (ZeroDivisionError, ValueError, OverflowError)


def _numpy(fn):
    def ieee(*args):
        with np.errstate(all="ignore"):
            return float(fn(*(np.float64(a) for a in args)))
    return ieee


def _gamma_like(fn, at_pole):
    def ieee(x):
        try:
            return fn(x)
        except ValueError:  # a pole: 0, -1, -2, ...
            return at_pole(x)
        except OverflowError:
            return _math.inf
    return ieee


# ``math`` for the twin: every function of ``math`` that raises where the compiled code returns inf or NaN
math = types.SimpleNamespace(**{name: getattr(_math, name) for name in dir(_math) if not name.startswith("_")})
for _name, _fn in {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "log2": np.log2,
                   "log10": np.log10, "sqrt": np.sqrt, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin,
                   "acos": np.arccos, "acosh": np.arccosh, "atanh": np.arctanh, "pow": np.power,
                   "sin": np.sin, "cos": np.cos, "tan": np.tan, "fmod": np.fmod}.items():
    setattr(math, _name, _numpy(_fn))
math.lgamma = _gamma_like(_math.lgamma, lambda x: _math.inf)
math.gamma = _gamma_like(_math.gamma, lambda x: _math.inf if x == 0 else _math.nan)


def div(a, b):
    """``a / b``, with inf or NaN where Python raises."""
    try:
        return a / b
    except ZeroDivisionError:
        if isinstance(a, int) and isinstance(b, int):
            raise
        with np.errstate(all="ignore"):
            return float(np.float64(a) / np.float64(b))


def mod(a, b):
    """``a % b``, NaN where Python raises for floats (integers by zero still raise)."""
    try:
        return a % b
    except ZeroDivisionError:
        if isinstance(a, int) and isinstance(b, int):
            raise
        return _math.nan


def floordiv(a, b):
    """``a // b``, inf or NaN where Python raises for floats (integers by zero still raise)."""
    try:
        return a // b
    except ZeroDivisionError:
        if isinstance(a, int) and isinstance(b, int):
            raise
        with np.errstate(all="ignore"):
            return float(np.floor_divide(np.float64(a), np.float64(b)))


def pow_(a, b):
    """``a ** b``, with inf or NaN where Python raises (or returns a complex number for a negative base)."""
    try:
        r = a ** b
    except _ERRORS:
        with np.errstate(all="ignore"):
            return float(np.power(np.float64(a), np.float64(b)))
    return _math.nan if isinstance(r, complex) else r


class _Operators(ast.NodeTransformer):
    """``a / b``, ``a % b``, ``a // b`` and ``a ** b`` as calls of :func:`div`, :func:`mod`, :func:`floordiv` and
    :func:`pow_` (in augmented assignments too)."""

    _CALLS = {ast.Div: "_ieee_div", ast.Mod: "_ieee_mod", ast.FloorDiv: "_ieee_floordiv", ast.Pow: "_ieee_pow"}

    def visit_BinOp(self, node):
        self.generic_visit(node)
        name = self._CALLS.get(type(node.op))
        if name is None:
            return node
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), [node.left, node.right], []), node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        name = self._CALLS.get(type(node.op))
        if name is None or not isinstance(node.target, ast.Name):
            return node
        value = ast.Call(ast.Name(name, ast.Load()), [ast.Name(node.target.id, ast.Load()), node.value], [])
        return ast.copy_location(ast.Assign([node.target], value), node)


def twin_source(source):
    """``source`` (a generated Python module) with IEEE divisions, powers and ``math``."""
    tree = _Operators().visit(ast.parse(source))
    header = ("from nestgrad.ad.ieee import math, div as _ieee_div, mod as _ieee_mod, floordiv as _ieee_floordiv, "
              "pow_ as _ieee_pow  # IEEE semantics\n")
    body = [s for s in tree.body if not (isinstance(s, ast.Import) and [a.name for a in s.names] == ["math"])]
    return header + ast.unparse(ast.fix_missing_locations(ast.Module(body, []))) + "\n"


def with_twin(fn, twin):
    """``fn`` that, where plain Python raises an arithmetic error, returns what ``twin()``'s function of the same
    name returns (the compiled code's answer); ``twin``: a function returning the twin module (made on first
    use)."""
    @functools.wraps(fn)
    def call(*args):
        try:
            return fn(*args)
        except _ERRORS as plain:
            try:
                with np.errstate(all="ignore"):  # inf and NaN are the answers here, not accidents to warn of
                    return getattr(twin(), fn.__name__)(*args)
            except _ERRORS:
                raise plain from None  # not arithmetic (a bad argument): the plain call's own error
    return call
