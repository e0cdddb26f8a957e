"""The reverse sweep of local arrays (local_arrays.py): adjoint arrays, rolled-back writes, per-iteration copies.

* An active array ``A`` has an adjoint array ``A_b`` of the same size in scratch, zeroed at the start; slot
  ``s`` of ``A`` corresponds to slot ``s + delta`` of ``A_b``.
* The reverse of a read ``x = A[s]`` adds ``x_b`` into ``A_b[s]``; the reverse of a write ``A[s] = v`` moves
  ``A_b[s]`` into ``v_b`` (clearing it: the value written had no earlier history) and writes back the value the
  write overwrote (``AStore.old``).  So, going backwards, the array holds at every statement what it held there
  going forwards: what the replays of loop bodies read is right.
* A loop whose body writes an array copies the array into scratch at the start of each iteration and copies it
  back at the start of that iteration's reverse, before the body is replayed (the replay needs the array as the
  iteration found it).  These are the *stored* values of ``report()``; everything else is recomputed.
* Unless no iteration reads an element that another iteration wrote (array_entry.py): then one copy taken as
  the loop starts and put back just before its reverse gives every replay the elements it reads, and the
  rolled-back writes leave the array as the loop found it.  One region per loop serves every execution of it:
  the forward run (or replay) of a loop always comes right before its reverse.

A loop that reads or writes a local array is never fused with its reverse (fusion.py): the adjoint array is
memory, whose order of updates the fused form would change.
"""
from .ir import AStore, Assign, Const, ExtCall, ScratchCopy, ScratchZero, walk

ZERO = Const(0.0)


def written_arrays(loop):
    """Local arrays the loop body writes (its own writes, its inner loops' and its external calls')."""
    out = {s.array for s in walk(loop.body) if isinstance(s, AStore) and not s.reverse_only}
    out.update(w for s in walk(loop.body) if isinstance(s, ExtCall) and not s.reverse_only for w in s.writes)
    return sorted(out)


def touches_arrays(loop):
    """True when the loop reads or writes memory (external calls included: they are never fused)."""
    return any(isinstance(s, (AStore, ExtCall)) or (isinstance(s, Assign) and s.op == "aload")
               for s in walk(loop.body))


class ArraysMixin:
    """Array parts of ``reverse.Reverse`` (uses its ``act``, ``adjoint``, ``fresh``, ``accumulate``)."""

    def init_arrays(self, arrays):
        self.arrays = {a.name: a for a in arrays}

    def active_arrays(self):
        return [a for a in self.arrays.values() if self.act.is_active(a.name)]

    @staticmethod
    def adjoint_array(name):
        return f"{name}_b"

    @staticmethod
    def delta(name):
        return f"{name}_delta"

    @staticmethod
    def snapshot_offset(name, loop_id):
        return f"{name}_copies{loop_id}"

    def _adjoint_slot(self, name, slot, out, pos):
        sb = self.fresh("slot_b")
        out.append(Assign(sb, "add", [slot, self.delta(name)], pos=pos))
        return sb

    def reverse_read(self, s, out):
        """``x = A[slot]``: ``A_b[slot] += x_b``."""
        vb = self.adjoint(s.dst)
        sb = self._adjoint_slot(s.fn, s.args[0], out, s.pos)
        t, t2 = self.fresh("a_b"), self.fresh("a_b")
        out.append(Assign(t, "aload", [sb], fn=self.adjoint_array(s.fn), pos=s.pos))
        out.append(Assign(t2, "add", [t, vb], pos=s.pos))
        out.append(AStore(self.adjoint_array(s.fn), sb, t2, reverse_only=True, pos=s.pos))
        out.append(Assign(vb, "copy", [ZERO], pos=s.pos))

    def reverse_write(self, s, out):
        """``A[slot] = v``: ``v_b += A_b[slot]; A_b[slot] = 0``, then ``A[slot] = old``."""
        if self.act.is_active(s.array):
            sb = self._adjoint_slot(s.array, s.slot, out, s.pos)
            if self.act.is_active(s.value):
                t = self.fresh("a_b")
                out.append(Assign(t, "aload", [sb], fn=self.adjoint_array(s.array), pos=s.pos))
                self.accumulate(s.value, t, out, pos=s.pos)
            out.append(AStore(self.adjoint_array(s.array), sb, ZERO, reverse_only=True, pos=s.pos))
        if s.old:
            out.append(AStore(s.array, s.slot, s.old, reverse_only=True, pos=s.pos))

    def array_regions(self, end, out):
        """Offsets of the adjoint arrays after ``end`` (the arrays' own regions); the new end."""
        for a in self.active_arrays():
            off = f"{a.name}_b_offset"
            out.append(Assign(off, "copy", [end]))
            out.append(Assign(self.delta(a.name), "sub", [off, a.offset]))
            nxt = f"{a.name}_b_end"
            out.append(Assign(nxt, "add", [off, a.size]))
            end = nxt
        return end

    def zero_adjoint_arrays(self, out):
        for a in self.active_arrays():
            out.append(ScratchZero(f"{a.name}_b_offset", a.size, reverse_only=True))

    def snapshot_regions(self, info, trip, end, out, pos):
        """Regions of a storing loop's per-iteration array copies, after ``end``; the new end."""
        for name in info.snapshots:
            off = self.snapshot_offset(name, info.loop_id)
            out.append(Assign(off, "copy", [end], pos=pos))
            size, nxt = self.fresh("copies_size"), self.fresh("scratch_end")
            out.append(Assign(size, "mul", [trip, self.arrays[name].size], pos=pos))
            out.append(Assign(nxt, "add", [off, size], pos=pos))
            end = nxt
        return end

    def snapshot(self, info, counter, out, pos, restore):
        """Copy each written array into (``restore``: back from) this iteration's slots."""
        self.copy_slots(info.snapshots, counter, lambda name: self.snapshot_offset(name, info.loop_id), out, pos,
                        restore)

    def copy_slots(self, names, index, region_of, out, pos, restore):
        """Copy each array of ``names`` into (``restore``: back from) slot ``index`` of its region, which starts at
        the scratch offset ``region_of(name)`` and holds one copy of the array per slot."""
        for name in names:
            a = self.arrays[name]
            base, at = self.fresh("copy_at"), self.fresh("copy_at")
            out.append(Assign(base, "mul", [index, a.size], pos=pos))
            out.append(Assign(at, "add", [region_of(name), base], pos=pos))
            out.append(ScratchCopy(a.offset, at, a.size, pos) if restore else ScratchCopy(at, a.offset, a.size, pos))

    def entry_offset(self, name, loop_id):
        return f"{name}_entry{loop_id}"

    def entry_regions(self, info, end, out):
        """Regions of a loop's once-per-loop array copies (one per row: nested_rows.py), after ``end``; the new
        end."""
        for name in info.entry_copies:
            off = self.entry_offset(name, info.loop_id)
            out.append(Assign(off, "copy", [end]))
            size = self.arrays[name].size
            if info.rows_of >= 0:
                size = self._int_op("mul", self.row_count(info), size, out)
            nxt = self.fresh("scratch_end")
            out.append(Assign(nxt, "add", [off, size]))
            end = nxt
        return end

    def entry_copy(self, info, out, pos, restore, row=None):
        """Copy each once-per-loop array into its region (``row``: that row of it) before the loop (``restore``:
        back, before its reverse)."""
        for name in info.entry_copies:
            a, at = self.arrays[name], self.entry_offset(name, info.loop_id)
            if row is not None:
                base, at = self.fresh("copy_at"), self.fresh("copy_at")
                out.append(Assign(base, "mul", [row, a.size], pos=pos))
                out.append(Assign(at, "add", [self.entry_offset(name, info.loop_id), base], pos=pos))
            out.append(ScratchCopy(a.offset, at, a.size, pos) if restore else ScratchCopy(at, a.offset, a.size, pos))
