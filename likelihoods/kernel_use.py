"""How a kernel uses its arguments, read from its syntax tree and followed into helper functions.

The one analysis behind every check that needs it: data shapes (likelihoods/data.py), which theta indices the
kernel reads (params too short / unused), and the array reads whose bounds likelihoods/bounds.py proves or
tests. The Likelihood and the config checks (sampler/config_kernel.py) read it from ``KernelSource.use``, so it
runs once per kernel. Nothing is executed or compiled.

An array passed whole to a helper (``helper(theta, x)``) is followed into the helper with the helper's
parameters bound to the kernel's arguments; integer values flow along as :class:`Affine` forms
(``c + coef * loop_variable``, ``c`` a :data:`Size` expression of data shapes and constants), so that
``for i in range(x.shape[0]): ... x[i + 1]`` can be judged once the data's shapes are known.
"""

import ast
import builtins
from dataclasses import dataclass, field

from .index_forms import Access, Affine, Loop, combine

def _is_ad(obj):
    """A function of nestgrad's differentiator (ad.special): it has rules, so its body is not followed."""
    return (getattr(obj, "__module__", None) or "").startswith("nestgrad.ad.")


_SCALAR_MODULES = {"math", "special", "ad", "np", "numpy"}  # calls into these take numbers, not arrays
_MAX_DEPTH = 32


@dataclass
class ArgumentUse:
    """How the kernel (with its helpers) uses one argument.

    index_counts  {number of indices: (file, line, col)} of each way it is subscripted
    min_ndim      at least this many dimensions (from ``.shape[k]``, ``len``), with ``min_at``
    scalar_at     (file, line, col) of a use as a plain number, or None
    opaque        passed to a function that could not be followed: its shape is that function's business
    as_integer    its value feeds an index or ``range``: keep integer data integer
    const_reads   {constant index: (file, line, col)} of ``arg[k]`` reads (for theta: the parameters read)
    dynamic       read with an index that is not a constant (a loop variable, data), or unpacked whole
    reduced       read whole by a reduction (``np.sum(arg)``, ``np.dot(arg, x)``)
    unpack        ``a, b, c = arg`` -> 3
    """
    index_counts: dict = field(default_factory=dict)
    min_ndim: int = 0
    min_at: tuple = None
    scalar_at: tuple = None
    opaque: bool = False
    as_integer: bool = False
    integer_at: tuple = None
    implicit_integer_at: tuple = None  # an integer use not through ``int()`` (``x[idx[i]]``, ``range(n[0])``)
    const_reads: dict = field(default_factory=dict)
    dynamic: bool = False
    reduced: bool = False
    unpack: int = None
    unpack_at: tuple = None

    @property
    def ndim(self):
        """The exact number of dimensions the kernel needs, or None when it does not say."""
        if self.index_counts:
            return max(self.index_counts)
        if self.scalar_at is not None and not self.opaque and self.min_ndim == 0:
            return 0
        return None

    @property
    def where(self):
        """(file, line, col) of the use that fixes ``ndim`` (or the first use seen)."""
        if self.index_counts:
            return self.index_counts[max(self.index_counts)]
        return self.scalar_at or self.min_at or self.integer_at or self.unpack_at or ("", 0, 0)


@dataclass
class KernelUse:
    """``args`` (kernel argument names), ``uses`` {name: ArgumentUse}, ``accesses`` [Access], ``files`` (every
    file the analysis read: the kernel's and its helpers'); ``complete`` False when the analysis met code it
    could not read (then it claims nothing: every argument is opaque and reads are left to the checked run);
    ``local_arrays``: the kernel allocates arrays of its own (``np.zeros``/``np.empty``), whose accesses the
    analysis does not judge (the checked run does); ``reduction_lengths``: per reduction (``np.dot``, ``np.sum``)
    over arguments, their lengths as sizes of the arguments' shapes, which must agree (the generated loop runs over
    the first operand's length); reductions over local arrays are left to the checked run of ``local_arrays``."""
    args: tuple
    uses: dict
    accesses: list
    files: set
    complete: bool = True
    local_arrays: bool = False
    reduction_lengths: list = field(default_factory=list)  # [(text, (file, line, col), [(operand, size)])]

    @property
    def theta(self):
        return self.uses[self.args[0]]


def analyse(node, filename, functions=None, namespace=None):
    """The :class:`KernelUse` of FunctionDef ``node`` in ``filename``.

    functions: {name: FunctionDef} defined at the top level of the same file (helpers found by name);
    namespace: the kernel's globals, for helpers imported from elsewhere (parsed with ``ad.parse``).
    """
    args = tuple(a.arg for a in node.args.args)
    result = KernelUse(args, {a: ArgumentUse() for a in args}, [], {filename})
    walker = _Walker(result, functions or {}, namespace)
    try:
        walker.function(node, filename, {a: ("arg", a) for a in args}, (), False, 0)
    except (AttributeError, TypeError, ValueError, IndexError, KeyError, RecursionError):
        # code outside the kernel subset (the differentiator reports it with its position): claim nothing
        uses = {a: ArgumentUse(opaque=True, dynamic=True) for a in args}
        return KernelUse(args, uses, [], result.files, complete=False)
    return result


def of_kernel(kernel):
    """:func:`analyse` for a :class:`likelihoods.kernel_source.KernelSource` (helpers: same-file functions
    by name, then the function's globals)."""
    functions = {}
    if kernel.from_file:
        tree = ast.parse(kernel.text)
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    return analyse(kernel.node, kernel.filename, functions, getattr(kernel.function, "__globals__", None))


def _stored_twice(node):
    """Names bound more than once in a function (their value is not one fixed expression)."""
    counts = {}
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            counts[sub.id] = counts.get(sub.id, 0) + 1
        elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
            counts[sub.target.id] = counts.get(sub.target.id, 0) + 2
    return {name for name, n in counts.items() if n > 1}


class _Walker:
    def __init__(self, result, functions, namespace):
        self.result, self.functions, self.namespace = result, functions, namespace
        self.filename, self.unstable, self.stack, self.node = None, set(), [], None

    # ------------------------------------------------------------------ statements
    def function(self, node, filename, env, loops, guarded, depth, scope=None):
        """Walk one function body; ``scope``: (functions, namespace) it resolves helpers in."""
        saved = (self.filename, self.unstable, self.functions, self.namespace, self.node)
        self.filename, self.unstable, self.node = filename, _stored_twice(node), node
        if scope is not None:
            self.functions, self.namespace = scope
        self.body(node.body, env, loops, guarded, depth)
        self.filename, self.unstable, self.functions, self.namespace, self.node = saved

    def body(self, statements, env, loops, guarded, depth):
        for stmt in statements:
            self.statement(stmt, env, loops, guarded, depth)

    def statement(self, stmt, env, loops, guarded, depth):
        ctx = (env, loops, guarded, depth)
        if isinstance(stmt, ast.Assign):
            self.assign(stmt, ctx)
        elif isinstance(stmt, ast.AugAssign):
            self.expr(stmt.value, ctx)
            self.stored_indices(stmt.target, ctx)
            env[getattr(stmt.target, "id", "")] = None
        elif isinstance(stmt, ast.For):
            self.loop(stmt, ctx)
        elif isinstance(stmt, ast.If):
            self.expr(stmt.test, ctx)
            self.body(stmt.body, env, loops, True, depth)
            self.body(stmt.orelse, env, loops, True, depth)
        elif isinstance(stmt, (ast.Return, ast.Expr)) and stmt.value is not None:
            self.expr(stmt.value, ctx)
        else:
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.expr):
                    self.expr(child, ctx)
                elif isinstance(child, ast.stmt):
                    self.statement(child, env, loops, guarded, depth)

    def stored_indices(self, target, ctx):
        """The indices of the elements ``target`` writes (``b[idx[i]] = ...``) are uses too: integer data they read
        stays integer, as for a read (the Python check and numba index with it)."""
        for sub in ast.walk(target):
            if isinstance(sub, ast.Subscript):
                parts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
                for part in parts:
                    self.expr(part, ctx)
                    self.mark_integer(part, ctx[0])

    def assign(self, stmt, ctx):
        env = ctx[0]
        value = stmt.value
        for target in stmt.targets:
            self.stored_indices(target, ctx)
        for target in stmt.targets:
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                for t, v in zip(target.elts, value.elts):
                    self.bind(t, self.expr(v, ctx), env)
            elif isinstance(target, ast.Tuple) and self.arg_of(value, env):
                name = self.arg_of(value, env)
                use = self.result.uses[name]
                use.unpack, use.unpack_at = len(target.elts), self.at(value)
                use.index_counts.setdefault(1, self.at(value))
                use.dynamic = True
                for t in target.elts:
                    self.bind(t, None, env)
            elif (isinstance(target, ast.Tuple) and isinstance(value, ast.Attribute) and value.attr == "shape"
                  and self.arg_of(value.value, env)):
                name = self.arg_of(value.value, env)
                self.need_ndim(name, len(target.elts), value)
                for axis, t in enumerate(target.elts):
                    self.bind(t, Affine(("shape", name, axis)), env)
            elif isinstance(target, ast.Name) and self.arg_of(value, env):
                self.bind(target, ("arg", self.arg_of(value, env)), env)  # an alias, not a use
            else:
                bound = self.expr(value, ctx)
                element = self.element_of(value, env)
                # ``j = int(idx[i])``: j carries an element of idx; an index made of j keeps idx integer
                self.bind(target, ("elem", element, _is_int_call(value)) if bound is None and element else bound,
                          env)

    def bind(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = value if target.id not in self.unstable else None
        else:
            for sub in ast.walk(target):
                if isinstance(sub, ast.Name):
                    env[sub.id] = None

    def loop(self, stmt, ctx):
        env, loops, guarded, depth = ctx
        it = stmt.iter
        forms = [self.expr(a, ctx) for a in getattr(it, "args", [])]
        for a in getattr(it, "args", []):
            self.mark_integer(a, env)
        start, stop, step = None, None, 0
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and 1 <= len(forms) <= 3 and all(isinstance(f, Affine) and f.loop is None for f in forms)):
            sizes = [f.const for f in forms]
            start, stop = (("c", 0), sizes[0]) if len(sizes) == 1 else (sizes[0], sizes[1])
            step = sizes[2][1] if len(sizes) == 3 and sizes[2][0] == "c" else (1 if len(sizes) < 3 else 0)
        if not step:
            start = stop = None
        name = getattr(stmt.target, "id", None)
        loop = Loop(name, start, stop, step, stmt, self.filename)
        inner = dict(env)
        if name is not None:
            inner[name] = Affine(("c", 0), loop, 1)
        self.body(stmt.body, inner, loops + (loop,), guarded, depth)
        for key in inner:  # names assigned in the loop body change from one iteration to the next
            if key != name and inner[key] is not env.get(key, object()):
                env[key] = None

    # ------------------------------------------------------------------ expressions
    def expr(self, e, ctx):
        """Record the argument uses inside ``e``; return its Affine form, ("arg", name), or None."""
        env, loops, guarded, depth = ctx
        if isinstance(e, ast.Constant):
            return Affine(("c", e.value)) if isinstance(e.value, int) and not isinstance(e.value, bool) else None
        if isinstance(e, ast.Name):
            value = env.get(e.id)
            if isinstance(value, tuple) and value[0] == "arg":
                self.scalar_use(value[1], e)
                return Affine(("val", value[1]))
            return value if isinstance(value, Affine) else None
        if isinstance(e, ast.Subscript):
            return self.subscript(e, ctx)
        if isinstance(e, ast.Attribute):
            if e.attr == "shape" and self.arg_of(e.value, env):
                self.result.uses[self.arg_of(e.value, env)].opaque = True
            elif not isinstance(e.value, ast.Name):
                self.expr(e.value, ctx)
            return None
        if isinstance(e, ast.BinOp):
            left, right = self.expr(e.left, ctx), self.expr(e.right, ctx)
            return combine(type(e.op), left, right)
        if isinstance(e, ast.UnaryOp):
            operand = self.expr(e.operand, ctx)
            if isinstance(e.op, ast.USub) and isinstance(operand, Affine):
                return Affine(("-", ("c", 0), operand.const), operand.loop, -operand.coef)
            return None
        if isinstance(e, ast.Call):
            return self.call(e, ctx)
        if isinstance(e, (ast.IfExp, ast.BoolOp)):
            first, *rest = [e.test, e.body, e.orelse] if isinstance(e, ast.IfExp) else e.values
            self.expr(first, ctx)
            for part in rest:
                self.expr(part, (env, loops, True, depth))
            return None
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.expr(child, ctx)
        return None

    def subscript(self, e, ctx):
        env = ctx[0]
        base = e.value
        if isinstance(base, ast.Attribute) and base.attr == "shape" and self.arg_of(base.value, env):
            name = self.arg_of(base.value, env)
            axis = e.slice.value if isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int) else None
            if axis is None:
                self.result.uses[name].opaque = True
                return None
            self.need_ndim(name, axis + 1, e)
            return Affine(("shape", name, axis))
        name = self.arg_of(base, env)
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        forms = tuple(self.expr(p, ctx) for p in parts)
        for p in parts:
            self.mark_integer(p, env)
        if name is None:
            self.expr(base, ctx)
            return None
        use = self.result.uses[name]
        use.index_counts.setdefault(len(parts), self.at(e))
        forms = tuple(f if isinstance(f, Affine) else None for f in forms)
        if len(parts) == 1 and isinstance(parts[0], ast.Constant) and isinstance(parts[0].value, int):
            use.const_reads.setdefault(parts[0].value, self.at(e))
        else:
            use.dynamic = True
        self.result.accesses.append(Access(name, forms, e, self.filename, ctx[1], ctx[2]))
        return None

    def call(self, e, ctx):
        env, loops, guarded, depth = ctx
        func = e.func
        if isinstance(func, ast.Attribute) and func.attr in ("zeros", "empty"):
            self.result.local_arrays = True
        if isinstance(func, ast.Attribute) and func.attr in ("sum", "dot") and self.node is not None:
            return self.reduction(e, ctx)
        if isinstance(func, ast.Name) and func.id == "len" and len(e.args) == 1 and self.arg_of(e.args[0], env):
            name = self.arg_of(e.args[0], env)
            self.need_ndim(name, 1, e)
            return Affine(("shape", name, 0))
        if isinstance(func, ast.Name) and func.id in ("int", "min", "max") and e.args:
            forms = [self.expr(a, ctx) for a in e.args]
            if func.id == "int" and len(forms) == 1:
                return forms[0] if isinstance(forms[0], Affine) else None
            if len(forms) == 2 and all(isinstance(f, Affine) and f.loop is None for f in forms):
                return Affine((func.id, forms[0].const, forms[1].const))
            return None
        helper = self.helper(func) if isinstance(func, ast.Name) and func.id not in env else None
        if helper is not None and depth < _MAX_DEPTH and helper[0] not in self.stack:
            node, filename, scope = helper
            bindings = {}
            for param, arg in zip([a.arg for a in node.args.args], e.args):
                name = self.arg_of(arg, env)
                bindings[param] = ("arg", name) if name else self.expr(arg, ctx)
            self.result.files.add(filename)
            self.stack.append(node)
            self.function(node, filename, bindings, loops, guarded, depth + 1, scope)
            self.stack.pop()
            return None
        scalar = (isinstance(func, ast.Attribute) and _root(func) in _SCALAR_MODULES) or (
            isinstance(func, ast.Name) and hasattr(builtins, func.id))
        for arg in e.args:
            name = self.arg_of(arg, env)
            if name and not scalar:
                self.result.uses[name].opaque = True
                self.result.uses[name].dynamic = True
            else:
                self.expr(arg, ctx)
        return None

    def reduction(self, e, ctx):
        """``np.sum(e)``, ``e.sum()``, ``np.dot(a, b)`` (nestgrad.ad.sugar): a bare argument name in the operand is
        a 1-D array unless the function uses it as a number elsewhere (the differentiator's own rule)."""
        from nestgrad.ad.sugar import full_slice, scalar_argument_uses

        env = ctx[0]
        scalars = scalar_argument_uses(self.node, lambda call: isinstance(call.func, ast.Name)
                                       and self.helper(call.func) is not None)
        operands = list(e.args) + ([e.func.value] if not isinstance(e.func.value, ast.Name)
                                   or self.arg_of(e.func.value, env) else [])
        lengths = []  # each array operand's length, as a size of the arguments' shapes
        for operand in operands:
            for node in ast.walk(operand):
                name = self.arg_of(node, env) if isinstance(node, ast.Name) else None
                if name is not None and node.id not in scalars and not _is_base(node, operand):
                    self.result.uses[name].index_counts.setdefault(1, self.at(node))  # read as x[k]
                    self.result.uses[name].dynamic = True
                    self.result.uses[name].reduced = True
                    lengths.append((ast.unparse(node), ("shape", name, 0)))
                elif isinstance(node, ast.Subscript) and self.arg_of(node.value, env):
                    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                    whole = [axis for axis, p in enumerate(parts) if full_slice(p)]
                    if len(whole) == 1:  # a row X[i, :] or a column X[:, j]
                        lengths.append((ast.unparse(node), ("shape", self.arg_of(node.value, env), whole[0])))
        if len(lengths) > 1:
            self.result.reduction_lengths.append((ast.unparse(e), self.at(e), lengths))
        for operand in operands:
            self.expr_skipping_arrays(operand, ctx, scalars)
        return None

    def expr_skipping_arrays(self, e, ctx, scalars):
        """``expr`` of a reduction's operand, without counting its array names as scalar uses."""
        env = ctx[0]
        if isinstance(e, ast.Name) and self.arg_of(e, env) and e.id not in scalars:
            return
        if isinstance(e, (ast.BinOp, ast.UnaryOp, ast.Call)) and not (isinstance(e, ast.Call) and not e.args):
            children = [e.left, e.right] if isinstance(e, ast.BinOp) else (
                [e.operand] if isinstance(e, ast.UnaryOp) else list(e.args))
            for c in children:
                self.expr_skipping_arrays(c, ctx, scalars)
            return
        self.expr(e, ctx)

    # ------------------------------------------------------------------ helpers
    def helper(self, func):
        """(FunctionDef, filename, scope) of a plain-Python helper called by name, or None."""
        if func.id in self.functions:
            return self.functions[func.id], self.filename, None
        obj = (self.namespace or {}).get(func.id)
        top = (getattr(obj, "__module__", None) or "").split(".")[0]
        if not hasattr(obj, "__code__") or (top in ("numpy", "scipy", "numba", "math") or _is_ad(obj)):
            return None
        try:
            from nestgrad.ad import parse

            source = parse.from_function(obj)
        except Exception:  # no source to read: a function we cannot follow
            return None
        return source.node, source.filename, ({}, source.namespace)

    def element_of(self, e, env):
        """The kernel argument ``e`` reads one element of, as ``a[i]`` or ``int(a[i])``, or None."""
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "int" and len(e.args) == 1:
            e = e.args[0]
        return self.arg_of(e.value, env) if isinstance(e, ast.Subscript) else None

    def arg_of(self, e, env):
        """The kernel argument a Name stands for (an argument, or a helper parameter bound to one)."""
        if isinstance(e, ast.Name):
            value = env.get(e.id)
            if isinstance(value, tuple) and value[0] == "arg":
                return value[1]
        return None

    def at(self, node):
        return (self.filename, node.lineno, node.col_offset + 1)

    def need_ndim(self, name, n, node):
        use = self.result.uses[name]
        if n > use.min_ndim:
            use.min_ndim, use.min_at = n, self.at(node)

    def scalar_use(self, name, node):
        use = self.result.uses[name]
        if use.scalar_at is None:
            use.scalar_at = self.at(node)

    def mark_integer(self, e, env, explicit=False):
        """Arguments whose values (not sizes) feed an index or a range; ``explicit``: inside ``int(...)``, which
        truncates a non-integer on purpose."""
        if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
            return
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "len":
            return
        explicit = explicit or _is_int_call(e)
        name = self.arg_of(e, env)
        if name is None and isinstance(e, ast.Name) and isinstance(env.get(e.id), tuple) and env[e.id][0] == "elem":
            name = env[e.id][1]  # a variable holding an element of an argument (``j = int(idx[i])``)
            explicit = explicit or env[e.id][2]
        if name is not None:
            use = self.result.uses[name]
            use.as_integer = True
            use.integer_at = use.integer_at or self.at(e)
            if not explicit:
                use.implicit_integer_at = use.implicit_integer_at or self.at(e)
        for child in ast.iter_child_nodes(e):
            self.mark_integer(child, env, explicit)


def _is_int_call(e):
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "int" and len(e.args) == 1


def _root(e):
    while isinstance(e, ast.Attribute):
        e = e.value
    return e.id if isinstance(e, ast.Name) else None


def theta_problem(use, params):
    """``(at, message)`` when ``params`` is too short for the way the kernel reads theta (it unpacks theta into
    another number of values, or reads ``theta[k]`` with ``k >= len(params)``), else None. Too long is not a
    problem here: ``parameters_read.unused_parameters`` names what the kernel never reads."""
    theta, n, name, listed = use.theta, len(params), use.args[0], ", ".join(params)
    if theta.unpack is not None and theta.unpack != n:
        return theta.unpack_at, f"the kernel unpacks {name} into {theta.unpack} values but params names {n}: {listed}"
    if theta.const_reads and max(theta.const_reads) >= n:
        index = max(theta.const_reads)
        return (theta.const_reads[index], f"the kernel reads {name}[{index}] but params names only {n} "
                                          f"parameter(s): {listed}")
    return None


def describe(at):
    """``file:line:col`` of an (file, line, col) position."""
    return f"{at[0]}:{at[1]}:{at[2]}"


__all__ = ["ArgumentUse", "KernelUse", "analyse", "describe", "of_kernel", "theta_problem"]


def _is_base(name, tree):
    """``name`` is the array of a subscript inside ``tree`` (a row ``X[i, :]``: counted by ``subscript``)."""
    return any(isinstance(n, ast.Subscript) and n.value is name for n in ast.walk(tree))
