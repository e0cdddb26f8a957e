"""Factoring loop-invariant multiplicands out of sums accumulated in a loop.

``v = v + e * k`` in every iteration, with ``k`` not written in the loop and ``v`` read nowhere else in it, sums
to ``v + k * sum(e)``: the loop accumulates ``s = s + e`` and ``v = v + s * k`` runs once after it.  The
multiplicand is followed through multiplicative chains: each top-level statement of the body gets a *form*
``coef x term`` (``coef`` a list of invariant factors and divisors, ``term`` a variable) when its value is one,
e.g. ``d_b = c * d`` gives ``[c] x d``, ``u = d_b * r`` gives ``[c, r] x d_b``... and sums of two values with
the same factors are combined into a new term (``[c] x (d + d)``).  This is what the hand-written gauss4d kernel
does: one sum of ``d`` and one of ``d * d`` per parameter, the gradient formed after the loop.

Real-number identities only (distributivity), so the result differs by rounding -- the reassociation that the
``reassoc`` fast-math flag allows; ``pipeline.module_source`` decides when it runs.  The factors are applied
after the loop as guarded products (``ir.GUARD``): a sum that is exactly zero adds nothing even when a factor
is infinite.  One edge differs from the unfactored code: a term (a product of primal values) that overflows to
inf in some iteration whose adjoint factor is exactly zero gives ``inf * 0 = nan`` after the loop.
"""
from .errors import NO_POS
from .ir import GUARD, Assign, Const, For, If, assigned, is_var, map_loops, uses, walk


def factor_accumulations(stmts, types, fresh):
    """A copy of ``stmts`` with invariant factors moved out of loop accumulations (innermost loops first)."""
    return map_loops(stmts, lambda before, loop, body: _factor_loop(loop, body, types, fresh))


def _accumulators(loop, body, types):
    """Float variables that the body only updates as ``v = v + t`` / ``v = v - t`` at top level."""
    cand = {s.dst for s in body if isinstance(s, Assign) and s.op in ("add", "sub") and s.args[0] == s.dst
            and is_var(s.args[1]) and s.args[1] != s.dst and types.of(s.dst) == "float"}
    cand -= {loop.var, loop.counter}
    top = {id(s) for s in body}
    for s in walk(body):
        top_acc = (isinstance(s, Assign) and id(s) in top and s.dst in cand and s.op in ("add", "sub")
                   and s.args[0] == s.dst and s.args[1] != s.dst)
        if top_acc:
            continue
        cand -= uses(s)
        cand -= assigned([s]) if not isinstance(s, (If, For)) else set()
    return cand


def _factor_loop(loop, body, types, fresh):
    """(statements before the loop, new body, statements after it).

    Looking through ``d = t * r`` (form ``[r] x t``) saves nothing when ``d`` is computed anyway for another
    use (the primal's ``d * d``), and it hides ``d * d`` from the compiler's common-subexpression elimination
    when the adjoint needs it too.  So: factor, find the original variables still needed by the statements
    that stay, make those plain terms, and factor again, until the set is stable."""
    body, after = _in_place_sums(body)
    keep = set()
    for _ in range(10):
        run = _Loop(loop, body, types, fresh, keep)
        needed = _still_needed(run.body, run.sums.values(), run.acc) & run.looked_through
        if needed <= keep:
            break
        keep |= needed
    pre, new_body, post = run.result()
    return pre, new_body, post + after


def _in_place_sums(body):
    """The primal's running sums come as ``w = v + t; ...; v = w`` (lowering names each version): rewritten to
    ``v = v + t`` in the loop and ``w = v`` after it, when nothing else in the loop touches ``v`` or ``w``, so they
    are accumulators too (after the loop both hold the final sum, as before)."""
    counts = {}
    for s in walk(body):
        for name in uses(s) | assigned([s]):
            counts[name] = counts.get(name, 0) + 1
    top = [s for s in body if isinstance(s, Assign)]
    out, after, moved = list(body), [], set()
    for s in top:
        if not (s.op in ("add", "sub") and is_var(s.args[0]) and is_var(s.args[1]) and s.dst != s.args[0]):
            continue
        v, w, t = s.args[0], s.dst, s.args[1]
        back = [x for x in top if x.op == "copy" and x.dst == v and x.args[0] == w]
        if (len(back) != 1 or t in (v, w) or counts.get(v) != 2 or counts.get(w) != 2 or v in moved
                or _position(out, back[0]) < _position(out, s)):
            continue
        out[_position(out, s)] = Assign(v, s.op, [v, t], pos=s.pos)
        del out[_position(out, back[0])]
        after.append(Assign(w, "copy", [v], pos=back[0].pos))
        moved |= {v, w}
    return out, after


def _position(stmts, s):
    """Index of the statement object ``s`` itself (equal-looking statements may occur more than once)."""
    return next(k for k, x in enumerate(stmts) if x is s)


def _still_needed(body, sums, acc):
    """Variables that the statements of ``body`` which must stay read (directly or through other statements):
    loop-carried values, accumulations and anything not an assignment are roots."""
    seen, carried = set(), set()
    for s in body:
        if isinstance(s, Assign):
            carried |= {a for a in s.args if is_var(a) and a not in seen}
            seen.add(s.dst)
        else:
            carried |= assigned([s])
    roots = carried | set(sums) | set(acc)
    live = set()
    for s in reversed(body):
        if not isinstance(s, Assign) or s.dst in roots or s.dst in live:
            live |= {u for x in walk([s]) for u in uses(x)}
    return live


class _Loop:
    def __init__(self, loop, body, types, fresh, keep=frozenset()):
        self.loop, self.types, self.fresh, self.keep = loop, types, fresh, keep
        self.looked_through = set()     # original variables whose form was used instead of their value
        self.written = assigned(body) | {loop.var} | ({loop.counter} if loop.counter else set())
        self.acc = _accumulators(loop, body, types)
        self.version = {}
        self.form = {}     # var -> (coef tuple, term, term version)
        self.exprs = {}    # (op, operands) -> (variable, versions of it and its operands when computed)
        self.sums = {}     # (term, its version) -> running sum variable
        self.pre, self.body, self.post = [], [], []
        self.pos = NO_POS  # of the statement being stepped (the terms new_term() adds for it get it too)
        for s in body:
            self.step(s)

    def result(self):
        return self.pre, self.body, self.post

    def invariant(self, o):
        return not is_var(o) or (o not in self.written and self.types.of(o) != "array")

    def is_float_var(self, o):
        return is_var(o) and self.types.of(o) == "float"

    def form_of(self, o):
        """The form of operand ``o`` now: a tuple of ``(coef, term)`` (``coef`` may be empty), or None."""
        if not self.is_float_var(o) or self.invariant(o):
            return None
        f = self.form.get(o)
        if f is not None and o not in self.keep and all(self.version.get(t, 0) == v for _, t, v in f):
            self.looked_through.add(o)
            return tuple((c, t) for c, t, _ in f)
        return (((), o),)

    def _key(self, op, args, fn=None):
        names = [repr(a) for a in args]
        if op in ("add", "mul"):
            names.sort()  # commutative
        return (op, tuple(names), fn)

    def available(self, op, args, fn=None):
        """A variable that already holds ``op(args)`` (e.g. the primal's ``d * d``), or None."""
        hit = self.exprs.get(self._key(op, args, fn))
        if hit is None:
            return None
        dst, versions = hit
        now = tuple(self.version.get(v, 0) for v in [dst] + [a for a in args if is_var(a)])
        return dst if now == versions else None

    def remember(self, s):
        vs = [s.dst] + [a for a in s.args if is_var(a)]
        if s.dst not in s.args:
            self.exprs[self._key(s.op, s.args, s.fn)] = (s.dst, tuple(self.version.get(v, 0) for v in vs))

    def new_term(self, op, args, fn=None):
        hit = self.available(op, args, fn)
        if hit is not None:
            return hit
        u = self.fresh("fterm")
        self.body.append(Assign(u, op, args, fn, self.pos))
        self.version[u] = self.version.get(u, 0) + 1
        self.remember(self.body[-1])
        return u

    def assign_form(self, s):
        op, a = s.op, s.args
        if op == "copy":
            return self.form_of(a[0])
        if op == "neg":
            f = self.form_of(a[0])
            return _scaled(f, ("mul", Const(-1.0))) if f else None
        if op in ("mul", "div"):
            for k in ((0, 1) if op == "mul" else (1,)):
                f = self.form_of(a[1 - k])
                if self.invariant(a[k]) and f is not None and self.types.of(a[k]) == "float":
                    return _scaled(f, (op, a[k]))
            fa, fb = self.form_of(a[0]), self.form_of(a[1])
            if op == "mul" and fa and fb and len(fa) == len(fb) == 1 and (fa[0][0] or fb[0][0]):
                # a product of two terms (primal values: the adjoint factors are in the coefficients), unguarded
                # so that it is found again as the primal's own ``d * d``
                return ((fa[0][0] + fb[0][0], self.new_term("mul", [fa[0][1], fb[0][1]])),)
            return None
        if op in ("add", "sub"):
            if a[0] == Const(0.0) and op == "sub":     # the reverse pass's ``x_b = 0.0 - p``
                f = self.form_of(a[1])
                return _scaled(f, ("mul", Const(-1.0))) if f else None
            fa, fb = self.form_of(a[0]), self.form_of(a[1])
            if fa and fb:
                return _combined(fa, fb if op == "add" else _scaled(fb, ("mul", Const(-1.0))))
        return None

    def step(self, s):
        self.pos = s.pos if isinstance(s, Assign) else NO_POS
        if not isinstance(s, Assign):
            self.body.append(s)
            for v in assigned([s]):
                self.version[v] = self.version.get(v, 0) + 1
                self.form.pop(v, None)
            return
        if s.dst in self.acc and s.op in ("add", "sub") and s.args[0] == s.dst:
            f = self.form_of(s.args[1])
            if f is not None and (len(f) > 1 or f[0][0]):
                self.accumulate(s, f)
                return
        f = None if s.dst in self.acc else self.assign_form(s)
        self.body.append(s)
        self.version[s.dst] = self.version.get(s.dst, 0) + 1
        if s.op in ("add", "sub", "mul", "div"):
            self.remember(s)
        if f is None or (len(f) == 1 and not f[0][0]):
            self.form.pop(s.dst, None)
        else:
            self.form[s.dst] = tuple((c, t, self.version.get(t, 0)) for c, t in f)

    def accumulate(self, s, f):
        """``v = v +- (sum of coef * term)``: one running sum per term (shared by every accumulator that adds the
        same term in this iteration), the factors applied after the loop."""
        for coef, term in f:
            key = (term, self.version.get(term, 0))
            if key not in self.sums:
                total = self.fresh(f"{term}_sum")
                self.sums[key] = total
                self.pre.append(Assign(total, "copy", [Const(0.0)], pos=s.pos))
                self.body.append(Assign(total, "add", [total, term], pos=s.pos))
            value = self.sums[key]
            for op, k in coef:
                t = self.fresh(f"{s.dst}_fac")
                self.post.append(Assign(t, op, [value, k], GUARD, s.pos))  # a zero sum stays 0
                value = t
            self.post.append(Assign(s.dst, s.op, [s.dst, value], pos=s.pos))


_MAX_TERMS = 4   # a sum of more terms would cost more running sums than it saves


def _scaled(form, factor):
    return tuple((c + (factor,), t) for c, t in form)


def _combined(fa, fb):
    """The form of a sum; equal items merge (``c*x + c*x`` is ``2c * x``)."""
    items = []
    for c, t in fa + fb:
        key = (sorted(map(repr, c)), t)
        for k, (c2, t2) in enumerate(items):
            if (sorted(map(repr, c2)), t2) == key:
                items[k] = (c2 + (("mul", Const(2.0)),), t2)
                break
        else:
            items.append((c, t))
    return tuple(items) if len(items) <= _MAX_TERMS else None
