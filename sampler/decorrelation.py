"""How much a new point still remembers the live point its chain started from, measured over one iteration's
chains.

Two correlations between start and end points, both 0 for independent draws and 1 for chains that did not move:

* ``rho_coord``: of the whitened coordinates ``L_c^-1 (x - mu_c)`` (start and end each in their own cluster),
  pooled over chains and dimensions;
* ``rho_logl``: Spearman's rank correlation of ``logl`` at start and end. Coordinates can decorrelate while the
  radius of a round contour does not (a billiard keeps its impact parameter); the likelihood is the coordinate
  nested sampling integrates over, so its memory is measured directly.

Each is smoothed over iterations before their maximum drives the trajectory length
(``HMCSettings.adapt_length``): the rank correlation of k = 50 chains has a noise of about 0.14, and the
maximum of two unsmoothed estimates would lengthen trajectories on noise alone. (The effective sample size of
the posterior is measured otherwise, over the whole run's family tree: ``sampler.genealogy``.)
"""

import numpy as np

from . import geometry as geo

SMOOTHING = 0.3  # weight of the newest iteration in the running correlation that adapts the trajectory length
# Chains measured at most: an evenly strided subset of them above this (the chains start from random survivors,
# so any subset is a random one). A correlation from m chains has a noise of about 1 / sqrt(m), 0.016 here, far
# below what the adaptation resolves; measuring all 10,000 chains of nlive 1e5 cost 4-7 ms an iteration.
MAX_CHAINS = 4096


def _ranks(a):
    r = np.empty(a.size)
    r[np.argsort(a, kind="stable")] = np.arange(a.size)
    return r


def chain_correlation(geometry, u_start, u_end, logl_start, logl_end):
    """(rho_coord, rho_logl) of one iteration's chains (see the module docstring)."""
    if u_start.shape[0] < 3:
        return 0.0, 0.0
    if u_start.shape[0] > MAX_CHAINS:
        rows = np.linspace(0, u_start.shape[0] - 1, MAX_CHAINS).round().astype(np.int64)
        u_start, u_end, logl_start, logl_end = u_start[rows], u_end[rows], logl_start[rows], logl_end[rows]
    u_start = np.asarray(u_start, dtype=np.float64)  # once, when the starts are rows in a slot store
    ws = geo.whiten(geometry, u_start, geo.regions(geometry, u_start))
    we = geo.whiten(geometry, u_end, geo.regions(geometry, u_end))
    denom = np.sqrt(np.sum(ws * ws) * np.sum(we * we))
    rho_coord = float(np.sum(ws * we) / denom) if denom > 0 else 0.0
    rs, re = _ranks(np.asarray(logl_start)), _ranks(np.asarray(logl_end))
    rs, re = rs - rs.mean(), re - re.mean()
    denom = np.sqrt(np.sum(rs * rs) * np.sum(re * re))
    rho_logl = float(np.sum(rs * re) / denom) if denom > 0 else 0.0
    return rho_coord, rho_logl


def smooth(previous, rho):
    """Running correlation: exponential smoothing, started at the first measurement (``previous`` NaN)."""
    if not np.isfinite(previous):
        return float(rho)
    return float((1.0 - SMOOTHING) * previous + SMOOTHING * rho)
