"""Modes among the live points: connected components of a k-nearest-neighbour graph in whitened coordinates.

Points uniform inside one connected contour form one component of the mutual kNN graph (two points joined when
each is among the other's ``k`` nearest neighbours) with overwhelming probability, while points in separated
modes share no edge, however few points a mode holds. As in PolyChord, each component is whitened by its own covariance
and clustered again (recursively), so a mode that only separates after whitening is found too.

Components smaller than ``min_size`` are joined to another component when the contour shows them joined: a
straight segment inside it from one of their points to one of its nearest outside points
(``sampler.connectivity``). A lone point in the mutual kNN graph is usually a point at the edge of its mode (in
many dimensions some points are nobody's near neighbour) or far out on an arm of a heavy-tailed star, and a
segment joins it; the last survivors of a narrow mode are cut off by the gap around them, however near a big mode
they sit, and keep a cluster of their own, whose ellipsoid receives the jumps that keep the mode fed. Without a
contour (clustering a posterior sample), a small component joins its nearest outside point's component unless
that point lies far (``SEPARATED`` times the typical k-th-neighbour distance).

Every chain stays invariant for the uniform distribution in its own region whatever the labels (``sampler.hmc``),
but a wrong split still biases the evidence: the parts of one contour are then fed only by their own survivors
and lag behind their volume shares (``sampler.connectivity``, whose segment test keeps the clusters apart only
where the contour is).
"""

import numba
import numpy as np

from .triangular import lower_solve

MAX_DEPTH = 3
# Smallest group kept as a mode. Small on purpose: a narrow mode holding a few live points needs its own
# ellipsoid to receive jumps (with mutual kNN, k = 10, uniform balls in 2-30 D were never split in 20 trials each).
MIN_SIZE = 5
# Without a contour, a component smaller than MIN_SIZE stays a mode when its nearest outside point is this many
# times farther than the median k-th-neighbour distance; a point at the edge of a mode has its nearest neighbour
# within that distance.
SEPARATED = 3.0


def compiled_signatures():
    """``[(dispatcher, signature)]``: the types a run calls the compiled helpers below with (the sampler compiles
    them ahead while a child process compiles its chain kernel; ``tests/sampler/test_kernel_cache.py`` checks that
    a run uses no other)."""
    f8_2, f8_1, i8_2, i8_1 = numba.float64[:, ::1], numba.float64[::1], numba.int64[:, ::1], numba.int64[::1]
    return [(_nearest, (f8_2, f8_1, f8_1, numba.int64, numba.int64, i8_2, f8_1)),
            (_dot_to_distance, (f8_2, f8_1, f8_1)),
            (_mutual_edges, (i8_2,)),
            (_union_find_labels, (i8_1, i8_1, numba.int64))]


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
    return lower_solve(chol, (centred / scale).T).T


# Rows of the n x n squared-distance matrix made at once. Each block of rows is reduced to its nearest neighbours
# while it is in cache (the whole matrix at n = 2000 is 32 MB, and writing, converting and scanning it took 18 ms of
# every 11 in this layout at 2000 points in 30-D), and memory stays O(n) at nlive 1e5 (the whole matrix: 80 GB).
# A fixed count, not one that depends on n, so that any split of the blocks (over processes) gives the same bits.
BLOCK_ROWS = 256


@numba.njit(cache=True, nogil=True)
def _nearest(dot, sq_rows, sq_cols, first_row, k, nbrs, kth2):
    """For each row ``r`` of the block ``dot`` (rows ``first_row + r`` of the whole set against all points): the
    columns of the ``k`` smallest squared distances ``(sq_rows[r] + sq_cols[c]) - 2 dot[r, c]``, the point itself
    left out, into ``nbrs`` (ascending) and the largest of them into ``kth2``. One pass with a sorted buffer of k,
    in which most entries cost one comparison (``np.argpartition`` over the matrix was 10x slower). Comparisons
    only, so compiled and cached code agree bit for bit."""
    n, m = dot.shape
    vals = np.empty(k)
    idx = np.empty(k, np.int64)
    for r in range(n):
        itself = first_row + r
        count = 0
        worst = np.inf
        sq_r = sq_rows[r]
        for c in range(m):
            v = (sq_r + sq_cols[c]) - 2.0 * dot[r, c]
            if c == itself:
                continue
            if count < k:
                p = count
                count += 1
            elif v < worst:
                p = k - 1
            else:
                continue
            while p > 0 and vals[p - 1] > v:
                vals[p] = vals[p - 1]
                idx[p] = idx[p - 1]
                p -= 1
            vals[p] = v
            idx[p] = c
            if count == k:
                worst = vals[k - 1]
        for a in range(k):
            nbrs[r, a] = idx[a]
        kth2[r] = vals[k - 1]


@numba.njit(cache=True, nogil=True)
def _dot_to_distance(dot, sq_rows, sq_cols):
    """``dot[r, c] <- (sq_rows[r] + sq_cols[c]) - 2 dot[r, c]`` in place (the same expression as ``_nearest``)."""
    for r in range(dot.shape[0]):
        for c in range(dot.shape[1]):
            dot[r, c] = (sq_rows[r] + sq_cols[c]) - 2.0 * dot[r, c]


class Distances:
    """Squared Euclidean distances among the rows of ``white``, as (|a|^2 + |b|^2) - 2 a.b over row blocks of the
    product a.b."""

    def __init__(self, white, sq=None):
        self.white = np.ascontiguousarray(white, dtype=np.float64)
        self.sq = np.einsum("ij,ij->i", self.white, self.white) if sq is None else sq

    def neighbours(self, k, first=0, last=None):
        """(m, k) indices of the ``k`` nearest other points of each point ``first..last-1`` (default: all; ``first``
        a multiple of ``BLOCK_ROWS``), and the squared distance of each one's k-th."""
        n = self.white.shape[0]
        last = n if last is None else last
        nbrs, kth2 = np.empty((last - first, k), dtype=np.int64), np.empty(last - first)
        for start in range(first, last, BLOCK_ROWS):
            stop = min(start + BLOCK_ROWS, last)
            _nearest(self.white[start:stop] @ self.white.T, self.sq[start:stop], self.sq, start, k,
                     nbrs[start - first:stop - first], kth2[start - first:stop - first])
        return nbrs, kth2

    def between(self, rows, cols):
        """Squared distances of the points ``rows`` to the points ``cols``."""
        dot = self.white[rows] @ self.white[cols].T
        _dot_to_distance(dot, self.sq[rows], self.sq[cols])
        return dot


def local_neighbours(distances, k):
    """Every point's neighbours (``Distances.neighbours``), all computed in this process."""
    return distances.neighbours(k)


def _knn_components(white, k, neighbours=local_neighbours):
    distances = Distances(white)
    nbrs, kth2 = neighbours(distances, k)
    # Mutual neighbours only: a small group between two modes has the modes' points among its neighbours, but
    # not the other way round, so it cannot chain separate modes into one component. Edge i -- nbrs[i, a] is
    # mutual when i is among that neighbour's own neighbours (an n x k x k test, not an n x n graph).
    rows, cols = _mutual_edges(nbrs)
    ncomp, labels = connected_components(rows, cols, white.shape[0])
    kth = np.sqrt(np.maximum(kth2, 0.0))
    return ncomp, labels, distances, float(np.median(kth))


@numba.njit(cache=True, nogil=True)
def _mutual_edges(nbrs):
    """The edges ``i -- nbrs[i, a]`` whose end is among the other's neighbours too, in row-major order of
    ``nbrs`` (compiled: the numpy form built an n x k x k array, 0.7 ms at n = 2000 against 0.09 ms)."""
    n, k = nbrs.shape
    rows, cols = np.empty(n * k, np.int64), np.empty(n * k, np.int64)
    count = 0
    for i in range(n):
        for a in range(k):
            j = nbrs[i, a]
            for b in range(k):
                if nbrs[j, b] == i:
                    rows[count], cols[count] = i, j
                    count += 1
                    break
    return rows[:count], cols[:count]


@numba.njit(cache=True, nogil=True)
def _union_find_labels(rows, cols, n):
    parent = np.arange(n)
    for e in range(rows.size):
        a, b = rows[e], cols[e]
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        while parent[b] != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
    labels = np.empty(n, np.int64)
    ids = np.full(n, -1, np.int64)
    count = 0
    for i in range(n):  # components numbered in the order of their smallest node
        r = i
        while parent[r] != r:
            r = parent[r]
        if ids[r] < 0:
            ids[r] = count
            count += 1
        labels[i] = ids[r]
    return count, labels


def connected_components(rows, cols, n):
    """``(count, labels)`` of the undirected graph on ``n`` nodes with edges ``rows[e] -- cols[e]``; components
    are numbered in the order of their smallest node, as ``scipy.sparse.csgraph.connected_components`` does
    (without scipy.sparse, whose import took a third of a second of every run): a compiled union-find."""
    count, labels = _union_find_labels(np.asarray(rows, np.int64), np.asarray(cols, np.int64), int(n))
    return int(count), labels


def _absorb_small(labels, distances, min_size, far2, points, segments):
    """Join components smaller than ``min_size`` to a component the contour joins them to; keep them apart only
    where nothing shows them joined.

    Given ``segments`` (``sampler.connectivity.Segments``), a segment inside the contour from one of the
    component's points to one of its ``NEAREST_OUTSIDE`` nearest outside points is the proof: the component joins
    the cluster of the point that segment reaches, however far it is, and keeps its own label when no such segment
    exists (the last survivors of a narrow mode, which need their own ellipsoid to receive jumps, are cut off from
    a big mode by the gap between them however close they sit). Without a contour, a component joins the component
    of its nearest outside point unless that point is more than ``sqrt(far2)`` away."""
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
        if segments is None:
            where = np.unravel_index(np.argmin(sub), sub.shape)
            reached = outside[where[1]] if sub[where] <= far2 else -1
        else:
            reached = _reached_through_contour(members, outside, sub, points, segments)
        if reached < 0:
            kept.add(target)
            continue
        labels = np.where(labels == target, labels[reached], labels)


# Segments tried for each small component: from each member to its NEAREST_OUTSIDE nearest outside points, the
# MAX_SEGMENTS shortest of those. A star's lone arm point is usually joined by one of its ten nearest neighbours
# where the closest pairs overall (across a corner of the star) are not; at most MAX_SEGMENTS * POINTS likelihood
# values are spent on a component that nothing joins.
NEAREST_OUTSIDE = 10
MAX_SEGMENTS = 30


def _reached_through_contour(members, outside, sub, points, segments):
    """An outside point (index into the points) joined to one of ``members`` by a segment inside the contour,
    shortest segments first; -1 when none of those tried is inside."""
    m = min(NEAREST_OUTSIDE, outside.size)
    near = np.argpartition(sub, m - 1, axis=1)[:, :m] if m < outside.size else np.broadcast_to(
        np.arange(outside.size), sub.shape)
    rows = np.repeat(np.arange(members.size), m)
    cols = near.ravel()
    order = np.argsort(sub[rows, cols], kind="stable")[:MAX_SEGMENTS]
    rows, cols = rows[order], cols[order]
    hit = segments.first_inside(points[members[rows]], points[outside[cols]])
    return -1 if hit < 0 else int(outside[cols[hit]])


def find_clusters(points, k=10, min_size=None, depth=0, separated=SEPARATED, segments=None,
                  neighbours=local_neighbours):
    """Cluster labels ``0..C-1`` for ``points`` (n, d), components of the kNN graph, refined recursively.
    ``segments``: a ``sampler.connectivity.Segments`` for live points (unit-cube ``points``): a component smaller
    than ``min_size`` stays a cluster unless a segment inside the contour joins it to one of its nearest outside
    points. Without ``segments``, it stays a cluster when its nearest outside point is ``separated`` times farther
    than the median k-th-neighbour distance (``inf``: never). ``neighbours(distances, k)``: what
    computes the kNN rows (:func:`local_neighbours`, or one that splits the row blocks over MPI ranks with the
    same bits)."""
    n, d = points.shape
    min_size = MIN_SIZE if min_size is None else min_size
    if n < 2 * min_size:
        return np.zeros(n, dtype=np.int64)
    # Scaled coordinates first: decorrelating by the covariance of well separated modes squeezes the direction
    # that separates them to unit variance, so that points of two modes become as near as points of one. There a
    # component counts only when a gap separates it (the mutual kNN graph of one thin elongated mode can lose a
    # tip). Then decorrelated coordinates, where one elongated mode looks round and two parallel ridges come apart.
    for full in (False, True):
        ncomp, labels, distances, kth = _knn_components(_whiten(points, full), min(k, n - 1), neighbours)
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
        sub = (np.zeros(members.size, dtype=np.int64) if depth + 1 >= MAX_DEPTH
               else find_clusters(points[members], k, min_size, depth + 1, separated, segments, neighbours))
        out[members] = sub + next_id
        next_id += int(sub.max()) + 1
    return out
