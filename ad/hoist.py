"""Loop-invariant hoisting: ``lam = theta[0]`` inside a loop is read once before it.

Why it matters for the adjoint: a hoisted parameter read gets one scalar adjoint accumulated across the loop
and a single ``grad[0] += ...`` after it, instead of a store into the gradient array on every iteration (which
also blocks vectorisation, since the compiler cannot rule out aliasing between the gradient and the data, and in
a float32 build with float64 sums keeps that sum in the float32 gradient array).
Only cheap operations that cannot fail are moved (array reads with invariant indices, + - * and copies);
``/``, ``**`` and math calls stay where they are. From inside an ``if`` only reads of a parameter array at a
constant index move (the parameter count is checked against the kernel's reads, so such a read is in bounds
even where the branch would not have run; a data read in a branch may be guarded by a length test).
"""
from .ir import Assign, Const, For, If, assigned, is_var, walk

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


def _out_of_branches(stmts, counts, wrt, moved):
    """``stmts`` without the parameter reads inside its ``if`` branches (appended to ``moved``)."""
    out = []
    for x in stmts:
        if isinstance(x, If):
            then = _out_of_branches([y for y in x.then if not _take(y, counts, wrt, moved)], counts, wrt, moved)
            orelse = _out_of_branches([y for y in x.orelse if not _take(y, counts, wrt, moved)], counts, wrt,
                                      moved)
            out.append(If(x.cond, then, orelse, x.pos))
        else:
            out.append(x)
    return out


def _take(x, counts, wrt, moved):
    if _parameter_read(x, counts, wrt):
        moved.append(x)
        return True
    return False


def _block(stmts, counts, wrt):
    out = []
    for s in stmts:
        if isinstance(s, If):
            out.append(If(s.cond, _block(s.then, counts, wrt), _block(s.orelse, counts, wrt), s.pos))
        elif isinstance(s, For):
            inner = _block(s.body, counts, wrt)
            from_branches = []
            if wrt:
                inner = _out_of_branches(inner, counts, wrt, from_branches)
            written = assigned(inner) | {s.var}  # (rule calls' and external calls' results included)
            moved, kept = list(from_branches), []
            for x in inner:
                if (isinstance(x, Assign) and x.op in _MOVABLE and counts.get(x.dst) == 1
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
