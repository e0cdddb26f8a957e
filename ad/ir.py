"""The small intermediate representation shared by every pass after lowering.

A function body is a list of statements; statements are three-address assignments inside structured ``For``
(``range``) and ``If`` regions. Operands are variable names (``str``) or ``Const``. The reverse pass adds a few
statement kinds that only appear in generated code (gradient accumulation, scratch stores, zeroing).
"""
from dataclasses import dataclass, field, replace
from typing import List, Optional, Union

from .errors import NO_POS, Pos


# ``fn`` of an adjoint product ``g * partial`` (or ``g / x``): zero when the adjoint ``g`` (the left operand) is
# exactly zero, so a value that overflowed to inf (or a NaN partial) after it stopped mattering adds 0, not
# 0 * inf = NaN, as it would in a tape with symbolic zeros (JAX).  Emitted as ``_nz_mul``/``_nz_div`` (selects.py):
# one compare and one select, no branch in the generated code, CUDA-compatible.  Not guarded (emit.py): products
# whose partial is a finite constant or a parameter (a ``wrt`` argument or an element read from one), which is
# finite wherever a gradient is asked for; the select kept the compiler from hoisting and fusing those products,
# which sit in the innermost loops (docs/benchmarks.md, RK4 Lotka-Volterra).
GUARD = "nz"


@dataclass(frozen=True)
class Const:
    value: Union[float, int, bool]


Operand = Union[str, Const]


@dataclass
class Assign:
    """``dst = op(args)``.  ops: copy add sub mul div pow neg floordiv mod cmp not index shape call
    tofloat toint load.  ``fn`` is the math function name for ``call`` and the operator for ``cmp``."""
    dst: str
    op: str
    args: List[Operand]
    fn: Optional[str] = None
    pos: Pos = NO_POS


@dataclass
class If:
    cond: Operand
    then: List
    orelse: List
    pos: Pos = NO_POS


@dataclass
class For:
    """``for var in range(start, stop, step)``.  ``counter`` names an iteration counter (0, 1, ...) for loops
    that index scratch; ``reverse`` runs the iterations last to first (reverse sweep).

    A loop with ``break`` (breaks.py) has ``exit_flag``, the bool variable ``break`` sets.  The body is guarded
    by ``not exit_flag``, so the IR is correct read as a plain loop; an iteration that starts with the flag set
    is a no-op, forward and reverse, which is what lets the emitted forward loop leave at once (``if flag:
    break``) and the reverse sweep run only the iterations that ran."""
    var: str
    start: Operand
    stop: Operand
    step: Operand
    body: List
    pos: Pos = NO_POS
    counter: Optional[str] = None
    reverse: bool = False
    loop_id: int = -1
    exit_flag: Optional[str] = None

    def with_body(self, body):
        return replace(self, body=body)


@dataclass
class RuleCall:
    """``dst = f(args)`` for a function with a derivative rule: ``body`` computes ``dst`` (the inlined primal),
    ``rule`` identifies the partials (see ``rules.py``)."""
    dst: str
    rule: object
    args: List[Operand]
    body: List
    pos: Pos = NO_POS


@dataclass(frozen=True)
class View:
    """A local array (or its adjoint) passed whole to an external call: ``scratch[offset:offset + size]`` shaped
    ``dims`` (external.py)."""
    array: str
    offset: Operand
    dims: tuple


@dataclass
class ExtCall:
    """``results = fn(args)``: a call of a function with an adjoint rule, never inlined (external.py).  ``fn``
    names it in the generated module; ``args`` are operands, ``View``s, array argument names or None;
    ``results`` get the returned value (one name) or the entries of a returned tuple.  ``rule`` is the
    ``rules.AdjointRule``; ``writes`` the local arrays the call may write; ``saved`` the scratch offsets their
    contents are copied to before it (none: no copy needed); ``reverse_only`` marks the adjoint's call."""
    fn: str
    args: List
    results: List[str]
    rule: object = None
    writes: tuple = ()
    saved: tuple = ()
    reverse_only: bool = False
    pos: Pos = NO_POS


@dataclass
class GradAdd:
    """``grad[index] += value`` (reverse sweep: an active array element's adjoint)."""
    grad: str
    index: List[Operand]
    value: Operand
    pos: Pos = NO_POS


@dataclass
class Store:
    """``scratch[index] = value`` (loop-carried state kept for the reverse sweep)."""
    index: Operand
    value: Operand
    pos: Pos = NO_POS


@dataclass
class AStore:
    """``array[slot] = value`` into a local array's scratch region (local_arrays.py); ``slot`` is the absolute
    scratch index.  ``old`` names the value read from the slot just before (the reverse sweep writes it back,
    so the array rolls back as the sweep goes); ``reverse_only`` marks writes of the adjoint sweep."""
    array: str
    slot: Operand
    value: Operand
    old: Optional[str] = None
    reverse_only: bool = False
    pos: Pos = NO_POS


@dataclass
class ScratchCopy:
    """``scratch[dst:dst+count] = scratch[src:src+count]`` (snapshots of local arrays, reverse sweep only)."""
    dst: Operand
    src: Operand
    count: Operand
    pos: Pos = NO_POS


@dataclass
class ScratchZero:
    """``scratch[start:start+count] = 0`` (``np.zeros``; ``reverse_only``: an adjoint array)."""
    start: Operand
    count: Operand
    reverse_only: bool = False
    pos: Pos = NO_POS


@dataclass
class ZeroGrad:
    grad: str


@dataclass
class Return:
    value: Operand
    as_int: bool = False
    pos: Pos = NO_POS


@dataclass
class Function:
    name: str
    args: List[str]
    body: List
    ret: Operand = None
    types: dict = field(default_factory=dict)


def is_var(x):
    return isinstance(x, str)


def walk(stmts):
    """Every statement, depth first, in source order."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk(s.then)
            yield from walk(s.orelse)
        elif isinstance(s, For):
            yield from walk(s.body)
        elif isinstance(s, RuleCall):
            yield from walk(s.body)


def assigned(stmts):
    """Names written anywhere in ``stmts`` (loop variables and counters included)."""
    out = set()
    for s in walk(stmts):
        if isinstance(s, (Assign, RuleCall)):
            out.add(s.dst)
        elif isinstance(s, ExtCall):
            out.update(s.results)
        elif isinstance(s, For):
            out.add(s.var)
            if s.counter:
                out.add(s.counter)
    return out


def uses(s):
    """Operand names read by one statement itself (not by nested bodies)."""
    if isinstance(s, Assign):
        ops = s.args
    elif isinstance(s, If):
        ops = [s.cond]
    elif isinstance(s, For):
        ops = [s.start, s.stop, s.step] + ([s.exit_flag] if s.exit_flag else [])
    elif isinstance(s, RuleCall):
        ops = s.args
    elif isinstance(s, ExtCall):
        ops = [o for a in s.args for o in _call_operands(a)] + list(s.saved)
    elif isinstance(s, GradAdd):
        ops = list(s.index) + [s.value]
    elif isinstance(s, Store):
        ops = [s.index, s.value]
    elif isinstance(s, AStore):
        ops = [s.slot, s.value] + ([s.old] if s.old else [])
    elif isinstance(s, ScratchCopy):
        ops = [s.dst, s.src, s.count]
    elif isinstance(s, ScratchZero):
        ops = [s.start, s.count]
    elif isinstance(s, Return):
        ops = [s.value]
    else:
        ops = []
    return {o for o in ops if is_var(o)}


def _call_operands(a):
    """The operands an external call's argument reads: a view's offset and dimensions, or the argument."""
    if isinstance(a, View):
        return [a.offset, *a.dims]
    return [] if a is None else [a]


def parallel_copy(pairs, fresh, pos=NO_POS):
    """Statements performing the copies ``dst = src`` for all ``(dst, src)`` pairs at once (every ``src`` read
    before any ``dst`` is written): a copy goes first when no pending copy still reads its destination; a
    cycle (a swap, a rotation) is broken by saving one destination in a ``fresh(hint)`` temporary."""
    pending = dict(pairs)
    out = []
    while pending:
        reads = {src for src in pending.values() if is_var(src)}
        ready = [d for d in pending if d not in reads]
        if ready:
            for d in ready:
                out.append(Assign(d, "copy", [pending.pop(d)], pos=pos))
            continue
        d = next(iter(pending))  # every remaining destination is read by another copy: a cycle
        saved = fresh(d.split("__")[0] + "_old")
        out.append(Assign(saved, "copy", [d], pos=pos))
        pending = {k: (saved if is_var(src) and src == d else src) for k, src in pending.items()}
    return out


def rename(stmts, mapping, targets=False):
    """A copy of ``stmts`` in which every operand read from ``mapping``'s keys reads its value instead; with
    ``targets``, assigned names are renamed too (a private copy of a computation)."""
    def r(o):
        return mapping.get(o, o) if is_var(o) else o

    dst = r if targets else (lambda name: name)
    out = []
    for s in stmts:
        if isinstance(s, Assign):
            out.append(Assign(dst(s.dst), s.op, [r(a) for a in s.args], s.fn, s.pos))
        elif isinstance(s, If):
            out.append(If(r(s.cond), rename(s.then, mapping, targets), rename(s.orelse, mapping, targets), s.pos))
        elif isinstance(s, For):
            out.append(replace(s, start=r(s.start), stop=r(s.stop), step=r(s.step),
                               body=rename(s.body, mapping, targets),
                               exit_flag=r(s.exit_flag) if s.exit_flag else None))
        elif isinstance(s, RuleCall):
            out.append(RuleCall(dst(s.dst), s.rule, [r(a) for a in s.args], rename(s.body, mapping, targets), s.pos))
        elif isinstance(s, ExtCall):
            args = [View(a.array, r(a.offset), tuple(r(d) for d in a.dims)) if isinstance(a, View) else
                    (None if a is None else r(a)) for a in s.args]
            out.append(replace(s, args=args, results=[dst(v) for v in s.results],
                               saved=tuple(r(v) for v in s.saved)))
        elif isinstance(s, GradAdd):
            out.append(GradAdd(s.grad, [r(i) for i in s.index], r(s.value), s.pos))
        elif isinstance(s, Store):
            out.append(Store(r(s.index), r(s.value), s.pos))
        elif isinstance(s, AStore):
            out.append(replace(s, slot=r(s.slot), value=r(s.value), old=r(s.old) if s.old else None))
        elif isinstance(s, ScratchCopy):
            out.append(ScratchCopy(r(s.dst), r(s.src), r(s.count), s.pos))
        elif isinstance(s, ScratchZero):
            out.append(replace(s, start=r(s.start), count=r(s.count)))
        else:
            out.append(s)
    return out


def rename_all(stmts, mapping):
    """``rename`` of reads and assigned names."""
    return rename(stmts, mapping, targets=True)


def map_loops(stmts, per_loop):
    """A copy of ``stmts`` in which every loop, innermost first, is replaced by ``per_loop(before, loop, body)``
    -> ``(pre, body, post)``: statements placed before it, its new body, statements placed after it.
    ``before`` is the list of statements already produced in the same block; ``body`` is the loop's body with
    its own loops already replaced."""
    out = []
    for s in stmts:
        if isinstance(s, If):
            out.append(If(s.cond, map_loops(s.then, per_loop), map_loops(s.orelse, per_loop), s.pos))
        elif isinstance(s, For):
            pre, body, post = per_loop(out, s, map_loops(s.body, per_loop))
            out.extend(pre)
            out.append(s.with_body(body))
            out.extend(post)
        else:
            out.append(s)
    return out
