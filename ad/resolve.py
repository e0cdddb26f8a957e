"""What a name in a kernel refers to: a module, a function (and which kind), or a numeric constant.

Shared by the fence pass (which follows calls into helper functions before lowering starts) and by lowering
(which turns the same names into IR); both must agree on which calls are inlined.
"""
import ast
import builtins
import math
import numbers
import sys

import numpy as np

from . import rules
from .ir import Const

_AD_PACKAGE = __name__.rsplit(".", 1)[0] + "."  # functions of the differentiator itself (ad.special)
# their bodies are outside the kernel subset: a call into them needs a rule
_LIBRARIES = {"numpy", "scipy", "numba", "jax", "torch", "cupy", "sympy", "pandas"}


def dotted(e):
    """``a.b.c`` as written (for messages)."""
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return dotted(e.value) + "." + e.attr
    return "<expr>"


def lookup(e, namespace, local_names, where):
    """The Python object the ``name`` or ``a.b.c`` expression ``e`` refers to; a ``KernelError`` at ``e`` when it
    names a local variable or nothing at all."""
    if isinstance(e, ast.Name):
        if e.id in local_names:
            raise where.unsupported(e, f"{e.id!r} is a local variable or argument, not a module or function")
        if e.id in namespace:
            return namespace[e.id]
        if hasattr(builtins, e.id):
            return getattr(builtins, e.id)
        raise where.error(e, f"name {e.id!r} is not defined")
    if isinstance(e, ast.Attribute):
        if isinstance(e.value, ast.Name) and e.value.id in local_names:
            raise where.unsupported(e, f"attribute `.{e.attr}` of a kernel value is not supported (only "
                                       "`x.shape[k]` on array arguments)")
        base = lookup(e.value, namespace, local_names, where)
        if not hasattr(base, e.attr):
            raise where.error(e, f"{dotted(e.value)!r} has no attribute {e.attr!r}")
        return getattr(base, e.attr)
    raise where.unsupported(e, "unsupported expression")


def constant(e, obj, where):
    """``obj`` (the value of the global ``e``) as an IR constant; only numbers are allowed."""
    if isinstance(obj, (bool, np.bool_)):
        return Const(bool(obj))
    if isinstance(obj, numbers.Integral):
        return Const(int(obj))
    if isinstance(obj, numbers.Real):
        return Const(float(obj))
    if isinstance(obj, np.ndarray):
        raise where.unsupported(e, "global arrays are not supported: pass the array as a data argument")
    raise where.unsupported(e, f"{dotted(e)!r} is a {type(obj).__name__}, not a number: kernels may read only "
                               "numeric module constants; pass other values as arguments")


def inlinable(fn):
    """User code and ad.special are inlined; library functions (numpy, scipy, the standard library) are not:
    their bodies are outside the kernel subset, so they need a rule instead."""
    module = getattr(fn, "__module__", None) or ""
    if module.startswith(_AD_PACKAGE) or rules.has_user_rule(fn):
        return True
    top = module.split(".")[0]
    return top not in _LIBRARIES and top not in getattr(sys, "stdlib_module_names", ())


def is_own(fn):
    """A function of the differentiator itself (ad.special): not the user's code."""
    return (getattr(fn, "__module__", None) or "").startswith(_AD_PACKAGE)


def math_name(fn):
    """The ``math`` name of a math function (``np.exp`` included), or None."""
    for name in rules.MATH_FUNCS:
        if getattr(math, name, None) is fn:
            return name
    if isinstance(fn, np.ufunc) and fn.__name__ in rules.NUMPY_ALIASES:
        return rules.NUMPY_ALIASES[fn.__name__]
    return None
