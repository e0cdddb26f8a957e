"""Effective sample size of a run's posterior from the family tree of its points.

Every point after the initial prior draws is the end of a chain that started at a live point, its *parent*; the
points form a forest rooted in the prior draws. A chain that does not forget its start passes its deviation on:
model the correlation of a statistic ``f`` between two points as ``rho ** distance`` in the tree (parent-child
``rho``, siblings ``rho**2``, ...), with ``rho`` measured from the run's own parent-child pairs (posterior
weighted, negative values taken as 0). The variance of the posterior mean ``sum_i w_i f_i`` is then
``var(f) * sum_ij w_i w_j rho ** d(i, j)``, and the effective sample size is ``1 / sum_ij w_i w_j rho ** d(i, j)``:
Kish's ``1 / sum w**2`` for independent points, far less where chains crawl.

Why a tree and not a lag-one factor: in nested sampling a live point is the start of about one chain during its
life, so a point has about ``d + 1`` relatives at distance ``d`` (ancestors, siblings, cousins, descendants), not
the two of a Markov chain; at ``rho = 0.85`` that inflates the variance about three times more than the Markov
chain's ``(1 + rho) / (1 - rho)``. Measured on Neal's funnel in 5-D (seeds 100-129, nlive 500): the seed scatter
of v's posterior mean implies an ESS of about 360; Kish's ESS deflated by the chains' pooled start-end
correlation said 4700, this estimate says 180 (``docs/benchmarks.md``). Where chains decorrelate (a 30-D
Gaussian) it equals Kish's.

The pair sum is computed in one pass over the points, children before parents: with ``S(v) = w_v + rho
sum_children S(c)``, the pairs whose closest common ancestor is ``v`` contribute ``w_v**2 + 2 w_v rho A + rho**2
(A**2 - B)``, where ``A`` and ``B`` are the sum and the sum of squares of the children's ``S``.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _pair_sum(parent, weight, rho):
    """``sum_ij weight_i weight_j rho ** d(i, j)`` over a forest whose parents precede their children
    (``parent[i] < i``, -1 for a root)."""
    n = weight.size
    child_sum = np.zeros(n)
    child_square_sum = np.zeros(n)
    total = 0.0
    for v in range(n - 1, -1, -1):
        a = child_sum[v]
        total += weight[v] * weight[v] + 2.0 * weight[v] * rho * a + rho * rho * (a * a - child_square_sum[v])
        p = parent[v]
        if p >= 0:
            s = weight[v] + rho * a
            child_sum[p] += s
            child_square_sum[p] += s * s
    return total


def parent_rows(uid, parent_uid):
    """Rows of the points' parents (-1 for roots) in creation order: ``(order, parent)`` where ``order[r]`` is the
    index (into ``uid``) of the point created r-th, ``parent[r]`` the creation rank of its parent. None when the
    ids are not a permutation of 0..N-1 or a parent is not earlier than its child (the tree is not whole)."""
    uid, parent_uid = np.asarray(uid, np.int64), np.asarray(parent_uid, np.int64)
    n = uid.size
    if n == 0 or uid.min() < 0 or uid.max() >= n:
        return None
    order = np.full(n, -1, np.int64)
    order[uid] = np.arange(n)
    if np.any(order < 0):
        return None
    parent = parent_uid[order]
    if np.any(parent >= np.arange(n)) or np.any(parent < -1):
        return None
    return order, parent


def lag_one_correlation(values, weights, parent, birth):
    """Correlation of each column of ``values`` (creation order, (N, m)) between a point and its parent, among
    the points born together (one iteration's chains, same ``birth`` contour): centring within each such group
    leaves out the trend every point shares as the contour rises (logL grows from point to point whether or not
    a chain remembers its start). Groups count by their posterior weight; 0 where negative or undefined."""
    child = np.flatnonzero((parent >= 0) & np.isfinite(birth))
    if child.size == 0:
        return np.zeros(values.shape[1])
    group, size = np.unique(birth[child], return_inverse=True, return_counts=True)[1:]
    keep = size[group] >= 3  # two points' centred values are each other's negatives: no information
    child, group = child[keep], group[keep]
    if child.size == 0:
        return np.zeros(values.shape[1])
    ngroups = int(group.max()) + 1
    count = np.bincount(group, minlength=ngroups).astype(np.float64)
    group_weight = np.bincount(group, weights=weights[child], minlength=ngroups)
    scale = (group_weight / np.maximum(count, 1.0))[group][:, None]  # each member carries its group's mean weight

    def centred(x):
        sums = np.zeros((ngroups, x.shape[1]))
        np.add.at(sums, group, x)
        return x - (sums / count[:, None])[group]

    c, p = centred(values[child]), centred(values[parent[child]])
    covariance = np.sum(scale * c * p, axis=0)
    variance = np.sqrt(np.sum(scale * c * c, axis=0) * np.sum(scale * p * p, axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(variance > 0, covariance / variance, 0.0)
    return np.clip(np.nan_to_num(rho), 0.0, 1.0 - 1e-12)


def kish_ess(weights) -> float:
    """Kish's effective sample size ``1 / sum(w^2)`` of normalised weights: the ESS of independent points."""
    return float(1.0 / np.sum(np.asarray(weights, np.float64) ** 2))


def effective_sample_sizes(weights, values, uid, parent_uid, birth):
    """Effective sample size of the posterior mean of each column of ``values`` ((N, m), rows matching
    ``weights``, normalised), from the family tree given by each point's creation id ``uid`` and its parent's
    ``parent_uid`` (-1 for prior draws), with ``birth`` the contour each point was born above. Without a whole tree (a run restored from elsewhere) every column gets
    Kish's ESS."""
    weights = np.asarray(weights, np.float64)
    values = np.asarray(values, np.float64).reshape(weights.size, -1)
    kish = kish_ess(weights)
    tree = parent_rows(uid, parent_uid)
    if tree is None:
        return np.full(values.shape[1], kish)
    order, parent = tree
    w, v = weights[order], values[order]
    rho = lag_one_correlation(v, w, parent, np.asarray(birth, np.float64)[order])
    return np.array([min(kish, 1.0 / _pair_sum(parent, w, float(r))) for r in rho])
