"""Fusing a reduction loop's reverse sweep into its forward pass (one pass over the data instead of two).

For ``acc += g(theta, x[i])`` the adjoint of ``acc`` is the same in every iteration, so if it can be computed
*before* the loop (``return -0.5 * quad - ...`` gives ``quad_bar = -0.5``), each iteration can run its forward
statements and then its adjoint statements right away.  Conditions, all checked here:

* the loop is an independent-iteration reduction at the kernel's top level, or directly in the body of a fused
  loop (there the enclosing accumulators' adjoints are known constants);
* every active carried value is a pure sum: its versions in the body are only added to, subtracted from (as
  the left operand) or copied -- so the adjoint passes through an iteration unchanged;
* the statements of the reverse sweep after the loop that determine the accumulators' adjoints are plain
  assignments reading only values computed before the loop.
The adjoints at the loop exit are then computed ahead of the loop into private names (the real reverse sweep
later computes them again for the other adjoints, unchanged).
"""
from dataclasses import replace

from . import dce
from .ir import (AStore, Assign, Const, ExtCall, For, GradAdd, If, RuleCall, ScratchCopy, ScratchZero, Store, ZeroGrad,
                 is_var, rename_all, uses, walk)


def pure_sum_carried(loop, carried, active):
    """True when every active carried variable of ``loop`` is only summed into, each into itself: every version
    of an accumulator in the body derives from that accumulator's own head value alone (``a, b = b, a`` or
    ``b = a + x[i]`` with ``b`` carried pass the adjoints *between* accumulators -- the iteration's Jacobian is
    not the identity -- so the adjoints change from one iteration to the next; F1 in FINDINGS.md)."""
    origin = {v: v for v in carried if v in active}  # version -> the carried variable it derives from
    changed = True
    while changed:
        changed = False
        for s in walk(loop.body):
            if isinstance(s, Assign) and s.dst not in origin:
                hits = [a for a in s.args if is_var(a) and a in origin]
                if hits and s.op in ("add", "copy") or (s.op == "sub" and s.args[0] in origin):
                    origin[s.dst] = origin[hits[0]]
                    changed = True
    for s in walk(loop.body):
        if isinstance(s, Assign):
            hits = [k for k, a in enumerate(s.args) if is_var(a) and a in origin]
            if not hits:
                if s.dst in origin:
                    return False  # a version of the accumulator computed from something else
                continue
            if s.op == "copy" or (s.op == "add" and len(hits) == 1) or (s.op == "sub" and hits == [0]):
                if origin.get(s.dst) != origin[s.args[hits[0]]]:
                    return False  # one accumulator's value flows into another's (a swap, a rotation)
                continue
            return False
        elif isinstance(s, (If, For)):
            if any(u in origin for u in uses(s)):
                return False
        elif isinstance(s, RuleCall):
            if any(is_var(a) and a in origin for a in s.args):
                return False
        elif isinstance(s, ExtCall):
            return False  # (never reached: a loop with an external call touches memory, see touches_arrays)
    return True


def strip_effects(stmts, primal=False):
    """``stmts`` without gradient accumulation, scratch stores and zeroing (``Return`` stays); ``primal``: also
    without the reverse sweeps of loops (what is left is the primal computation)."""
    out = []
    for s in stmts:
        if isinstance(s, (GradAdd, Store, ZeroGrad, ScratchCopy)):
            continue
        if isinstance(s, (AStore, ScratchZero, ExtCall)):
            if s.reverse_only:
                continue
            if isinstance(s, AStore) and s.old:
                s = replace(s, old=None)  # the old value is for the reverse sweep
            if isinstance(s, ExtCall) and s.saved:
                s = replace(s, saved=())  # so are the copies of what the call overwrites
        if isinstance(s, For) and s.reverse and primal:
            continue  # the reverse sweep of a loop (its replay writes local arrays: effects, but not the primal's)
        if isinstance(s, If):
            s = If(s.cond, strip_effects(s.then, primal), strip_effects(s.orelse, primal), s.pos)
        elif isinstance(s, For):
            s = s.with_body(strip_effects(s.body, primal))
        out.append(s)
    return out


def exit_adjoints_ahead(after_reverse, targets, available, adjoint_names, tag, initial=None):
    """Statements computing the loop-exit adjoints ``targets`` before the loop, or None if impossible.

    ``after_reverse``: the reverse sweep of everything after the loop (seed included); ``available``: values
    computed before the loop; ``initial``: adjoints already known there (inside an enclosing fused loop, its
    accumulators' adjoints), all others start at zero. Returns ``(statements, {target: private name})``."""
    initial = initial or {}
    sliced = dce.eliminate(strip_effects(after_reverse), set(targets))
    if any(not isinstance(s, Assign) or s.op == "aload" for s in sliced):  # memory is not known ahead
        return None
    defined = set()
    for s in sliced:
        for a in s.args:
            if is_var(a) and a not in defined and a not in adjoint_names and a not in available:
                return None
        defined.add(s.dst)
    names = {s.dst for s in sliced} | {a for s in sliced for a in s.args if is_var(a) and a in adjoint_names}
    names |= set(targets)
    mapping = {n: f"{n}_ahead{tag}" for n in names}
    out = [Assign(mapping[n], "copy", [initial.get(n, Const(0.0))]) for n in sorted(names)]
    out += rename_all(sliced, mapping)
    return out, {t: mapping[t] for t in targets}
