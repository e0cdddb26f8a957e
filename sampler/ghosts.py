"""Ellipsoids of modes whose last live point died, kept for a while as jump targets.

A narrow mode that holds a small share of the contour's volume holds few live points: on the 5-D mixture with
weights 0.6 / 0.3 / 0.1 and widths 0.5 / 0.8 / 0.3, about 0.7% of the volume at the low contours, 3-4 of 500
points. Perfect nested sampling sees that count touch zero in about 16% of runs (``scripts/perfect_ns_mode_loss.py``)
and refills the mode later, as its share grows towards its high peak. A sampler that only moves live points loses
the mode for good instead: its cluster, ellipsoid and jump target disappear with the last point (8 of 100 seeds
lost the 0.1 mode, its posterior weight then 0).

So a cluster left without survivors becomes a ghost: its mean, covariance and radius, as the live points last
gave them, stay in the geometry (``sampler.geometry.Geometry``) as one more ellipsoid of the union the
independence jumps propose from, for ``LIFETIME`` e-folds of the prior volume. The jumps stay exact
Metropolis-Hastings moves for uniform points in the contour whatever ellipsoids they use, so a ghost costs only
the jump proposals that land in it; a jump accepted inside it brings the mode back, and a ghost that holds a live
point again is dropped (the point's cluster has its own ellipsoid).
"""

import math
from typing import NamedTuple

import numpy as np

from .triangular import lower_solve

LIFETIME = 3.0  # e-folds of the prior volume a ghost lasts: ceil(LIFETIME * nlive / k) iterations


class Ghosts(NamedTuple):
    """G ghost ellipsoids in d dimensions: mean (G, d), cov (G, d, d), radius2 (G,), until (G,) the iteration
    after which each is dropped."""

    mean: np.ndarray
    cov: np.ndarray
    radius2: np.ndarray
    until: np.ndarray

    @classmethod
    def none(cls, d):
        return cls(np.zeros((0, d)), np.zeros((0, d, d)), np.zeros(0), np.zeros(0, np.int64))


def _holds(mean, cov, radius2, points):
    """Whether any of ``points`` lies inside the ellipsoid."""
    white = lower_solve(np.linalg.cholesky(cov), (points - mean).T)
    return bool(np.any(np.einsum("ij,ij->j", white, white) <= radius2))


def update(ghosts, old_geometry, lost, survivors_u, iteration, lifetime_iterations):
    """The ghosts after one iteration: those still in time and holding no survivor, plus a new one for each
    cluster index in ``lost`` (of ``old_geometry``, the live points' geometry before the deaths)."""
    keep = [g for g in range(ghosts.radius2.size)
            if ghosts.until[g] > iteration and not _holds(ghosts.mean[g], ghosts.cov[g], ghosts.radius2[g],
                                                          survivors_u)]
    lost = [int(c) for c in lost]
    if not lost:
        return Ghosts(ghosts.mean[keep], ghosts.cov[keep], ghosts.radius2[keep], ghosts.until[keep])
    until = iteration + lifetime_iterations
    return Ghosts(np.concatenate([ghosts.mean[keep], old_geometry.mean[lost]]),
                  np.concatenate([ghosts.cov[keep], old_geometry.cov[lost]]),
                  np.concatenate([ghosts.radius2[keep], old_geometry.radius2[lost]]),
                  np.concatenate([ghosts.until[keep], np.full(len(lost), until, np.int64)]))


def lifetime_iterations(nlive, k):
    return int(math.ceil(LIFETIME * nlive / k))
