"""Numerically careful one-dimensional integrals in log space, shared by the reference log-evidences."""

import math

import numpy as np


def normal_mass(a, b):
    """``Phi(b) - Phi(a)`` for the standard normal CDF, from the tail that keeps digits (``math.erfc``)."""
    if a >= 0.0:  # both in the upper tail: 1 - Phi(x) = erfc(x / sqrt 2) / 2, no cancellation against 1
        return 0.5 * (math.erfc(a / _SQRT2) - math.erfc(b / _SQRT2))
    return 0.5 * (math.erfc(-b / _SQRT2) - math.erfc(-a / _SQRT2))


def log_integral(log_f, low, high, grid=2001, rel=1e-12, drop=60.0):
    """``log ∫_low^high exp(log_f(t)) dt`` for a sharply peaked integrand (numpy only: no scipy import, which
    would cost every run of a built-in about 0.3 s).

    The mass is located on a grid first: the window where ``log_f`` is within ``drop`` of its maximum, widened
    by a grid cell on each side (outside it the integrand is below exp(-drop) of the peak). There, composite
    20-point Gauss-Legendre quadrature of ``exp(log_f - max)`` with the panels doubled until two successive
    results agree to ``rel``.
    """
    t = np.linspace(low, high, grid)
    values = np.array([log_f(v) for v in t])
    finite = np.isfinite(values)
    if not finite.any():
        return -math.inf
    values = np.where(finite, values, -np.inf)
    shift = float(np.max(values))
    inside = np.flatnonzero(values > shift - drop)
    lo, hi = t[max(inside[0] - 1, 0)], t[min(inside[-1] + 1, grid - 1)]
    nodes, weights = _GAUSS_LEGENDRE

    def panels(count):
        edges = np.linspace(lo, hi, count + 1)
        half = 0.5 * np.diff(edges)
        points = (edges[:-1] + half)[:, None] + half[:, None] * nodes[None, :]
        f = np.array([_exp_shifted(log_f(v), shift) for v in points.ravel()])
        return float(np.sum(f.reshape(points.shape) * weights[None, :] * half[:, None]))

    count = 16
    previous = panels(count)
    while count < 4096:
        count *= 2
        current = panels(count)
        if abs(current - previous) <= rel * abs(current):
            return math.log(current) + shift
        previous = current
    return math.log(previous) + shift


def _exp_shifted(value, shift):
    return math.exp(value - shift) if math.isfinite(value) else 0.0  # -inf: outside the support


_SQRT2 = math.sqrt(2.0)
_GAUSS_LEGENDRE = np.polynomial.legendre.leggauss(20)


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
