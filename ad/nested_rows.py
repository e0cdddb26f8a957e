"""Rows: a storing loop nested in another keeps its per-iteration values for every iteration of the outer loop.

Why.  Without a tape, the reverse sweep of a storing loop O (``loops.CARRIED``) replays each of O's iterations
before running its adjoint statements.  When O's body holds a storing loop I, that replay runs I again to
refill I's per-iteration values (its stored scalars and array copies), and I's reverse then replays each of I's
iterations once more: every iteration of I runs three times forwards (O's forward run, O's replay, I's replay)
before its adjoint runs once -- the RK4 fit's step loop inside its observation loop.

What.  O's forward run stores I's values for every pair (iteration of O, iteration of I): a *row* of I's region
per iteration of O.  I's once-per-run array copies (array_entry.py) get a row per iteration of O too, and after
I, the arrays I wrote that the rest of O's body touches are copied as well (exit copies).  O's replay then puts
the exit copies back instead of running I, and I's reverse reads the row of O's iteration: every iteration of
I runs twice forwards.  The values are the forward run's, so they are what a replay would have recomputed.

Policy, decided per call from the arguments (trip counts are data): rows when

    trips(O) x (trips(I) x (I's stored slots + its per-iteration copies) + I's entry and exit copies)
        <= budget elements per sample,

the budget being ``ad.differentiate(fn, store_budget=...)`` (``DEFAULT_BUDGET``).  Otherwise every region of I
keeps one row, which each iteration of O reuses, and O's replay runs I as it would without rows (O's forward run
still writes I's values, into that one row: the replay writes them again right before I's reverse reads them).
``report()`` states the condition and, given arguments, which way it went.

Which loops (for any other, nothing changes): O and I both store; I is a statement of O's body (not under a
branch), has no ``break`` (its trip count would need a row as well), and no loop inside I has rows (they would
need a row per iteration of O too); no scalar assigned in I is read after I in O's replay or reverse (it would
have to be stored as well).
"""
from dataclasses import replace

from . import dce, loops
from .errors import NO_POS
from .array_adjoint import written_arrays
from .ir import AStore, Assign, Const, ExtCall, For, If, View, assigned, walk

DEFAULT_BUDGET = 4096  # elements per sample (32 KiB in float64) for the rows of one nested loop


class RowsMixin:
    """Rows parts of ``reverse.Reverse`` (uses its ``info``, ``counts``, ``forward``, ``reverse_block`` ...)."""

    def init_rows(self, budget):
        self.store_budget = int(budget)
        self.rows_at = {}  # inner loop id -> (row of O's iteration, first row of I's iterations), while generating

    def rows_children(self, outer):
        return [s for s in outer.body if isinstance(s, For) and self.info[s.loop_id].rows_of == outer.loop_id]

    # ---- which loops --------------------------------------------------------------------------------------
    def plan_rows(self, outer):
        """Give rows to the eligible loops directly in the storing loop ``outer``'s body; True if any got them."""
        carried = loops.carried_names(outer, self.counts)
        planned = False
        for k, inner in enumerate(outer.body):
            if not isinstance(inner, For) or not self._eligible(inner, outer.body[k + 1:], carried):
                continue
            info = self.info[inner.loop_id]
            info.rows_of = outer.loop_id
            info.exit_copies = [a for a in written_arrays(inner) if _touches(outer.body[k + 1:], a)]
            info.rows_names = {n: self.fresh(f"{n}{inner.loop_id}") for n in
                               ("rows_need", "rows_fit", "rows_flag", "rows", "rows_trips")}
            planned = True
        return planned

    def stored_with_rows(self, outer, info):
        """``info.stored`` of ``outer`` again, now that its replay skips its loops with rows (a superset: the
        replay's branch that runs them when the rows do not fit is the replay without rows)."""
        head = []
        self.enter_rows(outer, self.fresh(f"k{outer.loop_id}"), head)
        replay = head + self.replay(outer)
        rev = self.reverse_block(outer.body)
        all_adjoints = set(self.adj.values()) | set(self.grad_names.values())
        needed = loops.needed_carried(outer, replay, rev, all_adjoints, self.counts)
        info.stored = [v for v in needed if v != outer.exit_flag]
        info.widths = [loops.width(self.types.of(v), self.int_ranges.get(v)) for v in info.stored]

    def _eligible(self, inner, rest, carried):
        info = self.info[inner.loop_id]
        if info.klass != loops.CARRIED or inner.exit_flag:
            return False
        if any(isinstance(s, For) and self.info[s.loop_id].rows_of >= 0 for s in walk(inner.body)):
            return False
        # what O's replay and reverse read after I (O's replay leaves out the copies to its next iteration)
        rest = [s for s in rest if not (isinstance(s, Assign) and s.dst in carried)]
        after = self.forward(rest) + self.reverse_block(rest)
        live = dce.live_in(after, set(self.adj.values()) | set(self.grad_names.values()))
        return not live & (assigned(inner.body) | {inner.var})

    # ---- regions ------------------------------------------------------------------------------------------
    def row_trips(self, info, trip, out, pos):
        """``trip`` for a loop without rows; else (after the statements deciding the rows, into
        ``info.rows_names``) the operand holding rows x ``trip``."""
        if info.rows_of < 0:
            return trip
        n = info.rows_names
        outer_trips = self.trip_count(self.loop_by_id(info.rows_of), out)
        per = Const(info.slots_per_iteration)
        for name in info.snapshots:
            per = self._int_op("add", per, self.arrays[name].size, out, pos)
        row = self._int_op("mul", trip, per, out, pos)
        for name in info.entry_copies + info.exit_copies:
            row = self._int_op("add", row, self.arrays[name].size, out, pos)
        out.append(Assign(n["rows_need"], "mul", [outer_trips, row], pos=pos))
        out.append(Assign(n["rows_flag"], "cmp", [n["rows_need"], Const(self.store_budget)], fn="<=", pos=pos))
        out.append(Assign(n["rows_fit"], "toint", [n["rows_flag"]], pos=pos))
        extra = self._int_op("mul", n["rows_fit"], self._int_op("sub", outer_trips, Const(1), out, pos), out, pos)
        out.append(Assign(n["rows"], "add", [Const(1), extra], pos=pos))  # trips(O) rows if they fit, else 1
        out.append(Assign(n["rows_trips"], "copy", [trip], pos=pos))
        return self._int_op("mul", n["rows"], trip, out, pos)

    def _int_op(self, op, a, b, out, pos=NO_POS):
        t = self.fresh("rows_size")
        out.append(Assign(t, op, [a, b], pos=pos))
        return t

    def row_count(self, info):
        """The operand holding how many rows the once-per-run regions of ``info``'s loop have."""
        return info.rows_names["rows"] if info.rows_of >= 0 else Const(1)

    def exit_offset(self, name, loop_id):
        return f"{name}_exit{loop_id}"

    def exit_regions(self, info, end, out):
        """Regions of a loop's exit copies (a row per row of the loop), after ``end``; the new end."""
        for name in info.exit_copies:
            off = self.exit_offset(name, info.loop_id)
            out.append(Assign(off, "copy", [end]))
            size = self._int_op("mul", info.rows_names["rows"], self.arrays[name].size, out)
            nxt = self.fresh("scratch_end")
            out.append(Assign(nxt, "add", [off, size]))
            end = nxt
        return end

    # ---- code ---------------------------------------------------------------------------------------------
    def enter_rows(self, outer, counter, head):
        """At the top of an iteration of ``outer`` (forward run or reverse, counter ``counter``): the rows its
        nested loops with rows use in this iteration (row 0 when the rows did not fit)."""
        for inner in self.rows_children(outer):
            n = self.info[inner.loop_id].rows_names
            orow, irow = self.fresh("row"), self.fresh("row")
            head.append(Assign(orow, "mul", [counter, n["rows_fit"]], pos=inner.pos))
            head.append(Assign(irow, "mul", [orow, n["rows_trips"]], pos=inner.pos))
            self.rows_at[inner.loop_id] = (orow, irow)

    def row_index(self, info, counter, head, pos):
        """The row of ``info``'s loop's iteration ``counter``: ``counter`` itself for a loop without rows."""
        if info.rows_of < 0:
            return counter
        index = self.fresh("row_k")
        head.append(Assign(index, "add", [self.rows_at[info.loop_id][1], counter], pos=pos))
        return index

    def outer_row(self, info):
        return self.rows_at[info.loop_id][0] if info.rows_of >= 0 else None

    def first_run_body(self, outer):
        """``outer``'s body in its forward run: its loops with rows store their values in this iteration's row."""
        out = []
        for s in outer.body:
            if isinstance(s, For) and self.info[s.loop_id].rows_of == outer.loop_id:
                self.run_storing(s, out, exit_copies=True)
            else:
                out.append(s)
        return out

    def run_storing(self, inner, out, exit_copies):
        """``inner`` storing its values into the current row (then, with ``exit_copies``, its exit copies)."""
        info = self.info[inner.loop_id]
        self.entry_copy(info, out, inner.pos, restore=False, row=self.outer_row(info))
        counter, head = self.fresh(f"k{inner.loop_id}"), []
        self.store_iteration(info, self.row_index(info, counter, head, inner.pos), head, inner.pos)
        out.append(replace(inner, body=head + list(inner.body), counter=counter))
        if exit_copies:
            self.exit_copy(info, out, inner.pos, restore=False)

    def replay_rows(self, inner, out):
        """``inner`` in its outer loop's replay: its exit copies put back when the rows fit, else run storing."""
        info = self.info[inner.loop_id]
        restore, run = [], []
        self.exit_copy(info, restore, inner.pos, restore=True)
        self.run_storing(inner, run, exit_copies=False)
        out.append(If(info.rows_names["rows_flag"], restore, run, inner.pos))

    def exit_copy(self, info, out, pos, restore):
        """Copy each exit-copied array into (``restore``: back from) the current row of its region."""
        self.copy_slots(info.exit_copies, self.outer_row(info), lambda name: self.exit_offset(name, info.loop_id),
                        out, pos, restore)


def _touches(stmts, name):
    """True when ``stmts`` read, write or pass the local array ``name``."""
    for s in walk(stmts):
        if isinstance(s, Assign) and s.op == "aload" and s.fn == name:
            return True
        if isinstance(s, AStore) and s.array == name:
            return True
        if isinstance(s, ExtCall) and (name in s.writes or any(isinstance(a, View) and a.array == name
                                                              for a in s.args)):
            return True
    return False
