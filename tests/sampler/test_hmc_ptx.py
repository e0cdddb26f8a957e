"""The sampler's fused chain kernel (metric, regions, jumps, reflections) type-checks for a real GPU:
``numba.cuda.compile_ptx(..., cc=(9, 0))`` on the same body the CPU runs. The CUDA simulator runs that body too
(test_hmc_gpu.py) but does not type-check it."""

import types

import numpy as np
from numba import cuda

import problems
from gpu_cache_check import chain_signature
from nestgrad.sampler.hmc_gpu import make_gpu_chain_kernel


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
                              (live_device._scatter_both, (rows, rows, slots, rows, rows)),
                              (live_device._whitened_norm2, (rows, slots, vector, rows, boolean, vector))):
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
        assert ".entry" in ptx and ".target sm_90" in ptx


def test_chain_kernel_of_a_local_array_likelihood_compiles_to_ptx_for_sm90(monkeypatch, dtype="float32"):
    """A kernel with local arrays takes its chain's scratch row, a strided view of the column-major work array on
    the GPU: the generated device functions must type with it (float32, the GPU likelihood's default; the typing
    does not depend on the precision)."""
    import os

    from numba.cuda import dispatcher

    from nestgrad.likelihoods import Likelihood
    from nestgrad.likelihoods.backends.gpu import gpu_drivers

    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)), raising=False)
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "local_array_gauss.py") + ":shifted_gauss"
    like = Likelihood(source, ["a", "b"], {"mu": np.full(2, 0.5), "sigma": 0.1}, backend="python", dtype=dtype)
    assert like.scratch_size > 0
    drivers = gpu_drivers(like.derivative.cuda(dtype=dtype), len(like.data))
    advance = make_gpu_chain_kernel(drivers["tuple_value"], drivers["tuple_value_and_grad"])
    ptx, _ = cuda.compile_ptx(advance.py_func, chain_signature(like.data, dtype), cc=(9, 0))
    assert ".entry" in ptx and ".target sm_90" in ptx


def test_chain_kernel_at_the_gpus_default_precision_compiles_to_ptx_for_sm90(monkeypatch):
    """The GPU's default likelihood (float32 arithmetic, the data loop's sums in float64: a float64 value reaches
    the chain from a float32 build) types in the chain kernel; the likelihood's arithmetic is float32 there (that
    the sums are float64 in the PTX of such a build is tests/ad/test_cuda_ptx.py's)."""
    from numba.cuda import dispatcher

    from nestgrad.likelihoods import builtin
    from nestgrad.likelihoods.backends.gpu import gpu_drivers
    from nestgrad.likelihoods.likelihood import default_precision

    monkeypatch.setattr(dispatcher, "get_current_device",
                        lambda: types.SimpleNamespace(compute_capability=(9, 0)), raising=False)
    dtype, sum_dtype = default_precision("gpu", None, None, True)
    like = builtin.get("gaussian4d", n=10).likelihood(backend="python", dtype=dtype, sum_dtype=sum_dtype)
    assert (like.dtype, like.sum_dtype) == (np.float32, "float64")
    drivers = gpu_drivers(like.derivative.cuda(dtype=dtype), len(like.data))
    advance = make_gpu_chain_kernel(drivers["tuple_value"], drivers["tuple_value_and_grad"])
    ptx, _ = cuda.compile_ptx(advance.py_func, chain_signature(like.data, dtype), cc=(9, 0))
    assert ".entry" in ptx and ".target sm_90" in ptx and "fma.rn.f32" in ptx
