"""Batched results equal per-sample plain-Python results, on the cpu and python backends."""

import textwrap

import numpy as np
import pytest

from nestgrad.likelihoods import Likelihood, builtin
from nestgrad.likelihoods.derivatives import AnalyticDerivative

from likelihood_helpers import assert_close

BATCHES = (1, 7, 1000)
GRAD_ONLY = ("gaussian4d", "gaussian_shells", "student_t")  # every built-in's grad() runs on the python backend


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", builtin.names())
def test_cpu_batches_match_per_sample_python(name, dtype, points):
    b, thetas, ref_v, ref_g = points(name)
    L = b.likelihood(backend="cpu", dtype=dtype)
    assert L.dtype == np.dtype(dtype) and L.params == b.params
    for batch in BATCHES:
        v, g = L.logl_and_grad(thetas[:batch])
        assert v.shape == (batch,) and g.shape == (batch, b.ndim) and v.dtype == np.dtype(dtype)
        assert_close(v, g, ref_v[:batch], ref_g[:batch], dtype)
        assert L.nbad == np.count_nonzero(np.isnan(ref_v[:batch]))
    if dtype == "float64":  # the value-only driver (float32: same code, other dtype)
        assert_close(L.logl(thetas), None, ref_v, None, dtype)
    if dtype == "float64" and name in GRAD_ONLY:  # gradient-only driver: a representative few (compile time)
        assert_close(None, L.grad(thetas), None, ref_g, dtype)


@pytest.mark.parametrize("name", builtin.names())
def test_python_backend_matches_per_sample_python(name, points):
    b, thetas, ref_v, ref_g = points(name)
    for dtype in ("float64", "float32"):
        L = b.likelihood(backend="python", dtype=dtype)
        for batch in (1, 7, 200):
            v, g = L.logl_and_grad(thetas[:batch])
            assert_close(v, g, ref_v[:batch], ref_g[:batch], dtype)
        assert_close(L.logl(thetas[:7]), L.grad(thetas[:7]), ref_v[:7], ref_g[:7], dtype)


def test_caller_buffers_are_filled_in_place(points):
    b, thetas, ref_v, ref_g = points("gaussian4d")
    L = b.likelihood(backend="cpu")
    out, grad_out = np.empty(7), np.empty((7, 4))
    v, g = L.logl_and_grad(thetas[:7], out=out, grad_out=grad_out)
    assert v is out and g is grad_out
    assert_close(out, grad_out, ref_v[:7], ref_g[:7], "float64")
    with pytest.raises(ValueError, match="grad_out"):
        L.logl_and_grad(thetas[:7], out=out, grad_out=np.empty((7, 3)))
    with pytest.raises(ValueError, match=r"shape \(batch, 4\)"):
        L.logl(thetas[:, :3])


def test_analytic_derivative_drives_the_same_backends(points):
    """The hand-written path (used by the benchmark) goes through the same drivers."""
    b, thetas, ref_v, ref_g = points("linear_regression")
    L = Likelihood.from_derivative(AnalyticDerivative(b.kernel, b.gradient), b.kernel, b.params, b.data)
    assert_close(*L.logl_and_grad(thetas), ref_v, ref_g, "float64")


def test_cpu_kernels_compose_inside_user_numba_code(points):
    import numba

    b, thetas, ref_v, ref_g = points("gaussian4d")
    k = b.likelihood(backend="cpu").cpu_kernels()

    @numba.njit
    def walk(value_and_grad, data, thetas, scratch_size):
        grad = np.empty(thetas.shape[1])
        scratch = np.empty(scratch_size)
        total = 0.0
        for i in range(thetas.shape[0]):
            total += value_and_grad(thetas[i], data, grad, scratch) + grad[0]
        return total

    expected = float(np.sum(ref_v[:50] + ref_g[:50, 0]))
    assert abs(walk(k.value_and_grad, k.data, thetas[:50], k.scratch_size) - expected) < 1e-9 * abs(expected)
    assert abs(k.value(thetas[3], k.data, np.empty(k.scratch_size)) - ref_v[3]) < 1e-9 * abs(ref_v[3])


def test_unknown_backend_and_dtype_are_refused():
    b = builtin.get("rosenbrock")
    with pytest.raises(ValueError, match="backend"):
        b.likelihood(backend="tpu")
    for dtype in ("float16", "double-ish"):
        with pytest.raises(ValueError, match="dtype"):
            b.likelihood(dtype=dtype)


def test_auto_picks_gpu_only_when_one_is_usable():
    from nestgrad.likelihoods.backends.gpu import gpu_usable

    L = builtin.get("rosenbrock").likelihood(backend="auto")
    assert L.backend == ("gpu" if gpu_usable() else "cpu")
    assert L.dtype == (np.float32 if L.backend == "gpu" else np.float64)


def test_auto_without_a_cuda_driver_does_not_import_numba_cuda(tmp_path):
    """On Linux without NVIDIA's device files "auto" is the CPU at once: numba.cuda's imports took 1.5-3.5 s of
    every such run. With a driver file present the full check is asked (here: told there is a device)."""
    import os
    import subprocess
    import sys

    code = textwrap.dedent(f"""
        import sys
        from nestgrad.likelihoods import backends
        from nestgrad.likelihoods.backends import gpu
        backends.LINUX_DRIVER_FILES = ({str(tmp_path / "absent")!r},)
        print(backends.resolve("auto"), "numba.cuda" in sys.modules)
        backends.LINUX_DRIVER_FILES = ({str(tmp_path)!r},)
        gpu.gpu_usable = lambda: True
        print(backends.resolve("auto"))
    """)
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    if sys.platform.startswith("linux"):
        assert lines[0] == "cpu False", out.stdout
    assert lines[1] == "gpu", out.stdout


def test_kernel_launches_drop_only_the_low_occupancy_warning():
    """nestgrad sizes its own grids, so numba-cuda's "Grid size N will likely result in GPU under-utilization"
    (raised when a grid is configured; it reached users as a warning on every small GPU run) is dropped at our
    launches; any other warning still reaches the caller."""
    import warnings

    from nestgrad.likelihoods.backends.launch import configured

    class Kernel:
        def __init__(self, message):
            self.message = message

        def __getitem__(self, config):
            warnings.warn(self.message, RuntimeWarning)
            return config

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert configured(Kernel("Grid size 1 will likely result in GPU under-utilization due to low occupancy."),
                          1, 64) == (1, 64)
        # as numba words it where colorama is installed (seen from `nestgrad run` on an H200)
        configured(Kernel("\x1b[1mGrid size 2 will likely result in GPU under-utilization due to low occupancy.\x1b[0m"),
                   2, 64)
        configured(Kernel("something else"), 2, 64)
    assert [str(w.message) for w in caught] == ["something else"]
