"""Emit pass: the generated source compiles with numba (CPU, float32 and float64) and with numba-cuda to PTX,
float32 code stays float32, and user rules are inlined into the generated text."""
import numpy as np
import pytest

from test_core_helpers import from_text

KERNEL = '''
import math
from nestgrad import ad

def softplus(x):
    return math.log1p(math.exp(x))

@ad.rule(softplus)
def softplus_partials(x):
    return (1.0 / (1.0 + math.exp(-x)),)

def k(theta, x, dt):
    y = theta[1]
    s = 0.0
    for i in range(x.shape[0]):
        y = y - dt * theta[0] * y
        s -= softplus((y - x[i]) * 2.0) + 0.5 * theta[0] ** 2
    return s
'''


def args(dtype=np.float64):
    return np.array([0.6, 1.1], dtype), np.linspace(1.0, 0.3, 12).astype(dtype), 0.05


def test_user_rule_is_used_and_inlined():
    d = from_text(KERNEL)
    assert "softplus(" not in d.source and "softplus_partials(" not in d.source  # inlined, not called
    assert "log1p" in d.source and "math.exp(-" not in d.source  # primal body kept; rule's -x lowered
    ns = {}
    exec(compile(KERNEL, "<emit>", "exec"), ns)
    theta, x, dt = args()
    g = np.zeros(2)
    v = d.value_and_grad(theta, x, dt, g)
    assert v == pytest.approx(ns["k"](theta, x, dt), rel=1e-13)
    h = 1e-6
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        fd = (ns["k"](theta + e, x, dt) - ns["k"](theta - e, x, dt)) / (2 * h)
        assert g[j] == pytest.approx(fd, rel=1e-6)


def test_jit_matches_python_in_both_precisions():
    d = from_text(KERNEL)
    theta, x, dt = args()
    g_py = np.zeros(2)
    v_py = d.value_and_grad(theta, x, dt, g_py)
    j64 = d.jit()
    g = np.zeros(2)
    assert j64.value_and_grad(theta, x, dt, g) == pytest.approx(v_py, rel=1e-12)
    np.testing.assert_allclose(g, g_py, rtol=1e-12)
    j32 = d.jit(dtype="float32")
    t32, x32, _ = args(np.float32)
    g32 = np.zeros(2, np.float32)
    v32 = j32.value_and_grad(t32, x32, dt, g32)
    from numba import float32
    assert all(sig.return_type == float32 for sig in j32.raw_value_and_grad.nopython_signatures)
    np.testing.assert_allclose(g32, g_py, rtol=2e-4)
    scratch = np.empty(d.scratch_size(t32, x32, dt), np.float32)
    g32b = np.zeros(2, np.float32)
    j32.raw_grad(t32, x32, dt, g32b, scratch)
    np.testing.assert_allclose(g32b, g32, rtol=1e-5)


def test_float32_literals_are_typed():
    d = from_text(KERNEL)
    src = d.cuda(dtype="float32").source
    assert "np.float32(0.5)" in src
    assert "def value_and_grad" not in src  # device functions never allocate


def test_cuda_float32_ptx_has_no_double_arithmetic():
    import numba.cuda as numba_cuda
    from numba import float32
    d = from_text(KERNEL)
    dev = d.cuda(dtype="float32")
    sig = float32(float32[:], float32[:], float32, float32[:], float32[:])
    ptx, _ = numba_cuda.compile_ptx(dev.python["raw_value_and_grad"], sig, device=True, cc=(9, 0))
    double_ops = [line for line in ptx.splitlines() if ".f64" in line]
    assert not double_ops, double_ops[:5]
