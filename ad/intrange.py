"""Integer range check: reject integer arithmetic that may leave the int64 range.

Python integers never overflow; numba's (CPU and CUDA) are int64 and wrap silently, so ``c = 1`` followed by 45
times ``c = c * 3`` would give the pure-Python derivative and the compiled one different values.  We do not
emulate either in the other: every integer value gets an interval (abstract interpretation over the lowered IR,
loops iterated to a fixed point), and a statement whose integer result may leave ``[-2**63, 2**63)`` is rejected
at compile time with its ``file:line:col``, advising float arithmetic (``c = 1.0``) or a bounded form (``% m``).
Integer constants outside int64 (``2**70``, folded while lowering) are rejected the same way.

Assumption (documented in docs/internals.md): values that come from the data -- integer arguments, elements of
integer arrays, ``int()``/``floor()`` of floats -- are below ``DATA_BOUND`` in magnitude, and array axes are
shorter than ``SHAPE_BOUND`` elements.  Loops: with a constant trip count up to ``_EXACT_TRIPS`` the body is iterated as often as the loop
runs (``3**45`` is found exactly); otherwise after a few rounds a value still growing by the same step each round
is extrapolated over the largest trip count, and one growing faster (a product) is unbounded.
"""
import math

from .errors import UnsupportedError, error_at
from .ir import Assign, Const, For, If, RuleCall, is_var

DATA_BOUND = 2 ** 31
SHAPE_BOUND = 2 ** 24   # array axes: a loop index or counter below this is exact in float32 scratch (loops.width)
_INT64 = (-2 ** 63, 2 ** 63 - 1)
_EXACT_TRIPS = 2000
_ROUNDS = 6
_INF = math.inf
_UNKNOWN = (-DATA_BOUND, DATA_BOUND)


def check(body, types, arg_names, filename):
    """Raise ``UnsupportedError`` at the first integer statement whose value may leave int64; otherwise return
    ``{variable: (lo, hi)}``, the range of every integer variable -- for a loop-carried one, at the start of an
    iteration (the reverse pass sizes the scratch slots of stored integers by it)."""
    ev = _Ranges(types, arg_names, filename)
    ev.block(body, {})
    for s, (lo, hi) in ev.results.values():
        if lo < _INT64[0] or hi > _INT64[1]:
            bound = "unbounded" if math.isinf(lo) or math.isinf(hi) else f"up to {max(abs(lo), abs(hi)):.3g}"
            raise error_at(s.pos,
                f"integer arithmetic here may exceed the int64 range ({bound}): Python integers never overflow but "
                "compiled (numba) integers wrap silently, so the compiled kernel would differ; compute it in "
                "floating point (e.g. `c = 1.0` instead of `c = 1`) or keep it bounded (e.g. `% m`)",
                filename, UnsupportedError)
    return {**ev.hull, **ev.heads}


def _mul(a, b):
    return 0 if a == 0 or b == 0 else a * b


def _hull(*values):
    return (min(values), max(values))


def _join(a, b):
    return a if b is None else (b if a is None else (min(a[0], b[0]), max(a[1], b[1])))


def _floordiv(a, b):
    if b[0] <= 0 <= b[1] or any(math.isinf(x) for x in a + b):
        m = max(abs(a[0]), abs(a[1]))
        return (-m, m)
    return _hull(*(x // y for x in a for y in b))  # monotone away from b = 0: the corners bound it


def _mod(a, b):
    m = max(abs(b[0]), abs(b[1]))
    if b[0] > 0:
        return (0, min(b[1] - 1, a[1]) if a[0] >= 0 else b[1] - 1)
    if b[1] < 0:
        return (b[0] + 1, 0)
    return (-m, m)


def _pow(a, n):
    try:
        corners = [float(x) ** n if abs(x) < _INF else x ** n for x in a]
    except OverflowError:
        return (-_INF, _INF)
    if a[0] < 0 < a[1]:
        corners.append(0.0)
    return tuple(int(v) if not math.isinf(v) else v for v in _hull(*corners))


class _Ranges:
    def __init__(self, types, arg_names, filename):
        self.types = types
        self.args = set(arg_names)
        self.filename = filename
        self.results = {}   # id(stmt) -> (stmt, hull of every interval seen for its integer result)
        self.hull = {}      # variable -> hull of every interval it was assigned
        self.heads = {}     # variable carried by a loop -> its range at the start of an iteration

    def of(self, o, env):
        if not is_var(o):
            v = o.value
            return (int(v), int(v)) if isinstance(v, (bool, int)) else None
        if o in env:
            return env[o]
        if self.types.of(o) == "bool":
            return (0, 1)
        if o in self.args and self.types.of(o) == "int":
            return _UNKNOWN
        return None

    def block(self, stmts, env):
        for s in stmts:
            if isinstance(s, Assign):
                self.assign(s, env)
            elif isinstance(s, If):
                then, orelse = self.block(s.then, dict(env)), self.block(s.orelse, dict(env))
                for v in set(then) | set(orelse):
                    env[v] = _join(then.get(v), orelse.get(v))
            elif isinstance(s, For):
                self.loop(s, env)
            elif isinstance(s, RuleCall):
                self.block(s.body, env)
        return env

    def assign(self, s, env):
        for a in s.args:
            if not is_var(a) and isinstance(a.value, int) and not _INT64[0] <= a.value <= _INT64[1]:
                self.results[id(s)] = (s, (a.value, a.value))
        if self.types.of(s.dst) not in ("int", "bool"):
            return
        r = self.transfer(s, [self.of(a, env) for a in s.args])
        env[s.dst] = r
        self.hull[s.dst] = _join(self.hull.get(s.dst), r)
        if s.op in ("add", "sub", "mul", "pow", "neg", "floordiv") or id(s) in self.results:
            old = self.results.get(id(s), (s, None))[1]
            self.results[id(s)] = (s, _join(old, r))

    def transfer(self, s, r):
        op = s.op
        if op in ("cmp", "not") or self.types.of(s.dst) == "bool":
            return (0, 1)
        if any(x is None for x in r) and op not in ("shape", "index", "toint", "call"):
            return _UNKNOWN
        if op == "copy":
            return r[0]
        if op == "add":
            return (r[0][0] + r[1][0], r[0][1] + r[1][1])
        if op == "sub":
            return (r[0][0] - r[1][1], r[0][1] - r[1][0])
        if op == "mul":
            return _hull(*(_mul(x, y) for x in r[0] for y in r[1]))
        if op == "neg":
            return (-r[0][1], -r[0][0])
        if op == "floordiv":
            return _floordiv(r[0], r[1])
        if op == "mod":
            return _mod(r[0], r[1])
        if op == "pow":
            return _pow(r[0], s.args[1].value)
        if op == "shape":
            return (0, SHAPE_BOUND)
        if op == "toint" and r[0] is not None:
            return r[0]  # of an int or a bool (0 or 1: a negative local-array index's wrap, local_arrays.py)
        if op == "call" and s.fn in ("abs", "min", "max", "minimum", "maximum") and all(x is not None for x in r):
            if s.fn == "abs":
                m = max(abs(r[0][0]), abs(r[0][1]))
                return (0 if r[0][0] <= 0 <= r[0][1] else min(abs(r[0][0]), abs(r[0][1])), m)
            f = min if s.fn in ("min", "minimum") else max
            return (f(r[0][0], r[1][0]), f(r[0][1], r[1][1]))
        return _UNKNOWN  # int array elements, int(), floor(): data (DATA_BOUND)

    def loop(self, s, env):
        start, stop, step = (self.of(b, env) or _UNKNOWN for b in (s.start, s.stop, s.step))
        if step[0] > 0:
            var = (start[0], max(start[0], stop[1] - 1))
        elif step[1] < 0:
            var = (min(start[1], stop[0] + 1), start[1])
        else:
            var = _hull(start[0], start[1], stop[0], stop[1])
        trips = max(0, stop[1] - start[0], start[1] - stop[0])
        exact = None
        if not any(is_var(b) for b in (s.start, s.stop, s.step)):
            r = range(s.start.value, s.stop.value, s.step.value)
            exact = r if len(r) <= _EXACT_TRIPS else None
        entry = dict(env)
        head = dict(env)
        history = [head]
        # a constant trip count: one round per iteration, the index exact; otherwise a few rounds, then widening
        for k in range(len(exact) if exact is not None else _ROUNDS):
            out = self.block(s.body, {**head, s.var: (exact[k], exact[k]) if exact is not None else var})
            new = {v: _join(entry.get(v), out.get(v)) for v in set(entry) | set(out)}
            if new == head:
                if exact is not None and k + 1 < len(exact):
                    self.block(s.body, {**head, s.var: var})  # the iterations not run: every index at once
                break
            head = new
            history.append(head)
        else:
            if exact is None:
                head = self.extrapolate(history, trips)
                self.block(s.body, {**head, s.var: var})  # record the widened ranges of the body's statements
        env.update({v: r for v, r in head.items() if v in entry or v in env})
        for v in entry:  # values at the start of an iteration: what the reverse pass stores
            if head.get(v) is not None and self.types.of(v) == "int":
                self.heads[v] = _join(self.heads.get(v), head[v])

    def extrapolate(self, history, trips):
        """Linear growth (the same step in the last rounds) from the loop entry over ``trips`` iterations;
        anything faster: unbounded."""
        first, last, prev, prev2 = history[0], history[-1], history[-2], history[-3]
        out = dict(last)
        for v, r in last.items():
            if r is None or r == prev.get(v):
                continue
            e, p, p2 = first.get(v), prev.get(v), prev2.get(v)
            if e is None or p is None or p2 is None:
                out[v] = (-_INF, _INF)
                continue
            lo, hi = r
            if lo != p[0]:
                lo = e[0] - (p[0] - lo) * trips if (p[0] - lo) == (p2[0] - p[0]) else -_INF
            if hi != p[1]:
                hi = e[1] + (hi - p[1]) * trips if (hi - p[1]) == (p[1] - p2[1]) else _INF
            out[v] = (lo, hi)
        return out
