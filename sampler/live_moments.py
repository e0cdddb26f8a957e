"""Running first and second moments of a large live set, so that its mean and covariance cost O(k d^2) an
iteration instead of O(n d^2).

Every iteration needs the survivors' mean and covariance (the metric and the bounding ellipsoid of
``sampler.geometry``). Recomputed from all ``n`` survivors (``np.cov``) that was 18 ms of the host's 43 ms an
iteration at nlive 1e5 in 30-D, a cost a GPU run pays on the CPU between its chain launches. Instead, the state
carries the sums ``sum(u - s)`` and ``sum((u - s)(u - s)^T)`` of its live points about a shift ``s`` (their mean
when last recomputed); an iteration subtracts the dead points' terms, reads the survivors' mean and covariance off
the sums, and adds the new points' terms. Shifting keeps the sums' rounding relative to the live set's own spread
(no cancellation between a large mean and a small covariance), and the sums are recomputed from the points every
``REFRESH_EVERY`` iterations, so rounding cannot accumulate. A covariance off by rounding only reshapes the
proposal's metric, which every metric leaves valid (``sampler.hmc``).

Below ``RUNNING_FROM`` survivors the covariance is computed from the points every iteration, as before: small
runs give the same bits as without running moments. The moments travel in the state (``NSState.moments``) and so
in checkpoints, which keeps resumed runs bit-identical; an empty or ill-shaped array means "unknown" and is
recomputed.
"""

import numpy as np

RUNNING_FROM = 10_000  # survivors from which the moments are carried instead of recomputed
REFRESH_EVERY = 16  # iterations between recomputations from the points


def unknown(d) -> np.ndarray:
    """The moments of a state that carries none."""
    return np.empty((0, d))


def exact(points) -> np.ndarray:
    """The moments of ``points`` (n, d) about their mean: rows ``[shift, sum(u - shift), sum((u - shift)(u -
    shift)^T)...]``, a (d + 2, d) array."""
    shift = points.mean(axis=0)
    centred = points - shift
    return np.vstack([shift, centred.sum(axis=0), centred.T @ centred])


def added(moments, rows, sign=1.0) -> np.ndarray:
    """``moments`` with the terms of ``rows`` (m, d) added (``sign`` 1) or removed (``sign`` -1)."""
    out = moments.copy()
    if rows.shape[0]:
        centred = rows - moments[0]
        out[1] += sign * centred.sum(axis=0)
        out[2:] += sign * (centred.T @ centred)
    return out


def survivors(moments, iteration, dead_u, survivor_u):
    """The survivors' moments, from the live set's ``moments`` less the dead points ``dead_u``, or from the
    survivors themselves when they are not carried yet or it is time to refresh; None below ``RUNNING_FROM``
    survivors (the caller computes the covariance from the points)."""
    n, d = survivor_u.shape
    if n < RUNNING_FROM:
        return None
    if moments.shape != (d + 2, d) or iteration % REFRESH_EVERY == 0:
        return exact(np.asarray(survivor_u, dtype=np.float64))  # gathered from a slot store (sampler.live_rows)
    return added(moments, dead_u, -1.0)


def mean_cov(moments, n) -> tuple[np.ndarray, np.ndarray]:
    """(mean, covariance with the ``n - 1`` of ``np.cov``) of the ``n`` points the moments describe."""
    offset = moments[1] / n
    cov = (moments[2:] - n * np.outer(offset, offset)) / (n - 1)
    return moments[0] + offset, 0.5 * (cov + cov.T)
