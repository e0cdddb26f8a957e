"""Special functions the analytic gradients need, in plain Python (also numba-compilable)."""

import math

from numba.extending import register_jitable


@register_jitable  # stays a plain Python function; numba code (the benchmark's hand-written path) can call it
def digamma(x):
    """ψ(x) for x > 0: upward recurrence to x >= 6, then the asymptotic series (error < 1e-13)."""
    result = 0.0
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))))
    return result + math.log(x) - 0.5 / x - series
