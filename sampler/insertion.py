"""The insertion-rank test of a run (Fowlie, Handley & Su 2020): a self-check of the proposals, from the dead
points alone.

Nested sampling assumes that each new point is an independent draw from the prior above the contour it was born
at. Then, among the points alive at that contour, which are independent draws from the same constrained prior, the
new point's logL rank is uniform. Proposals that do not draw from that constrained prior -- a region that cuts off
part of it, a move that does not leave it invariant, an adaptation that biases it -- place new points too high or
too low, and the ranks lean. (Chains that are merely short, but exact, keep the ranks uniform: a chain that leaves
the constrained prior invariant, started from a uniformly chosen survivor, ends at a uniformly distributed point.
Their cost, new points correlated with their starts, does not show here.)

Which points were alive at contour ``b`` follows from births and deaths: every point born at or below ``b`` whose
logL lies above it (a point dies at its own logL). So the position of point ``i`` is, among the other points with
``birth <= b_i < logl``, the share with lower logL, randomised within ties and between ranks so that it is U(0, 1)
exactly when the assumption holds (``(less + V (ties + 1)) / (others + 1)``, V ~ U(0, 1)). Initial prior draws
(born at -inf) are left out: they test nothing; so is any point not above its own contour (none in a run). Counting takes one pass in birth order with a Fenwick tree over
the logL order, O(N log N).

The report: a Kolmogorov-Smirnov test of all positions against U(0, 1), their mean (1/2 ± 1/sqrt(12 n) when the
assumption holds), and the same test on consecutive windows of ``nlive`` new points in birth order, where a
problem confined to part of the run is not diluted by the rest; the smallest window p-value is corrected for the
number of windows (Sidak). With many points the test sees departures far too small to move the evidence: the
mean says how large one is.
"""

import math

import numba
import numpy as np
from scipy.special import kolmogorov  # not scipy.stats: that would load scipy.ndimage into every run

ALARM_P = 1e-3  # below this (whole run, or the corrected worst window) the summary notes biased proposals


@numba.njit(cache=True, nogil=True)
def _prefix(tree, k):
    """Sum of the Fenwick tree's first ``k`` positions."""
    total = 0
    while k > 0:
        total += tree[k]
        k -= k & -k
    return total


@numba.njit(cache=True, nogil=True)
def _counts(logl, birth, order, queries):
    """For each query point i (in ``queries``, sorted by birth): how many other points with birth <= b_i and
    logl > b_i have logl below logl_i, equal to it, and in all. ``logl`` is sorted ascending; ``order`` sorts
    the points by birth. Only points above their own birth contour can count (every point of a run is)."""
    n = logl.size
    valid_below = np.zeros(n + 1, np.int64)  # valid points among the first k in logl order
    first = np.empty(n, np.int64)  # the first and one past the last position holding each point's logl
    last = np.empty(n, np.int64)
    for k in range(n):
        valid_below[k + 1] = valid_below[k] + (logl[k] > birth[k])
        first[k] = first[k - 1] if k > 0 and logl[k] == logl[k - 1] else k
    for k in range(n - 1, -1, -1):
        last[k] = last[k + 1] if k < n - 1 and logl[k] == logl[k + 1] else k + 1
    tree = np.zeros(n + 1, np.int64)  # Fenwick tree over logl positions of the valid points added so far
    less = np.zeros(queries.size, np.int64)
    ties = np.zeros(queries.size, np.int64)
    total = np.zeros(queries.size, np.int64)
    added = 0
    nvalid = 0
    above = 0  # positions with logl <= the current contour (contours only rise)
    for q in range(queries.size):
        i = queries[q]
        b = birth[i]
        while added < n and birth[order[added]] <= b:
            j = order[added]
            if logl[j] > birth[j]:
                k = j + 1
                while k <= n:
                    tree[k] += 1
                    k += k & -k
                nvalid += 1
            added += 1
        while above < n and logl[above] <= b:
            above += 1
        # valid points with logl <= b were all born below b, so all are in the tree: no query needed for them
        at_or_below = valid_below[above]
        below_i = _prefix(tree, first[i])
        # no other point with this logl (the usual case): no second query
        equal = 1 if last[i] - first[i] == 1 else _prefix(tree, last[i]) - below_i
        less[q] = below_i - at_or_below
        ties[q] = equal - 1  # less the point itself
        total[q] = nvalid - at_or_below - 1
    return less, ties, total


def positions(logl, birth, generator):
    """Each new point's randomised rank among the points alive at its birth contour, in [0, 1), in birth order
    (U(0, 1) when new points are independent draws from the constrained prior); initial draws are left out."""
    logl = np.asarray(logl, np.float64)
    birth = np.asarray(birth, np.float64)
    by_logl = np.argsort(logl, kind="stable")
    logl, birth = logl[by_logl], birth[by_logl]
    order = np.argsort(birth, kind="stable")
    queries = order[np.isfinite(birth[order]) & (logl[order] > birth[order])]
    less, ties, total = _counts(logl, birth, order, queries)
    keep = total > 0
    v = generator.random(int(keep.sum()))
    return (less[keep] + v * (ties[keep] + 1)) / (total[keep] + 1)


def ks_pvalue(u) -> float:
    """p-value of the Kolmogorov-Smirnov test of ``u`` against U(0, 1): the asymptotic distribution with
    Stephens' (1970) finite-size correction, within a few per cent of the exact value from 20 points up."""
    u = np.sort(np.asarray(u, dtype=np.float64))
    n = u.size
    steps = np.arange(1, n + 1) / n
    distance = max(float(np.max(steps - u)), float(np.max(u - (steps - 1.0 / n))))
    root = math.sqrt(n)
    return float(kolmogorov((root + 0.12 + 0.11 / root) * distance))


def rank_report(logl, birth, nlive, generator) -> dict | None:
    """The report of the module docstring as a JSON-able dict (None when fewer than 20 new points)."""
    u = positions(logl, birth, generator)
    n = int(u.size)
    if n < 20:
        return None
    window = max(int(nlive), 20)
    nwindows = n // window
    window_p = [ks_pvalue(u[w * window:(w + 1) * window]) for w in range(nwindows)]
    worst = min(window_p) if window_p else 1.0
    return {"n": n, "ks_p": ks_pvalue(u), "mean": float(u.mean()),
            "mean_err": 1.0 / math.sqrt(12.0 * n), "window": window, "windows": nwindows,
            "worst_window_p": float(-np.expm1(nwindows * np.log1p(-worst))) if nwindows and worst < 1 else 1.0}


def describe(report: dict) -> list:
    """Summary lines for a report from :func:`rank_report`."""
    if not report:
        return []
    line = (f"  insertion ranks: KS p = {report['ks_p']:.2g} over {report['n']} new points, mean "
            f"{report['mean']:.4f} ± {report['mean_err']:.4f} (0.5 expected)")
    if report["windows"] > 1:
        line += f"; worst of {report['windows']} windows of {report['window']}: p = {report['worst_window_p']:.2g}"
    lines = [line]
    if min(report["ks_p"], report["worst_window_p"]) < ALARM_P:
        lines.append("  note: new points do not rank among the live points as draws from the constrained prior "
                     "would; the proposals may be biased and the evidence with them (the mean says how large the "
                     "lean is; longer chains, a lower hmc.target_correlation, may help)")
    return lines
