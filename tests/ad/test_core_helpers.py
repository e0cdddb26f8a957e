"""Shared helpers of the differentiator's own pass tests (test_core_*.py); holds no tests itself."""
import numpy as np

from nestgrad import ad


def from_text(text, name="k", wrt="theta"):
    return ad.differentiate_source(text, name, wrt=wrt, filename=f"<core-test-{name}>")


def fd_gradient(fn, args, position=0, h=1e-6):
    """Central finite differences of ``fn(*args)`` in the 1-D array argument at ``position``."""
    x = np.array(args[position], dtype=float)
    out = np.empty_like(x)
    for j in range(x.size):
        lo, hi = x.copy(), x.copy()
        lo[j] -= h
        hi[j] += h
        a = list(args)
        a[position] = hi
        f_hi = fn(*a)
        a[position] = lo
        f_lo = fn(*a)
        out[j] = (f_hi - f_lo) / (2 * h)
    return out


def assert_gradient_ok(d, fn, args, rtol=1e-6, atol=1e-8):
    """value_and_grad and grad of ``d`` agree with ``fn`` and with finite differences (theta first)."""
    theta = np.asarray(args[0], dtype=float)
    g = np.full(theta.shape, np.nan)
    value = d.value_and_grad(*args, g)
    assert np.isclose(value, fn(*args), rtol=1e-12, atol=1e-12)
    fd = fd_gradient(fn, args)
    np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol)
    g2 = np.full(theta.shape, np.nan)
    assert d.grad(*args, g2) is None
    np.testing.assert_allclose(g2, g, rtol=1e-13, atol=1e-15)
    return g
