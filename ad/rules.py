"""Derivative rules: partials as small kernel-language expression templates (Tangent's grads.py idea).

In a template, ``a`` and ``b`` are the call's arguments and ``r`` its result; the reverse pass lowers the
template like kernel code (so ``special.digamma(a)`` is inlined) and adds ``adjoint(r) * partial`` to each
active argument's adjoint. A template is only emitted for an active argument, so ``pow``'s exponent partial (a
``log`` of the base) never appears unless the exponent is active.

``ad.rule(primal)`` registers a user rule: the decorated function takes the primal's arguments and returns a
tuple of partials (both are plain kernel-subset Python, inlined into the generated code).
"""
import math
from dataclasses import dataclass

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

# name -> number of arguments; all of these exist in numba (CPU) and numba-cuda (libdevice)
MATH_FUNCS = {
    "exp": 1, "log": 1, "log1p": 1, "expm1": 1, "sqrt": 1, "pow": 2, "sin": 1, "cos": 1, "tan": 1,
    "tanh": 1, "sinh": 1, "cosh": 1, "asin": 1, "acos": 1, "atan": 1, "atan2": 2, "hypot": 2, "erf": 1,
    "erfc": 1, "lgamma": 1, "fabs": 1, "floor": 1, "ceil": 1, "trunc": 1, "isnan": 1, "isinf": 1,
    "isfinite": 1, "log2": 1, "log10": 1,
}
# piecewise constant or boolean: the derivative is zero wherever it exists
ZERO_DERIVATIVE = {"floor", "ceil", "trunc", "isnan", "isinf", "isfinite"}
# numpy ufunc name -> math name (np.exp(x) on a scalar in a kernel means math.exp)
NUMPY_ALIASES = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin",
                 "cos": "cos", "tan": "tan", "tanh": "tanh", "sinh": "sinh", "cosh": "cosh", "arctan": "atan",
                 "arcsin": "asin", "arccos": "acos", "arctan2": "atan2", "hypot": "hypot", "fabs": "fabs",
                 "abs": "fabs", "absolute": "fabs", "floor": "floor", "ceil": "ceil", "power": "pow",
                 "log2": "log2", "log10": "log10", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}

# written without conditional expressions: each would be a branch in the generated code, and numba's compile
# time grows with (branches x variables)
_SIGN = "(float(a > 0.0) - float(a < 0.0))"

MATH_RULES = {
    "exp": ("r",),
    "log": ("1.0 / a",),
    "log2": ("1.4426950408889634 / a",),
    "log10": ("0.4342944819032518 / a",),
    "log1p": ("1.0 / (1.0 + a)",),
    "expm1": ("r + 1.0",),
    "sqrt": ("0.5 / r",),
    "sin": ("math.cos(a)",),
    "cos": ("-math.sin(a)",),
    "tan": ("1.0 + r * r",),
    "tanh": ("1.0 - r * r",),
    "sinh": ("math.cosh(a)",),
    "cosh": ("math.sinh(a)",),
    "asin": ("1.0 / math.sqrt(1.0 - a * a)",),
    "acos": ("-1.0 / math.sqrt(1.0 - a * a)",),
    "atan": ("1.0 / (1.0 + a * a)",),
    "atan2": ("b / (a * a + b * b)", "-a / (a * a + b * b)"),
    "hypot": ("(a / r if r != 0.0 else 0.0)", "(b / r if r != 0.0 else 0.0)"),
    "erf": (f"{_TWO_OVER_SQRT_PI!r} * math.exp(-a * a)",),
    "erfc": (f"-{_TWO_OVER_SQRT_PI!r} * math.exp(-a * a)",),
    "lgamma": ("special.digamma(a)",),
    "fabs": (_SIGN,),
    "abs": (_SIGN,),
    "min": ("float(a <= b)", "float(not (a <= b))"),
    "max": ("float(a >= b)", "float(not (a >= b))"),
    # pow: see pow_partials (the base partial depends on whether the exponent is a known integer)
}

SPECIAL_RULES = {
    "digamma": ("special.trigamma(a)",),
    "trigamma": ("special.tetragamma(a)",),
    "logaddexp": ("math.exp(a - r)", "math.exp(b - r)"),
    "log1pexp": ("special.expit(a)",),
    "expit": ("r * (1.0 - r)",),
    "xlogy": ("(math.log(b) if a != 0.0 else 0.0)", "a / b"),
    "lbeta": ("special.digamma(a) - special.digamma(a + b)", "special.digamma(b) - special.digamma(a + b)"),
}


def pow_partials(exponent):
    """Templates for ``a ** b``; ``exponent`` is the exponent's constant value or None when it is a variable."""
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
    elif isinstance(exponent, float):
        base = f"{exponent!r} * a ** {exponent - 1.0!r}"
    else:
        base = "b * a ** (b - 1.0)"
    # exponent partial: emitted only for an active exponent; a base <= 0 gets 0 (0 ** b) instead of log(<=0)
    return (base, "(r * math.log(a) if a > 0.0 else 0.0)")


@dataclass(frozen=True)
class TemplateRule:
    """Partials written as expression templates (built-in rules)."""
    name: str
    templates: tuple


@dataclass(frozen=True)
class FunctionRule:
    """Partials computed by a user function returning a tuple (``@ad.rule``)."""
    name: str
    function: object


_USER_RULES = {}
_SPECIAL_MODULE = __name__.rsplit(".", 1)[0] + ".special"  # nestgrad.ad.special


def rule(primal):
    """Register the decorated function as the partial derivatives of ``primal``.

    ``@ad.rule(f)`` / ``def f_partials(x, y): return (df_dx, df_dy)``: both functions are plain kernel-subset
    Python; the partials function takes the primal's arguments and returns one partial per argument.
    """
    if not callable(primal):
        raise TypeError("ad.rule(primal): primal must be a function")

    def register(partials):
        _USER_RULES[primal] = FunctionRule(getattr(primal, "__name__", "f"), partials)
        return partials

    return register


def lookup(fn):
    """The rule for a Python function object, or None (then the function is inlined and differentiated)."""
    if fn in _USER_RULES:
        return _USER_RULES[fn]
    name = getattr(fn, "__name__", None)
    if getattr(fn, "__module__", None) == _SPECIAL_MODULE and name in SPECIAL_RULES:
        return TemplateRule(name, SPECIAL_RULES[name])
    return None


def special_namespace():
    """Names a template may use: ``math`` and ``special``."""
    from . import special
    return {"math": math, "special": special}
