"""Invariant forwarding in loops: which values in a loop body are the same in every iteration?

The fused reverse code of a reduction passes the accumulator's adjoint through each iteration by a round of
copies and resets (``q_b = q_b + c; c = 0.0; c = c + q_b; ...; q_b = 0.0``): the value is loop-invariant, but
no statement says so, which hides it from ``factoring.py`` and from the compiler.  This pass evaluates a loop
body's top-level statements symbolically -- each value is a constant, the value a variable had at the head of
the iteration, or an opaque result -- and finds

* carried variables that are zero at every iteration head (zero before the loop and zero again at the end of
  the body: assumed, then verified, until the assumption set is stable -- an induction over the iterations);
* carried variables whose end-of-body value is their head value (they never change).

Operands are then rewritten to read constants, invariants (a copy of the variable taken before the loop) or
the earliest variable still holding the same value; ``0 + x``, ``x - 0``, ``1 * x`` become copies (only the sign
of a zero can change).  Dead statements are left for ``dce``.  Statements nested in ``if``/``for`` inside the
body are opaque: whatever they assign becomes unknown, and they are not rewritten.
"""
from .ir import Assign, Const, assigned, is_var, map_loops

_IDENTITIES = {"add": ((0, 0.0, 1), (1, 0.0, 0)), "sub": ((1, 0.0, 0),), "mul": ((0, 1.0, 1), (1, 1.0, 0))}


def forward_invariants(stmts, types, fresh):
    """A copy of ``stmts`` with loop bodies rewritten as described in the module docstring."""
    return map_loops(stmts, lambda before, loop, body: _loop(before, loop, body, types, fresh))


def _zero_before(before, names):
    """Names whose last assignment in the statements ``before`` (same block) is ``= 0.0`` at top level."""
    out, seen = set(), set()
    for s in reversed(before):
        for v in sorted(assigned([s])):
            if v in seen:
                continue
            seen.add(v)
            if (isinstance(s, Assign) and s.dst == v and s.op == "copy" and not is_var(s.args[0])
                    and s.args[0].value == 0.0 and not isinstance(s.args[0].value, bool)):
                out.add(v)
    return out & names


class _Eval:
    """Symbolic values of one pass over a loop body under the assumption that ``zero`` are 0 at the head."""

    def __init__(self, body, written, zero, types):
        self.types = types
        self.cur = {}
        self.seen = []      # per top-level statement: {operand index: value} (Assigns only)
        self.written = written
        self.zero = zero
        self.counter = 0
        for s in body:
            self.step(s)

    def head(self, v):
        return ("c", 0.0) if v in self.zero else ("h", v)

    def value(self, o):
        if not is_var(o):
            return ("c", o.value)
        return self.cur.get(o, self.head(o))

    def opaque(self, holder):
        self.counter += 1
        return ("o", self.counter, holder)

    def step(self, s):
        if not isinstance(s, Assign):
            self.seen.append(None)
            for v in assigned([s]):
                self.cur[v] = self.opaque(v)
            return
        vals = [self.value(a) for a in s.args]
        self.seen.append(vals)
        self.cur[s.dst] = self.simplified(s, vals)

    def simplified(self, s, vals):
        same_type = lambda k: self.types.of(s.args[k]) == self.types.of(s.dst)
        if s.op == "copy" and same_type(0):
            return vals[0]
        for k, neutral, keep in _IDENTITIES.get(s.op, ()):
            v = vals[k]
            if v[0] == "c" and v[1] == neutral and not isinstance(v[1], bool) and same_type(keep):
                return vals[keep]
        return self.opaque(s.dst)

    def end(self, v):
        return self.cur.get(v, self.head(v))


def _loop(before, loop, body, types, fresh):
    """(statements to put before the loop, rewritten body, nothing after it)."""
    written = assigned(body) | {loop.var} | ({loop.counter} if loop.counter else set())
    nested = {v for s in body if not isinstance(s, Assign) for v in assigned([s])}
    zero = _zero_before(before, written - nested - {loop.var})
    while True:
        ev = _Eval(body, written, zero, types)
        still = {v for v in zero if ev.end(v) == ("c", 0.0)}
        if still == zero:
            break
        zero = still
    # the loop variable and counter change between iterations although no statement of the body writes them
    unchanged = {v for v in written - zero - {loop.var, loop.counter} if ev.end(v) == ("h", v)}
    pre, inv_names = [], {}

    def invariant_name(w):
        if w not in written:
            return w
        if w not in unchanged:
            return None
        if w not in inv_names:
            inv_names[w] = fresh(f"{w}_inv")
            # the copy has the variable's type: an untyped name is emitted as a float, and an integer used as an
            # index must stay one (fuzz seed 100159, F4 in tests/ad/fuzz/FINDINGS.md)
            types.types[inv_names[w]] = types.of(w)
            pre.append(Assign(inv_names[w], "copy", [w], pos=loop.pos))
        return inv_names[w]

    # second pass: rewrite operands with the final assumptions
    ev2 = _Eval([], written, zero, types)
    new_body = []
    for s in body:
        if not isinstance(s, Assign):
            ev2.step(s)
            new_body.append(s)
            continue
        args = []
        for a in s.args:
            args.append(_replacement(a, ev2, invariant_name, types))
        ev2.step(s)
        val = ev2.cur[s.dst]
        if val[0] != "o" or val[2] != s.dst:
            # an identity: dst just takes an existing value
            src = _operand_for(val, ev2, invariant_name, types, s.dst)
            if src is not None:
                new_body.append(Assign(s.dst, "copy", [src], pos=s.pos))
                continue
        new_body.append(Assign(s.dst, s.op, args, s.fn, s.pos))
    return pre, new_body, []


def _replacement(a, ev, invariant_name, types):
    if not is_var(a):
        return a
    r = _operand_for(ev.value(a), ev, invariant_name, types, a)
    return a if r is None or types.of(r) != types.of(a) else r


def _operand_for(val, ev, invariant_name, types, want_type_of):
    """An operand that holds ``val`` right now, or None."""
    kind = val[0]
    if kind == "c":
        return Const(val[1])
    if kind == "h":
        return invariant_name(val[1]) if val[1] in ev.written else val[1]
    holder = val[2]
    return holder if ev.cur.get(holder) == val else None
