"""Optimisation passes over generated IR, run when a module is emitted (they depend on the fast-math flags).

Order: reciprocal hoisting (``a / k`` → ``a * r``, so adjoint divisions become multiplications that factoring
can follow), invariant forwarding (exposes the adjoint constants that fused loops pass through each iteration),
factoring of invariant multiplicands out of accumulations, then dead-code elimination of what they left unused.
"""
from . import dce
from .factoring import factor_accumulations
from .forwarding import forward_invariants
from .ir import Assign, ExtCall, For, RuleCall, assigned, uses, walk
from .reciprocal import hoist_reciprocals


class NameSource:
    """Fresh variable names that collide with no name in the given statement lists."""

    def __init__(self, *programs):
        self.taken = set()
        for stmts in programs:
            for s in walk(stmts):
                if isinstance(s, (Assign, RuleCall)):
                    self.taken.add(s.dst)
                    self.taken.update(a for a in s.args if isinstance(a, str))
                elif isinstance(s, ExtCall):
                    self.taken.update(assigned([s]) | uses(s))
                elif isinstance(s, For):
                    self.taken.update(x for x in (s.var, s.counter) if x)
        self.n = 0

    def __call__(self, hint):
        while True:
            self.n += 1
            name = f"{hint}__o{self.n}"
            if name not in self.taken:
                self.taken.add(name)
                return name


def allows(flags, name):
    """True when the fast-math ``flags`` (a set of LLVM flag names, or a bool) include ``name``."""
    return flags is True or (not isinstance(flags, bool) and ("fast" in flags or name in flags))


def optimise(stmts, types, fresh, arcp=True, reassoc=True):
    """``stmts`` with the passes allowed by the flags applied (a new list; the input is not modified)."""
    if arcp:
        stmts = hoist_reciprocals(stmts, types, fresh)
    stmts = forward_invariants(stmts, types, fresh)
    if reassoc:
        stmts = factor_accumulations(stmts, types, fresh)
    return dce.eliminate(stmts, set())
