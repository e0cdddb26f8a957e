"""The fused constrained-HMC kernel on the GPU: one numba.cuda thread per chain, per-thread xoroshiro state.

The trajectory body is the CPU one (:func:`sampler.hmc.chain_function`) compiled as a CUDA device function;
the prior transform and the RNG are re-targeted copies of the CPU helpers (same Python code, CUDA globals), so
the two backends cannot drift apart. ``GpuChainKernel`` has the CPU ``advance`` call signature, so
:func:`sampler.nested.step` drives either. With the live set kept on the device (``sampler.live_device``) the
starts are gathered there and the end points written there, and only the end points' ``u``, ``logl``, cluster,
statistics and RNG states come back; otherwise the k start points go to the device and the k end points and
their parameters come back. Step sizes and RNG states go up each iteration, through buffers allocated once; the
likelihood data stay on the device.

Under MPI each rank runs its block of the chains on its own device (``likelihoods.backends.placement``).

Tested under the CUDA simulator in CI and on a real GPU (an H200) by the device tests of
``tests/sampler/test_hmc_gpu.py`` (``pytest -m device``), each in a subprocess.
"""

import types
import warnings

import numba
import numpy as np
from numba import cuda  # importing needs no driver; module-level so the CUDA simulator can swap it in kernels

from nestgrad.likelihoods.backends import placement
from nestgrad.likelihoods.backends.launch import configured

from . import prior_families, rng
from .hmc import NSTATS, chain_function
from .hmc_runtime import check_ctrl

_THREADS_PER_BLOCK = 64


def _retarget(fn, jit, **replace):
    """``fn``'s Python code compiled by ``jit`` with some of its globals replaced (e.g. by device versions)."""
    py = getattr(fn, "py_func", fn)
    namespace = dict(py.__globals__)
    namespace.update(replace)
    return jit(types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__, py.__closure__))


def device_helpers():
    """CUDA device versions of the prior transform and the per-chain normal and uniform deviates."""
    if numba.config.ENABLE_CUDASIM:
        # The simulator runs the xoroshiro arithmetic on numpy uint64 scalars, which wrap as the generator intends
        # (as on a device) but warn; only the generator's own additions are silenced, not a likelihood's.
        warnings.filterwarnings("ignore", r".*overflow encountered in scalar", RuntimeWarning, rng.__name__)
    dev = cuda.jit(device=True)
    rotl = _retarget(rng._rotl, dev)
    next_u64 = _retarget(rng.next_uint64, dev, _rotl=rotl)
    uniform = _retarget(rng.uniform, dev, next_uint64=next_u64)
    normal = _retarget(rng.normal, dev, uniform=uniform)
    ndtri = _retarget(prior_families.ndtri, dev)
    normal_jac = _retarget(prior_families._normal_jac, dev)
    transform = _retarget(prior_families.transform_one, dev, ndtri=ndtri, _normal_jac=normal_jac)
    return transform, normal, uniform


class DeviceMemoryError(ValueError):
    """The GPU has too little free memory for the chains (the message says how much is needed and what to lower)."""


def chain_memory_bytes(nchains, ndim, dtype, scratch_size, live_rows=0) -> int:
    """Device bytes :class:`GpuChainKernel` holds for ``nchains`` chains: its work arrays (seven float64 and two
    ``dtype`` values per chain and parameter, and each chain's scratch row) and one iteration's staged inputs and
    outputs (start and end points, end points' parameters, per-chain scalars, RNG states and statistics); with
    ``live_rows``, the live set kept on the device too (``sampler.live_device``: u and theta, float64)."""
    item = np.dtype(dtype).itemsize
    work = nchains * ndim * (7 * 8 + 2 * item) + nchains * max(int(scratch_size), 1) * item
    staged = nchains * (ndim * (2 * 8 + item) + 8 * (4 + 2 + NSTATS))
    return int(work + staged + live_rows * ndim * 2 * 8)


def check_device_memory(cuda_module, nchains, ndim, dtype, scratch_size, live_rows=0) -> None:
    """Raise :class:`DeviceMemoryError` when the current device has less free memory than the chains (and
    ``live_rows`` live points kept on the device) need."""
    free, _ = cuda_module.current_context().get_memory_info()
    needed = chain_memory_bytes(nchains, ndim, dtype, scratch_size, live_rows)
    if needed > free:
        raise DeviceMemoryError(
            f"the GPU has {free / 2 ** 30:.2f} GiB free and the chains need {needed / 2 ** 30:.2f} GiB "
            f"({nchains} chains of {ndim} parameters, {np.dtype(dtype).name}, {int(scratch_size)} scratch values "
            f"each{f', and {int(live_rows)} live points' if live_rows else ''}); lower nlive or delete_fraction "
            f"(chains = delete_fraction x nlive), or use the cpu backend")


# The kernel around the device function ``chain``, as text: compiled from a generated file (numba-cuda's disk cache
# keeps its machine code, sampler/hmc_gpu_cache.py) or, for likelihoods defined in memory, from this text.
ADVANCE_SOURCE = """
def advance(u_start, logl_start, logl_star, step_sizes, ctrl, rng_states, data, codes, args,
            g_mean, g_chol, g_cov, g_radius2, g_cdf, g_pool, g_pool_start,
            work_u, work_v, work_y, work_w, work_z, work_t, work_theta, work_jac, work_grad, work_scratch,
            out_u, out_theta, out_logl, out_cluster, stats):
    j = cuda.grid(1)
    if j < u_start.shape[0]:
        chain(j, u_start, logl_start, logl_star, step_sizes, ctrl, rng_states, data, codes, args,
              g_mean, g_chol, g_cov, g_radius2, g_cdf, g_pool, g_pool_start,
              work_u, work_v, work_y, work_w, work_z, work_t, work_theta, work_jac, work_grad, work_scratch,
              out_u, out_theta, out_logl, out_cluster, stats)
"""


def device_chain(value, value_and_grad):
    """The chain's whole trajectory as a CUDA device function, for device functions ``value``/``value_and_grad``."""
    transform, normal, uniform = device_helpers()
    dev = cuda.jit(device=True)
    return chain_function(value, value_and_grad, transform, normal, uniform, dev, dev)


def _in_memory_kernel(value, value_and_grad):
    namespace = {"cuda": cuda, "chain": device_chain(value, value_and_grad)}
    exec(compile(ADVANCE_SOURCE, "<nestgrad gpu chain kernel>", "exec"), namespace)  # fixed text above
    return cuda.jit(namespace["advance"])


_KERNEL_CACHE = {}


def make_gpu_chain_kernel(value, value_and_grad):
    """A ``numba.cuda`` kernel ``advance[blocks, threads](...)`` for device functions ``value``/``value_and_grad``
    (``Likelihood.cuda_kernels()``), with the same arguments as the CPU ``advance``: from numba-cuda's disk cache
    when the functions live in a generated module (:mod:`sampler.hmc_gpu_cache`), else compiled in memory."""
    from .hmc_gpu_cache import cached_kernel

    key = (id(value), id(value_and_grad))
    hit = _KERNEL_CACHE.get(key)
    if hit is not None and hit[0] is value and hit[1] is value_and_grad:
        return hit[2]
    advance = cached_kernel(value, value_and_grad)
    if advance is None:
        advance = _in_memory_kernel(value, value_and_grad)
    _KERNEL_CACHE[key] = (value, value_and_grad, advance)
    return advance


class GpuChainKernel:
    """Host-side driver with the CPU ``advance`` signature: stages the per-iteration inputs on the device, runs
    one thread per chain, and copies end points, statistics and the advanced RNG states back into the host
    arrays the caller passed (so checkpoints and determinism work as on the CPU)."""

    def __init__(self, kernels, prior_codes, prior_args, nchains, ndim, live_rows=0):
        placement.select_device(cuda)
        check_device_memory(cuda, nchains, ndim, kernels.dtype, kernels.scratch_size, live_rows)
        self.cuda = cuda
        self.kernel = make_gpu_chain_kernel(kernels.value, kernels.value_and_grad)
        dtype = np.dtype(kernels.dtype)
        f8 = np.float64
        self.codes = cuda.to_device(np.ascontiguousarray(prior_codes))
        self.args = cuda.to_device(np.ascontiguousarray(prior_args))
        # Column-major (structure of arrays): chain j's row is a strided view, so that when the threads of a warp
        # (consecutive chains) touch coordinate a of their rows they read one contiguous run of memory, not 32
        # rows a row's length apart. The arithmetic is the same as with rows (the tests compare bits).
        work = [(ndim, f8)] * 6 + [(ndim, dtype), (ndim, f8), (ndim, dtype), (max(int(kernels.scratch_size), 1), dtype)]
        self.work = [cuda.device_array((nchains, width), kind, order="F") for width, kind in work]
        self.capacity = nchains
        self.stage = {}  # per-chain inputs and outputs, allocated once (not every iteration)

    def _rows(self, name, host, upload):
        """The device rows for ``host`` (at most ``capacity`` of them) in a buffer kept from call to call; filled
        from ``host`` when ``upload``."""
        dev = self.stage.get(name)
        if dev is None or dev.dtype != host.dtype or dev.shape[1:] != host.shape[1:]:
            dev = self.stage[name] = self.cuda.device_array((self.capacity,) + host.shape[1:], host.dtype)
        rows = dev[:host.shape[0]]
        if upload:
            rows.copy_to_device(host)
        return rows

    def __call__(self, u_start, logl_start, logl_star, step_sizes, ctrl, rng_states, data, codes, args,
                 g_mean, g_chol, g_cov, g_radius2, g_cdf, g_pool, g_pool_start, *host_work, into=None):
        """As the CPU ``advance``; with ``u_start`` a ``sampler.live_device.ResidentRows`` (the live set kept on
        the device), the starts are gathered there and the end points' ``u`` and ``theta`` are written to the
        store's slots ``into``: only ``out_u`` of the host outputs' rows is copied back (``out_theta`` is not)."""
        check_ctrl(ctrl)
        cuda = self.cuda
        outs = host_work[-5:]  # out_u, out_theta, out_logl, out_cluster, stats
        nchains = u_start.shape[0]
        if nchains == 0:
            return
        resident = into is not None
        if resident:
            d_start = u_start.store.gather_device(u_start.source, u_start.slots,
                                                  self._rows("u_start", outs[0], False))
        else:
            d_start = self._rows("u_start", np.ascontiguousarray(u_start), True)
        inputs = [d_start] + [self._rows(name, np.ascontiguousarray(a), True) for name, a in
                              (("logl_start", logl_start), ("step_sizes", step_sizes))]
        d_rng = self._rows("rng", rng_states, True)
        d_out = [self._rows(f"out{i}", a, False) for i, a in enumerate(outs)]
        geometry = [cuda.to_device(np.ascontiguousarray(a))
                    for a in (g_mean, g_chol, g_cov, g_radius2, g_cdf, g_pool, g_pool_start)]
        blocks = (nchains + _THREADS_PER_BLOCK - 1) // _THREADS_PER_BLOCK
        configured(self.kernel, blocks, _THREADS_PER_BLOCK)(
            inputs[0], inputs[1], float(logl_star), inputs[2], cuda.to_device(np.ascontiguousarray(ctrl)), d_rng,
            data, self.codes, self.args, *geometry, *self.work, *d_out)
        if resident:
            u_start.store.put_rows(np.ascontiguousarray(into, dtype=np.int64), d_out[0], d_out[1])
        for i, (host, dev) in enumerate(zip(outs, d_out)):
            if not (resident and i == 1):
                dev.copy_to_host(host)
        d_rng.copy_to_host(rng_states)
