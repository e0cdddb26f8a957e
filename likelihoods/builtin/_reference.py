"""Numerically careful one-dimensional integrals in log space, shared by the reference log-evidences."""

import math

import numpy as np
from scipy import integrate


def log_integral(log_f, low, high, grid=2001, rel=1e-11):
    """``log ∫_low^high exp(log_f(t)) dt`` for a sharply peaked integrand.

    The peak is located on a grid first and factored out, so the adaptive quadrature works on numbers of
    order one and is told where the peak is (otherwise quad can step right over a narrow bump).
    """
    t = np.linspace(low, high, grid)
    values = np.array([log_f(v) for v in t])
    finite = np.isfinite(values)
    if not finite.any():
        return -math.inf
    peak_index = int(np.argmax(np.where(finite, values, -np.inf)))
    shift = values[peak_index]
    lo = t[max(peak_index - 2, 0)]
    hi = t[min(peak_index + 2, grid - 1)]
    pieces = [(low, lo), (lo, hi), (hi, high)]
    total = 0.0
    for a, b in pieces:
        if b > a:
            value, _ = integrate.quad(lambda v: math.exp(log_f(v) - shift), a, b,
                                      epsabs=0.0, epsrel=rel, limit=500)
            total += value
    return math.log(total) + shift
