"""Evidence from the dead points' ``(logl, logl_birth)`` alone, independent of the sampler.

A point is alive at contour ``L`` when ``logl_birth < L <= logl``. Counting, for each dead point in order of
increasing ``logl``, how many points are alive at its ``logl`` gives the live count ``n_i`` of that death.
Deleting the ``k`` lowest of ``n`` points at once and replacing them above the highest removed value gives the
counts ``n, n-1, ..., n-k+1`` for those ``k`` deaths automatically (the replacements are born *at* the highest
removed value, so they are not alive at it), which is exactly the shrinkage of ``k`` single deaths. Final live
points are appended as dead points, which gives their counts ``m, m-1, ..., 1``.

Shrinkage per death: ``log t_i = log(U) / n_i`` (``t_i ~ Beta(n_i, 1)``), ``E[log t_i] = -1 / n_i``. ``logz`` uses
``E[log X]``; ``logz_err`` is the standard deviation of ``logz`` over simulated shrinkage sequences.
"""

from typing import NamedTuple

import numpy as np


class Evidence(NamedTuple):
    """logz, logz_err, information: log-evidence, its simulated standard error, and the KL divergence H (nats).
    nlive: live count at each death; log_x: E[log X] after each death; log_weights: log(L_i dX_i) (unnormalised);
    logz_samples: logz of each simulated shrinkage sequence."""

    logz: float
    logz_err: float
    information: float
    nlive: np.ndarray
    log_x: np.ndarray
    log_weights: np.ndarray
    logz_samples: np.ndarray


def sort_dead(logl, logl_birth):
    """Indices that sort points by ``logl`` ascending (stable, so equal values keep their death order)."""
    return np.argsort(np.asarray(logl), kind="stable")


def live_counts(logl, logl_birth) -> np.ndarray:
    """Live count at each death; ``logl`` must be sorted ascending (see :func:`sort_dead`)."""
    logl = np.asarray(logl, dtype=np.float64)
    births = np.sort(np.asarray(logl_birth, dtype=np.float64))
    if np.any(np.diff(logl) < 0):
        raise ValueError("live_counts: logl must be sorted ascending")
    born_below = np.searchsorted(births, logl, side="left")  # points born strictly below each contour
    counts = born_below - np.arange(logl.size)               # minus those already dead
    if np.any(counts < 1):
        raise ValueError("live_counts: a point has logl <= logl_birth or the run is inconsistent")
    return counts


def _log_weights(logl, log_x):
    """log(L_i (X_{i-1} - X_i)) with X_0 = 1, computed stably."""
    prev = np.concatenate([np.zeros(log_x.shape[:-1] + (1,)), log_x[..., :-1]], axis=-1)
    # log(X_{i-1} - X_i) = log X_{i-1} + log(1 - exp(log X_i - log X_{i-1}))
    log_dx = prev + np.log(-np.expm1(log_x - prev))
    return logl + log_dx


def _logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis) if axis is not None else float(out.ravel()[0])


def from_counts(logl, nlive, generator=None, ndraws=200) -> Evidence:
    """Evidence for sorted ``logl`` with given live counts (also used to show the naive-count bias)."""
    logl = np.asarray(logl, dtype=np.float64)
    nlive = np.asarray(nlive, dtype=np.float64)
    log_x = -np.cumsum(1.0 / nlive)
    log_w = _log_weights(logl, log_x)
    logz = _logsumexp(log_w)
    p = np.exp(log_w - logz)
    finite = p > 0
    information = float(np.sum(p[finite] * (logl[finite] - logz)))
    generator = generator if generator is not None else np.random.default_rng(0)
    samples = np.empty(ndraws)
    chunk = max(1, int(2e6 // max(logl.size, 1)))  # keep the (draws, N) matrix near 16 MB
    for start in range(0, ndraws, chunk):
        m = min(chunk, ndraws - start)
        log_t = np.log(generator.random((m, logl.size))) / nlive
        samples[start:start + m] = _logsumexp(_log_weights(logl, np.cumsum(log_t, axis=1)), axis=1)
    return Evidence(float(logz), float(np.std(samples)), information, nlive.astype(np.int64), log_x, log_w, samples)


def compute(logl, logl_birth, generator=None, ndraws=200) -> Evidence:
    """Evidence of a run given every dead point's ``(logl, logl_birth)`` (final live points included)."""
    order = sort_dead(logl, logl_birth)
    logl = np.asarray(logl, dtype=np.float64)[order]
    births = np.asarray(logl_birth, dtype=np.float64)[order]
    return from_counts(logl, live_counts(logl, births), generator=generator, ndraws=ndraws)


def _logz_of_points(logl, births):
    order = np.argsort(logl, kind="stable")
    logl, births = logl[order], births[order]
    log_x = -np.cumsum(1.0 / live_counts(logl, births))
    return _logsumexp(_log_weights(logl, log_x))


def bootstrap_logz(logl, logl_birth, thread, generator, nboot=64) -> np.ndarray:
    """logZ of ``nboot`` runs made by resampling whole threads with replacement (Higson et al. 2018, dynesty's
    ``resample_run``). A thread is a sequence of points each born when the one before it died, so any multiset
    of threads is itself a valid nested-sampling run, with live counts from its birth contours. The spread of
    these values includes what correlated proposals add to the scatter of logZ, which the simulated shrinkage
    alone does not see."""
    logl = np.asarray(logl, dtype=np.float64)
    births = np.asarray(logl_birth, dtype=np.float64)
    ids, inverse = np.unique(np.asarray(thread), return_inverse=True)
    points = np.arange(logl.size)
    out = np.empty(nboot)
    for b in range(nboot):
        multiplicity = np.bincount(generator.integers(0, ids.size, size=ids.size), minlength=ids.size)
        chosen = np.repeat(points, multiplicity[inverse])
        out[b] = _logz_of_points(logl[chosen], births[chosen])
    return out


def kish_ess(weights) -> float:
    """Kish's effective sample size ``1 / sum(w^2)`` of normalised weights."""
    weights = np.asarray(weights, dtype=np.float64)
    return float(1.0 / np.sum(weights ** 2))


def posterior_ess(weights, correlation) -> float:
    """Effective number of independent posterior samples: Kish's ESS times ``(1 - rho) / (1 + rho)``, the
    variance inflation of a chain with lag-one correlation ``rho``, where ``rho`` is the posterior-weighted
    correlation between new points and the live points their chains started from (``correlation``, per point)."""
    weights = np.asarray(weights, dtype=np.float64)
    rho = float(np.clip(np.sum(weights * np.asarray(correlation, dtype=np.float64)), 0.0, 1.0 - 1e-12))
    return kish_ess(weights) * (1.0 - rho) / (1.0 + rho)


def posterior_weights(ev: Evidence) -> np.ndarray:
    """Normalised posterior weights of the sorted dead points."""
    w = np.exp(ev.log_weights - ev.logz)
    return w / w.sum()


def equal_weight_indices(weights, generator, size=None) -> np.ndarray:
    """Systematic resampling: indices of ``size`` equal-weight samples (default: the Kish effective sample
    size), deterministic given the generator state."""
    weights = np.asarray(weights, dtype=np.float64)
    if size is None:
        size = max(1, int(np.floor(1.0 / np.sum(weights ** 2))))
    positions = (generator.random() + np.arange(size)) / size
    cdf = np.cumsum(weights)
    cdf[-1] = 1.0
    idx = np.searchsorted(cdf, positions, side="right")
    return generator.permutation(np.minimum(idx, weights.size - 1))


class RunningEvidence:
    """Incremental logZ and log X during a run, for termination and progress (the final numbers come from
    :func:`compute`). Feed each iteration's removed ``logl`` (ascending) and the live count before removal."""

    def __init__(self, logz=-np.inf, log_x=0.0):
        self.logz = float(logz)
        self.log_x = float(log_x)

    def remove(self, removed_logl, nlive_before):
        k = len(removed_logl)
        log_x_new = self.log_x - np.cumsum(1.0 / (nlive_before - np.arange(k)))
        prev = np.concatenate([[self.log_x], log_x_new[:-1]])
        log_w = np.asarray(removed_logl) + prev + np.log(-np.expm1(log_x_new - prev))
        self.logz = float(np.logaddexp(self.logz, _logsumexp(log_w)))
        self.log_x = float(log_x_new[-1])

    def remaining(self, live_logl) -> float:
        """log(Z + Z_live) - log Z with Z_live = X * mean(L_live)."""
        live = np.asarray(live_logl)
        logz_live = self.log_x + _logsumexp(live) - np.log(live.size)
        if not np.isfinite(self.logz):
            return float("inf")
        return float(np.logaddexp(self.logz, logz_live) - self.logz)
