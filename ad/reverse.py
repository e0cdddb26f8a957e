"""Reverse pass: build the adjoint program (forward sweep, then the reverse sweep) in IR.

No tape.  Straight-line values are never overwritten (lowering renamed them), so the reverse sweep reads them
directly.  A loop's reverse runs its iterations last to first; each iteration first *replays* the loop body
(recomputing that iteration's intermediates from inputs the kernel never writes) and then runs the body's
adjoint statements.  A loop whose reverse body needs the values carried in from the previous iteration
(``loops.CARRIED``) stores them in ``scratch`` during the forward run that precedes its reverse and reads them
back at the start of each reverse iteration.  Branches replay their recomputed predicate.  A reduction
whose accumulator adjoint is known before the loop (at the top level, or directly inside another fused loop)
runs its adjoint inside the forward pass instead (``fusion.py``): one pass over the data.
"""
from dataclasses import replace

from . import fusion, loops, rules
from .array_adjoint import ArraysMixin, touches_arrays, written_arrays
from .array_entry import reads_entry_value
from .errors import NO_POS, UnsupportedError, error_at
from .external_adjoint import ExternalMixin
from .ir import GUARD, AStore, Assign, Const, ExtCall, For, GradAdd, If, RuleCall, ZeroGrad, is_var, rename_all, walk
from .nested_rows import DEFAULT_BUDGET, RowsMixin
from .partials import lower_adjoint, lower_partials

ZERO = Const(0.0)
ONE = Const(1.0)


class Reverse(ArraysMixin, ExternalMixin, RowsMixin):
    def __init__(self, body, ret, activity, typeinfo, ctx, wrt, filename, int_ranges=None, layout=(),
                 arrays_end=Const(0), store_budget=DEFAULT_BUDGET):
        self.body = body
        self.layout = list(layout)    # statements placing the local arrays in scratch (local_arrays.layout)
        self.arrays_end = arrays_end  # the end of their regions
        self.int_ranges = int_ranges or {}  # integer variable -> (lo, hi) (intrange.check): stored integers' width
        self.ret = ret
        self.act = activity
        self.types = typeinfo
        self.ctx = ctx
        self.wrt = tuple(wrt)
        self.filename = filename
        self.grad_names = {}
        for w in self.wrt:
            name = f"grad_{w}"
            while name in ctx.arg_names:
                name += "_"
            self.grad_names[w] = name
        self.scratch = "scratch"
        while self.scratch in ctx.arg_names:
            self.scratch += "_"
        self.ret_pos = ctx.returns[-1] if ctx.returns else NO_POS  # the kernel's (last) return
        self.adj = {}
        self.fused_code = None
        self.info = {}      # loop_id -> LoopInfo
        self.enclosing = {}  # loop_id -> the loops around it, outermost first
        self.producers = {s.dst: s for s in walk(body) if isinstance(s, Assign)}
        self.counts = loops.assignment_counts(body)
        self.init_arrays(getattr(ctx, "local_arrays", []))
        self.init_externals()
        self.init_rows(store_budget)
        self._number_loops(body, 0)
        self._classify(body)

    # ---- names ---------------------------------------------------------------------------------------
    def adjoint(self, v):
        if v not in self.adj:
            self.adj[v] = f"{v}_b"
        return self.adj[v]

    def fresh(self, hint):
        return self.ctx.fresh(hint)

    # ---- loop numbering and classification -----------------------------------------------------------
    def _number_loops(self, stmts, depth, around=()):
        for s in stmts:
            if isinstance(s, For):
                s.loop_id = len(self.info)
                self.enclosing[s.loop_id] = list(around)
                self.info[s.loop_id] = loops.LoopInfo(s.loop_id, s.pos.line, s.pos.col, depth=depth,
                                                      exits_early=bool(s.exit_flag))
                self._number_loops(s.body, depth + 1, tuple(around) + (s,))
            elif isinstance(s, If):
                self._number_loops(s.then, depth, around)
                self._number_loops(s.orelse, depth, around)

    def _classify(self, stmts):
        """Bottom-up: a loop's class depends on its children's (their stores are part of its replay)."""
        for s in stmts:
            if isinstance(s, If):
                self._classify(s.then)
                self._classify(s.orelse)
            elif isinstance(s, For):
                self._classify(s.body)
                info = self.info[s.loop_id]
                replay = self.replay(s)
                rev = self.reverse_block(s.body)
                all_adjoints = set(self.adj.values()) | set(self.grad_names.values())
                needed = loops.needed_carried(s, replay, rev, all_adjoints, self.counts)
                needed = [v for v in needed if v != s.exit_flag]  # clear in every iteration the reverse runs
                written = written_arrays(s)
                info.snapshots = [a for a in written
                                  if reads_entry_value(s, self.arrays[a], self.producers, self.body)]
                info.entry_copies = [a for a in written if a not in info.snapshots]
                if needed or info.snapshots:
                    info.klass = loops.CARRIED
                    info.stored = needed
                    info.widths = [loops.width(self.types.of(v), self.int_ranges.get(v)) for v in needed]
                    prelude, formula, bound = loops.bounds_prelude(s, self.producers, self.counts, self.filename,
                                                                   self.ctx.arg_names, self.enclosing[s.loop_id],
                                                                   self.fresh)
                    info.prelude = prelude
                    info.trip_formula = formula
                    info.trip_bound = bound
                    info.offset = self.fresh(f"scratch_offset{s.loop_id}")
                    if self.plan_rows(s):  # its replay no longer runs those loops: what it needs may change
                        self.stored_with_rows(s, info)

    def storing_loops(self):
        return [i for i in self.info.values() if i.klass == loops.CARRIED]

    # ---- forward sweep -------------------------------------------------------------------------------
    def forward(self, stmts):
        """The primal statements, with scratch stores added to the storing loops directly inside ``stmts``."""
        out = []
        for s in stmts:
            if isinstance(s, For) and self.info[s.loop_id].rows_of >= 0:
                self.replay_rows(s, out)  # only ever directly in its outer loop's replay (nested_rows.py)
                continue
            if isinstance(s, For):
                self.entry_copy(self.info[s.loop_id], out, s.pos, restore=False)
            if isinstance(s, If):
                out.append(If(s.cond, self.forward(s.then), self.forward(s.orelse), s.pos))
            elif isinstance(s, For) and (self.info[s.loop_id].klass == loops.CARRIED or s.exit_flag):
                info = self.info[s.loop_id]
                head, counter = [], s.counter
                if info.klass == loops.CARRIED:
                    counter = self.fresh(f"k{s.loop_id}")
                    self.enter_rows(s, counter, head)
                    self.store_iteration(info, counter, head, s.pos)
                if s.exit_flag:  # count the iterations that run: the reverse sweep runs as many
                    trips = self.trips_name(s)
                    out.append(Assign(trips, "copy", [Const(0)], pos=s.pos))
                    clear, one = self.fresh("running"), self.fresh("running")
                    head += [Assign(clear, "not", [s.exit_flag], pos=s.pos),
                             Assign(one, "toint", [clear], pos=s.pos),
                             Assign(trips, "add", [trips, one], pos=s.pos)]
                out.append(replace(s, body=head + self.first_run_body(s), counter=counter))
            else:
                if isinstance(s, ExtCall) and s.saved:
                    self.save_before(s, out)
                out.append(s)
        return out

    def store_iteration(self, info, index, head, pos):
        """Store the values of the iteration in row ``index`` of ``info``'s loop's regions."""
        slots = self._slots(info, index, head, pos)
        for var, slot in zip(info.stored, slots):
            loops.store_value(var, slot, self.types.of(var), self.fresh, head, pos)
        self.snapshot(info, index, head, pos, restore=False)

    def trips_name(self, loop):
        return f"trips{loop.loop_id}__{self.scratch}"

    def replay(self, loop):
        """The loop body as recomputed inside the reverse sweep: without the copies that hand the carried values
        to the next iteration, so the carried names keep the values this iteration started with."""
        carried = loops.carried_names(loop, self.counts)
        body = [s for s in loop.body if not (isinstance(s, Assign) and s.dst in carried)]
        return self.forward(body)

    def _slots(self, info, counter, out, pos):
        """Scratch indices ``offset + counter * m + j`` for the stored values of one iteration."""
        m = info.slots_per_iteration
        base = self.fresh("slot")
        out.append(Assign(base, "mul", [counter, Const(m)], pos=pos))
        base2 = self.fresh("slot")
        out.append(Assign(base2, "add", [base, info.offset], pos=pos))
        slots = [base2]
        for j in range(1, m):
            t = self.fresh("slot")
            out.append(Assign(t, "add", [base2, Const(j)], pos=pos))
            slots.append(t)
        # one slot list per stored value (an integer takes several: see loops.store_value)
        grouped, k = [], 0
        for w in info.widths:
            grouped.append(slots[k:k + w])
            k += w
        return grouped

    # ---- reverse sweep -------------------------------------------------------------------------------
    def reverse_block(self, stmts):
        out = []
        for s in reversed(stmts):
            if isinstance(s, Assign):
                self.reverse_assign(s, out)
            elif isinstance(s, RuleCall):
                self.reverse_rule(s, out)
            elif isinstance(s, AStore):
                self.reverse_write(s, out)
            elif isinstance(s, ExtCall):
                self.reverse_external(s, out)
            elif isinstance(s, If):
                then = self.reverse_block(s.then)
                orelse = self.reverse_block(s.orelse)
                if then or orelse:
                    out.append(If(s.cond, then, orelse, s.pos))
            elif isinstance(s, For):
                self.reverse_loop(s, out)
        return out

    def reverse_loop(self, s, out):
        info = self.info[s.loop_id]
        if info.fused:
            return  # its adjoint work ran inside the forward pass; the accumulators' adjoints pass through
        counter = self.fresh(f"k{s.loop_id}")
        head = []
        if info.klass == loops.CARRIED:
            self.enter_rows(s, counter, head)
            index = self.row_index(info, counter, head, s.pos)
            slots = self._slots(info, index, head, s.pos)
            for var, slot in zip(info.stored, slots):
                loops.load_value(var, slot, self.types.of(var), self.fresh, head, s.pos)
            self.snapshot(info, index, head, s.pos, restore=True)
        stop = s.stop
        if s.exit_flag:
            # a loop that may break: the reverse runs the iterations that ran (counted by ``forward``), each of
            # which started with the flag clear (breaks.py)
            head.append(Assign(s.exit_flag, "copy", [Const(False)], pos=s.pos))
            span, stop = self.fresh("span"), self.fresh("stop")
            out.append(Assign(span, "mul", [self.trips_name(s), s.step], pos=s.pos))
            out.append(Assign(stop, "add", [s.start, span], pos=s.pos))
        body = head + self.replay(s) + self.reverse_block(s.body)
        self.entry_copy(info, out, s.pos, restore=True, row=self.outer_row(info))
        out.append(For(s.var, s.start, stop, s.step, body, s.pos, counter=counter, reverse=True,
                       loop_id=s.loop_id))

    def accumulate(self, target, value, out, negate=False, pos=NO_POS):
        """``adjoint(target) += value`` (or ``-=``)."""
        if not self.act.is_active(target):
            return
        tb = self.adjoint(target)
        out.append(Assign(tb, "sub" if negate else "add", [tb, value], pos=pos))

    def reverse_assign(self, s, out):
        v = s.dst
        if v not in self.act.active:
            return
        if s.op == "aload":
            self.reverse_read(s, out)
            return
        vb = self.adjoint(v)
        if s.op == "index":  # a read of an active argument's element: its gradient entry gets the adjoint
            if s.args[0] in self.grad_names:
                out.append(GradAdd(self.grad_names[s.args[0]], list(s.args[1:]), vb, s.pos))
        else:
            exponent = None
            if s.op == "pow" and not is_var(s.args[1]):
                exponent = s.args[1].value
            templates = rules.adjoints(s.fn if s.op == "call" else s.op, exponent)
            if templates is None:
                what = f"rule for {s.fn}" if s.op == "call" else f"derivative for operation {s.op!r}"
                raise error_at(s.pos, f"no {what}", self.filename, UnsupportedError)
            self.apply_templates(templates, s, vb, out)
        out.append(Assign(vb, "copy", [ZERO], pos=s.pos))

    def apply_templates(self, templates, s, vb, out):
        """Each active argument's adjoint += its template's amount (``rules.ADJOINTS``)."""
        for x, template in zip(s.args, templates):
            if self.act.is_active(x):
                amount, negate = lower_adjoint(template, s.args, s.dst, vb, self.ctx, out, s.pos)
                self.accumulate(x, amount, out, negate, s.pos)

    def reverse_rule(self, s, out):
        v = s.dst
        if v not in self.act.active:
            return
        vb = self.adjoint(v)
        if isinstance(s.rule, rules.FunctionRule):
            partials = lower_partials(s.rule, s.args, self.ctx, out)
            for x, p in zip(s.args, partials):
                if self.act.is_active(x):
                    t = self.fresh("p")
                    out.append(Assign(t, "mul", [vb, p], GUARD, s.pos))
                    self.accumulate(x, t, out, pos=s.pos)
        else:
            self.apply_templates(s.rule.templates, s, vb, out)
        out.append(Assign(vb, "copy", [ZERO], pos=s.pos))

    # ---- fusion of reduction loops with their reverse ----------------------------------------------
    def fusion_plan(self):
        """Decide which reduction loops run their adjoint inside the forward pass.

        Decisions are made first to last; when a loop is considered, every later loop still counts as reversed,
        so if a later loop's reverse feeds this loop's accumulator adjoint, the slice contains that loop and
        this one is not fused (fusing the later loop afterwards does not change this loop's exit adjoint)."""
        self.fused_code = {}
        seed = []
        if self.act.is_active(self.ret):
            seed = [Assign(self.adjoint(self.ret), "copy", [ONE])]
        self._fuse_block(self.body, seed, set(self.ctx.arg_names), {})

    def _fuse_block(self, block, seed, available, initial):
        available = set(available)
        for p, s in enumerate(block):
            if isinstance(s, Assign):
                available.add(s.dst)
            if not isinstance(s, For):
                continue
            carried = loops.carried_names(s, self.counts)
            active = sorted(v for v in carried if self.act.is_active(v))
            info = self.info[s.loop_id]
            available |= carried
            if info.klass != loops.REDUCTION or not active or touches_arrays(s):
                continue
            if not fusion.pure_sum_carried(s, carried, self.act.active):
                continue
            after = seed + self.reverse_block(block[p + 1:])
            targets = [self.adjoint(v) for v in active]
            before = available - carried - loops.assignment_counts(s.body).keys()
            ahead = fusion.exit_adjoints_ahead(after, targets, before, set(self.adj.values()), s.loop_id, initial)
            if ahead is None:
                continue
            pre, exit_names = ahead
            private = {t: f"{t}_fused{s.loop_id}" for t in targets}
            pre += [Assign(private[t], "copy", [exit_names[t]]) for t in targets]
            info.fused = True
            # loops directly in this body whose accumulators' adjoints are now known may be fused as well
            self._fuse_block(s.body, [], before | {s.var}, dict(private))
            rev_body = rename_all(self.reverse_block(s.body), private)
            body = self.forward_fused(list(s.body)) + rev_body
            self.fused_code[s.loop_id] = pre + [For(s.var, s.start, s.stop, s.step, body, s.pos,
                                                    loop_id=s.loop_id, exit_flag=s.exit_flag)]

    def forward_fused(self, stmts):
        """``forward(stmts)`` with the fused loops among them replaced by their fused code."""
        out = []
        for s in self.forward(stmts):
            if isinstance(s, For) and s.loop_id in self.fused_code:
                out.extend(self.fused_code[s.loop_id])
            else:
                out.append(s)
        return out

    # ---- whole program -------------------------------------------------------------------------------
    def program(self, with_value):
        """Statements of ``value_and_grad`` (``with_value``) or ``grad``, before dead-code elimination."""
        out = []
        self.regions(out)
        for g in self.grad_names.values():
            out.append(ZeroGrad(g))
        self.zero_adjoint_arrays(out)
        if self.fused_code is None:
            self.fusion_plan()  # once: both variants share it (a decision must not see later loops as fused)
        rev = self.reverse_block(self.body)
        for v in sorted(self.adj):
            out.append(Assign(self.adj[v], "copy", [ZERO]))
        out.extend(self.forward_fused(self.body))
        self.value_name = None
        if with_value and is_var(self.ret):
            # the reverse sweep replays loops and may overwrite carried variables: keep the result now
            self.value_name = self.fresh("value")
            out.append(Assign(self.value_name, "copy", [self.ret], pos=self.ret_pos))
        if self.act.is_active(self.ret):
            out.append(Assign(self.adjoint(self.ret), "copy", [ONE], pos=self.ret_pos))
        out.extend(rev)
        return out

    def regions(self, out):
        """Statements laying out scratch: the local arrays, their adjoints, then each storing loop's values and
        array copies; the operand holding the total length (in elements)."""
        out.extend(self.layout)
        for info in self.storing_loops():
            out.extend(info.prelude)
        end = self.saved_regions(self.array_regions(self.arrays_end, out), out)
        # the once-per-run copies first: when the arrays' shapes are constants, so are their offsets, and the
        # compiler can tell them apart from the arrays they copy (the regions sized by trip counts come after)
        for info in self.info.values():
            if info.rows_of < 0:
                end = self.entry_regions(info, end, out)
        for info in self.storing_loops():
            loop = self.loop_by_id(info.loop_id)
            out.append(Assign(info.offset, "copy", [end], pos=loop.pos))
            size = self.fresh("scratch_size")
            trip = self.row_trips(info, self.trip_count(loop, out), out, loop.pos)  # x rows (nested_rows.py)
            out.append(Assign(size, "mul", [trip, Const(info.slots_per_iteration)], pos=loop.pos))
            nxt = self.fresh("scratch_end")
            out.append(Assign(nxt, "add", [info.offset, size], pos=loop.pos))
            end = self.snapshot_regions(info, trip, nxt, out, loop.pos)
        for info in self.info.values():
            if info.rows_of >= 0:
                end = self.exit_regions(info, self.entry_regions(info, end, out), out)
        return end

    def scratch_size_program(self):
        """Statements computing the scratch length (in elements) into the returned operand."""
        out = []
        return out, self.regions(out)

    def trip_count(self, loop, out):
        bound = self.info[loop.loop_id].trip_bound if loop.loop_id in self.info else None
        if bound is not None:
            return bound  # computed by the loop's prelude (loops.bounds_prelude)
        t = self.fresh("trip")
        out.append(Assign(t, "tripcount", [loop.start, loop.stop, loop.step], pos=loop.pos))
        return t

    def loop_by_id(self, loop_id):
        for s in walk(self.body):
            if isinstance(s, For) and s.loop_id == loop_id:
                return s
        raise KeyError(loop_id)
