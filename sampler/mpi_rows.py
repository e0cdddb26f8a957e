"""How the rows of an iteration's work are shared among MPI ranks and packed into messages (``sampler.mpi_pool``).

Rows go to ranks in contiguous blocks, as equal as possible (:func:`blocks`), or in whole blocks of a fixed row
count where a block must be the same computation in any process (:func:`whole_blocks`: the clustering's kNN rows).
Several per-row arrays travel as one message of bytes (:func:`pack_rows`, :func:`unpack_rows`), so every bit comes
through whatever the dtype.
"""

import numpy as np


def blocks(nrows: int, size: int) -> np.ndarray:
    """Rows per rank: as equal as possible, the extra rows going to the last ranks (rank 0 also does the
    sampler's serial work between iterations)."""
    counts = np.full(size, nrows // size, np.int64)
    counts[size - nrows % size:] += 1 if nrows % size else 0
    return counts


def whole_blocks(nrows: int, size: int, block: int) -> np.ndarray:
    """Rows per rank when rows go out in whole blocks of ``block`` rows (the last block shorter), as
    :func:`blocks` shares the blocks."""
    ends = np.minimum(np.cumsum(blocks(-(-nrows // block), size) * block), nrows)
    return np.diff(np.concatenate([[0], ends])).astype(np.int64)


def row_offsets(counts):
    """First row of each rank's share."""
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def pack_rows(arrays) -> np.ndarray:
    """Row ``i`` of each array side by side as bytes, ``(rows, bytes per row)``: one message for several arrays
    (each message is a handshake between the ranks, a tenth of a millisecond here). Bytes, not values, so every
    bit comes through, whatever the dtype."""
    return np.concatenate([row_bytes(np.ascontiguousarray(a)) for a in arrays], axis=1)


def row_bytes(a):
    """A C-contiguous array as a (rows, bytes per row) uint8 view."""
    return a.reshape(a.shape[0], int(np.prod(a.shape[1:], dtype=np.int64))).view(np.uint8)


def packed_width(arrays) -> int:
    """Bytes per row of :func:`pack_rows` of ``arrays``."""
    return sum(a.dtype.itemsize * int(np.prod(a.shape[1:], dtype=np.int64)) for a in arrays)


def unpack_rows(packed, arrays):
    """The inverse of :func:`pack_rows`, into ``arrays`` (C-contiguous, modified in place)."""
    column = 0
    for a in arrays:
        view = row_bytes(a)
        width = view.shape[1]
        view[:] = packed[:, column:column + width]
        column += width
