"""Reductions users write anyway -- ``np.sum(e)``, ``e.sum()``, ``np.dot(a, b)``, ``np.mean(e)``, ``e.mean()`` --
lowered into the loop they stand for (a mean divides the sum by the trip count), so they differentiate and compile
exactly like the hand-written one:

    total = np.sum(((y - a * x) / s) ** 2)      →     acc = 0.0
                                                      for k in range(y.shape[0]):
                                                          acc += ((y[k] - a * x[k]) / s) ** 2

``e`` is an element-wise expression: arithmetic, math functions (``np.exp``, ``math.log``...) and numbers
around the *array operands*, which are 1-D arrays named directly (``x``) and rows or columns of 2-D arrays
(``X[i, :]``, ``X[:, j]``).  A bare argument name inside the reduction is an array operand unless the function
also uses it as a plain number elsewhere (then it is a scalar broadcast over the elements).  The loop runs
over the first array operand's length; the others must be as long (the data checks of ``likelihoods`` see the
reads).  Anything else is rejected at its ``file:line:col``.

The accumulator and the index get names no Python identifier can have (``#``).
"""
import ast
import types

import numpy as np

from . import resolve
from .local_arrays import ArrayInfo

REDUCTIONS = ("np.sum", "np.dot", "np.mean", ".sum()", ".mean()")

# the loop to write instead of a whole-array numpy function, by its name (others: the sum's loop)
_LOOP_OF = {
    "max": "m = {a}[0]` and `for i in range(1, {a}.shape[0]): m = max(m, {a}[i])",
    "min": "m = {a}[0]` and `for i in range(1, {a}.shape[0]): m = min(m, {a}[i])",
    "prod": "p = 1.0` and `for i in range({a}.shape[0]): p *= {a}[i] - mu",
}
_LOOP_OF.update(amax=_LOOP_OF["max"], amin=_LOOP_OF["min"], nanmax=_LOOP_OF["max"], nanmin=_LOOP_OF["min"])


def whole_array_advice(array="x", function=None):
    """What to write instead of a whole-array operation on the array named ``array``: a kernel computes with
    numbers, element by element, in a loop (the one form every part of the differentiator supports); ``function``:
    the numpy function's name, for a loop that does what it did."""
    loop = _LOOP_OF.get(function, "total = 0.0` and `for i in range({a}.shape[0]): total += ({a}[i] - mu) ** 2")
    return (f"kernels compute with numbers, element by element: write it as a loop over the elements, e.g. "
            f"`{loop.format(a=array)}` (np.sum, np.dot and np.mean of an element-wise expression, "
            f"`np.sum(({array} - mu) ** 2)`, are turned into such a loop for you)")


def array_name(nodes, default="x"):
    """The first name among the ``ast`` nodes that is not a module's (``np`` in ``np.log``): the user's array, for
    advice; else ``default``."""
    for node in nodes:
        bases = {id(n.value) for n in ast.walk(node) if isinstance(n, ast.Attribute)}
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and id(n) not in bases:
                return n.id
    return default
_METHODS = {"sum": "method", "mean": "method_mean"}


def reduction_kind(e, resolve):
    """``'sum'``, ``'dot'``, ``'mean'``, ``'method'`` (``e.sum()``) or ``'method_mean'`` when the call ``e`` is one
    of the reductions, else None.  ``resolve``: the lowerer's name lookup (a KernelError when the name is a local
    value)."""
    f = e.func
    if isinstance(f, ast.Attribute) and f.attr in _METHODS and not _is_module_path(f.value, resolve):
        return _METHODS[f.attr]
    try:
        fn = resolve(f)
    except Exception:  # a local's attribute: not ours, lowering reports it
        return None
    return {np.sum: "sum", np.dot: "dot", np.mean: "mean"}.get(fn) if callable(fn) else None


def _is_module_path(e, resolve):
    try:
        resolve(e)
        return True
    except Exception:
        return False


def scalar_argument_uses(fn_node, passes_arrays):
    """Names the function uses as plain numbers somewhere outside reductions (not as an array read's base,
    ``.shape``'s base, ``len``'s argument or an argument of a helper, ``passes_arrays(call)``)."""
    out = set()

    def visit(node, in_reduction):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "len":
                return
            if passes_arrays(node):
                for a in node.args:
                    if not isinstance(a, ast.Name):
                        visit(a, in_reduction)
                return
            inside = in_reduction or (isinstance(node.func, ast.Attribute)
                                      and node.func.attr in ("sum", "dot", "mean"))
            if isinstance(node.func, ast.Attribute):
                visit(node.func.value, inside)
            for a in node.args:
                visit(a, inside)
        elif isinstance(node, ast.Subscript):
            visit(node.slice, in_reduction)
        elif isinstance(node, ast.Attribute):
            return
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and not in_reduction:
                out.add(node.id)
        else:
            for child in ast.iter_child_nodes(node):
                visit(child, in_reduction)

    for s in fn_node.body:
        visit(s, False)
    return out


class Elementwise:
    """Rewrites one reduction's operand into its ``k``-th element (an ``ast`` expression)."""

    def __init__(self, low, index):
        self.low = low
        self.index = index
        self.length = None  # ast expression of the loop's trip count (from the first array operand)
        self.scalars = scalar_argument_uses(low.src.node, lambda call: _helper_call(low, call))

    def is_array(self, name):
        v = self.low.env.get(name)
        if isinstance(v, ArrayInfo):
            return True
        return isinstance(v, str) and v in self.low.ctx.arg_names and name not in self.scalars

    def k(self, node):
        return ast.copy_location(ast.Name(id=self.index, ctx=ast.Load()), node)

    def _length(self, name_node, axis, node):
        if self.length is None:
            shape = ast.Attribute(value=ast.Name(id=name_node.id, ctx=ast.Load()), attr="shape", ctx=ast.Load())
            self.length = ast.Subscript(value=shape, slice=ast.Constant(axis), ctx=ast.Load())
            for n in ast.walk(self.length):
                ast.copy_location(n, node)

    def element(self, e):
        if isinstance(e, ast.Name) and self.is_array(e.id):
            self._length(e, 0, e)
            return ast.copy_location(ast.Subscript(value=e, slice=self.k(e), ctx=ast.Load()), e)
        if isinstance(e, ast.Subscript) and _slices(e):
            return self.row(e)
        if isinstance(e, ast.BinOp):
            return ast.copy_location(ast.BinOp(left=self.element(e.left), op=e.op, right=self.element(e.right)), e)
        if isinstance(e, ast.UnaryOp):
            return ast.copy_location(ast.UnaryOp(op=e.op, operand=self.element(e.operand)), e)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len":
            return e
        if isinstance(e, ast.Call) and reduction_kind(e, self.low.resolve) is None:
            return ast.copy_location(ast.Call(func=e.func, args=[self.element(a) for a in e.args], keywords=[]), e)
        if isinstance(e, (ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            return e  # a number: a scalar, an element read, math.pi, a nested reduction
        what = _READABLE.get(type(e), f"`{type(e).__name__}`")
        raise self.low.unsupported(e, f"{what} is not supported inside np.sum/np.dot/np.mean (only arithmetic and "
                                      f"math functions of the elements are): write the loop with an `if` in its "
                                      f"body; " + whole_array_advice(array_name([e])))

    def row(self, e):
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        if not isinstance(e.value, ast.Name) or not self.is_array(e.value.id):
            raise self.low.unsupported(e, "only array arguments can be sliced")
        where = [p for p in parts if isinstance(p, ast.Slice)]
        if len(parts) != 2 or len(where) != 1:
            raise self.low.unsupported(e, "inside a reduction, slice one axis of a 2-D array: `x[i, :]` or "
                                          "`x[:, j]`")
        axis = parts.index(where[0])
        self._length(e.value, axis, e)
        new = [self.k(e) if p is where[0] else p for p in parts]
        return ast.copy_location(ast.Subscript(value=e.value, slice=ast.Tuple(elts=new, ctx=ast.Load()),
                                               ctx=ast.Load()), e)


_READABLE = {ast.Compare: "a comparison", ast.IfExp: "a conditional expression `a if c else b`",
             ast.BoolOp: "`and`/`or`"}


def _helper_call(low, call):
    """A call of a Python helper (inlined): a bare name passed to it may be an array."""
    try:
        fn = low.resolve(call.func)
    except Exception:
        return False
    return isinstance(fn, types.FunctionType) and resolve.inlinable(fn)


def _slices(e):
    parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
    return any(isinstance(p, ast.Slice) for p in parts)


def full_slice(p):
    """``:`` with no bounds (the only slice the fence lets through, for rows and columns in reductions)."""
    return isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None


def lower_reduction(low, e, kind):
    """Emit the loop for the reduction call ``e`` through ``low`` (a ``lower.Lowerer``); its result operand."""
    name = {"method": ".sum()", "method_mean": ".mean()", "sum": "np.sum", "mean": "np.mean"}.get(kind)
    if kind in ("method", "method_mean"):
        if e.args or e.keywords:
            raise low.unsupported(e, f"`{name}` takes no arguments in kernels (one axis, the whole 1-D operand)")
        operand = e.func.value
    elif kind in ("sum", "mean"):
        if len(e.args) != 1 or e.keywords:
            raise low.unsupported(e, f"{name} takes one argument in kernels (no axis: reduce a row `x[i, :]`)")
        operand = e.args[0]
    else:
        if len(e.args) != 2:
            raise low.err(e, "np.dot takes two arguments")
        operand = ast.copy_location(ast.BinOp(left=e.args[0], op=ast.Mult(), right=e.args[1]), e)
    low.ctx.counter += 1
    acc, index = f"sum#{low.ctx.counter}", f"k#{low.ctx.counter}"
    ew = Elementwise(low, index)
    term = ew.element(operand)
    if ew.length is None:
        raise low.unsupported(e, "this reduction has no array operand: name a 1-D array argument (`np.sum(x)`), "
                                 "a row `x[i, :]` or a column `x[:, j]` in it (a local assigned a whole-array "
                                 "expression, `y = x * theta[0]`, is not an array in kernels: write the expression "
                                 "inside the reduction, `np.sum(x * theta[0])`); " + whole_array_advice())
    loop = ast.For(target=ast.Name(id=index, ctx=ast.Store()),
                   iter=ast.Call(func=ast.Name(id="range", ctx=ast.Load()), args=[ew.length], keywords=[]),
                   body=[ast.AugAssign(target=ast.Name(id=acc, ctx=ast.Store()), op=ast.Add(), value=term)],
                   orelse=[])
    for n in (loop, loop.target, loop.iter, loop.iter.func, loop.body[0], loop.body[0].target):
        ast.copy_location(n, e)
    low.env[acc] = low.constant_of(e, 0.0)
    low.stmt(loop)
    if kind in ("mean", "method_mean"):
        mean = ast.BinOp(left=ast.Name(id=acc, ctx=ast.Load()), op=ast.Div(),
                         right=ast.Call(func=ast.Name(id="float", ctx=ast.Load()), args=[ew.length], keywords=[]))
        for n in ast.walk(mean):
            ast.copy_location(n, e)
        result = low.expr(mean)
        low.env.pop(acc)
        return result
    return low.env.pop(acc)
