"""Emit pass: IR → Python source that runs as plain Python, under ``numba.njit`` and under
``numba.cuda.jit(device=True)``.

Every function is self-contained (helpers and special functions were inlined) because ``compile_ptx`` of a
device function that calls another device function needs a driver -- except for the calls of functions with an
adjoint rule (external.py, ad.linalg), which cannot be inlined: their PTX check stands in a device
(tests/ad/device_calls.py).  In float32 mode every float literal and every int→float conversion is written as
``np.float32(...)`` so no float64 arithmetic reaches the GPU (the results of external calls are converted too),
unless the build asks for float64 sums: then the variables that loops accumulate into are float64 (``loop_sums``).

A comment line ``# file:line`` above a statement names the user's source line it comes from, whenever that
differs from the last such comment above it: so a compiler error at a generated line (numba reports those) maps
back to the kernel by ``source_line``.  Code of ad.special and of derivative rules names the user's call.
"""
import math
import re

from . import external
from .errors import NO_POS
from .ir import (GUARD, AStore, Assign, ExtCall, For, GradAdd, If, Return, RuleCall, ScratchCopy, ScratchZero, Store,
                 View, ZeroGrad, is_var, walk)

_SYM = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%"}


_ORIGIN = re.compile(r"\s*# (.+):(\d+)")


def source_line(generated_source, generated_lineno):
    """``(filename, lineno)`` of the user's line that line ``generated_lineno`` (1-based) of generated code comes
    from, read from the nearest ``# file:line`` comment above it in the same function; None where there is none
    (module header, ``def`` lines, numba wrappers)."""
    lines = generated_source.splitlines()
    for k in range(min(generated_lineno, len(lines)) - 1, -1, -1):
        if lines[k].startswith("def "):
            return None
        m = _ORIGIN.fullmatch(lines[k])
        if m:
            return m.group(1), int(m.group(2))
    return None


def loop_sums(stmts, types) -> frozenset:
    """Float variables that a loop accumulates into, forward or reverse sweep: ``v = v + e``, ``v = v - e``, or
    the same through temporaries and the merges of branches (``t = v + e`` then ``v = t``, as the user's ``v += e``
    comes out of the IR; under ``if``/``else`` each branch adds its own term, or none, into a merged name that
    the loop copies back into ``v``). These are the data-loop sums a float32 build may keep in float64
    (``function_source``)."""
    found = set()

    def visit(body, in_loop):
        defs = {}
        _definitions(body, defs)
        for s in body:
            if isinstance(s, For):
                visit(s.body, True)
            elif isinstance(s, If):
                visit(s.then, in_loop)
                visit(s.orelse, in_loop)
            elif isinstance(s, RuleCall):
                visit(s.body, in_loop)
            elif in_loop and isinstance(s, Assign) and types.of(s.dst) == "float" and _sum_of(s, s.dst, defs, 0):
                found.add(s.dst)

    visit(stmts, False)
    return frozenset(found)


def _definitions(body, defs):
    """``defs[name]``: the assignments of ``name`` in ``body`` and its branches (not in nested loops)."""
    for s in body:
        if isinstance(s, Assign):
            defs.setdefault(s.dst, []).append(s)
        elif isinstance(s, If):
            _definitions(s.then, defs)
            _definitions(s.orelse, defs)


def _sum_of(s, v, defs, depth, _limit=16):
    """Whether the assignment ``s`` gives ``v`` plus or minus terms (at least one add or subtract on the way):
    through copies, and through names assigned in branches when every branch's value is such a sum or ``v``."""
    if depth > _limit:
        return False
    if s.op in ("add", "sub"):
        return _is_v_or_sum(s.args[0], v, defs, depth) or (s.op == "add" and _is_v_or_sum(s.args[1], v, defs, depth))
    if s.op == "copy" and is_var(s.args[0]) and s.args[0] != v:
        sources = defs.get(s.args[0], ())
        return bool(sources) and all(_is_v_or_sum(x.dst, v, defs, depth + 1, x) for x in sources) and any(
            _sum_of(x, v, defs, depth + 1) for x in sources)
    return False


def _is_v_or_sum(name, v, defs, depth, assignment=None):
    if name == v:
        return True
    if not is_var(name):
        return False
    for s in ((assignment,) if assignment is not None else defs.get(name, ())):
        if s.op == "copy" and s.args[0] == v:
            continue
        if not _sum_of(s, v, defs, depth + 1):
            return False
    return assignment is not None or bool(defs.get(name))


class Emitter:
    def __init__(self, types, dtype, scratch="scratch", origin=NO_POS, finite=frozenset(), wide=frozenset()):
        self.types = types
        self.finite = finite
        self.f32 = dtype == "float32"
        # float64 variables of a float32 build: every assignment of a value to them converts it to float64, so
        # their sums run in float64 (the float32 terms widen as they are added) and what uses them afterwards does
        self.wide = wide
        self.scratch = scratch
        self.origin = origin  # where statements without a position of their own come from (the kernel's def)
        self.commented = None
        self.lines = []
        self.reads = {}  # variable -> the array read (``index``) that assigned it

    # ---- operands ------------------------------------------------------------------------------------
    def flit(self, x):
        x = float(x)
        if math.isnan(x):
            text = "math.nan"
        elif math.isinf(x):
            text = "math.inf" if x > 0 else "-math.inf"
        else:
            text = repr(x)
        return f"np.float32({text})" if self.f32 else (f"({text})" if text.startswith("-") else text)

    def tof(self, text):
        return f"np.float32({text})" if self.f32 else f"float({text})"

    def opnd(self, o, want=None):
        """Render an operand; ``want='float'`` converts ints (and int literals) to the float type."""
        if not is_var(o):
            v = o.value
            if isinstance(v, bool):
                return "True" if v else "False"
            if isinstance(v, int) and want != "float":
                return f"({v})" if v < 0 else repr(v)
            return self.flit(v)
        t = self.types.of(o)
        if want == "float" and t == "bool":
            # numba has no float(bool); int(bool) exists everywhere and adds no branch (a conditional expression
            # would: numba's compile time grows with the number of branches)
            return self.tof(f"int({o})")
        if want == "float" and t == "int":
            return self.tof(o)
        return o

    # ---- statements ----------------------------------------------------------------------------------
    def emit_block(self, stmts, ind):
        n0 = len(self.lines)
        for s in stmts:
            self.emit_stmt(s, ind)
        if len(self.lines) == n0:
            self.lines.append("    " * ind + "pass")

    def w(self, ind, text):
        self.lines.append("    " * ind + text)

    def comment(self, s, ind):
        """``# file:line`` above ``s`` when its origin differs from the last one named."""
        pos = getattr(s, "pos", NO_POS)
        if not pos.line:
            pos = self.origin
        where = (pos.file or self.origin.file, pos.line)
        if where != self.commented and where[0]:
            self.w(ind, f"# {where[0]}:{where[1]}")
            self.commented = where

    def emit_stmt(self, s, ind):
        if not isinstance(s, RuleCall):  # its body's statements carry their own positions
            self.comment(s, ind)
        if isinstance(s, Assign):
            self.w(ind, f"{s.dst} = {self.expr(s)}")
        elif isinstance(s, RuleCall):
            for st in s.body:
                self.emit_stmt(st, ind)
        elif isinstance(s, If):
            self.w(ind, f"if {self.opnd(s.cond)}:")
            self.emit_block(s.then, ind + 1)
            if s.orelse:
                self.w(ind, "else:")
                self.emit_block(s.orelse, ind + 1)
        elif isinstance(s, For):
            self.emit_for(s, ind)
        elif isinstance(s, ExtCall):
            self.emit_external(s, ind)
        elif isinstance(s, GradAdd):
            idx = ", ".join(self.opnd(i) for i in s.index)
            self.w(ind, f"{s.grad}[{idx}] += {self.opnd(s.value, 'float')}")
        elif isinstance(s, Store):
            self.w(ind, f"{self.scratch}[{self.opnd(s.index)}] = {self.opnd(s.value, 'float')}")
        elif isinstance(s, AStore):
            self.w(ind, f"{self.scratch}[{self.opnd(s.slot)}] = {self.opnd(s.value, 'float')}")
        elif isinstance(s, ScratchCopy):
            self.w(ind, f"for copy_k in range({self.opnd(s.count)}):")
            dst, src = self.opnd(s.dst), self.opnd(s.src)
            self.w(ind + 1, f"{self.scratch}[{dst} + copy_k] = {self.scratch}[{src} + copy_k]")
        elif isinstance(s, ScratchZero):
            self.w(ind, f"for zero_k in range({self.opnd(s.count)}):")
            self.w(ind + 1, f"{self.scratch}[{self.opnd(s.start)} + zero_k] = {self.flit(0.0)}")
        elif isinstance(s, ZeroGrad):
            self.w(ind, f"for zero_k in range({s.grad}.shape[0]):")
            self.w(ind + 1, f"{s.grad}[zero_k] = {self.flit(0.0)}")
        elif isinstance(s, Return):
            self.w(ind, f"return {self.opnd(s.value) if s.as_int else self.opnd(s.value, 'float')}")
        else:
            raise AssertionError(type(s))

    def emit_external(self, s, ind):
        """A call of a function that is not inlined (external.py); local arrays go as views of scratch."""
        call = f"{external.global_name(s.fn)}({', '.join(self.call_argument(a) for a in s.args)})"
        if not s.results:
            self.w(ind, call)
        elif not s.reverse_only:
            self.w(ind, f"{s.results[0]} = {self.tof(call)}")
        else:  # an adjoint returns a tuple: the adjoints of the number arguments
            self.w(ind, f"{', '.join(s.results)}, = {call}")
            for v in s.results:
                self.w(ind, f"{v} = {self.tof(v)}")

    def call_argument(self, a):
        if a is None:
            return "None"
        if isinstance(a, View):
            dims = [self.opnd(d) for d in a.dims]
            size = " * ".join(f"({d})" for d in dims) if len(dims) > 1 else dims[0]
            view = f"{self.scratch}[{self.opnd(a.offset)}:{self.opnd(a.offset)} + {size}]"
            return view if len(dims) == 1 else f"{view}.reshape(({', '.join(dims)}))"
        if is_var(a) and self.types.of(a) == "array":
            return a
        return self.opnd(a)

    def trip(self, start, stop, step):
        a, b = self.opnd(start), self.opnd(stop)
        if not is_var(step):
            k = step.value
            if k == 1:
                return f"max(0, {b} - {a})"
            if k == -1:
                return f"max(0, {a} - {b})"
            if k > 0:
                return f"max(0, ({b} - {a} + {k - 1}) // {k})"
            return f"max(0, ({b} - {a} + ({k + 1})) // ({k}))"
        s = self.opnd(step)
        return f"max(0, ({b} - {a} + ({s} - 1 if {s} > 0 else {s} + 1)) // {s})"

    def emit_for(self, s, ind):
        if s.counter is None and not s.reverse:
            parts = [self.opnd(s.start), self.opnd(s.stop), self.opnd(s.step)]
            if parts[2] == "1":
                parts = [parts[1]] if parts[0] == "0" else parts[:2]
            self.w(ind, f"for {s.var} in range({', '.join(parts)}):")
        else:
            k = s.counter
            trip = self.trip(s.start, s.stop, s.step)
            if s.reverse:
                self.w(ind, f"for {k} in range({trip} - 1, -1, -1):")
            else:
                self.w(ind, f"for {k} in range({trip}):")
            self.w(ind + 1, f"{s.var} = {self.opnd(s.start)} + {k} * {self.opnd(s.step)}")
        if s.exit_flag and not s.reverse:
            self.w(ind + 1, f"if {s.exit_flag}:")  # the rest of the loop would do nothing (ir.For)
            self.w(ind + 2, "break")
        self.emit_block(s.body, ind + 1)

    def expr(self, s):
        op, a = s.op, s.args
        dst_float = self.types.of(s.dst) == "float"
        want = "float" if dst_float else None
        if op == "copy":
            if s.dst in self.wide:
                return f"np.float64({self.opnd(a[0])})"
            return self.opnd(a[0], want)
        if op in _SYM:
            w = want if (self.f32 or op == "div") else None
            if op == "div" and not dst_float:
                w = None
            x, y = self.opnd(a[0], w), self.opnd(a[1], w)
            if s.fn == GUARD and dst_float and not _plain_product_safe(a, self.finite):
                # adjoint product: 0 when the adjoint is 0, branch-free (selects.py)
                return f"_nz_{op}({x}, {y})"
            if s.fn == GUARD and not is_var(a[0]) and a[0].value == 0:
                return self.flit(0.0)
            return f"{x} {_SYM[op]} {y}"
        if op == "pow":
            base = self.opnd(a[0], want)
            ex = a[1]
            if not is_var(ex) and isinstance(ex.value, int) and not isinstance(ex.value, bool):
                e = self.opnd(ex)
            else:
                e = self.opnd(ex, want)
            text = f"{base} ** {e}"
            return self.tof(text) if (self.f32 and dst_float) else text
        if op == "neg":
            return f"-{self.opnd(a[0])}"
        if op == "cmp":
            t = [self.types.of(x) for x in a]
            w = "float" if (self.f32 and "float" in t) else None  # float32 vs int64 would compare in float64
            return f"{self.opnd(a[0], w)} {s.fn} {self.opnd(a[1], w)}"
        if op == "not":
            return f"not {self.opnd(a[0])}"
        if op == "index":
            text = f"{a[0]}[{', '.join(self.opnd(i) for i in a[1:])}]"
            return self.tof(text) if (self.f32 and dst_float) else text
        if op == "shape":
            return f"{a[0]}.shape[{self.opnd(a[1])}]"
        if op == "call":
            if s.fn in ("abs", "min", "max"):
                return f"{s.fn}({', '.join(self.opnd(x, want) for x in a)})"
            if s.fn in ("maximum", "minimum"):  # numpy's: on numbers, Python's max/min; on floats NaN from b too
                x, y = (self.opnd(v, want) for v in a)
                if not dst_float:
                    return f"{'max' if s.fn == 'maximum' else 'min'}({x}, {y})"
                return f"({y} if ({y} {'>' if s.fn == 'maximum' else '<'} {x} or {y} != {y}) else {x})"
            args = ", ".join(self.opnd(x, "float") for x in a)
            if s.fn == "trunc":  # int() truncates; math.trunc of a numpy float32 raises in plain Python
                return f"int({args})"
            if s.fn in ("floor", "ceil"):  # ints as in Python and numba's CPU target; numba-cuda's return floats,
                return f"int(math.{s.fn}({args}))"  # which cannot index an array
            return f"math.{s.fn}({args})"
        if op == "tofloat":
            if self.types.of(a[0]) == "bool":
                return self.opnd(a[0], "float")
            return self.tof(self.opnd(a[0]))
        if op == "toint":
            read = self.reads.get(a[0]) if self.f32 else None
            if read is not None:  # int(x[i]) from the array itself: through float32 an index above 2**24 rounds
                return f"int({read.args[0]}[{', '.join(self.opnd(i) for i in read.args[1:])}])"
            return f"int({self.opnd(a[0])})"
        if op == "load":
            text = f"{self.scratch}[{self.opnd(a[0])}]"
            t = self.types.of(s.dst)
            return f"int({text})" if t == "int" else (f"({text} != 0)" if t == "bool" else text)
        if op == "aload":  # a local array's element (local_arrays.py)
            return f"{self.scratch}[{self.opnd(a[0])}]"
        if op == "loadint":
            return f"int({self.scratch}[{self.opnd(a[0])}])"
        if op == "tripcount":
            return self.trip(*a)
        raise AssertionError(op)


def _plain_product_safe(args, finite=frozenset()):
    """A guarded product needs no guard when its adjoint is a constant or its partial a finite constant or a
    variable in ``finite`` (the parameters and their elements: ``ir.GUARD``)."""
    a, b = args
    if not is_var(a):
        return True
    if is_var(b):
        return b in finite
    return not isinstance(b.value, bool) and math.isfinite(b.value) and b.value != 0


def function_source(name, params, stmts, types, dtype, scratch="scratch", doc=None, origin=NO_POS, wrt=(),
                    wide_sums=False):
    """One generated function; ``origin``: the kernel's ``def`` position, named for statements without one;
    ``wrt``: the parameter arguments (products whose partial is one of them, or an element of one, are not
    guarded); ``wide_sums``: in a float32 build, keep the loops' sums (:func:`loop_sums`) in float64."""
    finite = frozenset(wrt) | {s.dst for s in walk(stmts)
                               if isinstance(s, Assign) and s.op == "index" and s.args[0] in wrt}
    wide = loop_sums(stmts, types) if wide_sums else frozenset()
    em = Emitter(types, dtype, scratch, origin, finite, wide)
    em.reads = {s.dst: s for s in walk(stmts) if isinstance(s, Assign) and s.op == "index"}
    em.w(0, f"def {name}({', '.join(params)}):")
    if doc:
        em.w(1, f'"""{doc}"""')
    em.emit_block(stmts, 1)
    return "\n".join(em.lines) + "\n"
