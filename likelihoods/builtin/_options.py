"""The built-ins' options, checked in one place before a built-in is built: each module lists its options in
``OPTIONS`` (name -> a :class:`~nestgrad.likelihoods.ranges.Range`, or a tuple of the accepted words), and
:func:`check` refuses a wrong type or range with an :class:`OptionError` naming the option. Conditions that tie
two options together (``gaussian``'s ``rho`` and ``ndim``) stay in the module and raise the same error.
"""
from __future__ import annotations

import math

from ..errors import did_you_mean
from ..ranges import Range, describe, range_problem

ANY = Range(float, -math.inf, math.inf)        # any finite number
POSITIVE = Range(float, 0.0, 1e6, open_low=True)  # a scale or width: squares of larger ones overflow soon after
DATA_POINTS = Range(int, 1, 10_000_000)        # generated data points: beyond that the arrays fill the memory
DIMENSIONS = Range(int, 1, 10_000)
SEED = Range(int, 0, 2**63 - 1)                # numpy.random.default_rng takes non-negative integers


class OptionError(ValueError):
    """A built-in's option the built-in cannot use; ``option`` names it, ``detail`` says why (without the name)."""

    def __init__(self, builtin: str, option: str, detail: str):
        self.builtin, self.option, self.detail = builtin, option, detail
        super().__init__(f"built-in {builtin!r}: option {option}: {detail}")


def check(builtin: str, allowed: dict, options: dict) -> dict:
    """``options`` checked against ``allowed``; integers written 3.0 become 3. ``None`` passes where the
    module's default is ``None`` (its own choice, e.g. ``poisson_rates``' ``low``): ``allowed`` then lists
    ``(Range, None)``."""
    checked = dict(options)
    for name, value in options.items():
        rule = allowed[name]
        if isinstance(rule, tuple) and rule[-1] is None:
            if value is None:
                continue
            rule = rule[0]
        if isinstance(rule, Range):
            problem = range_problem(value, rule)
            if problem:
                raise OptionError(builtin, name, problem)
            checked[name] = rule.kind(value)
        elif value not in rule:
            raise OptionError(builtin, name, f"expected one of {', '.join(rule)}, got {describe(value)}"
                                             f"{did_you_mean(value, rule)}")
    return checked
