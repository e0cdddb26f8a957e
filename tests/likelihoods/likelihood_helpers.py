"""Per-sample plain-Python references and tolerances shared by the likelihoods tests."""

import numpy as np

from nestgrad.likelihoods import builtin

# small data so the slow references (and the CUDA simulator) stay quick
SMALL = {"gaussian4d": {"n": 20}, "linear_regression": {"n": 20}, "student_t": {"n": 20},
         "negative_binomial": {"n": 20}}


def small_builtin(name):
    return builtin.get(name, **SMALL.get(name, {}))


def prior_draws(b, n, rng):
    """``n`` draws (n, ndim) from the built-in's default priors. ``likelihoods`` keeps no prior families: the
    draws go through the sampler's registry (``sampler.priors``), the one implementation of them."""
    from nestgrad.sampler.priors import Prior

    return Prior.from_spec(b.priors).draw(rng, n)


def reference(b, thetas):
    """Per-sample values and analytic gradients, plain Python in float64 (rows of ``thetas``)."""
    consts = tuple(b.data.values())
    values = np.array([b.kernel(t, *consts) for t in thetas], dtype=float)
    grads = np.empty_like(thetas, dtype=float)
    for t, row in zip(thetas, grads):
        b.gradient(t, *consts, row)
    return values, grads


def assert_close(values, grads, ref_values, ref_grads, dtype):
    """float64: agreement to rounding; float32: to single-precision accuracy of sums of ~N terms."""
    v_tol, g_tol = (1e-10, 1e-9) if np.dtype(dtype) == np.float64 else (5e-4, 5e-3)
    if values is not None:
        err = np.abs(values - ref_values) / (1.0 + np.abs(ref_values))
        assert np.all(err <= v_tol), f"values differ: worst relative error {np.nanmax(err):.3g} > {v_tol:g}"
    if grads is not None:
        scale = 1.0 + np.max(np.abs(ref_grads), axis=1, keepdims=True)
        err = np.abs(grads - ref_grads) / scale
        assert np.all(err <= g_tol), f"gradients differ: worst relative error {np.nanmax(err):.3g} > {g_tol:g}"
