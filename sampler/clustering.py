"""Modes among the live points: connected components of a k-nearest-neighbour graph in whitened coordinates.

Points uniform inside one connected contour form one component of the mutual kNN graph (two points joined when
each is among the other's ``k`` nearest neighbours) with overwhelming probability, while points in separated
modes share no edge, however few points a mode holds. As in PolyChord, each component is whitened by its own covariance
and clustered again (recursively), so a mode that only separates after whitening is found too. Components
smaller than ``min_size`` are joined to the component of their nearest point outside them, unless they lie far
from it (``SEPARATED`` times the typical k-th-neighbour distance): a lone point in the mutual kNN graph is usually
a point at the edge of its mode (in many dimensions some points are nobody's near neighbour), but one far from
every other point is the last survivor of a narrow mode, and it needs its own ellipsoid to receive jumps.

Every chain stays invariant for the uniform distribution in its own region whatever the labels (``sampler.hmc``),
but a wrong split still biases the evidence: the parts of one contour are then fed only by their own survivors
and lag behind their volume shares (``sampler.connectivity``, whose segment test keeps the clusters apart only
where the contour is).
"""

import numba
import numpy as np

MAX_DEPTH = 3
# Smallest group kept as a mode. Small on purpose: a narrow mode holding a few live points needs its own
# ellipsoid to receive jumps (with mutual kNN, k = 10, uniform balls in 2-30 D were never split in 20 trials each).
MIN_SIZE = 5
# A component smaller than MIN_SIZE stays a mode when its nearest outside point is this many times farther than
# the median k-th-neighbour distance; a point at the edge of a mode has its nearest neighbour within that distance.
SEPARATED = 3.0


def _whiten(points, full):
    """Coordinates scaled to unit variance, and decorrelated too when ``full``."""
    centred = points - points.mean(axis=0)
    cov = np.atleast_2d(np.cov(centred, rowvar=False))
    scale = np.sqrt(np.clip(np.diag(cov), 1e-300, None))
    if not full:
        return centred / scale
    corr = cov / np.outer(scale, scale) + 1e-9 * np.eye(cov.shape[0])
    try:
        chol = np.linalg.cholesky(corr)
    except np.linalg.LinAlgError:
        return centred / scale
    return np.linalg.solve(chol, (centred / scale).T).T


# Squared distances computed at once, at most: row blocks of the n x n matrix keep the kNN graph of nlive 1e5 in
# 128 MB (the whole matrix would be 80 GB); below this many points the matrix is made and kept whole.
BLOCK_ELEMENTS = 1 << 24


@numba.njit(cache=True, nogil=True)
def _smallest(dist2, k, nbrs, kth2):
    """Each row's ``k`` smallest entries: their columns into ``nbrs`` (ascending) and the largest of them into
    ``kth2``. One pass with a sorted buffer of k, in which most entries cost one comparison: 10x faster than
    ``np.argpartition`` on the 2000 x 2000 matrix (4.6 ms against 49 ms), which made clustering a third of the
    sampling time at nlive 2000 in 30-D. Comparisons only, so compiled and cached code agree bit for bit."""
    n, m = dist2.shape
    vals = np.empty(k)
    idx = np.empty(k, np.int64)
    for r in range(n):
        count = 0
        for c in range(m):
            v = dist2[r, c]
            if count < k:
                p = count
                count += 1
            elif v < vals[k - 1]:
                p = k - 1
            else:
                continue
            while p > 0 and vals[p - 1] > v:
                vals[p] = vals[p - 1]
                idx[p] = idx[p - 1]
                p -= 1
            vals[p] = v
            idx[p] = c
        for a in range(k):
            nbrs[r, a] = idx[a]
        kth2[r] = vals[k - 1]


@numba.njit(cache=True, nogil=True)
def _dot_to_distance(dot, sq_rows, sq_cols):
    """``dot[r, c] <- (sq_rows[r] + sq_cols[c]) - 2 dot[r, c]`` in place: one pass, no n x n temporaries."""
    for r in range(dot.shape[0]):
        for c in range(dot.shape[1]):
            dot[r, c] = (sq_rows[r] + sq_cols[c]) - 2.0 * dot[r, c]


class _Distances:
    """Squared Euclidean distances among the rows of ``white``, as (|a|^2 + |b|^2) - 2 a.b, written over the
    product a.b (temporaries cost milliseconds each at n = 2000)."""

    def __init__(self, white):
        self.white = white
        self.sq = np.einsum("ij,ij->i", white, white)
        n = white.shape[0]
        self.rows = max(1, BLOCK_ELEMENTS // max(n, 1))
        self.whole = None

    def _block(self, rows, cols):
        """Distances of ``rows`` to ``cols`` (None, None: all to all, as ``w @ w.T``, which numpy computes as a
        symmetric product)."""
        if rows is None:
            dot, sq_rows, sq_cols = self.white @ self.white.T, self.sq, self.sq
        else:
            dot, sq_rows, sq_cols = self.white[rows] @ self.white[cols].T, self.sq[rows], self.sq[cols]
        _dot_to_distance(dot, sq_rows, sq_cols)
        return dot

    def neighbours(self, k):
        """(n, k) indices of each point's ``k`` nearest other points, and the squared distance of the k-th."""
        n = self.white.shape[0]
        nbrs, kth2 = np.empty((n, k), dtype=np.int64), np.empty(n)
        everything = np.arange(n)
        for start in range(0, n, self.rows):
            rows = everything[start:start + self.rows]
            dist2 = self._block(rows, everything) if rows.size < n else self._block(None, None)
            dist2[np.arange(rows.size), rows] = np.inf
            _smallest(dist2, k, nbrs[start:start + rows.size], kth2[start:start + rows.size])
            if rows.size == n:
                self.whole = dist2
        return nbrs, kth2

    def between(self, rows, cols):
        return self.whole[np.ix_(rows, cols)] if self.whole is not None else self._block(rows, cols)


def _knn_components(white, k):
    distances = _Distances(white)
    nbrs, kth2 = distances.neighbours(k)
    # Mutual neighbours only: a small group between two modes has the modes' points among its neighbours, but
    # not the other way round, so it cannot chain separate modes into one component. Edge i -- nbrs[i, a] is
    # mutual when i is among that neighbour's own neighbours (an n x k x k test, not an n x n graph).
    n = white.shape[0]
    mutual = (nbrs[nbrs] == np.arange(n)[:, None, None]).any(axis=2)
    rows = np.repeat(np.arange(n), k).reshape(n, k)[mutual]
    ncomp, labels = connected_components(rows, nbrs[mutual], n)
    kth = np.sqrt(np.maximum(kth2, 0.0))
    return ncomp, labels, distances, float(np.median(kth))


def connected_components(rows, cols, n):
    """``(count, labels)`` of the undirected graph on ``n`` nodes with edges ``rows[e] -- cols[e]``; components
    are numbered in the order of their smallest node, as ``scipy.sparse.csgraph.connected_components`` does
    (numpy only: importing scipy.sparse took a third of a second of every run)."""
    labels = np.arange(n)
    while True:  # every node takes the smallest label among its neighbours, then its label's label
        lowered = labels.copy()
        np.minimum.at(lowered, rows, labels[cols])
        np.minimum.at(lowered, cols, labels[rows])
        lowered = lowered[lowered]
        if np.array_equal(lowered, labels):
            break
        labels = lowered
    roots, labels = np.unique(labels, return_inverse=True)
    return roots.size, labels


def _absorb_small(labels, distances, min_size, far2, points, segments):
    """Join components smaller than ``min_size`` to the component of their nearest outside point, unless that
    point is more than ``sqrt(far2)`` away or, given ``segments`` (``sampler.connectivity.Segments``), no segment
    from the component to its nearest outside points stays inside the contour (a separated small mode keeps its
    label: the last survivors of a narrow mode can sit closer to a big mode than its own points' spacing)."""
    kept = set()
    while True:
        ids, counts = np.unique(labels, return_counts=True)
        small = [(count, cid) for cid, count in zip(ids, counts) if count < min_size and cid not in kept]
        if not small or ids.size == 1:
            return labels
        target = min(small)[1]
        members = np.flatnonzero(labels == target)
        outside = np.flatnonzero(labels != target)
        sub = distances.between(members, outside)
        where = np.unravel_index(np.argmin(sub), sub.shape)
        if sub[where] > far2 or (segments is not None and not segments.joined(points[members], points[outside])):
            kept.add(target)
            continue
        labels = np.where(labels == target, labels[outside[where[1]]], labels)


def find_clusters(points, k=10, min_size=None, depth=0, separated=SEPARATED, segments=None):
    """Cluster labels ``0..C-1`` for ``points`` (n, d), components of the kNN graph, refined recursively.
    ``separated``: a component smaller than ``min_size`` stays a cluster when its nearest outside point is this
    many times farther than the median k-th-neighbour distance (``inf``: never). ``segments``: a
    ``sampler.connectivity.Segments`` for live points (unit-cube ``points``): a small component also stays a
    cluster when the contour does not join it to its nearest outside points."""
    n, d = points.shape
    min_size = MIN_SIZE if min_size is None else min_size
    if n < 2 * min_size:
        return np.zeros(n, dtype=np.int64)
    # Scaled coordinates first: decorrelating by the covariance of well separated modes squeezes the direction
    # that separates them to unit variance, so that points of two modes become as near as points of one. There a
    # component counts only when a gap separates it (the mutual kNN graph of one thin elongated mode can lose a
    # tip). Then decorrelated coordinates, where one elongated mode looks round and two parallel ridges come apart.
    for full in (False, True):
        ncomp, labels, distances, kth = _knn_components(_whiten(points, full), min(k, n - 1))
        if ncomp > 1:
            labels = _absorb_small(labels, distances, min_size if full else n + 1, (separated * kth) ** 2, points,
                                   segments)
        ids = np.unique(labels)
        if ids.size > 1:
            break
    else:
        return np.zeros(n, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    next_id = 0
    for cid in ids:
        members = np.flatnonzero(labels == cid)
        sub = (find_clusters(points[members], k, min_size, depth + 1, separated, segments) if depth + 1 < MAX_DEPTH
               else np.zeros(members.size, dtype=np.int64))
        out[members] = sub + next_id
        next_id += int(sub.max()) + 1
    return out
