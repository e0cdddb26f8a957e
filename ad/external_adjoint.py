"""The reverse sweep of external calls (external.py): the call of the adjoint rule, and the arrays the call wrote.

* Forward: a call that writes local arrays first copies them into a scratch region of its own (``ExtCall.saved``),
  unless it is a top-level statement that touches them first (their old contents then matter to no one).  Like
  every forward statement, the copy is made again when a loop's iteration is replayed.
* Reverse: the sweep has rolled every array back to what it held right after the call.  The adjoint is called
  with the same arguments, ``g`` (the result's adjoint, or 0), and per array argument its adjoint: the adjoint
  array of an active local array, the gradient array of an active kernel argument, None for the others.  The
  adjoints it returns for the number arguments are accumulated; then the written arrays get their saved contents
  back, so the sweep continues with the arrays as they were before the call.
"""
from . import rules
from .external import call_positions, key, top_level_first_touch
from .ir import Assign, Const, ExtCall, ScratchCopy, View, walk

ZERO = Const(0.0)


class ExternalMixin:
    """External-call parts of ``reverse.Reverse`` (uses its ``act``, ``types``, ``arrays``, ``adjoint``...)."""

    def init_externals(self):
        self.calls = [s for s in walk(self.body) if isinstance(s, ExtCall) and not s.reverse_only]
        for s in self.calls:
            if s.writes and not top_level_first_touch(self.body, s, s.writes):
                s.saved = tuple(self.fresh(f"saved_{self.arrays[w].user_name}") for w in s.writes)

    def save_before(self, s, out):
        """The forward copies of the arrays ``s`` writes (before ``s``)."""
        for w, at in zip(s.writes, s.saved):
            a = self.arrays[w]
            out.append(ScratchCopy(at, a.offset, a.size, s.pos))

    def reverse_external(self, s, out):
        dst = s.results[0] if s.results else None
        if isinstance(s.rule, rules.AdjointRule) and any(self.act.is_active(v) for v in s.results + list(s.writes)):
            arrays, numbers = call_positions(s, self.types)
            g = self.adjoint(dst) if dst is not None and self.act.is_active(dst) else ZERO
            shadows = [self._shadow(s.args[k]) for k in arrays]
            results = [self.fresh(f"{s.rule.name}_b") for _ in numbers]
            out.append(ExtCall(key(s.rule.adjoint), list(s.args) + [g] + shadows, results, s.rule,
                               reverse_only=True, pos=s.pos))
            for k, r in zip(numbers, results):
                self.accumulate(s.args[k], r, out, pos=s.pos)  # (only active arguments: never an integer)
            if g is not ZERO:
                out.append(Assign(g, "copy", [ZERO], pos=s.pos))
        for w, at in zip(s.writes, s.saved):
            a = self.arrays[w]
            out.append(ScratchCopy(a.offset, at, a.size, s.pos))

    def _shadow(self, arg):
        if isinstance(arg, View):
            if not self.act.is_active(arg.array):
                return None
            return View(self.adjoint_array(arg.array), f"{arg.array}_b_offset", arg.dims)
        return self.grad_names.get(arg)  # None for data

    def saved_regions(self, end, out):
        """Offsets of the calls' saved copies after ``end``; the new end."""
        for s in self.calls:
            for w, at in zip(s.writes, s.saved):
                out.append(Assign(at, "copy", [end], pos=s.pos))
                nxt = self.fresh("scratch_end")
                out.append(Assign(nxt, "add", [at, self.arrays[w].size], pos=s.pos))
                end = nxt
        return end
