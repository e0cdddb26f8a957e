"""The sampler's fused chain kernel (metric, regions, jumps, reflections) type-checks for a real GPU:
``numba.cuda.compile_ptx(..., cc=(9, 0))`` on the same body the CPU runs. The CUDA simulator runs that body too
(test_hmc_gpu.py) but does not type-check it."""

import types

import numpy as np
import pytest

cuda = pytest.importorskip("numba.cuda")

import problems  # noqa: E402
from gpu_cache_check import chain_signature  # noqa: E402
from nestgrad.sampler.hmc_gpu import make_gpu_chain_kernel  # noqa: E402


def test_chain_kernel_compiles_to_ptx_for_sm90(monkeypatch):
    from numba.cuda import dispatcher
    # device functions ask the (absent) driver for the compute capability; give them the target's
    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)), raising=False)
    prob = problems.gaussian(3)
    kern = prob.cpu_kernels()
    dev = cuda.jit(device=True)
    advance = make_gpu_chain_kernel(dev(kern.value.py_func), dev(kern.value_and_grad.py_func))
    ptx, _ = cuda.compile_ptx(advance.py_func, chain_signature(kern.data, np.float64), cc=(9, 0))
    assert ".entry" in ptx and ".target sm_90" in ptx


def test_live_set_kernels_compile_to_ptx_for_sm90():
    """The kernels that keep the live set on the GPU (sampler/live_device.py): row gathers, the row scatter and
    the whitened radius."""
    from numba import boolean, float64, int64

    from nestgrad.sampler import live_device

    rows, slots, vector = float64[:, :], int64[:], float64[:]
    for kernel, signature in ((live_device._gather, (rows, slots, rows)),
                              (live_device._gather_both, (rows, rows, slots, rows, rows)),
                              (live_device._scatter_both, (rows, rows, slots, rows, rows)),
                              (live_device._whitened_norm2, (rows, slots, vector, rows, boolean, vector))):
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
        assert ".entry" in ptx and ".target sm_90" in ptx
