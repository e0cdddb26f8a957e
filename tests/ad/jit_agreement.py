"""One comparison of a jit-compiled derivative against the pure-Python one, shared by the differentiator tests."""
import numpy as np


def assert_jit_agrees(jitted, dtype, theta, consts, value, grad, name):
    """``jitted.value_and_grad`` in ``dtype`` agrees with the Python ``value``/``grad`` (float consts cast)."""
    cs = [c.astype(dtype) if isinstance(c, np.ndarray) and c.dtype.kind == "f" else c for c in consts]
    gj = np.zeros(theta.shape, dtype)
    vj = jitted.value_and_grad(theta.astype(dtype), *cs, gj)
    tol = 1e-10 if dtype == "float64" else 2e-4
    scale = max(1.0, abs(value), np.abs(grad).max())
    assert abs(vj - value) <= tol * scale, (name, dtype, vj, value)
    assert np.abs(gj - grad).max() <= tol * scale, (name, dtype, gj, grad)
