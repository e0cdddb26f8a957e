"""Does a loop body read what a local array held when the iteration began?

A loop that writes a local array must let its reverse sweep replay each iteration with the array as the iteration
found it. When an iteration reads an element only after writing it itself (an RK4 stage ``k1 = f(y)``, a
temporary filled element by element before use), or reads only the element no other iteration writes
(``y[j] += dt * k[j]``), the array needs no copy per iteration: one copy when the loop starts, put back before its
reverse sweep, gives every replay what it reads, and the rollback of the writes leaves the code before the loop
the array as it was (array_adjoint.py). ``reads_entry_value`` tells the two cases apart, conservatively: an element
counts as written only by an unconditional write at a slot it can name (a constant index, or the index of a loop
around the read), or by a ``for j in range(m)`` loop writing element ``j`` of an ``m``-element array.
"""
from .ir import AStore, Assign, Const, ExtCall, For, If, RuleCall, View, is_var, walk


class _Slots:
    """Names the slot operands of one array: ``offset + c`` -> ``c``, ``offset + j`` -> the loop variable ``j``."""

    def __init__(self, info, producers, loop_vars):
        self.info, self.producers, self.loop_vars = info, producers, loop_vars

    def key(self, operand):
        s = self.producers.get(operand) if is_var(operand) else None
        if s is None or s.op != "add" or s.args[0] != self.info.offset:
            return None
        index = s.args[1]
        if isinstance(index, Const) and isinstance(index.value, int):
            return index.value
        if is_var(index) and index in self.loop_vars:
            return index
        return None

    def length(self):
        """Elements of the array when its shape is constant, else None."""
        n = 1
        for d in self.info.dims:
            if not (isinstance(d, Const) and isinstance(d.value, int)):
                return None
            n *= d.value
        return n


def _counted_range(loop):
    """``m`` for ``for j in range(0, m, 1)`` with a constant ``m`` and no ``break``; None otherwise."""
    if loop.exit_flag or loop.start != Const(0) or loop.step != Const(1):
        return None
    stop = loop.stop
    return stop.value if isinstance(stop, Const) and isinstance(stop.value, int) else None


def reads_entry_value(loop, info, producers, function_body):
    """True unless every read of the array ``info`` in ``loop``'s body is of an element the same iteration wrote
    before, or of element ``j`` in a loop over ``j`` whose iterations write element ``j`` only (the reads of
    ``AStore.old`` that only serve the rollback excepted: not those that passes merged with a read of the same
    element, as in ``buf[i] += v``)."""
    used = _operands(function_body)
    olds = {s.old for s in walk(loop.body)
            if isinstance(s, AStore) and s.array == info.name and s.old and s.old not in used}
    loop_vars = {loop.var} | {s.var for s in walk(loop.body) if isinstance(s, For)}
    slots = _Slots(info, producers, loop_vars)
    writes = [slots.key(s.slot) for s in walk(loop.body) if isinstance(s, AStore) and s.array == info.name
              and not s.reverse_only]
    external = any(info.name in s.writes for s in walk(loop.body) if isinstance(s, ExtCall))
    # Iteration j writing only element j: what it reads of element j, no other iteration wrote.
    own = loop.var if writes and not external and all(w == loop.var for w in writes) else None
    return _block_reads_entry(loop.body, slots, olds, {own} if own else set())


def _covers_all(covered, slots):
    n = slots.length()
    return n is not None and all(c in covered for c in range(n))


def _block_reads_entry(stmts, slots, olds, covered):
    """Walk ``stmts`` in order, adding the elements written to ``covered``; True at the first uncovered read."""
    name = slots.info.name
    for s in stmts:
        if isinstance(s, Assign):
            if s.op == "aload" and s.fn == name and s.dst not in olds:
                if slots.key(s.args[0]) not in covered or slots.key(s.args[0]) is None:
                    return True
        elif isinstance(s, AStore):
            if s.array == name and not s.reverse_only:
                key = slots.key(s.slot)
                if key is not None:
                    covered.add(key)
        elif isinstance(s, If):
            then, orelse = set(covered), set(covered)
            if _block_reads_entry(s.then, slots, olds, then) or _block_reads_entry(s.orelse, slots, olds, orelse):
                return True
            covered &= then & orelse
        elif isinstance(s, For):
            inner = set(covered)
            m = _counted_range(s)
            if m is not None and all(c in covered for c in range(m)):
                inner.add(s.var)  # element j of a fully written prefix [0, m)
            if _block_reads_entry(s.body, slots, olds, inner):
                return True
            if m is not None and m >= 1:
                if s.var in inner:  # every element j of range(m) written by its own iteration
                    covered.update(range(m))
                covered.update(k for k in inner if k != s.var)
        elif isinstance(s, ExtCall):
            if any(isinstance(a, View) and a.array == name for a in s.args) and not _covers_all(covered, slots):
                return True
        elif isinstance(s, RuleCall):
            if _block_reads_entry(s.body, slots, olds, covered):
                return True
    return False


def _operands(stmts):
    """Variable names used as operands anywhere in ``stmts`` (``AStore.old`` itself is not a use)."""
    out = set()
    for s in walk(stmts):
        if isinstance(s, (Assign, RuleCall, ExtCall)):
            out.update(a for a in s.args if is_var(a))
        elif isinstance(s, AStore):
            out.update(a for a in (s.slot, s.value) if is_var(a))
        elif isinstance(s, If):
            out.update(a for a in (s.cond,) if is_var(a))
        elif isinstance(s, For):
            out.update(a for a in (s.start, s.stop, s.step) if is_var(a))
        else:
            out.update(a for a in vars(s).values() if is_var(a))
    return out
