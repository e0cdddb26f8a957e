"""Built-in ``gaussian``: the diagonal kernel (rho = 0) and the correlated one (rho != 0) against scipy's
multivariate normal density, analytic gradients against finite differences and against the AD gradient."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from nestgrad.likelihoods import builtin
from nestgrad.likelihoods.builtin import gaussian
from nestgrad.ad.check import finite_difference_gradient
from nestgrad.likelihoods.gradcheck import relative_error

CASES = [dict(ndim=1), dict(ndim=5), dict(ndim=7, sigma=0.2, centre=0.4), dict(ndim=4, rho=0.5),
         dict(ndim=3, rho=-0.3, sigma=0.25)]


def _points(b, n=12):
    return np.random.default_rng(b.ndim).uniform(0.0, 1.0, (n, b.ndim))


def test_rho_zero_uses_the_diagonal_kernel_without_a_matrix():
    b = builtin.get("gaussian", ndim=100)
    assert b.kernel is gaussian.kernel_diagonal and b.gradient is gaussian.gradient_diagonal
    assert all(np.ndim(v) <= 1 for v in b.data.values())  # O(d) data, no d x d inverse covariance
    assert builtin.get("gaussian", ndim=3, rho=0.2).kernel is gaussian.kernel


@pytest.mark.parametrize("options", CASES, ids=str)
def test_value_is_the_multivariate_normal_log_density(options):
    b = builtin.get("gaussian", **options)
    sigma, rho = options.get("sigma", 0.1), options.get("rho", 0.0)
    cov = np.full((b.ndim, b.ndim), rho * sigma**2)
    np.fill_diagonal(cov, sigma**2)
    reference = multivariate_normal(np.full(b.ndim, options.get("centre", 0.5)), cov)
    for theta in _points(b):
        expected = reference.logpdf(theta)
        assert abs(b.kernel(theta, *b.data.values()) - expected) < 1e-9 * (1 + abs(expected))


@pytest.mark.parametrize("options", CASES, ids=str)
def test_analytic_gradient_matches_finite_differences(options):
    b = builtin.get("gaussian", **options)
    data = tuple(b.data.values())
    out = np.empty(b.ndim)
    for theta in _points(b, 6):
        b.gradient(theta, *data, out)
        fd = finite_difference_gradient(b.kernel, theta, *data)
        assert np.max(relative_error(out[None], fd[None])) < 1e-6


@pytest.mark.parametrize("options", [dict(ndim=6), dict(ndim=3, rho=0.4)], ids=str)
def test_ad_gradient_on_cpu_matches_the_analytic_one(options):
    b = builtin.get("gaussian", **options)
    L = b.likelihood(backend="cpu")
    thetas = _points(b, 8)
    values, grads = L.logl_and_grad(thetas)
    out = np.empty(b.ndim)
    for theta, value, grad in zip(thetas, values, grads):
        b.gradient(theta, *b.data.values(), out)
        assert abs(value - b.kernel(theta, *b.data.values())) < 1e-9 * (1 + abs(value))
        assert np.max(relative_error(grad[None], out[None])) < 1e-9
    assert L.check_gradient(n=4).ok
