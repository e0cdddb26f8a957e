"""The small intermediate representation shared by every pass after lowering.

A function body is a list of statements; statements are three-address assignments inside structured ``For``
(``range``) and ``If`` regions. Operands are variable names (``str``) or ``Const``. The reverse pass adds a few
statement kinds that only appear in generated code (gradient accumulation, scratch stores, zeroing).
"""
from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union


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
    pos: Tuple[int, int] = (0, 0)


@dataclass
class If:
    cond: Operand
    then: List
    orelse: List
    pos: Tuple[int, int] = (0, 0)


@dataclass
class For:
    """``for var in range(start, stop, step)``.  ``counter`` names an iteration counter (0, 1, ...) for loops
    that index scratch; ``reverse`` runs the iterations last to first (reverse sweep)."""
    var: str
    start: Operand
    stop: Operand
    step: Operand
    body: List
    pos: Tuple[int, int] = (0, 0)
    counter: Optional[str] = None
    reverse: bool = False
    loop_id: int = -1


@dataclass
class RuleCall:
    """``dst = f(args)`` for a function with a derivative rule: ``body`` computes ``dst`` (the inlined primal),
    ``rule`` identifies the partials (see ``rules.py``)."""
    dst: str
    rule: object
    args: List[Operand]
    body: List
    pos: Tuple[int, int] = (0, 0)


@dataclass
class GradAdd:
    """``grad[index] += value`` (reverse sweep: an active array element's adjoint)."""
    grad: str
    index: List[Operand]
    value: Operand


@dataclass
class Store:
    """``scratch[index] = value`` (loop-carried state kept for the reverse sweep)."""
    index: Operand
    value: Operand


@dataclass
class ZeroGrad:
    grad: str


@dataclass
class Return:
    value: Operand
    as_int: bool = False


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
        ops = [s.start, s.stop, s.step]
    elif isinstance(s, RuleCall):
        ops = s.args
    elif isinstance(s, GradAdd):
        ops = list(s.index) + [s.value]
    elif isinstance(s, Store):
        ops = [s.index, s.value]
    elif isinstance(s, Return):
        ops = [s.value]
    else:
        ops = []
    return {o for o in ops if is_var(o)}


def rename(stmts, mapping):
    """A copy of ``stmts`` in which every operand read from ``mapping``'s keys reads its value instead."""
    def r(o):
        return mapping.get(o, o) if is_var(o) else o

    out = []
    for s in stmts:
        if isinstance(s, Assign):
            out.append(Assign(s.dst, s.op, [r(a) for a in s.args], s.fn, s.pos))
        elif isinstance(s, If):
            out.append(If(r(s.cond), rename(s.then, mapping), rename(s.orelse, mapping), s.pos))
        elif isinstance(s, For):
            out.append(For(s.var, r(s.start), r(s.stop), r(s.step), rename(s.body, mapping), s.pos, s.counter,
                           s.reverse, s.loop_id))
        elif isinstance(s, RuleCall):
            out.append(RuleCall(s.dst, s.rule, [r(a) for a in s.args], rename(s.body, mapping), s.pos))
        else:
            out.append(s)
    return out


def rename_all(stmts, mapping):
    """Like ``rename`` but also renames assigned names and gradient values (a private copy of a computation)."""
    def r(o):
        return mapping.get(o, o) if is_var(o) else o

    out = []
    for s in stmts:
        if isinstance(s, Assign):
            out.append(Assign(r(s.dst), s.op, [r(a) for a in s.args], s.fn, s.pos))
        elif isinstance(s, If):
            out.append(If(r(s.cond), rename_all(s.then, mapping), rename_all(s.orelse, mapping), s.pos))
        elif isinstance(s, For):
            out.append(For(s.var, r(s.start), r(s.stop), r(s.step), rename_all(s.body, mapping), s.pos, s.counter,
                           s.reverse, s.loop_id))
        elif isinstance(s, RuleCall):
            out.append(RuleCall(r(s.dst), s.rule, [r(a) for a in s.args], rename_all(s.body, mapping), s.pos))
        elif isinstance(s, GradAdd):
            out.append(GradAdd(s.grad, [r(i) for i in s.index], r(s.value)))
        elif isinstance(s, Store):
            out.append(Store(r(s.index), r(s.value)))
        else:
            out.append(s)
    return out
