"""Loop classification: what does the reverse sweep of each loop need?

* ``independent-iteration reduction`` -- the reverse body (after dead-code elimination) reads no value carried
  from one iteration to the next (``acc += g(theta, x[i])``, ``acc -= ...``): each iteration's intermediates are
  recomputed from inputs the kernel never writes, nothing is stored.
* ``loop-carried state`` -- the reverse body needs the carried values an iteration started with (``y = y - dt*k*y``,
  ``q *= 1 + theta[0] * x[i]``): they are stored in the per-sample ``scratch`` buffer, one slot per carried value (three for an integer)
  and iteration, and read back in the reverse sweep.

Scratch regions need trip counts at call time, so the bounds of a storing loop must be computable from the
kernel's arguments (shapes, integer arguments, constants) -- not from an enclosing loop's index.
"""
from dataclasses import dataclass, field
from typing import List

from . import dce
from .errors import UnsupportedError, error_at
from .ir import Assign, Const, ExtCall, For, If, RuleCall, Store, is_var, walk

REDUCTION = "independent-iteration reduction"
CARRIED = "loop-carried state"
_PRELUDE_OPS = {"copy", "add", "sub", "mul", "floordiv", "mod", "neg", "shape", "toint", "index"}


@dataclass
class LoopInfo:
    loop_id: int
    line: int
    col: int
    klass: str = REDUCTION
    stored: List[str] = field(default_factory=list)  # IR names of the values kept per iteration
    widths: List[int] = field(default_factory=list)  # scratch slots each stored value takes (width())
    fused: bool = False
    offset: str = ""           # IR name of this loop's scratch offset
    trip_formula: str = ""     # human-readable trip count in terms of the arguments
    prelude: list = field(default_factory=list)  # statements computing the bounds from the arguments
    trip_bound: object = None  # operand bounding the trip count when it depends on outer loops' indices
    depth: int = 0
    exits_early: bool = False  # has a ``break`` (breaks.py)
    snapshots: List[str] = field(default_factory=list)  # local arrays copied per iteration (array_adjoint.py)
    entry_copies: List[str] = field(default_factory=list)  # written arrays copied once per loop (array_entry.py)
    # rows (nested_rows.py): the id of the loop around this one whose every iteration gets its own row of this
    # loop's stored values, or -1; the arrays copied after this loop for that loop's replay; IR names computed
    # with the regions (fits: 1 when the rows stay within the budget, else 0)
    rows_of: int = -1
    exit_copies: List[str] = field(default_factory=list)
    rows_names: dict = field(default_factory=dict)

    @property
    def slots_per_iteration(self):
        return sum(self.widths)


# Scratch holds floats of the active dtype; float32 represents integers exactly only up to 2**24, so an integer
# whose range (intrange.py) may exceed that (an LCG state used as an index) is stored as three base-2**21 digits:
# lo and mid in [0, 2**21), the signed hi = v // 2**42 in [-2**21, 2**21) -- exact in float32 and float64 for
# every int64.  One slot for the others (counters, loop indices: array axes are shorter than 2**24).
INT_DIGIT = 2 ** 21
INT_SLOTS = 3
EXACT_FLOAT32_INT = 2 ** 24


def width(type_name, value_range=None):
    """Scratch slots a stored value of this IR type (and integer range ``(lo, hi)``, None: unknown) takes."""
    if type_name != "int":
        return 1
    if value_range is not None and max(abs(value_range[0]), abs(value_range[1])) <= EXACT_FLOAT32_INT:
        return 1
    return INT_SLOTS


def store_value(var, slots, type_name, fresh, out, pos):
    """Append statements storing ``var`` into the scratch ``slots`` (``width(...)`` of them)."""
    if len(slots) == 1:
        out.append(Store(slots[0], var, pos))
        return
    value = var
    for k, slot in enumerate(slots):
        if k == len(slots) - 1:
            out.append(Store(slot, value, pos))  # the signed top digit
            break
        digit, rest = fresh("digit"), fresh("digits")
        out.append(Assign(digit, "mod", [value, Const(INT_DIGIT)], pos=pos))  # floor semantics in Python and numba
        out.append(Assign(rest, "floordiv", [value, Const(INT_DIGIT)], pos=pos))
        out.append(Store(slot, digit, pos))
        value = rest


def load_value(var, slots, type_name, fresh, out, pos):
    """Append statements reading ``var`` back from the ``slots`` written by ``store_value``."""
    if len(slots) == 1:
        out.append(Assign(var, "load", [slots[0]], pos=pos))
        return
    digits = []
    for slot in slots:
        d = fresh("digit")
        out.append(Assign(d, "loadint", [slot], pos=pos))
        digits.append(d)
    value = digits[-1]
    for k, d in enumerate(reversed(digits[:-1])):
        scaled, last = fresh("digits"), k == len(digits) - 2
        out.append(Assign(scaled, "mul", [value, Const(INT_DIGIT)], pos=pos))
        dst = var if last else fresh("digits")
        out.append(Assign(dst, "add", [scaled, d], pos=pos))
        value = dst


def assignment_counts(stmts):
    """How many statements assign each variable (loop variables included)."""
    counts = {}
    for s in walk(stmts):
        names = [s.dst] if isinstance(s, (Assign, RuleCall)) else ([s.var] if isinstance(s, For) else
                                                                   list(s.results) if isinstance(s, ExtCall) else [])
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    return counts


def carried_names(loop, function_counts):
    """Variables assigned in the loop body and also before it: the values one iteration hands the next."""
    inner = assignment_counts(loop.body)
    return {v for v, n in inner.items() if function_counts.get(v, 0) > n}


def needed_carried(loop, replay, reverse_body, adjoint_names, function_counts):
    """Carried values the reverse body reads before the replay recomputes them (liveness is path-insensitive,
    so this may over-approximate -- storing too much is safe, storing too little is not possible)."""
    live = dce.live_in(list(replay) + list(reverse_body), set(adjoint_names))
    return sorted(live & carried_names(loop, function_counts))


def _bound_statements(loop, producers, counts, filename, arg_names, free):
    """Statements computing ``loop``'s bounds from the arguments and the variables ``free`` (the indices of the
    loops around it); the ``free`` variables they use."""
    stmts, seen, used = [], set(), set()

    def visit(op):
        if not is_var(op) or op in seen or op in arg_names:
            return
        seen.add(op)
        if op in free:
            used.add(op)
            return
        s = producers.get(op)
        if s is None or counts.get(op) != 1 or s.op not in _PRELUDE_OPS:
            raise error_at(loop.pos,
                "this loop carries state that must be stored for the reverse sweep, but its trip count is not a "
                "function of the kernel's arguments (shapes, integer arguments, constants) and of the indices of "
                "the loops around it; compute the bounds from those", filename, UnsupportedError)
        for a in s.args:
            visit(a)
        stmts.append(s)

    for b in (loop.start, loop.stop, loop.step):
        visit(b)
    order = {id(s): k for k, s in enumerate(producers.values())}
    stmts.sort(key=lambda s: order.get(id(s), 0))
    return stmts, used


def bounds_prelude(loop, producers, counts, filename, arg_names, enclosing=(), fresh=None):
    """Statements computing the loop's trip count, or a bound on it, from the arguments alone (to run at the top
    of the function); a formula for it; and the operand holding the bound (None: the loop's own bounds, computed
    by the statements, give its trip count).

    ``producers`` maps a variable to its defining ``Assign``; ``counts`` says how often each is assigned (a
    value assigned once, from arguments and constants only, can be recomputed anywhere).  ``enclosing``: the
    loops around ``loop``, outermost first.  A triangular loop (``range(i + 1)`` inside ``range(n)``) gets the
    largest trip count over the iterations of the loops around it, computed by running those loops' bounds."""
    free = {e.var for e in enclosing}
    stmts, used = _bound_statements(loop, producers, counts, filename, arg_names, free)
    if not used:
        return stmts, trip_formula(loop, producers, arg_names), None
    bound, trip = fresh("trips_max"), fresh("trips")
    body = stmts + [Assign(trip, "tripcount", [loop.start, loop.stop, loop.step], pos=loop.pos),
                    Assign(bound, "call", [bound, trip], fn="max", pos=loop.pos)]
    for k in range(len(enclosing) - 1, -1, -1):
        e = enclosing[k]
        body = [For(e.var, e.start, e.stop, e.step, body, e.pos)]
        outer, _ = _bound_statements(e, producers, counts, filename, arg_names, {x.var for x in enclosing[:k]})
        body = outer + body
    return [Assign(bound, "copy", [Const(0)], pos=loop.pos)] + body, "max(trip count)", bound


def render(op, producers, arg_names):
    """An operand as a readable expression of the arguments."""
    if not is_var(op):
        return repr(op.value)
    if op in arg_names:
        return op
    s = producers[op]
    r = [render(a, producers, arg_names) for a in s.args]
    if s.op == "shape":
        return f"{r[0]}.shape[{r[1]}]"
    if s.op == "index":
        return f"{r[0]}[{', '.join(r[1:])}]"
    if s.op in ("copy", "toint"):
        return r[0]
    if s.op == "neg":
        return f"-{r[0]}"
    sym = {"add": "+", "sub": "-", "mul": "*", "floordiv": "//", "mod": "%"}[s.op]
    return f"({r[0]} {sym} {r[1]})"


def trip_formula(loop, producers, arg_names):
    a = render(loop.start, producers, arg_names)
    b = render(loop.stop, producers, arg_names)
    s = render(loop.step, producers, arg_names)
    if loop.start == Const(0) and loop.step == Const(1):
        return b
    return f"len(range({a}, {b}, {s}))"



def child_loops(stmts):
    """Loops directly inside ``stmts`` (through branches, not through other loops)."""
    for s in stmts:
        if isinstance(s, For):
            yield s
        elif isinstance(s, If):
            yield from child_loops(s.then)
            yield from child_loops(s.orelse)
