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
    cuda = pytest.importorskip("numba.cuda")
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
