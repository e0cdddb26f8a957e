"""Loop-invariant reciprocal hoisting: ``a / k`` inside a loop, with ``k`` not written in the loop, becomes
``a * r`` with ``r = 1.0 / k`` computed once before the loop.

Why: a division costs 4-10 times a multiplication in vector code (``vdivpd``, ``div.rn.f32`` on the GPU), and the
adjoint of ``d = t / s`` divides twice more by ``s`` per iteration.  ``a * (1 / k)`` differs from ``a / k`` by
about one ulp -- the ``arcp`` (allow reciprocal) fast-math semantics -- so the caller only runs this pass when
those semantics are allowed (see ``pipeline.module_source``).

Only float divisions at the *top level* of a loop body (executed in every iteration) move: a division under an
``if`` may be guarded by a test of ``k`` (``if s > 0: y += x[i] / s``) and computing ``1 / k`` unconditionally
would then raise ``ZeroDivisionError`` in the pure-Python variant.  Loops are processed innermost first, so a
reciprocal hoisted out of an inner loop moves further out when its divisor is invariant there too.
"""
from .ir import Assign, Const, For, If, assigned, is_var, uses, walk


def hoist_reciprocals(stmts, types, fresh, _once=None):
    """A copy of ``stmts`` with invariant divisions in loops replaced by multiplications by hoisted reciprocals.

    ``types``: a ``types.TypeInfo`` (only float divisions by float variables move); ``fresh(hint)`` returns an
    unused variable name.  A later ``1.0 / k`` in the same block (the adjoint of ``log(k)`` after the loop)
    reuses the hoisted reciprocal when ``k`` is assigned only once in the whole function."""
    if _once is None:
        counts = {}
        for s in walk(stmts):
            for v in assigned([s]) if not isinstance(s, (If, For)) else ():
                counts[v] = counts.get(v, 0) + 1
        _once = {v for v, n in counts.items() if n == 1}
    out, known = [], {}
    for s in stmts:
        if isinstance(s, If):
            out.append(If(s.cond, hoist_reciprocals(s.then, types, fresh, _once),
                          hoist_reciprocals(s.orelse, types, fresh, _once), s.pos))
        elif isinstance(s, For):
            body = hoist_reciprocals(s.body, types, fresh, _once)
            written = assigned(body) | {s.var}
            pre, body = _hoist_from_body(body, written, types, fresh)
            out.extend(pre)
            known.update((r.args[1], r.dst) for r in pre if r.args[1] in _once)
            out.append(s.with_body(body))
        elif isinstance(s, Assign) and _is_reciprocal(s) and is_var(s.args[1]) and s.args[1] in known:
            out.append(Assign(s.dst, "copy", [known[s.args[1]]], pos=s.pos))
        else:
            out.append(s)
    return out


def _is_reciprocal(s):
    return s.op == "div" and not is_var(s.args[0]) and s.args[0].value == 1.0


def _hoist_from_body(body, written, types, fresh):
    """(statements to run before the loop, new body)."""
    pre, new_body = [], []
    recip = {}   # divisor -> reciprocal name
    counts = {}
    for s in walk(body):
        if isinstance(s, Assign):
            counts[s.dst] = counts.get(s.dst, 0) + 1
    read_so_far = set()
    for s in body:
        read_so_far |= {u for x in walk([s]) for u in uses(x)}
        if not (isinstance(s, Assign) and s.op == "div" and types.of(s.dst) == "float"):
            new_body.append(s)
            continue
        k = s.args[1]
        if not (is_var(k) and k not in written and types.of(k) == "float"):
            new_body.append(s)
            continue
        if (_is_reciprocal(s) and counts[s.dst] == 1 and s.dst not in recip.values()
                and s.dst not in read_so_far):
            # an inner loop's hoisted reciprocal: move it out as it is
            pre.append(s)
            recip.setdefault(k, s.dst)
            continue
        if k not in recip:
            r = fresh(f"recip_{k}")
            pre.append(Assign(r, "div", [Const(1.0), k], pos=s.pos))
            recip[k] = r
        new_body.append(Assign(s.dst, "mul", [s.args[0], recip[k]], s.fn, pos=s.pos))
    return pre, new_body
