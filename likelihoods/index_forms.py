"""The integer forms likelihoods/kernel_use.py gives to index expressions, and their evaluation on data shapes.

A *size* is a small expression tree over the data: ``("c", 3)``, ``("shape", "x", 0)`` (``x.shape[0]``),
``("val", "n")`` (an integer scalar argument) and ``(op, size, size)`` for ``+ - * // min max``. An
:class:`Affine` form is ``size + coef * i`` for at most one loop variable ``i`` (a :class:`Loop`); every
read of an argument is an :class:`Access` with one form per axis. likelihoods/bounds.py judges them.
"""

import ast
from dataclasses import dataclass

# Size expressions: ("c", int) | ("shape", arg, axis) | ("val", arg) | (op, size, size) for + - * // min max
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//"}
_EVAL = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
         "//": lambda a, b: a // b, "min": min, "max": max}


def size_value(size, shapes, values):
    """Evaluate a size expression; None when it needs a shape or value that is not known."""
    kind = size[0]
    if kind == "c":
        return size[1]
    if kind == "shape":
        shape = shapes.get(size[1])
        return shape[size[2]] if shape is not None and size[2] < len(shape) else None
    if kind == "val":
        value = values.get(size[1])
        return int(value) if value is not None else None
    left, right = size_value(size[1], shapes, values), size_value(size[2], shapes, values)
    if left is None or right is None or (kind == "//" and right == 0):
        return None
    return _EVAL[kind](left, right)


@dataclass(eq=False)
class Loop:
    """A ``for var in range(start, stop, step)`` loop; start/stop are sizes, None when they depend on
    another loop variable or on something not understood."""
    var: str
    start: object
    stop: object
    step: int
    node: ast.For
    filename: str


@dataclass(frozen=True)
class Affine:
    """An integer ``const + coef * loop.var`` (``loop`` None: just ``const``)."""
    const: tuple
    loop: object = None
    coef: int = 0


@dataclass(eq=False)
class Access:
    """One read ``array[i0, i1, ...]``: per-axis :class:`Affine` forms (None: not understood), where it is,
    the loops around it (outermost first) and whether an ``if``/``and``/``or``/conditional guards it."""
    array: str
    forms: tuple
    node: ast.AST
    filename: str
    loops: tuple
    guarded: bool


def combine(op, left, right):
    """Affine arithmetic: sums of forms with at most one loop variable, products by constants."""
    if not isinstance(left, Affine) or not isinstance(right, Affine):
        return None
    kind = _OPS.get(op)
    if kind in ("+", "-"):
        if left.loop is not None and right.loop is not None and left.loop is not right.loop:
            return None
        loop = left.loop or right.loop
        coef = left.coef + (right.coef if kind == "+" else -right.coef)
        return Affine((kind, left.const, right.const), loop if coef else None, coef)
    if kind == "*":
        if left.loop is None and right.loop is None:
            return Affine(("*", left.const, right.const))
        fixed, varying = (left, right) if left.loop is None else (right, left)
        if fixed.loop is None and fixed.const[0] == "c":
            k = fixed.const[1]
            return Affine(("*", fixed.const, varying.const), varying.loop if k else None, k * varying.coef)
        return None
    if kind == "//" and left.loop is None and right.loop is None:
        return Affine(("//", left.const, right.const))
    return None
