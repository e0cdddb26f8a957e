"""Numeric settings and what is wrong with a value given for one: shared by the config schema (`sampler`) and
the built-in likelihoods' options (here), so a number is checked the same way wherever a user writes it.

`number_problem` and `range_problem` return the reason a value is refused, or None: callers add the place (a
config key, an argument name, an option) to it.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import NamedTuple


class Range(NamedTuple):
    """A numeric setting: an integer or a number, finite, within [low, high] (an open end excludes it)."""
    kind: type
    low: float
    high: float
    open_low: bool = False
    open_high: bool = False

    def describe(self) -> str:
        what, show = ("an integer", lambda x: str(int(x))) if self.kind is int else ("a number", "{:g}".format)
        return (f"{what} in {'(' if self.open_low else '['}{show(self.low)}, {show(self.high)}"
                f"{')' if self.open_high else ']'}")

    def contains(self, value) -> bool:
        above = value > self.low if self.open_low else value >= self.low
        below = value < self.high if self.open_high else value <= self.high
        return above and below


def number_problem(value, kind=float) -> str | None:
    """Why `value` is not a finite number (kind float) or integer (kind int, 50.0 accepted), or None."""
    what = "an integer" if kind is int else "a number"
    exponent = re.fullmatch(r"([-+]?(?:\d+\.?\d*|\.\d+))[eE]([-+]?)(\d+)", value.strip()) \
        if isinstance(value, str) else None
    if exponent:  # YAML 1.1 (PyYAML) wants a decimal point and a signed exponent: 1.0e+12
        mantissa, sign, power = exponent.groups()
        written = f"{mantissa if '.' in mantissa else mantissa + '.0'}e{sign or '+'}{power}"
        if math.isinf(float(written)):  # the spelling suggested would be refused as inf in its turn
            return f"expected {what}, got text '{value}', beyond the largest number (about 1.8e+308)"
        return f"expected {what}, got text '{value}' (YAML reads this as text; write {written})"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"expected {what}, got {describe(value)}"
    if isinstance(value, numbers.Integral):  # exact, however large (math.isfinite would overflow)
        return None
    if not math.isfinite(value):
        return f"must be a finite number, got {value}"
    if kind is int and not float(value).is_integer():
        return f"expected an integer, got {value!r}"
    return None


def range_problem(value, allowed: Range) -> str | None:
    """Why `value` is not acceptable for a setting with range `allowed`, or None."""
    problem = number_problem(value, allowed.kind)
    if problem or allowed.contains(value):
        return problem
    shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:12]}... ({len(str(value))} characters)"
    if value <= 0 <= allowed.low:
        sign = "positive" if allowed.low > 0 or allowed.open_low else "zero or more"
        return f"must be {sign} ({allowed.describe()}), got {shown}"
    return f"must be {allowed.describe()}, got {shown}"


def describe(value) -> str:
    """A value as a message shows it: its kind, and the value where that helps."""
    if value is None:
        return "nothing (empty value)"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"text '{value}'"
    return f"{type(value).__name__} {value!r}"
