"""Lowering pass: ``ast`` → IR (three-address statements in structured ``For``/``If`` regions).

Every name is renamed on assignment (SSA-like: a straight-line value is never overwritten, so the reverse sweep
can read it), branches merge through explicit copies at their ends, and a variable assigned in a loop body that
existed before the loop becomes one *carried* name ``v`` (copied in before the loop, copied back at the end of
the body). Helper functions and special functions are inlined; augmented assignment, tuple unpacking,
conditional expressions and ``and``/``or`` are desugared; early returns were already restructured.
"""
import ast
import builtins
import types

from . import breaks, local_arrays, names, resolve, rules, sugar
from .calls import RET, CallsMixin
from .errors import UnsupportedError, Where, error_at
from .fold import fold, fold_compare
from .ir import Assign, Const, For, If, is_var, parallel_copy
from .local_arrays import ArrayInfo
from .loop_names import EndedLoops
from .restructure import restructure

_BINOP = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
          ast.FloorDiv: "floordiv", ast.Mod: "mod"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class Context:
    """State shared by the kernel and every function inlined into it."""

    def __init__(self, arg_names):
        # the arguments as the IR names them: renamed where they could be a generated name (names.py)
        self.ir_of = names.ir_names(arg_names)
        self.arg_names = tuple(self.ir_of.values())
        self.counter = 0
        self.inline_stack = []
        self.sources = []         # texts of inlined helpers and rules (cache key)
        self.helpers = []         # names of inlined helpers (report)
        self.array_ndim = {}      # kernel argument -> ndim seen in indexing
        self.scalar_args = set()  # kernel arguments used as numbers
        self.returns = []         # positions of the kernel's return values
        self.local_arrays = []    # local_arrays.ArrayInfo, in allocation order
        self.nonneg = set()       # integer IR names never negative (shapes, loop indices from 0 up, their sums)

    def is_nonneg(self, x):
        """Whether the operand ``x`` is an integer known to be >= 0 (Python's negative indexing cannot apply)."""
        if isinstance(x, Const):
            return isinstance(x.value, int) and not isinstance(x.value, bool) and x.value >= 0
        return x in self.nonneg

    def fresh(self, hint):
        self.counter += 1
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in hint).strip("_") or "t"
        return f"{hint}__{self.counter}"


def lower_function(src, ctx=None):
    """Lower the kernel ``src`` (a ``parse.Source`` the fence pass accepted, with every function it calls);
    return ``(statements, return_operand, ctx)``."""
    ctx = ctx or Context(src.arg_names)
    env = dict(ctx.ir_of)
    low = Lowerer(src, ctx, env, prefix="")
    body = low.block(restructure(src.node.body))
    if RET not in low.env:
        raise Where(src.filename).error(src.node, "the kernel does not return a value on every path: end every "
                                                   "branch with `return <scalar>`")
    return body, low.env[RET], ctx


class Lowerer(CallsMixin):
    """Lowers one function body into ``out``.  ``env`` maps the function's names to IR operands; ``prefix`` keeps
    an inlined function's temporaries apart; ``origin``, when given, is the position every statement gets (code
    that is not the user's: ad.special bodies, rule templates), otherwise each gets its own node's."""

    def __init__(self, src, ctx, env, prefix, origin=None):
        self.src = src
        self.ctx = ctx
        self.env = env
        self.prefix = prefix
        self.origin = origin
        self.where = Where(src.filename)
        self.out = None
        self.nesting = 0  # loops and branches around the statement being lowered
        self.discarded = None  # the call being lowered for its writes alone (its result unused)
        self.ended_loops = EndedLoops()  # for the message when a loop variable is read after its loop
        self.open_indices = set()  # IR indices of the loops around the statement being lowered
        # names this function assigns, loop variables too (none in a rule's template expression)
        self.local_names = _assigned_names(src.node.body) if src.node is not None else set()

    # ---- helpers -------------------------------------------------------------------------------------
    def fresh(self, hint):
        return self.ctx.fresh(self.prefix + hint)

    def emit(self, stmt):
        self.out.append(stmt)

    def pos(self, node):
        """Where the statements lowered from ``node`` come from (generated code names it in a comment)."""
        return self.origin or self.where.pos(node)

    def assign(self, node, op, args, fn=None, hint="t"):
        if any(isinstance(a, ArrayInfo) for a in args):
            a = next(a for a in args if isinstance(a, ArrayInfo))
            raise self.unsupported(node, f"the local array {a.user_name!r} is used as a number here: index it "
                                         f"({a.user_name}[i]); whole-array arithmetic is not supported: "
                                         + sugar.whole_array_advice(a.user_name))
        dst = self.fresh(hint)
        self.emit(Assign(dst, op, list(args), fn, self.pos(node)))
        if op == "shape" or (op in ("add", "mul", "floordiv") and all(self.ctx.is_nonneg(a) for a in args)) or (
                op == "mod" and self.ctx.is_nonneg(args[1])):
            self.ctx.nonneg.add(dst)
        return dst

    def copy(self, node, dst, value):
        """``dst = value`` (a statement to place in a branch)."""
        return Assign(dst, "copy", [value], pos=self.pos(node))

    def err(self, node, msg):
        return self.where.error(node, msg)

    def unsupported(self, node, msg):
        return self.where.unsupported(node, msg)

    # ---- statements ----------------------------------------------------------------------------------
    def block(self, stmts):
        saved, self.out = self.out, []
        for s in stmts:
            self.stmt(s)
        out, self.out = self.out, saved
        return out

    def stmt(self, s):
        if isinstance(s, ast.Assign):
            target = s.targets[0]
            kind = local_arrays.allocation(s.value, self.resolve) if isinstance(target, ast.Name) else None
            if kind:
                self.bind(target.id, local_arrays.allocate(self, s, kind, target.id), s)
            elif isinstance(target, ast.Subscript):
                local_arrays.write(self, s, target, self.expr(s.value))
            elif isinstance(target, ast.Name):
                mark = len(self.out)
                value = self.expr(s.value)
                self.bind(target.id, self.named(value, target.id, mark), s)
            else:
                for e in target.elts:
                    if not isinstance(e, (ast.Name, ast.Subscript)):
                        raise self.unsupported(e, "unpack into names or array elements (`a, b = ...`, "
                                                  "`buf[0], buf[1] = ...`), one level deep")
                if isinstance(s.value, ast.Tuple):
                    values = [self.expr(v) for v in s.value.elts]  # all right-hand sides before any binding
                else:
                    values = self.expr_tuple(s.value, len(target.elts))
                for e, value in zip(target.elts, values):  # then the targets left to right, as Python does
                    if isinstance(e, ast.Subscript):
                        local_arrays.write(self, s, e, value)
                    else:
                        self.bind(e.id, value, s)
        elif isinstance(s, ast.AnnAssign):
            self.bind(s.target.id, self.expr(s.value), s)
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Subscript):
            current = self.subscript(s.target)
            value = self.expr(s.value)
            local_arrays.write(self, s, s.target, self.binop(s, _BINOP[type(s.op)], current, value))
        elif isinstance(s, ast.AugAssign):
            current = self.name(s.target)
            value = self.expr(s.value)
            self.bind(s.target.id, self.binop(s, _BINOP[type(s.op)], current, value, s.target.id), s)
        elif isinstance(s, ast.Return):
            self.env[RET] = self.expr(s.value)
            if not self.prefix:
                self.ctx.returns.append(self.where.pos(s.value))
        elif isinstance(s, ast.If):
            self.if_stmt(s)
        elif isinstance(s, ast.For):
            self.for_stmt(s)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and self.external_statement(s.value):
            pass  # a call of a function with an adjoint rule, for its writes into local arrays
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            if not any(isinstance(self.env.get(a.id), ArrayInfo) for a in s.value.args if isinstance(a, ast.Name)):
                raise self.unsupported(s, "a call whose result is discarded does nothing in a kernel (unless it "
                                          "writes into a local array passed to it): assign its result or remove it")
            self.discarded = s.value  # a helper with no return at all is fine here (calls.inline)
            try:
                self.call(s.value)  # for its writes into the local arrays passed to it
            finally:
                self.discarded = None
        elif isinstance(s, (ast.Pass, ast.Expr)):
            pass
        else:  # the fence lets nothing else through
            raise self.unsupported(s, f"`{type(s).__name__}` is not supported")

    def named(self, value, name, mark):
        """Give the temporary that holds a just-computed value the user's name (readable generated code)."""
        if is_var(value) and len(self.out) > mark:
            last = self.out[-1]
            if isinstance(last, Assign) and last.dst == value and value not in self.ctx.arg_names:
                last.dst = self.fresh(name)
                return last.dst
        return value

    def bind(self, name, value, node):
        self.ended_loops.rebound(name)
        arg = self.ctx.ir_of.get(name)
        if arg is not None and not self.prefix and self.env.get(name) == arg and arg in self.ctx.array_ndim:
            raise self.unsupported(node, f"argument {name!r} is an array: assigning to it is not supported; "
                                         "use a new local name")
        self.env[name] = value

    def if_stmt(self, s):
        cond = self.expr(s.test)
        if isinstance(cond, Const):  # decided at compile time (e.g. a module constant flag)
            for stmt in (s.body if cond.value else s.orelse):
                self.stmt(stmt)
            return
        before = dict(self.env)
        self.nesting += 1
        then = self.block(s.body)
        env_then, self.env = self.env, dict(before)
        orelse = self.block(s.orelse)
        self.nesting -= 1
        env_else = self.env
        self.env = self.merge(before, env_then, then, env_else, orelse, self.pos(s))
        self.emit(If(cond, then, orelse, self.pos(s)))

    def merge(self, before, env_a, out_a, env_b, out_b, pos):
        merged = {}
        for name in list(env_a) + [n for n in env_b if n not in env_a]:
            if name in env_a and name in env_b:
                va, vb = env_a[name], env_b[name]
                if va is vb or (not isinstance(va, ArrayInfo) and va == vb):
                    merged[name] = va
                elif isinstance(va, ArrayInfo) or isinstance(vb, ArrayInfo):
                    raise error_at(pos, f"{name!r} names a local array on one path and something else on the "
                                        "other: give them different names", self.src.filename, UnsupportedError)
                else:
                    m = self.fresh(name if name != RET else "ret")
                    out_a.append(Assign(m, "copy", [va], pos=pos))
                    out_b.append(Assign(m, "copy", [vb], pos=pos))
                    merged[name] = m
            # a name bound in one branch only is undefined afterwards (reading it is an error)
        return merged

    def for_stmt(self, s):
        it = s.iter
        args = [self.expr(a) for a in it.args]
        if len(args) == 1:
            start, stop, step = Const(0), args[0], Const(1)
        elif len(args) == 2:
            start, stop, step = args[0], args[1], Const(1)
        else:
            start, stop, step = args
        if isinstance(step, Const) and step.value == 0:
            raise self.err(it, "range() step must not be zero")
        for a, node in zip((start, stop, step), [None] + list(it.args) if len(it.args) == 1 else it.args):
            if isinstance(a, Const) and not isinstance(a.value, (int, bool)):
                raise self.err(node or it, "range() bounds must be integers")
        target = s.target.id
        loop_body, flag = s.body, None
        if breaks.own_breaks(s.body):
            self.ctx.counter += 1
            flag = f"break#{self.ctx.counter}"  # '#': never a user's name
            self.env[flag] = Const(False)
            loop_body = breaks.rewrite(s.body, flag, s)
        written = _assigned_names(loop_body) - {target}
        carried = [n for n in written if n in self.env and n != RET]
        pre = dict(self.env)
        carried_names = {}
        for n in carried:
            if isinstance(self.env[n], ArrayInfo):
                raise self.unsupported(s, f"{n!r} names a local array and is assigned inside this loop: give the "
                                          "new value another name")
            v = self.fresh(n)
            self.emit(Assign(v, "copy", [self.env[n]], pos=self.pos(s)))
            self.env[n] = v
            carried_names[n] = v
        index = self.fresh(target)
        self.env[target] = index
        if isinstance(step, Const) and ((step.value > 0 and self.ctx.is_nonneg(start)) or (
                step.value < 0 and isinstance(stop, Const) and stop.value >= -1)):
            self.ctx.nonneg.add(index)  # counts up from >= 0, or down to a stop >= -1
        self.nesting += 1
        self.open_indices.add(index)
        body = self.block(loop_body)
        self.open_indices.discard(index)
        self.nesting -= 1
        # the copies back into the carried names are one parallel assignment: after `a, b = b, a` the body's
        # values of `a` and `b` ARE the carried names of `b` and `a`, so copying them one at a time would read a
        # carried name already overwritten (F1 in tests/ad/fuzz/FINDINGS.md)
        pairs = [(v, self.env[n]) for n, v in carried_names.items() if n in self.env and self.env[n] != v]
        body.extend(parallel_copy(pairs, self.fresh, self.pos(s)))
        # after the loop: carried names hold their final values; loop-local names (and the index) are gone
        self.env = {n: (carried_names.get(n, val)) for n, val in pre.items()}
        if target in pre and target not in carried_names:
            del self.env[target]
        self.ended_loops.ended(target, s, self._meaning(target, pre))
        self.emit(For(index, start, stop, step, body, self.pos(s), exit_flag=carried_names.get(flag)))

    # ---- expressions ---------------------------------------------------------------------------------
    def expr(self, e):
        if isinstance(e, ast.Constant):
            return Const(e.value)
        if isinstance(e, ast.Name):
            return self.name(e)
        if isinstance(e, ast.BinOp):
            a = self.expr(e.left)
            b = self.expr(e.right)
            return self.binop(e, _BINOP[type(e.op)], a, b)
        if isinstance(e, ast.UnaryOp):
            a = self.expr(e.operand)
            if isinstance(e.op, ast.UAdd):
                return a
            if isinstance(e.op, ast.USub):
                if isinstance(a, Const) and not isinstance(a.value, bool):
                    return Const(-a.value)
                return self.assign(e, "neg", [a])
            if isinstance(a, Const):
                return Const(not a.value)
            return self.assign(e, "not", [a])
        if isinstance(e, ast.Compare):
            return self.compare(e)
        if isinstance(e, ast.BoolOp):
            return self.boolop(e, list(e.values))
        if isinstance(e, ast.IfExp):
            return self.ifexp(e)
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Attribute):
            return self.constant_of(e, self.resolve(e))
        if isinstance(e, ast.Call):
            result = self.call(e)
            if isinstance(result, tuple):
                raise self.unsupported(e, "this function returns a tuple: unpack it with `a, b = f(...)`")
            return result
        raise self.unsupported(e, f"`{type(e).__name__}` is not supported here")

    def expr_tuple(self, e, n):
        result = None
        if isinstance(e, ast.Call):
            fn = self.resolve(e.func)
            if isinstance(fn, types.FunctionType) and not rules.lookup(fn):
                args = [self.expr(a) for a in e.args]
                result = self.inline(e, fn, args, tuple_return=True)
        if not isinstance(result, tuple) or len(result) != n:
            raise self.unsupported(e, f"the right-hand side must be a tuple of {n} values")
        return list(result)

    def binop(self, node, op, a, b, hint="t"):
        if isinstance(a, Const) and isinstance(b, Const):
            folded = fold(op, a.value, b.value)
            if folded is not None:
                return Const(folded)
        return self.assign(node, op, [a, b], hint=hint)

    def compare(self, e):
        left = self.expr(e.left)
        parts = []
        for op, comp in zip(e.ops, e.comparators):
            right = self.expr(comp)
            parts.append((op, left, right))
            left = right
        # a comparison of two constants is decided here (`k == k` with `k = 2` propagated): left in the code,
        # numba's dead-branch pruning folds it itself and can leave a later branch reading a variable it treats
        # as undefined (fuzz seed 100107, F3 in tests/ad/fuzz/FINDINGS.md)
        folded = [fold_compare(type(op), a.value, b.value) if isinstance(a, Const) and isinstance(b, Const) else None
                  for op, a, b in parts]
        if False in folded:
            return Const(False)  # a chained comparison is a bool: False when any link is
        parts = [p for p, f in zip(parts, folded) if f is None]
        if not parts:
            return Const(True)
        result = None
        for op, a, b in parts:
            t = self.assign(e, "cmp", [a, b], fn=_CMP[type(op)])
            if result is None:
                result = t
            else:
                r = self.fresh("and")
                self.emit(If(result, [self.copy(e, r, t)], [self.copy(e, r, result)], self.pos(e)))
                result = r
        return result

    def boolop(self, e, values):
        first = self.expr(values[0])
        if len(values) == 1:
            return first
        if isinstance(first, Const):  # decided at compile time, as Python decides it (the operand's value)
            if bool(first.value) == isinstance(e.op, ast.Or):
                return first
            return self.boolop(e, values[1:])
        saved = self.out
        self.out = []
        rest = self.boolop(e, values[1:])
        rest_code, self.out = self.out, saved
        r = self.fresh("or" if isinstance(e.op, ast.Or) else "and")
        if isinstance(e.op, ast.And):
            self.emit(If(first, rest_code + [self.copy(e, r, rest)], [self.copy(e, r, first)], self.pos(e)))
        else:
            self.emit(If(first, [self.copy(e, r, first)], rest_code + [self.copy(e, r, rest)], self.pos(e)))
        return r

    def ifexp(self, e):
        cond = self.expr(e.test)
        if isinstance(cond, Const):
            return self.expr(e.body if cond.value else e.orelse)
        r = self.fresh("sel")
        saved = self.out
        self.out = []
        a = self.expr(e.body)
        then = self.out + [self.copy(e, r, a)]
        self.out = []
        b = self.expr(e.orelse)
        orelse = self.out + [self.copy(e, r, b)]
        self.out = saved
        self.emit(If(cond, then, orelse, self.pos(e)))
        return r

    def name(self, e):
        n = e.id
        if n in self.env:
            return self.env[n]
        if self.ended_loops.explain(n):
            raise self.unsupported(e, self.ended_loops.explain(n))
        # as in Python, a name the function assigns anywhere is its own everywhere: never the module's value
        if n not in self.local_names and (n in self.src.namespace or hasattr(builtins, n)):
            obj = self.src.namespace[n] if n in self.src.namespace else getattr(builtins, n)
            return self.constant_of(e, obj)
        outer = f"; the module-level {n!r} is not read, since this function assigns {n!r}" \
            if n in self.src.namespace or hasattr(builtins, n) else ""
        raise self.err(e, f"name {n!r} is not defined here (a variable first assigned inside a loop or in only "
                          f"one branch of an `if` cannot be read after it: assign it before){outer}")

    def _meaning(self, name, env):
        """What ``name`` stood for in ``env`` before a loop reused it as its variable (for messages), or None."""
        if name not in env:
            return "module-level value" if name in self.src.namespace else None
        if env[name] == self.ctx.ir_of.get(name) and not self.prefix:
            return "kernel argument"
        return "enclosing loop's variable" if env[name] in self.open_indices else "variable"

    def constant_of(self, e, obj):
        return resolve.constant(e, obj, self.where)

    def resolve(self, e):
        """The Python object an ``a.b.c`` or ``name`` refers to in the function's name space."""
        return resolve.lookup(e, self.src.namespace, self.env, self.where)

    def local_array(self, e):
        """The ``ArrayInfo`` a name stands for, or None."""
        v = self.env.get(e.id) if isinstance(e, ast.Name) else None
        return v if isinstance(v, ArrayInfo) else None

    def array_arg(self, e):
        """The kernel argument name an indexed expression refers to."""
        if isinstance(e, ast.Name) and e.id not in self.env and self.ended_loops.explain(e.id):
            raise self.unsupported(e, self.ended_loops.explain(e.id))
        if isinstance(e, ast.Name) and e.id in self.env:
            v = self.env[e.id]
            if is_var(v) and v in self.ctx.arg_names:
                return v
            raise self.unsupported(e, f"{e.id!r} is not an array argument: only kernel arguments and local arrays "
                                      f"(`{e.id} = np.zeros(n)`) can be indexed; a whole-array expression assigned "
                                      f"to a name (`{e.id} = x * theta[0]`) is not supported: fill a local array in "
                                      f"a loop, `{e.id} = np.zeros(x.shape[0])` and `for i in range(x.shape[0]): "
                                      f"{e.id}[i] = x[i] * theta[0]`, or use each element where it is computed")
        if isinstance(e, ast.Name) and e.id in self.src.namespace:  # a module-level array, read as a constant
            raise self.unsupported(e, f"{e.id!r} is a value from outside the kernel (module level or an enclosing "
                                      f"function), not a kernel argument: pass it as data (an argument of the "
                                      f"kernel, given in `data`) to index it")
        raise self.unsupported(e, "only array arguments can be indexed")

    def subscript(self, e):
        idx = e.slice
        parts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        if isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
            info = self.local_array(e.value.value)
            if info is not None:
                k = self.expr(parts[0]) if len(parts) == 1 else None
                if not (isinstance(k, Const) and isinstance(k.value, int) and 0 <= k.value < len(info.dims)):
                    raise self.err(e, f"{info.user_name}.shape takes one constant index below {len(info.dims)}")
                return info.dims[k.value]
            arr = self.array_arg(e.value.value)
            if len(parts) != 1:
                raise self.err(e, "x.shape takes one index")
            k = self.expr(parts[0])
            if isinstance(k, Const):
                self.note_ndim(e, arr, None, min_ndim=k.value + 1)
            return self.assign(e, "shape", [arr, k], hint="n")
        if any(isinstance(p, ast.Slice) for p in parts):
            raise self.unsupported(e, "a row `x[i, :]` or column `x[:, j]` is supported only inside np.sum(...), "
                                      "np.dot(...) and .sum(): index single elements in a loop elsewhere")
        info = self.local_array(e.value)
        if info is not None:
            return local_arrays.read(self, info, parts, e)
        arr = self.array_arg(e.value)
        indices = [self.expr(p) for p in parts]
        self.note_ndim(e, arr, len(indices))
        return self.assign(e, "index", [arr] + indices, hint=arr)

    def note_ndim(self, node, arr, ndim, min_ndim=None):
        known = self.ctx.array_ndim.get(arr, -1)
        if ndim is None:  # only its shape is read: an array of unknown rank
            self.ctx.array_ndim.setdefault(arr, -1)
            return
        if known != -1 and known != ndim:
            raise self.err(node, f"array {arr!r} is indexed with {ndim} indices here but {known} elsewhere")
        self.ctx.array_ndim[arr] = ndim


def _assigned_names(stmts):
    names = set()
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names
