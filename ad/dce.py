"""Liveness and dead-code elimination over structured IR.

Used twice: on the primal (drop what does not feed the return value) and on generated gradient code (``grad``
is the value-not-needed variant: everything that only feeds the value disappears, e.g. ``lgamma(c[i] + 1)`` in
a Poisson kernel).  Statements with effects (gradient accumulation, scratch stores, zeroing, return) are always
kept; an assignment is kept when its target is live afterwards.  Loops iterate liveness to a fixpoint.
"""
from .ir import (AStore, Assign, ExtCall, For, GradAdd, If, Return, RuleCall, ScratchCopy, ScratchZero, Store,
                 ZeroGrad, is_var, uses)

_EFFECTS = (GradAdd, Store, ZeroGrad, Return, AStore, ScratchCopy, ScratchZero)


def _bounds(s):
    """What a loop reads itself: its bounds, and the exit flag (at the head of every iteration)."""
    return {o for o in (s.start, s.stop, s.step, s.exit_flag) if o is not None and is_var(o)}


def live_in(stmts, live_out):
    """Variables live on entry to ``stmts`` given those live on exit."""
    live = set(live_out)
    for s in reversed(stmts):
        live = _step(s, live)
    return live


def _step(s, live):
    if isinstance(s, (Assign, RuleCall)):
        if s.dst in live:
            live = (live - {s.dst}) | uses(s)
        return live
    if isinstance(s, ExtCall):
        if _kept(s, live):
            live = (live - set(s.results)) | uses(s)
        return live
    if isinstance(s, _EFFECTS):
        return live | uses(s)
    if isinstance(s, If):
        return live_in(s.then, live) | live_in(s.orelse, live) | uses(s)
    if isinstance(s, For):
        body_out = _loop_live_out(s, live)
        return ((body_out | live_in(s.body, body_out)) - _loop_defs(s)) | _bounds(s) | (live - _loop_defs(s))
    raise AssertionError(type(s))


def _kept(s, live):
    """An external call stays when its result is used, it writes arrays, or it is an adjoint (which writes
    adjoint arrays and gradients)."""
    return s.reverse_only or bool(s.writes) or any(v in live for v in s.results)


def _loop_defs(s):
    return {s.var} | ({s.counter} if s.counter else set())


def _loop_live_out(s, live_after):
    head = {s.exit_flag} if s.exit_flag else set()  # read before each next iteration
    body_out = set(live_after) | head
    while True:
        new = live_after | head | (live_in(s.body, body_out) - _loop_defs(s))
        if new == body_out:
            return body_out
        body_out = new


def eliminate(stmts, live_out):
    """A copy of ``stmts`` without dead assignments (and without branches and loops left empty)."""
    out = []
    live = set(live_out)
    for s in reversed(stmts):
        if isinstance(s, (Assign, RuleCall)):
            if s.dst not in live:
                continue
        elif isinstance(s, ExtCall):
            if not _kept(s, live):
                continue
        elif isinstance(s, If):
            then = eliminate(s.then, live)
            orelse = eliminate(s.orelse, live)
            if not then and not orelse:
                continue
            s = If(s.cond, then, orelse, s.pos)
        elif isinstance(s, For):
            s = _eliminate_loop(s, live)
            if s is None:
                continue
        live = _step(s, live)
        out.append(s)
    out.reverse()
    return out


def _size(stmts):
    return sum(1 + (_size(s.then) + _size(s.orelse) if isinstance(s, If) else
                    _size(s.body) if isinstance(s, For) else 0) for s in stmts)


def _eliminate_loop(s, live):
    """``s`` with its body reduced to a fixpoint, or None when nothing is left.  One round is not enough: the
    liveness it uses was computed on the unreduced body, where a statement that is itself dead (a branch whose
    results nobody reads) may still read a carried value, keeping that value's computation at the end of the
    body alive; the next round, on the reduced body, drops it.  Stopping early would leave kept statements
    reading values that the reduced loop's own liveness (``_step``) no longer keeps alive before the loop."""
    while True:
        body = eliminate(s.body, _loop_live_out(s, live))
        if not body:
            return None
        new = s.with_body(body)
        if _size(body) == _size(s.body):
            return new
        s = new
