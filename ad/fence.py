"""Fence pass: are the kernel, and every Python function it would inline, inside the kernel subset?  Runs on the
``ast`` before any transformation (``pipeline.compile_kernel`` calls ``check_kernel`` before lowering).

Every rejection is an ``UnsupportedError`` at the exact node, saying what to write instead.  This pass looks at
syntax only; it resolves a call's name just far enough to find the helper functions to check as well.  Whether
a name is defined, or a global is a numeric constant, is decided while lowering (also with positions).
"""
import ast
import types as pytypes

from . import parse, resolve, rules, sugar
from .errors import KernelError, Pos, UnsupportedError, Where, error_at

_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)
_AUGOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.FloorDiv, ast.Mod)
_UNARY = (ast.USub, ast.UAdd, ast.Not)

_STATEMENT_ADVICE = {
    ast.While: "`while` loops are not supported: write a bounded loop, `for _ in range(max_iter): ... if "
               "converged: break` (or `for i in range(n)` with a trip count from the data)",
    ast.Continue: "`continue` is not supported: guard the rest of the loop body with `if`",
    ast.With: "`with` is not supported in kernels",
    ast.Try: "`try` is not supported in kernels: a kernel that fails for a sample should return -math.inf",
    ast.Raise: "`raise` is not supported in kernels: return -math.inf (or math.nan) for impossible samples",
    ast.Delete: "`del` is not supported in kernels",
    ast.Import: "imports belong at the top of the file, outside the kernel",
    ast.ImportFrom: "imports belong at the top of the file, outside the kernel",
    ast.Global: "`global` is not supported: pass the value as an argument",
    ast.Nonlocal: "`nonlocal` is not supported: pass the value as an argument",
    ast.FunctionDef: "nested function definitions are not supported: define helpers at module level",
    ast.ClassDef: "class definitions are not supported in kernels",
    ast.Assert: "`assert` is not supported in kernels: return -math.inf for impossible samples",
}

_EXPR_ADVICE = {
    ast.Lambda: "lambdas are not supported: define a module-level helper function",
    ast.ListComp: "comprehensions are not supported: write a `for i in range(n)` loop that accumulates",
    ast.SetComp: "comprehensions are not supported: write a `for i in range(n)` loop that accumulates",
    ast.DictComp: "comprehensions are not supported: write a `for i in range(n)` loop that accumulates",
    ast.GeneratorExp: "generator expressions are not supported: write a `for i in range(n)` loop",
    ast.List: "lists are not supported in kernels: pass a numpy array as a data argument",
    ast.Dict: "dicts are not supported in kernels: pass the values as arguments",
    ast.Set: "sets are not supported in kernels",
    ast.JoinedStr: "strings are not supported in kernels",
    ast.Await: "`await` is not supported in kernels",
    ast.Yield: "generators are not supported in kernels: return one scalar",
    ast.YieldFrom: "generators are not supported in kernels: return one scalar",
    ast.NamedExpr: "`:=` is not supported: assign on its own line",
    ast.Starred: "`*args` is not supported in kernels",
}


def check_kernel(src):
    """Check the kernel ``src`` (a ``parse.Source``), then each function it calls that lowering would inline
    (helpers, ad.special functions, ``@ad.rule`` primals and partials), depth first in source order."""
    check_function(src.node, src.filename)
    seen = set()
    for callee, tuple_return in _callees(src):
        _check_callee(callee, tuple_return, seen)


def _check_callee(fn, tuple_return, seen):
    if (fn, tuple_return) in seen:
        return  # checked already (or recursion, which lowering reports at the call)
    seen.add((fn, tuple_return))
    src = parse.from_function(fn)
    check_function(src.node, src.filename, allow_tuple_return=tuple_return)
    for callee, tuple_return in _callees(src):
        _check_callee(callee, tuple_return, seen)


def _callees(src):
    """``(function, returns_tuple)`` for each call in ``src`` to a Python function lowering would inline: a rule's
    partials function returns a tuple, and so does a helper called as ``a, b = f(...)``."""
    local = set(src.arg_names)  # (a local assigned before the call shadows a global too: lowering rejects that)
    unpacked = {id(s.value) for s in ast.walk(src.node) if isinstance(s, ast.Assign)
                and isinstance(s.targets[0], ast.Tuple)}
    for node in _in_source_order(src.node.body):
        if not isinstance(node, ast.Call):
            continue
        try:
            fn = resolve.lookup(node.func, src.namespace, local, Where(src.filename))
        except KernelError:
            continue  # lowering says what is wrong with the name, at the same position
        if not (isinstance(fn, pytypes.FunctionType) and resolve.inlinable(fn)):
            continue
        if fn.__name__ == "<lambda>":
            raise Where(src.filename).unsupported(
                node, f"`{ast.unparse(node.func)}` is a lambda (defined at {fn.__code__.co_filename}:"
                      f"{fn.__code__.co_firstlineno}): lambdas are not supported: define a module-level helper "
                      f"function with `def`")
        rule = rules.lookup(fn)
        if isinstance(rule, rules.AdjointRule):
            continue  # called, never read (external.py)
        yield fn, id(node) in unpacked and rule is None
        if isinstance(rule, rules.FunctionRule):
            yield rule.function, True


def _in_source_order(stmts):
    for s in stmts:
        yield from _walk(s)


def _walk(node):
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _walk(child)


def check_function(node, filename, allow_tuple_return=False):
    """Raise ``UnsupportedError`` for the first construct outside the subset (in source order)."""
    check_signature(node, filename)
    _Checker(Where(filename), allow_tuple_return).block(node.body, in_loop=False)


def check_signature(node, filename):
    """Raise ``UnsupportedError`` at the first argument that is not a plain positional name (``*args``,
    ``**kwargs``, keyword-only, positional-only ``/``, a default value), with the ``def`` line to write instead:
    the generated functions take every argument by position, each data argument looked up by its own name."""
    where, args = Where(filename), node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    plain = f"`def {node.name}({', '.join(names)})`"
    if args.vararg or args.kwarg:
        star, arg = ("*", args.vararg) if args.vararg else ("**", args.kwarg)
        spelled = f"def {node.name}({', '.join(names + ['x', 'y'])})"
        at = Pos(arg.lineno, arg.col_offset + 1 - len(star), filename)  # at the star, not the name after it
        raise error_at(at, f"`{star}{arg.arg}` is not supported in the arguments of {node.name}(): the generated "
                           f"code passes each argument by position, so name every data argument instead, e.g. "
                           f"`{spelled}` (each one given by name in `data`)", filename, UnsupportedError)
    if args.kwonlyargs:
        arg = args.kwonlyargs[0]
        raise where.unsupported(arg, f"keyword-only argument {arg.arg!r} (after `*`) is not supported in the "
                                     f"arguments of {node.name}(): drop the `*` and write {plain}")
    if args.posonlyargs:
        arg = args.posonlyargs[-1]
        raise where.unsupported(arg, f"the positional-only marker `/` after {arg.arg!r} is not supported in the "
                                     f"arguments of {node.name}(): drop it and write {plain}")
    defaults = [d for d in args.defaults + args.kw_defaults if d is not None]
    if defaults:
        default = defaults[0]
        arg = (args.posonlyargs + args.args)[len(args.posonlyargs + args.args) - len(args.defaults)]
        raise where.unsupported(default, f"default values are not supported in the arguments of {node.name}() "
                                         f"(`{arg.arg}={ast.unparse(default)}`): write {plain} and give "
                                         f"{arg.arg!r} its value in `data` (or write the constant in the body)")


class _Checker:
    def __init__(self, where, allow_tuple_return):
        self.where = where
        self.allow_tuple_return = allow_tuple_return

    def fail(self, node, message):
        raise self.where.unsupported(node, message)

    def block(self, stmts, in_loop):
        for stmt in stmts:
            self.stmt(stmt, in_loop)

    def stmt(self, s, in_loop):
        if isinstance(s, ast.Break):
            return  # only ever inside a loop (Python's own rule); breaks.py rewrites it
        for kind, advice in _STATEMENT_ADVICE.items():
            if isinstance(s, kind):
                self.fail(s, advice)
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                self.fail(s, "chained assignment `a = b = ...` is not supported: assign each name on its own")
            self.target(s.targets[0], s.value)
            self.expr(s.value, tuple_ok=isinstance(s.targets[0], ast.Tuple))
        elif isinstance(s, ast.AnnAssign):
            if s.value is None or not isinstance(s.target, ast.Name):
                self.fail(s, "annotated assignment must assign a value to a plain name")
            self.expr(s.value)
        elif isinstance(s, ast.AugAssign):
            self.target(s.target, s.value, aug=True)
            if not isinstance(s.op, _AUGOPS):
                self.fail(s, f"augmented assignment `{_opname(s.op)}=` is not supported: use += -= *= /= **= //= %=")
            self.expr(s.value)
        elif isinstance(s, ast.For):
            advice = _iteration_advice(s)
            if advice:
                self.fail(s.iter, advice)
            if not isinstance(s.target, ast.Name):
                self.fail(s.target, "the loop variable must be a single name: `for i in range(n)`")
            it = s.iter
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                    and 1 <= len(it.args) <= 3 and not it.keywords):
                self.fail(it, "only `for i in range(stop)`, `range(start, stop)` or `range(start, stop, step)` "
                              "loops are supported: index arrays explicitly")
            if s.orelse:
                self.fail(s.orelse[0], "`for ... else` is not supported")
            for a in it.args:
                self.expr(a)
            self.block(s.body, in_loop=True)
        elif isinstance(s, ast.If):
            self.expr(s.test)
            self.block(s.body, in_loop)
            self.block(s.orelse, in_loop)
        elif isinstance(s, ast.Return):
            if in_loop:
                self.fail(s, "`return` inside a loop is not supported: accumulate in a variable and return "
                             "after the loop")
            if s.value is None:
                self.fail(s, "a kernel must return a scalar value")
            self.expr(s.value, tuple_ok=self.allow_tuple_return)
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.Expr):
            if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
                return  # docstring
            if isinstance(s.value, ast.Call) and isinstance(s.value.func, (ast.Name, ast.Attribute)):
                self.expr(s.value)
                return  # a helper or ad.linalg function writing into local arrays (lowering checks that it does)
            if isinstance(s.value, ast.Call):
                self.fail(s, "a call whose result is discarded does nothing in a kernel (calls with side "
                             "effects are not supported): assign its result or remove it")
            self.fail(s, "an expression on its own line has no effect in a kernel: assign it or remove it")
        else:
            self.fail(s, f"`{type(s).__name__}` statements are not supported in kernels")

    def target(self, t, value, aug=False):
        if isinstance(t, ast.Name):
            return
        if isinstance(t, ast.Tuple) and not aug:
            for e in t.elts:
                if not isinstance(e, ast.Name):
                    self.target(e, value)
            if not (isinstance(value, ast.Tuple) and len(value.elts) == len(t.elts)):
                if not isinstance(value, ast.Call):
                    self.fail(value, "tuple unpacking needs a tuple of the same length on the right: "
                                     "`a, b = theta[0], theta[1]`")
            return
        if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            return  # an element of a local array (lowering refuses inputs: they are never written)
        if isinstance(t, ast.Subscript):
            self.fail(t, "writing into arrays is not supported (inputs are never written): keep values in "
                         "scalar variables or accumulate into a scalar")
        if isinstance(t, ast.Attribute):
            self.fail(t, "attribute assignment is not supported in kernels: use a local variable")
        self.fail(t, "assign to a plain name (or a tuple of names)")

    def expr(self, e, tuple_ok=False):
        for kind, advice in _EXPR_ADVICE.items():
            if isinstance(e, kind):
                self.fail(e, advice)
        if isinstance(e, ast.Constant):
            if isinstance(e.value, str) or isinstance(e.value, bytes):
                self.fail(e, "strings are not supported in kernels")
            if e.value is None or isinstance(e.value, complex) or e.value is Ellipsis:
                self.fail(e, f"the constant {e.value!r} is not supported: use a float or int")
        elif isinstance(e, ast.Name):
            pass
        elif isinstance(e, ast.BinOp):
            if isinstance(e.op, ast.MatMult):
                self.fail(e, "matrix products `a @ b` are not supported: a row times a vector is "
                             "`np.dot(A[i, :], v)` in a loop over i; " + sugar.whole_array_advice(
                                 sugar.array_name([e.left])))
            if not isinstance(e.op, _BINOPS):
                self.fail(e, f"the operator `{_opname(e.op)}` is not supported: use + - * / ** // %")
            self.expr(e.left)
            self.expr(e.right)
        elif isinstance(e, ast.UnaryOp):
            if not isinstance(e.op, _UNARY):
                self.fail(e, "bitwise `~` is not supported")
            self.expr(e.operand)
        elif isinstance(e, ast.BoolOp):
            for v in e.values:
                self.expr(v)
        elif isinstance(e, ast.Compare):
            for op in e.ops:
                if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                    self.fail(e, "`is`/`in` comparisons are not supported: compare numbers with == != < <= > >=")
            self.expr(e.left)
            for c in e.comparators:
                self.expr(c)
        elif isinstance(e, ast.IfExp):
            self.expr(e.test)
            self.expr(e.body)
            self.expr(e.orelse)
        elif isinstance(e, ast.Call):
            if e.keywords:
                self.fail(e, "keyword arguments are not supported in kernel calls: pass them by position")
            if not isinstance(e.func, (ast.Name, ast.Attribute)):
                self.fail(e, "only calls of named functions (`f(x)`, `math.exp(x)`) are supported")
            if _mentions_random(e.func):
                self.fail(e, "random numbers are not supported in kernels: draw them outside and pass them "
                             "as a data argument")
            shape_call = isinstance(e.func, ast.Attribute) and e.func.attr in ("zeros", "empty")
            for a in e.args:
                self.expr(a, tuple_ok=shape_call)  # np.zeros((n, m)): a shape tuple
        elif isinstance(e, ast.Attribute):
            if _mentions_random(e):
                self.fail(e, "random numbers are not supported in kernels: draw them outside and pass them "
                             "as a data argument")
            if not isinstance(e.value, (ast.Name, ast.Attribute)):
                self.fail(e, "attributes are supported only on names (`x.shape`, `math.pi`)")
        elif isinstance(e, ast.Subscript):
            if isinstance(e.value, (ast.Call, ast.BinOp, ast.UnaryOp)):  # np.log(x)[0], (x - mu)[i]
                self.fail(e, f"`{ast.unparse(e)}` indexes the result of a whole-array operation, which kernels do "
                             f"not support: index the array inside it instead, e.g. `np.log(x[i])` for "
                             f"`np.log(x)[i]`; " + sugar.whole_array_advice(sugar.array_name([e.value])))
            if not isinstance(e.value, (ast.Name, ast.Attribute)):
                self.fail(e, "only arguments can be indexed: `x[i]`, `x[i, j]`, `x.shape[0]`")
            idx = e.slice
            parts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
            for p in parts:
                if sugar.full_slice(p):
                    continue  # a row or column; lowering accepts it inside np.sum / np.dot / .sum() (sugar.py)
                if isinstance(p, ast.Slice):
                    self.fail(p, "slices are not supported: index single elements inside a loop (a whole row "
                                 "`x[i, :]` or column `x[:, j]` is allowed inside np.sum, np.dot and .sum())")
                self.expr(p)
        elif isinstance(e, ast.Tuple):
            if not tuple_ok:
                self.fail(e, "tuples are supported only on the right of a tuple assignment")
            for v in e.elts:
                self.expr(v)
        else:
            self.fail(e, f"`{type(e).__name__}` expressions are not supported in kernels")


def _mentions_random(e):
    while isinstance(e, ast.Attribute):
        if e.attr in ("random", "rand", "randn", "normal", "uniform", "default_rng"):
            return True
        e = e.value
    return isinstance(e, ast.Name) and e.id == "random"


def _iteration_advice(loop):
    """The index loop to write instead of iterating over arrays (``for v in x``, ``enumerate(x)``, ``zip(x, y)``),
    spelled with the user's own names; None for other loops."""
    it, target = loop.iter, loop.target
    parts = target.elts if isinstance(target, ast.Tuple) else [target]
    if not all(isinstance(t, ast.Name) for t in parts):
        return None  # nested targets: the plain message about loop variables
    names = [t.id for t in parts]
    call = isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
    if isinstance(it, ast.Name):
        arrays, index, values = [it.id], "i", names[:1]
    elif call and it.func.id == "enumerate" and len(it.args) == 1 and isinstance(it.args[0], ast.Name) \
            and len(names) == 2:
        arrays, index, values = [it.args[0].id], names[0], names[1:]
    elif call and it.func.id == "zip" and it.args and all(isinstance(a, ast.Name) for a in it.args) \
            and len(names) == len(it.args):
        arrays, index, values = [a.id for a in it.args], "i", names
    else:
        return None
    reads = "; ".join(f"{v} = {a}[{index}]" for v, a in zip(values, arrays))
    return (f"loops run over indices, not over arrays: write `for {index} in range({arrays[0]}.shape[0]):` and "
            f"read `{reads}` in the body")


def _opname(op):
    return {ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
            ast.MatMult: "@", ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
            ast.FloorDiv: "//", ast.Mod: "%"}.get(type(op), type(op).__name__)
