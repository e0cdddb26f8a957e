"""Loop-invariant hoisting: ``lam = theta[0]`` inside a loop is read once before it.

Why it matters for the adjoint: a hoisted parameter read gets one scalar adjoint accumulated across the loop
and a single ``grad[0] += ...`` after it, instead of a store into the gradient array on every iteration (which
also blocks vectorisation, since the compiler cannot rule out aliasing between the gradient and the data).
Only cheap operations that cannot fail are moved (array reads with invariant indices, + - * and copies);
``/``, ``**`` and math calls stay where they are.
"""
from .ir import Assign, For, If, assigned, is_var, walk

_MOVABLE = {"index", "shape", "add", "sub", "mul", "neg", "copy", "cmp"}


def _counts(body):
    counts = {}
    for s in walk(body):
        if isinstance(s, Assign):
            counts[s.dst] = counts.get(s.dst, 0) + 1
        elif isinstance(s, For):
            counts[s.var] = counts.get(s.var, 0) + 1
    return counts


def hoist(body):
    counts = _counts(body)
    return _block(body, counts)


def _block(stmts, counts):
    out = []
    for s in stmts:
        if isinstance(s, If):
            out.append(If(s.cond, _block(s.then, counts), _block(s.orelse, counts), s.pos))
        elif isinstance(s, For):
            inner = _block(s.body, counts)
            written = assigned(inner) | {s.var}  # (rule calls' and external calls' results included)
            moved, kept = [], []
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
