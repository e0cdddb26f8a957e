"""Derivative rules: every adjoint in one table of small kernel-language templates (Tangent's grads.py idea).

``ADJOINTS[name]`` holds, for an operation (``add``, ``mul``, ``pow``...), a ``math`` function or an ``ad.special``
function, one template per argument: the amount added to that argument's adjoint.  In a template ``g`` is the
adjoint of the result ``r``, and ``a`` and ``b`` are the arguments.  A leading ``-`` subtracts the amount; a product
or quotient with ``g`` on the left is *guarded* (``ir.GUARD``: exactly 0 when ``g`` is 0); any part without ``g``
(``1.0 / a``, ``special.digamma(a)``) is lowered like kernel code, so special functions are inlined.  A template is
only lowered for an active argument, so ``pow``'s exponent adjoint (a ``log`` of the base) never appears unless
the exponent is active.  ``partials.py`` lowers the templates; ``reverse.py`` reads them from here.

Math-function templates are written ``g * (partial)``: the partial first, then one guarded product.

``ad.rule(primal)`` registers a user rule in one of two forms, told apart by the number of parameters:

* partials: ``f_partials(*args)`` returns a tuple of partial derivatives, one per argument (numbers only); it is
  plain kernel-subset Python, inlined.  The primal is inlined too, or called when it is compiled (numba).
* adjoint: ``f_adjoint(*args, g, *array_adjoints)`` updates the adjoints of the array arguments in place and
  returns those of the number arguments (docs/api.md has the whole convention).  Neither function is read or
  differentiated: both are called from the generated code (external.py), so either may be a numba ``@njit``
  function, a CUDA device function or plain Python that numba compiles.
"""
import inspect
import math
import types as pytypes
from dataclasses import dataclass
from typing import Optional

from . import special

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# name -> number of arguments; all of these exist in numba (CPU) and numba-cuda (libdevice)
MATH_FUNCS = {
    "exp": 1, "log": 1, "log1p": 1, "expm1": 1, "sqrt": 1, "pow": 2, "sin": 1, "cos": 1, "tan": 1,
    "tanh": 1, "sinh": 1, "cosh": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2, "hypot": 2, "erf": 1,
    "erfc": 1, "lgamma": 1, "fabs": 1, "floor": 1, "ceil": 1, "trunc": 1, "isnan": 1, "isinf": 1,
    "isfinite": 1, "log2": 1, "log10": 1, "asinh": 1, "acosh": 1, "atanh": 1, "gamma": 1,
}
# piecewise constant or boolean: the derivative is zero wherever it exists
ZERO_DERIVATIVE = {"floor", "ceil", "trunc", "isnan", "isinf", "isfinite"}
# numpy ufunc name -> math name (np.exp(x) on a scalar in a kernel means math.exp); the numpy functions that
# mean a builtin, an ad.special function or another construct (np.maximum, np.where, ...) are in calls.py
NUMPY_ALIASES = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin",
                 "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh", "arctan": "atan",
                 "arcsin": "asin", "arccos": "acos", "arctan2": "atan2", "hypot": "hypot", "fabs": "fabs",
                 "abs": "fabs", "absolute": "fabs", "floor": "floor", "ceil": "ceil", "power": "pow",
                 "log2": "log2", "log10": "log10", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
                 "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh"}

# written without conditional expressions: each would be a branch in the generated code, and numba's compile
# time grows with (branches x variables)
_SIGN = "(float(a > 0.0) - float(a < 0.0))"

ADJOINTS = {
    # operations (``pow``: see adjoints(), its base term depends on whether the exponent is a known integer)
    "copy": ("g",),
    "tofloat": ("g",),
    "add": ("g", "g"),
    "sub": ("g", "-g"),
    "neg": ("-g",),
    "mul": ("g * b", "g * a"),
    "div": ("g / b", "-(g * r / b)"),
    "mod": ("g", "g * -float(math.floor(a / b))"),  # a % b = a - b * floor(a / b)
    # math functions, abs, min, max
    "exp": ("g * r",),
    "log": ("g * (1.0 / a)",),
    "log2": ("g * (1.4426950408889634 / a)",),
    "log10": ("g * (0.4342944819032518 / a)",),
    "log1p": ("g * (1.0 / (1.0 + a))",),
    "expm1": ("g * math.exp(a)",),  # r + 1 loses every digit below a ~ -37
    "sqrt": ("g * (0.5 / r)",),
    "sin": ("g * math.cos(a)",),
    "cos": ("g * -math.sin(a)",),
    "tan": ("g * (1.0 + r * r)",),
    # 1 - r r is 0 from |a| ~ 19 on; 1 / cosh^2 keeps the tail's digits (it underflows only where the value does)
    "tanh": ("g * ((1.0 / math.cosh(a)) ** 2)",),
    "sinh": ("g * math.cosh(a)",),
    "cosh": ("g * math.sinh(a)",),
    # (1 - a)(1 + a), not 1 - a a: the digits near |a| = 1, where the derivative is largest
    "asin": ("g * (1.0 / math.sqrt((1.0 - a) * (1.0 + a)))",),
    "acos": ("g * (-1.0 / math.sqrt((1.0 - a) * (1.0 + a)))",),
    "atan": ("g * (1.0 / (1.0 + a * a))",),
    "asinh": ("g * (1.0 / math.hypot(a, 1.0))",),  # a a overflows from |a| ~ 1e154
    "acosh": ("g * (1.0 / (math.sqrt(a - 1.0) * math.sqrt(a + 1.0)))",),
    "atanh": ("g * (1.0 / ((1.0 - a) * (1.0 + a)))",),
    "gamma": ("g * (r * special.digamma(a))",),
    # b / (a a + b b) = cos(r) / hypot(a, b): the squares underflow below ~1e-162 and overflow above ~1e154, and a
    # rescaled form does not survive fastmath's reassociation (one division here, nothing to reorder)
    "atan2": ("g * (math.cos(r) / math.hypot(a, b))", "g * (-math.sin(r) / math.hypot(a, b))"),
    "hypot": ("g * (a / r if r != 0.0 else 0.0)", "g * (b / r if r != 0.0 else 0.0)"),
    "erf": (f"g * ({_TWO_OVER_SQRT_PI!r} * math.exp(-a * a))",),
    "erfc": (f"g * (-{_TWO_OVER_SQRT_PI!r} * math.exp(-a * a))",),
    "lgamma": ("g * special.digamma(a)",),
    "fabs": (f"g * {_SIGN}",),
    "abs": (f"g * {_SIGN}",),
    # Python's min and max: b only when it is strictly smaller (larger), so a NaN b is never taken
    "min": ("g * float(not (b < a))", "g * float(b < a)"),
    "max": ("g * float(not (b > a))", "g * float(b > a)"),
    # numpy's maximum and minimum (np.maximum, np.minimum, np.clip): b also when it is NaN
    "maximum": ("g * float(not (b > a or b != b))", "g * float(b > a or b != b)"),
    "minimum": ("g * float(not (b < a or b != b))", "g * float(b < a or b != b)"),
    # ad.special functions (the others there are differentiated through their source)
    "digamma": ("g * special.trigamma(a)",),
    "trigamma": ("g * special.tetragamma(a)",),
    "logaddexp": ("g * math.exp(a - r)", "g * math.exp(b - r)"),
    "log1pexp": ("g * special.expit(a)",),
    "expit": ("g * (r * special.expit(-a))",),  # r (1 - r) loses all digits of 1 - r from a ~ 37 on
    # 0 log 0 = 0 and 0 log y = 0 for every y: no y-derivative at x = 0, and log y at x = 0 unless y is 0 too
    "xlogy": ("g * (math.log(b) if (a != 0.0 or b != 0.0) else 0.0)", "g * (a / b if a != 0.0 else 0.0)"),

    "lbeta": ("g * (special.digamma(a) - special.digamma(a + b))",
              "g * (special.digamma(b) - special.digamma(a + b))"),
}


def adjoints(name, exponent=None):
    """The templates of operation or function ``name``, or None when it has no rule.  ``exponent``: for
    ``pow``, the exponent's constant value (None when it is a variable)."""
    if name == "pow":
        return _pow_adjoints(exponent)
    return ADJOINTS.get(name)


def _pow_adjoints(exponent):
    if isinstance(exponent, bool):
        exponent = int(exponent)
    if isinstance(exponent, int):
        n = exponent
        if n == 0:
            base = "0.0"
        elif n == 1:
            base = "1.0"
        elif n == 2:
            base = "2.0 * a"
        else:
            base = f"{float(n)!r} * a ** {n - 1}"
    elif isinstance(exponent, float) and exponent.is_integer() and abs(exponent) < 2 ** 31:
        return _pow_adjoints(int(exponent))  # a ** 0.0 and a ** 2.0: the integer forms, exact at a = 0
    elif isinstance(exponent, float):
        base = f"{exponent!r} * a ** {exponent - 1.0!r}"
    else:
        # b a^(b-1) is 0 * inf = NaN at a = 0, b = 0 (a ** k in a loop from k = 0): the term is 0 there
        base = "(b * a ** (b - 1.0) if b != 0.0 else 0.0)"
    # a base <= 0 gets 0 (0 ** b) instead of log(<=0)
    return (f"g * ({base})", "g * (r * math.log(a) if a > 0.0 else 0.0)")


@dataclass(frozen=True)
class TemplateRule:
    """An ``ad.special`` function's entry of ``ADJOINTS``."""
    name: str
    templates: tuple


@dataclass(frozen=True)
class FunctionRule:
    """Partials computed by a user function returning a tuple (``@ad.rule``)."""
    name: str
    function: object


@dataclass(frozen=True)
class AdjointRule:
    """A vector-Jacobian product for a function that is called, not inlined (``@ad.rule`` adjoint form).

    ``writes``: positions of the array parameters the primal may write (None: every local array passed);
    ``nargs`` / ``nparams``: the primal's and the adjoint's parameter counts."""
    name: str
    primal: object
    adjoint: object
    writes: Optional[tuple]
    nargs: int
    nparams: int


_USER_RULES = {}


def parameters(fn):
    """Parameter names of a Python function or of a numba dispatcher (its ``py_func``; the source is not read)."""
    try:
        sig = inspect.signature(getattr(fn, "py_func", fn))
    except (TypeError, ValueError):
        raise TypeError(f"ad.rule: cannot see the parameters of {fn!r}") from None
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in plain or p.default is not p.empty for p in sig.parameters.values()):
        raise TypeError(f"ad.rule: {getattr(fn, '__name__', fn)} must take plain positional parameters")
    return list(sig.parameters)


def rule(primal, writes=None):
    """Register the decorated function as the derivative rule of ``primal``.

    Partials form, ``def f_partials(x, y): return (df_dx, df_dy)`` (as many parameters as the primal): numbers
    only, kernel-subset Python, inlined.  Adjoint form, ``def f_adjoint(*args, g, *array_adjoints)`` (more
    parameters than the primal): any arguments, called.  ``writes``: names of the primal's array parameters it
    writes into (adjoint form only); by default every local array passed is assumed written, which costs a copy
    of each before the call.
    """
    if not callable(primal):
        raise TypeError("ad.rule(primal): primal must be a function")
    names = parameters(primal)
    name = getattr(primal, "__name__", "f")
    if writes is not None:
        writes = (writes,) if isinstance(writes, str) else tuple(writes)
        unknown = [w for w in writes if w not in names]
        if unknown:
            raise TypeError(f"ad.rule({name}, writes=...): {unknown} are not parameters of {name}{tuple(names)}")
        writes = tuple(names.index(w) for w in writes)

    def register(fn):
        n = len(parameters(fn))
        if n == len(names):
            if writes is not None:
                raise TypeError(f"ad.rule({name}, writes=...): writes= belongs to adjoint rules; "
                                f"{fn.__name__} has the primal's parameters, so it is read as partials")
            if not isinstance(fn, pytypes.FunctionType):
                raise TypeError(f"ad.rule({name}): a partials function is inlined, so it must be plain Python; "
                                "for a compiled one write the adjoint form (docs/api.md)")
            _USER_RULES[primal] = FunctionRule(name, fn)
        elif n > len(names):
            _USER_RULES[primal] = AdjointRule(name, primal, fn, writes, len(names), n)
        else:
            raise TypeError(f"ad.rule({name}): {getattr(fn, '__name__', fn)} takes {n} parameters, fewer than "
                            f"{name}'s {len(names)}")
        return fn

    return register


def has_user_rule(fn):
    return user_rule(fn) is not None


def user_rule(fn):
    """The ``@ad.rule`` registered for ``fn`` (any callable), or None."""
    try:
        return _USER_RULES.get(fn)
    except TypeError:  # unhashable
        return None


def lookup(fn):
    """The rule for a Python function object, or None (then the function is inlined and differentiated)."""
    if user_rule(fn) is not None:
        return _USER_RULES[fn]
    name = getattr(fn, "__name__", None)
    if name in ADJOINTS and getattr(special, name, None) is fn:
        return TemplateRule(name, ADJOINTS[name])
    return None


def template_namespace():
    """Names a template may use: ``math`` and ``special``."""
    return {"math": math, "special": special}
