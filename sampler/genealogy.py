"""Effective sample size of a run's posterior from the family tree of its points.

Every point after the initial prior draws is the end of a chain that started at a live point, its *parent*; the
points form a forest rooted in the prior draws. A chain that does not forget its start passes its deviation on:
model the correlation of a statistic ``f`` between two points as ``rho ** distance`` in the tree (parent-child
``rho``, siblings ``rho**2``, ...), with ``rho`` measured between the parents and children born in the same
iteration (about their group's means, so that the drift every point shares as the contour rises is not taken
for memory; groups weighted by posterior weight; negative values taken as 0). The variance of the posterior mean
``sum_i w_i f_i`` is then ``var(f) * sum_ij w_i w_j rho ** d(i, j)``, and the effective sample size
``1 / sum_ij w_i w_j rho ** d(i, j)``: Kish's ``1 / sum w**2`` for independent points, far less where chains
crawl. (The error of misjudged volumes comes on top: ``sampler.run_results.posterior_ess``.)

Why a tree and not a lag-one factor: in nested sampling a live point is the start of about one chain during its
life, so a point has about ``d + 1`` relatives at distance ``d`` (ancestors, siblings, cousins, descendants), not
the two of a Markov chain. On simulated nested-sampling trees with ``rho = 0.9`` the Markov chain's ``(1 - rho) /
(1 + rho)`` understates the variance of a weighted mean 2.6-fold, the tree sum by 1.2
(``tests/sampler/test_genealogy.py``).

The pair sum is computed in one pass over the points, children before parents: with ``S(v) = w_v + rho
sum_children S(c)``, the pairs whose closest common ancestor is ``v`` contribute ``w_v**2 + 2 w_v rho A + rho**2
(A**2 - B)``, where ``A`` and ``B`` are the sum and the sum of squares of the children's ``S``.
"""

import math

import numba
import numpy as np


# Below this parent-child correlation the ESS is Kish's within about 2% (a point has about two relatives at
# distance 1, each adding at most rho times its weight to the pair sum).
NEGLIGIBLE_RHO = 0.005


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


@numba.njit(cache=True, nogil=True)
def _grouped_correlations(values, child, parent, group, ngroups, scale):
    """For each column of ``values`` (n, m): ``sum_g s_g cov_g(c, p) / sqrt(sum_g s_g var_g(c) sum_g s_g var_g(p))``
    over the groups ``g`` of children ``c = values[child]`` and their parents ``p = values[parent]``, ``cov_g``
    about the group's own means, in one pass that reads each pair's rows whole."""
    m = values.shape[1]
    n = np.zeros(ngroups)
    sc, sp, scp = np.zeros((ngroups, m)), np.zeros((ngroups, m)), np.zeros((ngroups, m))
    scc, spp = np.zeros((ngroups, m)), np.zeros((ngroups, m))
    weight = np.zeros(ngroups)
    for i in range(child.size):
        g = group[i]
        n[g] += 1.0
        weight[g] = scale[i]
        for col in range(m):
            c, p = values[child[i], col], values[parent[i], col]
            sc[g, col] += c
            sp[g, col] += p
            scp[g, col] += c * p
            scc[g, col] += c * c
            spp[g, col] += p * p
    out = np.zeros(m)
    for col in range(m):
        cov = var_c = var_p = 0.0
        for g in range(ngroups):
            if n[g] > 0:
                cov += weight[g] * (scp[g, col] - sc[g, col] * sp[g, col] / n[g])
                var_c += weight[g] * (scc[g, col] - sc[g, col] * sc[g, col] / n[g])
                var_p += weight[g] * (spp[g, col] - sp[g, col] * sp[g, col] / n[g])
        norm = math.sqrt(var_c * var_p)
        out[col] = cov / norm if norm > 0 else 0.0
    return out


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


def kish_ess(weights) -> float:
    """Kish's effective sample size ``1 / sum(w^2)`` of normalised weights: the ESS of independent points."""
    return float(1.0 / np.sum(np.asarray(weights, np.float64) ** 2))


class FamilyTree:
    """A run's points as a forest, built once, asked for the ESS of one statistic at a time (one column: a run of
    millions of points in 30-D would hold gigabytes as a matrix). ``weights``: normalised posterior weights;
    ``uid``, ``parent_uid``: each point's creation id and its parent's (-1 for prior draws); ``birth``: the
    contour each point was born above. Without a whole tree (ids not 0..N-1, a parent not older than its child)
    every statistic gets Kish's ESS."""

    def __init__(self, weights, uid, parent_uid, birth):
        self.weights = np.asarray(weights, np.float64)
        self.kish = kish_ess(self.weights)
        tree = parent_rows(uid, parent_uid)
        self.whole = tree is not None
        if not self.whole:
            return
        self.order, self.parent = tree
        self.w = self.weights[self.order]  # creation order from here on
        birth = np.asarray(birth, np.float64)[self.order]
        # Parent-child pairs among the points born together (one iteration's chains, the same birth contour):
        # centring within such a group leaves out the drift every point shares as the contour rises (logL grows
        # from point to point whether or not a chain remembers its start).
        child = np.flatnonzero((self.parent >= 0) & np.isfinite(birth))
        group, size = np.unique(birth[child], return_inverse=True, return_counts=True)[1:]
        keep = size[group] >= 3  # two points' centred values are each other's negatives: no information
        self.child, self.group = child[keep], group[keep]
        # The pairs' rows in the caller's order: the statistics are read where they are, not gathered first.
        self.child_rows, self.parent_rows = self.order[self.child], self.order[self.parent[self.child]]
        self.ngroups = int(self.group.max()) + 1 if self.group.size else 0
        self.count = np.bincount(self.group, minlength=self.ngroups).astype(np.float64)
        group_weight = np.bincount(self.group, weights=self.w[self.child], minlength=self.ngroups)
        self.scale = (group_weight / np.maximum(self.count, 1.0))[self.group]  # a group counts by its weight

    def lag_one_correlations(self, values) -> np.ndarray:
        """Correlation of each column of ``values`` (n, m; rows in the caller's order) between a point and its
        parent within the groups born together, the groups counting by their posterior weight; 0 where negative
        or undefined."""
        values = np.asarray(values, np.float64)
        if self.child.size == 0:
            return np.zeros(values.shape[1])
        rho = _grouped_correlations(values, self.child_rows, self.parent_rows, self.group, self.ngroups, self.scale)
        return np.where(np.isfinite(rho), np.clip(rho, 0.0, 1.0 - 1e-12), 0.0)

    def ess_columns(self, values) -> np.ndarray:
        """Effective sample size of the posterior mean of each column of ``values`` (n, m; one row per point, the
        caller's order; a view of the dead points' matrix is read in place, not copied)."""
        values = np.asarray(values, np.float64)
        out = np.full(values.shape[1], self.kish)
        if not self.whole:
            return out
        for col, rho in enumerate(self.lag_one_correlations(values)):
            if rho >= NEGLIGIBLE_RHO:  # below, the pass over the tree (0.2 s at 5M points) would change < 2%
                out[col] = min(self.kish, 1.0 / _pair_sum(self.parent, self.w, rho))
        return out

    def ess(self, values) -> float:
        """Effective sample size of the posterior mean of ``values`` (one per point, the caller's order)."""
        return float(self.ess_columns(np.asarray(values, np.float64)[:, None])[0])
