"""Activity analysis: which float values carry a derivative to the result?

active = varied (depends on an argument in ``wrt``) ∩ useful (the return value depends on it).  Only active
values get adjoints; data arguments never get a shadow.  Integer and boolean values are never active: a
comparison on an active value decides a branch but has no derivative.
"""
from . import rules
from .ir import AStore, Assign, ExtCall, RuleCall, View, is_var, walk

NO_DERIVATIVE_OPS = {"cmp", "not", "shape", "toint", "floordiv", "load", "loadint"}  # floor division: piecewise constant


class Activity:
    def __init__(self, varied, useful, active, active_args):
        self.varied = varied
        self.useful = useful
        self.active = active            # IR variables with adjoints
        self.active_args = active_args  # wrt arguments whose gradient is not identically zero

    def is_active(self, operand):
        return is_var(operand) and operand in self.active


class _ArrayWrite:
    """An ``AStore`` seen as an assignment to its array (activity treats a local array as one variable)."""

    def __init__(self, s):
        self.dst, self.op, self.args, self.fn = s.array, "copy", [s.value], None


class _CallOutput:
    """One output of an external call (its result, or a local array it writes) seen as an assignment from every
    argument: the call is opaque, so each output may depend on every input."""

    def __init__(self, s, target):
        self.dst, self.op, self.fn = target, "external", None
        self.args = [a.array if isinstance(a, View) else a for a in s.args if a is not None]


def _differentiable_inputs(s, wrt):
    """Operands through which ``s`` can carry a derivative."""
    if isinstance(s, RuleCall):
        return [a for a in s.args if is_var(a)]
    if s.op == "aload":
        return [s.fn]  # the element's array
    if s.op in NO_DERIVATIVE_OPS:
        return []
    if s.op == "index":
        return [s.args[0]] if s.args[0] in wrt else []
    if s.op == "call" and s.fn in rules.ZERO_DERIVATIVE:
        return []
    return [a for a in s.args if is_var(a)]


def analyse(body, ret, wrt, typeinfo):
    stmts = [s for s in walk(body) if isinstance(s, (Assign, RuleCall))]
    writes = [_ArrayWrite(s) for s in walk(body) if isinstance(s, AStore) and not s.reverse_only]
    writes += [_CallOutput(s, t) for s in walk(body) if isinstance(s, ExtCall) and not s.reverse_only
               for t in list(s.results) + list(s.writes)]
    floaty = {s.dst for s in stmts if typeinfo.types.get(s.dst) == "float"} | {w.dst for w in writes}
    stmts += writes
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if s.dst in floaty and s.dst not in varied and any(a in varied for a in _differentiable_inputs(s, wrt)):
                varied.add(s.dst)
                changed = True
    useful = {ret} if is_var(ret) else set()
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if s.dst in useful:
                for a in _differentiable_inputs(s, wrt):
                    if a not in useful:
                        useful.add(a)
                        changed = True
    active = (varied & useful & floaty)
    active_args = tuple(w for w in wrt if w in useful)
    return Activity(varied, useful, active, active_args)
