"""``break`` in bounded loops (ad/breaks.py): against JAX, finite differences, and what the reverse sweep reads.

The corpus (kernels/early_exit.py) runs every break kernel through the finite-difference, jit, float32, PTX and
CUDA-simulator tests; here: an independent JAX reference for the Newton-solved Kepler orbit, and the promise that
the reverse sweep runs only the iterations the forward loop took.
"""
import math

import numpy as np
import pytest

from nestgrad import ad
import ad_test_kernels as corpus
from ad_test_kernels import early_exit

KEPLER = corpus.BY_NAME["kepler_newton"]


def _jax_kepler(jax, jnp):
    """The same likelihood in JAX with a fixed number of Newton steps (no early exit): past convergence a Newton
    step is the identity with zero derivative, so its gradient is the implicit-function one."""
    def loglike(theta, t, rv, max_iter):
        period, e, k, m0 = theta[0], theta[1], theta[2], theta[3]
        m = 2.0 * jnp.pi * t / period + m0
        ecc = m
        for _ in range(max_iter):
            ecc = ecc - (ecc - e * jnp.sin(ecc) - m) / (1.0 - e * jnp.cos(ecc))
        nu = 2.0 * jnp.arctan2(jnp.sqrt(1.0 + e) * jnp.sin(0.5 * ecc), jnp.sqrt(1.0 - e) * jnp.cos(0.5 * ecc))
        r = rv - k * (jnp.cos(nu) + e * math.cos(0.3))
        return -0.5 * jnp.sum(r * r)
    return jax.value_and_grad(loglike)


@pytest.fixture(scope="module")
def kepler_d():
    return ad.differentiate(early_exit.kepler_newton)


def test_kepler_gradient_matches_jax_and_finite_differences(kepler_d):
    import jax
    jnp = jax.numpy
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        vg = _jax_kepler(jax, jnp)
        rng = np.random.default_rng(3)
        theta0, t, rv, max_iter = KEPLER.args()
        fast = kepler_d.jit()
        for _ in range(4):
            theta = theta0 * rng.uniform(0.9, 1.1, theta0.shape)
            want_value, want = vg(jnp.asarray(theta), jnp.asarray(t), jnp.asarray(rv), 30)
            want = np.asarray(want)
            for obj in (kepler_d, fast):
                got = np.full(4, np.nan)
                value = obj.value_and_grad(theta, t, rv, max_iter, got)
                assert value == pytest.approx(float(want_value), rel=1e-12)
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
            check = ad.check_gradient(early_exit.kepler_newton, theta, t, rv, max_iter)
            assert check.ok, str(check)
    finally:
        jax.config.update("jax_enable_x64", x64)


def test_reverse_sweep_reads_only_the_iterations_taken(kepler_d):
    """Scratch is sized for max_iter Newton steps; the steps never taken leave their slots untouched. Prefilled
    with NaN, they would poison the gradient if the reverse sweep replayed the whole range."""
    theta, t, rv, max_iter = KEPLER.args()
    n = kepler_d.scratch_size(theta, t, rv, max_iter)
    assert n == max_iter, "one stored value (the iterate) per Newton step of the full range"
    want = np.zeros(4)
    kepler_d.value_and_grad(theta, t, rv, max_iter, want)  # scratch allocated inside (np.empty)
    for obj in (kepler_d, kepler_d.jit()):
        scratch = np.full(n, np.nan)
        grad = np.full(4, np.nan)
        obj.raw_value_and_grad(theta, t, rv, max_iter, grad, scratch)
        assert np.isnan(scratch[10:]).all(), "Newton converges in well under 10 steps here"
        np.testing.assert_allclose(grad, want, rtol=1e-11)


BOUNDED_SCAN = """
def k(theta, x, m):
    s = 0.0
    for i in range(m):
        if i >= x.shape[0]:
            break
        s += theta[0] * x[i] + theta[1] * theta[1]
    return s
"""


def test_break_guards_reads_past_the_data():
    """The loop's range is longer than the data; the break keeps every variant from reading past its end (numba
    does not check bounds: a read past the end would change the value, not raise)."""
    d = ad.differentiate_source(BOUNDED_SCAN, "k")
    theta, x = np.array([0.5, 1.5]), np.array([1.0, 2.0, 4.0])
    want_value, want = 0.5 * 7.0 + 3 * 2.25, np.array([7.0, 3 * 2 * 1.5])  # by hand: three terms
    for obj in (d, d.jit()):
        grad = np.full(2, np.nan)
        assert obj.value_and_grad(theta, x, 8, grad) == pytest.approx(want_value, rel=1e-14)
        np.testing.assert_allclose(grad, want, rtol=1e-14)
    assert "may break" in d.report()


def test_report_names_the_break_loop(kepler_d):
    report = kepler_d.report(*KEPLER.args())
    lines = [ln for ln in report.splitlines() if "may break" in ln]
    assert len(lines) == 1 and "loop-carried state" in lines[0] and "(ecc)" in lines[0]
    assert f"scratch: {8 * 50} bytes per sample" in report
