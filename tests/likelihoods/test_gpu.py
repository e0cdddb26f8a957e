"""The GPU backend under the CUDA simulator and as PTX, each in a subprocess (the simulator must be chosen
before numba is first imported)."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent.parent


def _run(mode, simulator):
    """``gpu_checks.py MODE`` in a subprocess: under the simulator, or (``simulator=False``) with whatever CUDA the
    machine has (``ptx`` needs none; ``sim`` then runs its checks on a real device)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(HERE), env.get("PYTHONPATH", "")])
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    else:
        env.pop("NUMBA_ENABLE_CUDASIM", None)
    result = subprocess.run([sys.executable, str(HERE / "gpu_checks.py"), mode], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0 and "ALL OK" in result.stdout, result.stdout[-3000:] + result.stderr[-5000:]


def test_gpu_backend_matches_per_sample_python_under_the_simulator():
    _run("sim", simulator=True)


def test_gpu_batch_kernels_compile_to_ptx():
    _run("ptx", simulator=False)


@pytest.mark.device
def test_gpu_backend_matches_per_sample_python_on_a_device(cuda_device):
    """The simulator's checks on a real GPU: every built-in's batched values and gradients against plain Python
    (the tolerances are float32's and float64's, not bit equality), device arrays in and out, bad samples."""
    _run("sim", simulator=False)


def test_cuda_compiles_with_a_numpy_that_lacks_row_stack():
    """NumPy 2.5 removed ``np.row_stack``, which numba-cuda 0.30 overloads on its first compile (seen on a GPU
    machine): importing nestgrad restores the alias, so a kernel still compiles to PTX."""
    code = ("import numpy\nif hasattr(numpy, 'row_stack'): del numpy.row_stack\nimport nestgrad\n"
            "import numba\nfrom numba import cuda\n"
            "def k(x):\n    i = cuda.grid(1)\n    if i < x.shape[0]:\n        x[i] = 2.0 * x[i]\n"
            "ptx, _ = cuda.compile_ptx(k, (numba.float64[::1],), cc=(9, 0))\nprint('.entry' in ptx)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "True", result.stderr[-3000:]
