"""Per-cluster metric and bounding ellipsoids from the live points, as the fused chain kernel reads them.

For each cluster ``c`` of live points (``sampler.clustering``): the mean ``mu_c``, the covariance ``S_c`` (dense,
or its diagonal) with lower Cholesky factor ``L_c``, and the squared Mahalanobis radius ``R2_c`` of the
ellipsoid ``E_c = {x : (x - mu_c)^T S_c^-1 (x - mu_c) <= R2_c}`` that holds all of the cluster's live points
(enlarged by ``ENLARGE_VOLUME``). Three uses, all in ``sampler.hmc``:

* metric: a chain in cluster ``c`` moves with velocity ``v = L_c z`` (``z`` isotropic, length the step size in
  whitened units) and reflects with ``v' = v - 2 (v.g) S_c g / (g^T S_c g)``: a mirror image in the whitened
  coordinates ``L_c^-1 u``, so the billiard sees a round contour where the live points see an elongated one.
* regions: ``region(x) = argmin_c (x - mu_c)^T S_c^-1 (x - mu_c) / R2_c`` partitions the cube; a chain's
  billiard stays in its region (leaving it reverses the velocity), which keeps each step invariant although the
  metric depends on the cluster.
* jumps: an independence Metropolis-Hastings move proposes uniformly from the union of ellipsoids (pick ``c``
  with probability ``V_c / sum V``, then uniform in ``E_c``), so ``q(x)`` is proportional to the number of
  ellipsoids containing ``x`` and the acceptance is ``min(1, count(x) / count(x'))``. It moves chains between
  modes with the right odds, which is what keeps mode weights from drifting.
"""

from typing import NamedTuple

import numba
import numpy as np

from .clustering import find_clusters
from .triangular import lower_solve


def is_resident(points) -> bool:
    """Whether ``points`` are rows in a slot store (``sampler.live_rows.ResidentRows``; tested by attribute, so
    that CPU runs never import CUDA)."""
    return getattr(points, "resident", False)

# Volume factor of the bounding ellipsoids beyond the outermost live point: margin for the part of the contour
# between the outermost points and the contour itself (which matters most for small modes with few points,
# in few dimensions), at a fixed cost in jump acceptance (a fixed radius factor 1.1 costs 6.7x at d = 20).
ENLARGE_VOLUME = 2.0


class Geometry(NamedTuple):
    """Arrays read by the chain kernel (C clusters, d dimensions).

    mean: (C, d); chol: (C, d, d) lower Cholesky factors of the covariances; cov: (C, d, d) the covariances;
    radius2: (C,) squared Mahalanobis radii of the bounding ellipsoids; cdf: (C,) cumulative proposal
    probabilities (volume shares); pool: (n, d) the live points grouped by cluster, cluster c's rows
    ``pool_start[c]:pool_start[c + 1]`` (C + 1 offsets; none for the ellipsoids of lost modes), whose pairwise
    differences are the directions of the pair slice moves (one row and no cluster holding any when built without
    them); dense: 1 for dense metrics, 0 when only the diagonals
    are used.
    """

    mean: np.ndarray
    chol: np.ndarray
    cov: np.ndarray
    radius2: np.ndarray
    cdf: np.ndarray
    pool: np.ndarray
    pool_start: np.ndarray
    dense: int

    @property
    def nclusters(self) -> int:
        return int(self.mean.shape[0])

    def kernel_arrays(self) -> tuple:
        """The arrays the chain kernel reads, in its argument order (``g_mean`` ... ``g_pool_start``)."""
        return tuple(self[:KERNEL_ARRAYS])


KERNEL_ARRAYS = 7  # Geometry's leading fields that the chain kernel reads


# A cluster with too few points for a covariance of its own (a narrow mode down to its last survivors) borrows the
# shape of the most populous cluster, scaled to the volume that cluster holds per live point (live points are
# uniform in the contour, so volume per point is the same in every mode), times this margin: the survivors sit
# anywhere in their mode, not at its centre.
SMALL_CLUSTER_VOLUME = 4.0


def _cluster_shape(points, dense, reference, cov=None, mean=None):
    """(mean, chol, cov, radius2, log_volume) of one cluster; ``reference`` is ``(cov, radius2, points)`` of the
    cluster whose shape a cluster with fewer than ``d + 2`` points borrows; ``cov``, ``mean``: the points'
    covariance and mean when already known."""
    n, d = points.shape
    mean = points.mean(axis=0) if mean is None else mean
    small = n <= d + 1
    if small:
        ref_cov, ref_radius2, ref_n = reference
        cov = ref_cov * (n / ref_n) ** (2.0 / d)
    elif cov is None:
        cov = covariance(points)
    diagonal = not dense or n < 2 * (d + 1)
    if diagonal:
        cov = np.diag(np.diag(cov))
    # A floor relative to each direction's own variance keeps the factor well defined for degenerate sets.
    cov = cov + np.diag(1e-10 * np.diag(cov) + 1e-300)
    if diagonal:  # the factor of a diagonal matrix: what LAPACK computes, without the call
        chol = np.sqrt(cov)
    else:
        try:
            chol = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            cov = np.diag(np.diag(cov))
            chol, diagonal = np.sqrt(cov), True
    radius2 = max_whitened_norm2(points, mean, chol, diagonal) * ENLARGE_VOLUME ** (2.0 / d)
    if small:
        radius2 = max(radius2, ref_radius2 * SMALL_CLUSTER_VOLUME ** (2.0 / d))
    radius2 = max(radius2, 1e-300)
    log_volume = float(np.sum(np.log(np.diag(chol))) + 0.5 * d * np.log(radius2))
    return mean, chol, cov, radius2, log_volume


def build(points, labels, dense=True, cov=None, pool=True, mean=None) -> Geometry:
    """Geometry of the live points ``points`` (n, d) grouped by ``labels`` (0..C-1, every label present); ``cov``,
    ``mean``: the covariance and mean of all the points when already known (used when they are one cluster).
    ``pool``: group the points for the pair slice moves; without (runs that make none), the points are neither
    sorted every iteration nor sent to other MPI ranks or the GPU. ``points`` may be rows in a slot store
    (``sampler.live_rows``, on the host or the GPU): one cluster of known mean and covariance is then measured in
    place, anything else on gathered rows."""
    nclusters = int(labels.max()) + 1
    if not (is_resident(points) and nclusters == 1 and cov is not None and mean is not None and not pool):
        points = np.asarray(points, dtype=np.float64)
    d = points.shape[1]
    members = [points] if nclusters == 1 else [points[labels == c] for c in range(nclusters)]
    largest = max(range(len(members)), key=lambda c: len(members[c]))
    ref_shape = None
    if len(members[largest]) > d + 1:
        whole = (cov, mean) if len(members) == 1 else (None, None)
        ref_shape = _cluster_shape(members[largest], dense, None, *whole)
        reference = (ref_shape[2], ref_shape[3], len(members[largest]))
    else:  # too few points anywhere: the whole set's spread, one covariance radius
        cov = covariance(points) if points.shape[0] > 1 else np.eye(d) / 12.0
        reference = (cov, 1.0, points.shape[0])
    # The largest cluster's shape is computed once (this runs every iteration).
    shapes = [ref_shape if c == largest and ref_shape is not None else _cluster_shape(m, dense, reference)
              for c, m in enumerate(members)]
    log_volume = np.array([s[4] for s in shapes])
    share = np.exp(log_volume - log_volume.max())
    cdf = np.cumsum(share / share.sum())
    cdf[-1] = 1.0
    pool_points, pool_start = (_pool(points, labels, nclusters) if pool
                               else (np.ascontiguousarray(points[:1]), np.zeros(nclusters + 1, np.int64)))
    return Geometry(np.array([s[0] for s in shapes]), np.array([s[1] for s in shapes]),
                    np.array([s[2] for s in shapes]), np.array([s[3] for s in shapes]), cdf, pool_points, pool_start,
                    int(bool(dense)))


def _pool(points, labels, nclusters):
    """The points grouped by cluster (stable order within each) and the (C + 1,) offsets of the groups."""
    if nclusters == 1:
        return np.ascontiguousarray(points), np.array([0, points.shape[0]], np.int64)
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=nclusters)
    return np.ascontiguousarray(points[order]), np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def with_ghosts(geometry: Geometry, mean, cov, radius2) -> Geometry:
    """``geometry`` with more ellipsoids appended (``sampler.ghosts``: modes whose last live point died), the
    proposal shares of all recomputed from their volumes as the kernel sees them (diagonal when not dense)."""
    if radius2.size == 0:
        return geometry
    if not geometry.dense:
        cov = np.stack([np.diag(np.diag(c)) for c in cov])
    chol = np.linalg.cholesky(cov)
    all_chol = np.concatenate([geometry.chol, chol])
    all_radius2 = np.concatenate([geometry.radius2, radius2])
    d = all_chol.shape[1]
    log_volume = np.log(np.diagonal(all_chol, axis1=1, axis2=2)).sum(axis=1) + 0.5 * d * np.log(all_radius2)
    share = np.exp(log_volume - log_volume.max())
    cdf = np.cumsum(share / share.sum())
    cdf[-1] = 1.0
    pool_start = np.concatenate([geometry.pool_start, np.full(radius2.size, geometry.pool_start[-1])])
    return Geometry(np.concatenate([geometry.mean, mean]), all_chol, np.concatenate([geometry.cov, cov]),
                    all_radius2, cdf, geometry.pool, pool_start.astype(np.int64), geometry.dense)


CORRELATED = 0.3  # largest |correlation| between two coordinates below which a diagonal metric is used


def covariance(points) -> np.ndarray:
    """(d, d) covariance of the rows of ``points``. Of all of them: a strided subset above 16384 rows (10 ms an
    iteration less at nlive 1e5 in 30-D) left the covariance within 1% but gave the seed problem at nlive 30000 an
    rms pull of 1.20 over 20 seeds against 0.76 with every row (docs/benchmarks.md), so it was not kept."""
    if points.shape[0] < 2:  # one survivor (nlive 2): no spread to measure; the unit cube's own (1/12 an axis)
        return np.eye(points.shape[1]) / 12.0
    return np.atleast_2d(np.cov(points, rowvar=False))


def compiled_signatures():
    """``[(dispatcher, signature)]`` of the compiled helper below, as a run calls it (see
    ``sampler.clustering.compiled_signatures``)."""
    f8_2, f8_1 = numba.float64[:, ::1], numba.float64[::1]
    return [(_max_norm2, (f8_2, numba.boolean[::1], f8_1, f8_2, numba.boolean))]


def max_whitened_norm2(points, mean, chol, diagonal) -> float:
    """``max_i |L^-1 (x_i - mean)|^2`` over the rows ``x_i`` of ``points``, ``L`` = ``chol`` (diagonal when
    ``diagonal``): the squared Mahalanobis radius that holds every point. One pass over the points, without the
    centred and whitened copies (30 ms -> 3 ms an iteration at nlive 1e5 in 30-D with a diagonal metric)."""
    inverse = np.diag(1.0 / np.diag(chol)) if diagonal else np.linalg.inv(chol)  # as lower_solve whitens
    if is_resident(points):
        return points.max_whitened_norm2(mean, inverse, diagonal)
    points = np.ascontiguousarray(points, dtype=np.float64)
    return max_norm2_of_rows(points, np.ones(points.shape[0], np.bool_), mean, inverse, diagonal)


def max_norm2_of_rows(points, chosen, mean, inverse, diagonal) -> float:
    """``max |inverse (x - mean)|^2`` over the rows ``x`` of ``points`` (float64, C order) where ``chosen``, read in
    storage order; rows whose value is NaN never count."""
    return float(_max_norm2(points, chosen, np.ascontiguousarray(mean, dtype=np.float64), inverse, bool(diagonal)))


@numba.njit(cache=True, nogil=True)
def _max_norm2(points, chosen, mean, inverse, diagonal):
    n, d = points.shape
    centred = np.empty(d)
    best = 0.0
    for i in range(n):
        if not chosen[i]:
            continue
        for a in range(d):
            centred[a] = points[i, a] - mean[a]
        total = 0.0
        for a in range(d):
            if diagonal:
                z = inverse[a, a] * centred[a]
            else:
                z = 0.0
                for b in range(a + 1):
                    z += inverse[a, b] * centred[b]
            total += z * z
        if total > best:
            best = total
    return best


def correlated(points, cov=None) -> bool:
    """Whether the points' coordinates are correlated enough to need a dense metric (``cov``: their covariance,
    when already known). A dense metric costs O(d^2) per direction, reflection and jump where a diagonal one costs
    O(d): on the isotropic 30-D Gaussian it made sampling several times slower for nothing. The noise of a
    correlation from n points is ~ 1/sqrt(n) (0.05 for 450), far below the threshold."""
    if cov is None:
        points = np.asarray(points, dtype=np.float64)
    if points.shape[1] < 2 or points.shape[0] < 3:
        return False
    corr = covariance(points) if cov is None else cov.copy()
    stddev = np.sqrt(np.diag(corr))  # as np.corrcoef
    corr /= stddev[:, None]
    corr /= stddev[None, :]
    np.clip(corr, -1, 1, out=corr)
    np.fill_diagonal(corr, 0.0)
    return bool(np.nanmax(np.abs(corr)) > CORRELATED)


def whiten(geometry: Geometry, x, cluster) -> np.ndarray:
    """``L_c^-1 (x - mu_c)`` for each row of ``x`` (m, d), ``c`` the row's entry of ``cluster`` (m,)."""
    x = np.atleast_2d(x)
    if geometry.nclusters == 1:
        return lower_solve(geometry.chol[0], (x - geometry.mean[0]).T, not geometry.dense).T
    out = np.empty_like(x, dtype=np.float64)
    for c in np.unique(cluster):
        rows = np.flatnonzero(cluster == c)
        out[rows] = lower_solve(geometry.chol[c], (x[rows] - geometry.mean[c]).T, not geometry.dense).T
    return out


def scaled_distance2(geometry: Geometry, x) -> np.ndarray:
    """(m, C) squared Mahalanobis distances of points ``x`` (m, d) to each cluster, divided by ``radius2``."""
    x = np.atleast_2d(x)
    out = np.empty((x.shape[0], geometry.nclusters))
    for c in range(geometry.nclusters):
        white = whiten(geometry, x, np.full(x.shape[0], c))
        out[:, c] = np.einsum("ij,ij->i", white, white) / geometry.radius2[c]
    return out


def regions(geometry: Geometry, x) -> np.ndarray:
    """The region (cluster index) of each point, as the kernel computes it."""
    if geometry.nclusters == 1:
        return np.zeros(np.atleast_2d(x).shape[0], np.int64)
    return np.argmin(scaled_distance2(geometry, x), axis=1).astype(np.int64)


def relabel(points, k=10, min_size=None, **options):
    """Fresh cluster labels for the live points (kNN components, see ``sampler.clustering``)."""
    return find_clusters(np.asarray(points, dtype=np.float64), k=k, min_size=min_size, **options)
