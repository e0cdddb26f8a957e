"""Loop-invariant hoisting: ``lam = theta[0]`` inside a loop is read once before it.

Why it matters for the adjoint: a hoisted parameter read gets one scalar adjoint accumulated across the loop
and a single ``grad[0] += ...`` after it, instead of a store into the gradient array on every iteration (which
also blocks vectorisation, since the compiler cannot rule out aliasing between the gradient and the data, and in
a float32 build with float64 sums keeps that sum in the float32 gradient array).
Only cheap operations that cannot fail are moved (array reads with invariant indices, + - * and copies);
``/``, ``**`` and math calls stay where they are; reads of local arrays the loop does not write move too (their
adjoints then sum in a scalar, not in the array's float32 adjoint slots). From inside an ``if`` only reads at
constant indices of a parameter array or of such a local array move (the parameter count is checked against the
kernel's reads and a local array's constant slot lies in scratch, so such a read is safe even where the branch
would not have run; a data read in a branch may be guarded by a length test).
"""
from .ir import AStore, Assign, Const, ExtCall, For, If, assigned, is_var, walk

_MOVABLE = {"index", "shape", "add", "sub", "mul", "neg", "copy", "cmp"}


def _counts(body):
    counts = {}
    for s in walk(body):
        if isinstance(s, Assign):
            counts[s.dst] = counts.get(s.dst, 0) + 1
        elif isinstance(s, For):
            counts[s.var] = counts.get(s.var, 0) + 1
    return counts


def hoist(body, wrt=()):
    counts = _counts(body)
    return _block(body, counts, frozenset(wrt))


def _parameter_read(x, counts, wrt):
    """``x`` reads a parameter array at constant non-negative indices, into a name assigned only there."""
    return (isinstance(x, Assign) and x.op == "index" and counts.get(x.dst) == 1 and x.args[0] in wrt
            and all(isinstance(i, Const) and isinstance(i.value, int) and not isinstance(i.value, bool)
                    and i.value >= 0 for i in x.args[1:]))


def _constant_local_read(x, counts, stored):
    """``x`` reads a local array, not written in the loop, at a constant scratch slot (always inside scratch)."""
    return (isinstance(x, Assign) and x.op == "aload" and counts.get(x.dst) == 1 and x.fn not in stored
            and isinstance(x.args[0], Const))


def _stored_arrays(body):
    """Local arrays written in ``body``: element stores and external calls that write them."""
    out = set()
    for x in walk(body):
        if isinstance(x, AStore):
            out.add(x.array)
        elif isinstance(x, ExtCall):
            out.update(x.writes)
    return out


def _out_of_branches(stmts, take):
    """``stmts`` without the reads inside its ``if`` branches that ``take(statement)`` moves out."""
    out = []
    for x in stmts:
        if isinstance(x, If):
            then = _out_of_branches([y for y in x.then if not take(y)], take)
            orelse = _out_of_branches([y for y in x.orelse if not take(y)], take)
            out.append(If(x.cond, then, orelse, x.pos))
        else:
            out.append(x)
    return out


def _block(stmts, counts, wrt):
    out = []
    for s in stmts:
        if isinstance(s, If):
            out.append(If(s.cond, _block(s.then, counts, wrt), _block(s.orelse, counts, wrt), s.pos))
        elif isinstance(s, For):
            inner = _block(s.body, counts, wrt)
            stored = _stored_arrays(inner)
            from_branches = []

            def take(x):
                if _parameter_read(x, counts, wrt) or _constant_local_read(x, counts, stored):
                    from_branches.append(x)
                    return True
                return False

            inner = _out_of_branches(inner, take)
            written = assigned(inner) | {s.var}  # (rule calls' and external calls' results included)
            moved, kept = list(from_branches), []
            for x in inner:
                local = isinstance(x, Assign) and x.op == "aload" and x.fn not in stored
                if (isinstance(x, Assign) and (x.op in _MOVABLE or local) and counts.get(x.dst) == 1
                        and not any(is_var(a) and a in written for a in x.args)):
                    moved.append(x)
                    written.discard(x.dst)
                else:
                    kept.append(x)
            out.extend(moved)
            out.append(s.with_body(kept))
        else:
            out.append(s)
    return out
