"""GPU backend checks run in a subprocess by test_gpu.py (not collected by pytest itself).

``python gpu_checks.py sim``: under NUMBA_ENABLE_CUDASIM=1, batched results of every built-in equal the
per-sample plain-Python results (float32 and float64, batches 1, 7, 1000), device arrays in and out, bad
samples, and the CudaKernels bundle used from a user kernel.
``python gpu_checks.py ptx``: without a GPU, the batch kernels of representative built-ins compile to PTX for sm_90 (the
simulator does not type-check, this does).
"""

import sys
import types

import numpy as np
from numba import cuda  # a module global: the simulator swaps it for its fake inside kernels

from likelihood_helpers import assert_close, prior_draws, reference, small_builtin
from nestgrad.likelihoods import builtin


def check_simulator():
    rng = np.random.default_rng(3)
    for name in builtin.names():
        b = small_builtin(name)
        thetas = prior_draws(b, 1000, rng).astype(np.float32).astype(np.float64)
        ref_v, ref_g = reference(b, thetas)
        for dtype in ("float32", "float64"):
            L = b.likelihood(backend="gpu", dtype=dtype)
            for batch in (1, 7, 1000) if dtype == "float32" else (7,):
                v, g = L.logl_and_grad(thetas[:batch])
                assert_close(v, g, ref_v[:batch], ref_g[:batch], dtype)
            assert_close(L.logl(thetas[:7]), L.grad(thetas[:7]), ref_v[:7], ref_g[:7], dtype)
        print("sim ok", name, flush=True)
    check_device_arrays()
    check_bad_samples()
    check_kernel_bundle()
    check_float64_sums()


def check_float64_sums():
    """A float32 likelihood with float64 loop sums runs through the GPU backend (its own device module and
    drivers) and agrees with the float64 reference to float32 accuracy of the terms."""
    rng = np.random.default_rng(5)
    b = small_builtin("gaussian4d")
    thetas = prior_draws(b, 50, rng).astype(np.float32).astype(np.float64)
    ref_v, ref_g = reference(b, thetas)
    L = b.likelihood(backend="gpu", dtype="float32", sum_dtype="float64")
    assert "sums float64" in L._impl.functions.source.splitlines()[0]
    v, g = L.logl_and_grad(thetas)
    assert_close(v, g, ref_v, ref_g, "float32")
    print("sim ok float64 sums", flush=True)


def check_device_arrays():
    b = small_builtin("gaussian4d")
    L = b.likelihood(backend="gpu")
    # the GPU default: float32 arithmetic, the data loop's sums in float64; an explicit float32 keeps float32 sums
    assert L.dtype == np.float32 and L.sum_dtype == "float64"
    assert "sums float64" in L._impl.functions.source.splitlines()[0]
    assert b.likelihood(backend="gpu", dtype="float32").sum_dtype is None
    thetas = prior_draws(b, 64, np.random.default_rng(0)).astype(np.float32)
    device_thetas = cuda.to_device(thetas)
    v, g = L.logl_and_grad(device_thetas)
    assert hasattr(v, "copy_to_host") and hasattr(g, "copy_to_host")  # stayed on the device
    ref_v, ref_g = reference(b, thetas.astype(np.float64))
    assert_close(v.copy_to_host(), g.copy_to_host(), ref_v, ref_g, "float32")
    out = cuda.device_array(64, dtype=np.float32)
    assert L.logl(device_thetas, out=out) is out
    assert_close(out.copy_to_host(), None, ref_v, None, "float32")
    print("sim ok device arrays", flush=True)


def check_bad_samples():
    b = builtin.get("poisson_rates", bins=2)
    L = b.likelihood(backend="gpu", dtype="float64")
    # (the simulator runs Python's math, which raises on domain errors where a GPU returns NaN, so the bad
    # samples here are NaN and +inf inputs: counts*log(inf) - inf is NaN)
    thetas = np.array([[1.0, 2.0], [np.inf, 2.0], [3.0, 4.0], [np.nan, 1.0]])
    v, g = L.logl_and_grad(thetas)
    assert L.nbad == 2 and np.isnan(v[[1, 3]]).all() and np.isnan(g[[1, 3]]).all()
    assert np.isfinite(v[[0, 2]]).all()
    # the device's counter runs on between calls: each call still reports its own count
    L.logl(thetas)
    assert L.nbad == 2 and L.nbad_total == 4
    L.logl_and_grad(thetas[[0, 2]])
    assert L.nbad == 0 and L.nbad_total == 4
    from nestgrad.likelihoods.backends.gpu import NBAD_RESET_ABOVE

    L._impl.nbad_host[0] = NBAD_RESET_ABOVE + 1  # as if near overflow: the counter is set back to 0 first
    L.logl(thetas)
    assert L.nbad == 2 and L._impl.nbad.copy_to_host()[0] == 2
    print("sim ok bad samples", flush=True)


def check_kernel_bundle():
    b = small_builtin("linear_regression")
    L = b.likelihood(backend="gpu", dtype="float64")
    k = L.cuda_kernels()
    value, value_and_grad, data = k.value, k.value_and_grad, k.data

    @cuda.jit
    def user_kernel(thetas, out, grads, scratch):
        i = cuda.grid(1)
        if i < thetas.shape[0]:
            out[i] = value_and_grad(thetas[i], data, grads[i], scratch[i]) - value(thetas[i], data, scratch[i])

    thetas = prior_draws(b, 5, np.random.default_rng(0))
    out, grads = np.empty(5), np.empty((5, 3))
    user_kernel[1, 32](thetas, out, grads, np.empty((5, k.scratch_size)))
    ref_v, ref_g = reference(b, thetas)
    assert np.allclose(out, 0.0, atol=1e-9) and np.allclose(grads, ref_g, rtol=1e-9)
    print("sim ok kernel bundle", flush=True)


def check_ptx():
    import numba
    import numba.cuda.dispatcher as dispatcher
    from nestgrad.likelihoods.backends.gpu import gpu_drivers

    # device functions ask the (absent) driver for the compute capability; give them the target's
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=(9, 0))
    # a representative set: plain reduction, max/abs/sqrt, lgamma with digamma in the adjoint, scalar data
    for name in ("gaussian4d", "gaussian_shells", "student_t", "negative_binomial"):
        b = small_builtin(name)
        L = b.likelihood(backend="python", dtype="float32")  # prepared data, no device needed
        drivers = gpu_drivers(L.derivative.cuda(dtype="float32"), len(L.data))
        f32 = numba.float32
        data_types = tuple(numba.typeof(d) for d in L.data)
        mat, vec, count = f32[:, ::1], f32[::1], numba.int32[::1]
        signatures = {"batch_value": (mat, vec, mat, count), "batch_value_and_grad": (mat, vec, mat, mat, count),
                      "batch_grad": (mat, mat, mat, count)}
        # every built-in's value-and-gradient kernel; the other two (same shape of code) for the first only
        chosen = signatures if name == "gaussian4d" else {"batch_value_and_grad": signatures["batch_value_and_grad"]}
        for kernel, args in chosen.items():
            ptx, _ = cuda.compile_ptx(drivers[kernel].py_func, args + data_types, cc=(9, 0))
            assert ".entry" in ptx and ".target sm_90" in ptx
        print("ptx ok", name, flush=True)
    b = small_builtin("gaussian4d")
    L = b.likelihood(backend="python", dtype="float32", sum_dtype="float64")
    drivers = gpu_drivers(L.derivative.cuda(dtype="float32"), len(L.data))
    f32 = numba.float32
    ptx, _ = cuda.compile_ptx(drivers["batch_value_and_grad"].py_func,
                              (f32[:, ::1], f32[::1], f32[:, ::1], f32[:, ::1], numba.int32[::1])
                              + tuple(numba.typeof(d) for d in L.data), cc=(9, 0))
    assert ".entry" in ptx and ("add.rn.f64" in ptx or "add.f64" in ptx)
    print("ptx ok gaussian4d with float64 sums", flush=True)


if __name__ == "__main__":
    {"sim": check_simulator, "ptx": check_ptx}[sys.argv[1]]()
    print("ALL OK")
