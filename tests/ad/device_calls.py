"""PTX type-checks of generated device code that calls other device functions (ad.linalg, functions with an
adjoint-form @ad.rule): shared by test_linalg.py and test_array_rules.py.

``compile_ptx`` compiles the device functions a device function calls for the *current* device, which needs a
CUDA driver.  Without one (CI), the ``ptx_without_driver`` fixture stands in a device of the compute capability
the caller is compiled for; on a machine with a GPU nothing is replaced.
"""
import numpy as np
import pytest

CC = (9, 0)


class _StandInDevice:
    compute_capability = CC


@pytest.fixture
def ptx_without_driver(monkeypatch):
    from numba import cuda
    if not cuda.is_available():
        import numba.cuda.dispatcher as dispatcher
        monkeypatch.setattr(dispatcher, "get_current_device", lambda: _StandInDevice())
    return cuda


def raw_value_and_grad_ptx(cuda, derivative, case, dtype):
    """compile_ptx of ``raw_value_and_grad`` at the case's argument types; its return type."""
    import numba
    args = tuple(np.asarray(a, dtype) if isinstance(a, np.ndarray) else a for a in case.args())
    vector = numba.typeof(np.zeros(1, dtype))
    arg_types = tuple(numba.typeof(a) for a in args) + (vector, vector)  # the gradient and scratch
    dev = derivative.cuda(dtype=dtype)
    ptx, result = cuda.compile_ptx(dev.python["raw_value_and_grad"], arg_types, device=True, cc=CC)
    assert ".func" in ptx
    return result


# ---- the numba CUDA simulator: a test file runs itself in a subprocess with NUMBA_ENABLE_CUDASIM=1 ----------

SIMULATOR_TAG = "CUDASIM-RESULTS "


def simulate_cases(cases, names):
    """Script side (inside the simulator): each named case, float64 and float32, through test_cuda_sim's batched
    kernel; prints one tagged JSON line of results."""
    import json

    from numba import cuda

    import test_cuda_sim
    from ad_test_kernels import numerics as nm
    from nestgrad import ad

    results = {}
    for name in names:
        for dtype in ("float64", "float32"):
            try:
                results[f"{name}-{dtype}"] = test_cuda_sim._run_case(cases[name], ad, cuda, np, nm, dtype)
            except Exception as exc:  # reported per case so one failure does not hide the others
                results[f"{name}-{dtype}"] = {"error": f"{type(exc).__name__}: {exc}"}
    print(SIMULATOR_TAG + json.dumps(results))


def run_simulator(test_file):
    """Test side: run ``test_file`` as a script under the simulator and return its results by case."""
    import json
    import os
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, str(pathlib.Path(test_file).resolve())], env=env, cwd=str(root),
                          capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(SIMULATOR_TAG)]
    assert proc.returncode == 0 and lines, f"simulator run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1][len(SIMULATOR_TAG):])
