"""``np.sum`` / ``.sum()`` / ``np.dot`` / ``np.mean`` / ``.mean()`` / rows and columns (ad/sugar.py): the same gradient as the hand-written
loop, and the same as JAX's.  The corpus (kernels/reductions.py) runs them through finite differences, jit,
float32, PTX and the CUDA simulator."""
import numpy as np
import pytest

from nestgrad import ad
from ad_test_kernels import numerics as nm
from ad_test_kernels import reductions as red

ARGS = {red.gauss_np_sum: red._gauss_args, red.linear_rows: red._linear_rows_args,
        red.poisson_columns: red._poisson_columns_args, red.means: red._means_args}


@pytest.mark.parametrize("sugar, loop", red.HAND_WRITTEN, ids=lambda f: f.__name__)
def test_sugar_matches_the_hand_written_loop(sugar, loop):
    """Both are differentiated independently; the loop form is the reference (itself checked against finite
    differences by the corpus).  Same operations in the same order, so equal to rounding."""
    args = ARGS[sugar]()
    ds, dl = ad.differentiate(sugar), ad.differentiate(loop)
    for make in (lambda d: d, lambda d: d.jit()):
        gs, gl = np.full(args[0].shape, np.nan), np.full(args[0].shape, np.nan)
        vs = make(ds).value_and_grad(*args, gs)
        vl = make(dl).value_and_grad(*args, gl)
        assert vs == pytest.approx(vl, rel=1e-13)
        assert not nm.close_mismatch(gs, gl, 1e-13, 1e-13 * nm.scale_of(vl, [gl]))
    assert ds.report().count("loop at line") == dl.report().count("loop at line")


def test_reductions_match_jax():
    import jax
    jnp = jax.numpy
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        def gauss(theta, x, y, sigma):
            return -0.5 * jnp.sum(((y - theta[0] * x - theta[1]) / sigma) ** 2) - x.shape[0] * jnp.log(sigma)

        def rows(theta, X, y):
            return -0.5 * jnp.sum((y - X @ theta) ** 2) - 0.01 * jnp.sum(theta ** 2)

        def means(theta, X, y):
            a, b = theta[0], theta[1]
            decay = jnp.exp(-a * jnp.arange(X.shape[1]))
            return -0.5 * jnp.mean((y - a - b * X[:, 0]) ** 2) + jnp.sum(jnp.mean(X * b, axis=1)) * jnp.mean(decay)

        for kernel, reference in ((red.gauss_np_sum, gauss), (red.linear_rows, rows), (red.means, means)):
            args = ARGS[kernel]()
            want_value, want = jax.value_and_grad(reference)(*(jnp.asarray(a) for a in args))
            got = np.full(args[0].shape, np.nan)
            value = ad.differentiate(kernel).value_and_grad(*args, got)
            assert value == pytest.approx(float(want_value), rel=1e-12)
            np.testing.assert_allclose(got, np.asarray(want), rtol=1e-11, atol=1e-12)
    finally:
        jax.config.update("jax_enable_x64", x64)


def test_scalar_argument_is_broadcast_not_indexed():
    """sigma is used as a number outside the reduction, so inside it is the same number for every element."""
    d = ad.differentiate(red.gauss_np_sum)
    assert "sigma[" not in d.source and "y[" in d.source and "x[" in d.source
