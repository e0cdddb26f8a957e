"""Numerically careful one-dimensional integrals in log space, shared by the reference log-evidences."""

import math

import numpy as np


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
    from scipy import integrate  # here: importing scipy.integrate costs every run of every built-in 0.5 s

    total = 0.0
    for a, b in pieces:
        if b > a:
            value, _ = integrate.quad(lambda v: math.exp(log_f(v) - shift), a, b,
                                      epsabs=0.0, epsrel=rel, limit=500)
            total += value
    return math.log(total) + shift


def log_integral_box(log_f, box, coarse=161, fine=641, drop=40.0):
    """``log ∫_box exp(log_f(*axes))`` over a 2-D or 3-D box for a unimodal, smooth integrand.

    ``log_f`` is vectorised: it receives one broadcastable grid array per axis. A coarse grid over the whole
    box finds where the mass is (within ``drop`` of the maximum); a fine Simpson grid over that window
    (widened by a coarse cell on each side) does the integral. Mass outside the window is below exp(-drop)
    of the peak's.
    """
    from scipy.integrate import simpson

    ndim = len(box)

    def grids(axes):
        return [axis.reshape([-1 if i == k else 1 for i in range(ndim)]) for k, axis in enumerate(axes)]

    axes = [np.linspace(lo, hi, coarse) for lo, hi in box]
    values = np.broadcast_to(log_f(*grids(axes)), (coarse,) * ndim)
    inside = np.argwhere(values > np.max(values) - drop)
    first, last = inside.min(axis=0), inside.max(axis=0)
    axes = [np.linspace(axis[max(i - 1, 0)], axis[min(j + 1, coarse - 1)], fine)
            for axis, i, j in zip(axes, first, last)]
    values = log_f(*grids(axes))
    shift = np.max(values)
    integrand = np.exp(values - shift)
    for axis in reversed(axes):  # integrate out the last axis each time
        integrand = simpson(integrand, x=axis, axis=-1)
    return math.log(float(integrand)) + shift
