"""The live set's coordinates in slots: rows of ``u`` and ``theta`` that stay where the chain that made them wrote
them until the iteration they die in, instead of being gathered into new arrays every iteration.

``nested.step`` keeps the state's live points in their order (survivors first, then the new points); with plain
arrays that order costs a gather of every survivor's ``u`` and ``theta`` rows an iteration (two passes over
n x d numbers: 6 ms of the host's 28 ms an iteration at nlive 1e5 in 30-D on the 2-core machine of
docs/benchmarks.md). In a store the state holds :class:`ResidentRows` -- a slot per live point, in the state's
order -- and the order costs a gather of n slot numbers; the chains read their starts by slot and their end
points go into the slots of the points that died (their rows copied out first) or free ones. What needs every
survivor's row as an array gets them gathered (``np.asarray``), so every computation sees the same float64
values as with plain arrays and a run gives the same dead points bit for bit.

Two stores share the slot bookkeeping of :class:`SlotStore`: :class:`HostLiveStore` (numpy, the CPU backend)
and ``sampler.live_device.DeviceLiveStore`` (device memory, ``backend: gpu``). Without MPI both backends keep
their live set in one; ``ENABLED = False`` keeps the CPU backend's in plain arrays (the tests compare the two).
"""

import numba
import numpy as np

from .geometry import max_norm2_of_rows

ENABLED = True  # the CPU backend's live set in a HostLiveStore (False: plain arrays)


class SlotStore:
    """Slots for the live points' ``u`` and ``theta`` rows (float64, ``ndim`` columns): a free list (a new point
    takes the slot of a point that died in the same iteration, low slots first), doubling when the live set widens
    past the capacity (plateaus, ``sampler.nested``). Subclasses hold the rows and move them."""

    def __init__(self, capacity, ndim):
        self.ndim = int(ndim)
        self.u, self.theta = self._empty(int(capacity)), self._empty(int(capacity))
        self._reset_free()
        self.rows_to_host = 0  # rows copied out so far (what the tests read to see the rows stay put)

    @property
    def capacity(self) -> int:
        return self.u.shape[0]

    def _reset_free(self):
        # A stack of free slots (its top at ``nfree``), popped from the top: low slots first.
        self.free = np.arange(self.capacity - 1, -1, -1, dtype=np.int64)
        self.nfree = self.capacity

    def adopt(self, u, theta) -> tuple["ResidentRows", "ResidentRows"]:
        """Host rows (n, d) of a live set (prior draws, a checkpoint's) put into the store: their resident views."""
        self._reset_free()
        slots = self.take(u.shape[0])
        self.put_host_rows(slots, np.ascontiguousarray(u, dtype=np.float64),
                           np.ascontiguousarray(theta, dtype=np.float64))
        return ResidentRows(self, "u", slots), ResidentRows(self, "theta", slots)

    def take(self, n) -> np.ndarray:
        """``n`` free slots (the store grows when it has fewer)."""
        while self.nfree < n:
            old = self.capacity
            self.u, self.theta = self._grown(self.u), self._grown(self.theta)
            # the new slots under the free ones, so that the low slots are still taken first
            self.free = np.concatenate([np.arange(2 * old - 1, old - 1, -1, dtype=np.int64), self.free[:self.nfree],
                                        np.empty(old, np.int64)])
            self.nfree += old
        self.nfree -= n
        return self.free[self.nfree:self.nfree + n][::-1].copy()

    def release(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        self.free[self.nfree:self.nfree + slots.size] = slots[::-1]
        self.nfree += slots.size

    def gather_both(self, slots) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``slots`` of ``u`` and of ``theta`` as host arrays (the dead points' rows)."""
        return self.gather(self.u, slots), self.gather(self.theta, slots)


class HostLiveStore(SlotStore):
    """Slots in host memory, for the CPU backend's chains (:class:`SlotAdvance`)."""

    def _empty(self, n):
        return np.empty((n, self.ndim))

    def _grown(self, rows):
        bigger = self._empty(2 * rows.shape[0])
        bigger[:rows.shape[0]] = rows
        return bigger

    def put_host_rows(self, slots, u, theta) -> None:
        slots = np.ascontiguousarray(slots, dtype=np.int64)
        _scatter_rows(self.u, slots, np.ascontiguousarray(u, dtype=np.float64))
        _scatter_rows(self.theta, slots, np.ascontiguousarray(theta, dtype=np.float64))

    def gather(self, source, slots) -> np.ndarray:
        """Rows ``slots`` of ``source`` (``self.u`` or ``self.theta``) as a new array."""
        self.rows_to_host += len(slots)
        # np.take, not source[slots]: numpy's fancy indexing of rows was 20x slower (1e5 of 1.1e6 rows of 4 columns:
        # 14.4 ms against 0.74 ms; 1e4 of 1.1e5 rows of 30: 0.61 against 0.15 ms), the same values.
        return np.take(source, np.asarray(slots, dtype=np.int64), axis=0)

    def max_whitened_norm2(self, source, slots, mean, inverse, diagonal) -> float:
        """``geometry.max_whitened_norm2`` of rows ``slots`` of ``source``, read in place in storage order (a
        maximum does not depend on the order; in the slots' order, which new points scatter, the reads were
        latency-bound: 12.8 ms against 2.3 ms at nlive 1e5 in 30-D)."""
        chosen = np.zeros(source.shape[0], np.bool_)
        chosen[slots] = True
        return max_norm2_of_rows(source, chosen, mean, inverse, diagonal)


def compiled_signatures():
    """``[(dispatcher, signature)]`` of this module's compiled helper (compiled ahead, as
    ``sampler.clustering.compiled_signatures``)."""
    f8_2 = numba.float64[:, ::1]
    return [(_scatter_rows, (f8_2, numba.int64[::1], f8_2))]


@numba.njit(cache=True, nogil=True)
def _scatter_rows(target, slots, rows):
    """``target[slots] = rows`` row by row: numpy's fancy assignment of rows took 7.5 ms for 1e5 rows of 4 columns
    into 1.1e6 (this loop 1.3 ms)."""
    for j in range(slots.shape[0]):
        s = slots[j]
        for a in range(target.shape[1]):
            target[s, a] = rows[j, a]


class SlotAdvance:
    """The CPU chain kernel's ``advance`` for a live set in a :class:`HostLiveStore`: with ``into`` (the slots of
    the new points) its starts are gathered from their slots and its end points' ``u`` and ``theta`` are written
    into ``into``, as the GPU's kernel does on the device; without, the kernel as it is."""

    def __init__(self, inner, store):
        self.inner, self.store = inner, store

    def __call__(self, u_start, *args, into=None):
        if into is None:
            return self.inner(u_start, *args)
        self.inner(np.asarray(u_start), *args)
        out_u, out_theta = args[-5], args[-4]  # the workspace's outputs end the arguments: u, theta, logl, ...
        self.store.put_host_rows(np.asarray(into, dtype=np.int64), out_u, out_theta)


class ResidentRows(np.lib.mixins.NDArrayOperatorsMixin):
    """An (n, d) float64 matrix whose row ``i`` is row ``slots[i]`` of ``store``: what ``NSState.u`` and
    ``NSState.theta`` hold when the live set is in a store. Indexing gathers the rows asked for; ``np.asarray``
    gathers all of them. To code reading the state (a run's ``callback``) it reads as a read-only array:
    ``rows[:, 0]``, ``rows - 0.5``, ``np.mean(rows, axis=0)`` and the ndarray's methods (``rows.mean(axis=0)``,
    ``rows.copy()``) work on the gathered rows."""

    def __init__(self, store, name, slots):
        self.store, self.name, self.slots = store, name, np.asarray(slots, dtype=np.int64)

    @property
    def source(self):  # the store's current array (it changes when the store grows)
        return getattr(self.store, self.name)

    @property
    def shape(self):
        return (self.slots.size, self.store.ndim)

    dtype = np.dtype(np.float64)
    ndim = 2
    resident = True

    def __len__(self):
        return self.slots.size

    def __getitem__(self, index):  # rows (an index, slice, mask or index array), then any column index
        if isinstance(index, tuple):
            rows, columns = self[index[0]], index[1:]
            return rows[columns] if rows.ndim == 1 else rows[(slice(None),) + columns]
        picked = self.slots[index]
        if np.ndim(picked) == 0:
            return self.store.gather(self.source, np.array([picked]))[0]
        return self.store.gather(self.source, picked)

    def __array__(self, dtype=None, copy=None):
        rows = self.store.gather(self.source, self.slots)
        return rows if dtype is None else rows.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(isinstance(x, ResidentRows) for x in kwargs.get("out", ())):
            return NotImplemented  # read-only: the rows change only through the store
        inputs = tuple(np.asarray(x) if isinstance(x, ResidentRows) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getattr__(self, name):  # the ndarray's other attributes and methods, of the gathered rows
        if name.startswith("__") or name in ("store", "name", "slots"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)

    def rows(self, slots) -> "ResidentRows":
        """The same store's rows ``slots`` as another resident matrix (no copy)."""
        return ResidentRows(self.store, self.name, slots)

    def max_whitened_norm2(self, mean, inverse, diagonal) -> float:
        """``geometry.max_whitened_norm2`` of these rows, computed where they are (``inverse``: ``L^-1``)."""
        if self.slots.size == 0:
            return 0.0
        return self.store.max_whitened_norm2(self.source, self.slots, mean, inverse, diagonal)
