"""The live set's coordinates kept on the GPU (``backend: gpu``): rows of ``u`` and ``theta`` that stay in device
memory from the chain that made them to the iteration they die in.

Without this, every iteration of a GPU run moved the whole live set through the host: the survivors' rows
gathered into new host arrays (two passes over n x d numbers, 5-12 ms an iteration with the other row gathers at
nlive 1e5 in 30-D on the 2-core machine of docs/benchmarks.md), the k chain starts uploaded, and the k end points and their parameters
copied back. Here the live points' rows sit in :class:`DeviceLiveStore` slots; the state holds
``live_rows.ResidentRows`` (a slot per live point, in the state's row order) instead of host arrays, the chains read
their starts and write their end points by slot on the device, and what comes back to the host is what its
arithmetic reads: the dead points' rows (they leave the live set), the new points' ``u`` (the running moments of
``sampler.live_moments`` add them) and the chains' start rows that the start-end correlations measure (at most
``decorrelation.MAX_CHAINS``). The bounding radius, a maximum over all survivors, is computed on the device
(:meth:`DeviceLiveStore.max_whitened_norm2`, the arithmetic of ``geometry._max_norm2`` row by row; a maximum does not
depend on the order).

What needs every survivor's row on the host gets them gathered (``np.asarray`` of the rows): the
covariance below ``live_moments.RUNNING_FROM`` survivors and its refresh every ``REFRESH_EVERY`` iterations, the
clustering every ``recluster_every`` iterations, the geometry of several clusters, ghosts, checkpoints and the
final live points. So the host computes on the same float64 values as without residency, and a run gives the CPU
backend's dead points (tested under the CUDA simulator, ``tests/sampler/test_live_device.py``).

The slots, their free list and the :class:`ResidentRows` views are those of ``sampler.live_rows``, whose host
store keeps the CPU backend's live set the same way.
"""

import numpy as np
from numba import cuda  # module-level so that the CUDA simulator, when enabled, provides it

from nestgrad.likelihoods.backends.launch import configured

from .live_rows import SlotStore

_THREADS = 128
ENABLED = True  # False keeps the live set on the host (the tests compare the two)


@cuda.jit
def _gather(source, slots, out):
    j = cuda.grid(1)
    if j < slots.shape[0]:
        s = slots[j]
        for a in range(source.shape[1]):
            out[j, a] = source[s, a]


@cuda.jit
def _scatter_both(rows_u, rows_theta, slots, target_u, target_theta):
    j = cuda.grid(1)
    if j < slots.shape[0]:
        s = slots[j]
        for a in range(rows_u.shape[1]):
            target_u[s, a] = rows_u[j, a]
            target_theta[s, a] = rows_theta[j, a]


@cuda.jit
def _whitened_norm2(points, slots, mean, inverse, diagonal, out):
    """``|L^-1 (x - mean)|^2`` of each row ``slots[i]``, with the operations of ``geometry._max_norm2`` in its
    order (so each value has its bits)."""
    i = cuda.grid(1)
    if i < slots.shape[0]:
        s = slots[i]
        total = 0.0
        for a in range(points.shape[1]):
            if diagonal:
                z = inverse[a, a] * (points[s, a] - mean[a])
            else:
                z = 0.0
                for b in range(a + 1):
                    z += inverse[a, b] * (points[s, b] - mean[b])
            total += z * z
        out[i] = total  # (geometry._max_norm2 keeps the centred row in a buffer; the values are the same)


def _launch(kernel, n):
    """``kernel`` configured with a thread per row for ``n`` rows: blocks of at most ``_THREADS`` (fewer for
    fewer rows: the CUDA simulator runs a Python thread for each thread of a block, used or not)."""
    threads = max(1, min(_THREADS, n))
    return configured(kernel, (n + threads - 1) // threads, threads)


class DeviceLiveStore(SlotStore):
    """Device rows for the live points' ``u`` (float64) and ``theta`` (float64), ``ndim`` columns each."""

    def _empty(self, n):
        return cuda.device_array((n, self.ndim), np.float64)

    def _grown(self, rows):
        bigger = self._empty(2 * rows.shape[0])
        bigger[:rows.shape[0]].copy_to_device(rows)
        return bigger

    def put_host_rows(self, slots, u, theta) -> None:
        self.put_rows(slots, cuda.to_device(u), cuda.to_device(theta))

    def put_rows(self, slots, u_dev, theta_dev) -> None:
        """The device rows ``u_dev``, ``theta_dev`` (m, d) into ``slots`` (the chains' end points)."""
        if slots.size:
            _launch(_scatter_both, slots.size)(u_dev, theta_dev, cuda.to_device(slots), self.u, self.theta)

    def gather_device(self, source, slots, out=None):
        """Rows ``slots`` of the device array ``source`` as a device array (into ``out`` when given)."""
        out = cuda.device_array((slots.size, self.ndim), np.float64) if out is None else out
        if slots.size:
            _launch(_gather, slots.size)(source, cuda.to_device(slots), out)
        return out

    def gather(self, source, slots) -> np.ndarray:
        """Rows ``slots`` of ``source`` (``self.u`` or ``self.theta``) on the host."""
        slots = np.ascontiguousarray(slots, dtype=np.int64)
        if slots.size == 0:
            return np.empty((0, self.ndim))
        self.rows_to_host += slots.size
        return self.gather_device(source, slots).copy_to_host()

    def max_whitened_norm2(self, source, slots, mean, inverse, diagonal) -> float:
        """``geometry.max_whitened_norm2`` of rows ``slots`` of ``source``, computed on the device."""
        n = slots.size
        out = cuda.device_array(n, np.float64)
        _launch(_whitened_norm2, n)(
            source, cuda.to_device(slots), cuda.to_device(np.ascontiguousarray(mean, dtype=np.float64)),
            cuda.to_device(np.ascontiguousarray(inverse, dtype=np.float64)), bool(diagonal), out)
        norms = out.copy_to_host()
        above = norms[norms > 0.0]  # as the host loop: the largest value above 0, NaN never counted
        return float(above.max()) if above.size else 0.0
