"""A normalised d-dimensional Gaussian in the unit cube, optionally with equal correlation rho."""

import math

import numpy as np

from ._base import Builtin
from ._options import ANY, DIMENSIONS, POSITIVE, OptionError
from ..ranges import Range

NAME = "gaussian"
DESCRIPTION = "normalised d-dim Gaussian at 0.5 (sigma 0.1, optional correlation rho) in the unit cube; logZ ~ 0"
# checked by builtin.get before get() runs; rho against ndim below
OPTIONS = {"ndim": DIMENSIONS, "sigma": POSITIVE, "rho": Range(float, -1.0, 1.0, True, True), "centre": ANY}


def kernel_diagonal(theta, mean, inv_var, lognorm):
    # rho = 0: the quadratic form is a sum of d squares, O(d) instead of the O(d^2) double loop below.
    d = theta.shape[0]
    quad = 0.0
    for i in range(d):
        di = theta[i] - mean[i]
        quad += di * di * inv_var[i]
    return lognorm - 0.5 * quad


def gradient_diagonal(theta, mean, inv_var, lognorm, out):
    for i in range(theta.shape[0]):
        out[i] = -inv_var[i] * (theta[i] - mean[i])


def kernel(theta, mean, icov, lognorm):
    d = theta.shape[0]
    quad = 0.0
    for i in range(d):
        di = theta[i] - mean[i]
        for j in range(d):
            quad += di * icov[i, j] * (theta[j] - mean[j])
    return lognorm - 0.5 * quad


def gradient(theta, mean, icov, lognorm, out):
    d = theta.shape[0]
    for i in range(d):
        g = 0.0
        for j in range(d):
            g -= icov[i, j] * (theta[j] - mean[j])
        out[i] = g


def covariance(ndim, sigma, rho):
    cov = np.full((ndim, ndim), rho * sigma * sigma)
    np.fill_diagonal(cov, sigma * sigma)
    return cov


def _normal_cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def reference_logz(mean, cov, rho):
    """log of the Gaussian's mass inside the unit cube (the likelihood is normalised, the prior is U[0,1]^d).

    Diagonal: a product of 1-D normal CDF differences (exact). Correlated: scipy's multivariate normal CDF
    (Genz's method, absolute error ~1e-5 on a mass close to one).
    """
    sigma = np.sqrt(np.diag(cov))
    if rho == 0.0:  # math.erfc rather than scipy.special.ndtr: importing scipy.special took 0.1-0.4 s of each run
        mass = [_normal_cdf((1.0 - m) / s) - _normal_cdf((0.0 - m) / s) for m, s in zip(mean, sigma)]
        return float(np.sum(np.log(mass)))
    from scipy.stats import multivariate_normal

    mass = multivariate_normal(mean, cov).cdf(np.ones_like(mean), lower_limit=np.zeros_like(mean))
    return float(math.log(mass))


def get(ndim=4, sigma=0.1, rho=0.0, centre=0.5):
    """Gaussian N(centre, Σ) with Σ_ii = sigma², Σ_ij = rho sigma²; prior U[0, 1]^ndim.

    rho = 0 uses ``kernel_diagonal`` (data ``mean, inv_var, lognorm``), otherwise ``kernel`` (data
    ``mean, icov, lognorm``): same log-likelihood, O(d) instead of O(d²) per evaluation."""
    if not -1.0 / (ndim - 1 if ndim > 1 else 1) < rho < 1.0:
        raise OptionError(NAME, "rho", f"{rho} does not give a positive-definite covariance for ndim {ndim} "
                                       f"(rho must lie in ({-1.0 / max(ndim - 1, 1):g}, 1))")
    mean = np.full(ndim, float(centre))
    cov = covariance(ndim, float(sigma), float(rho))
    _, logdet = np.linalg.slogdet(cov)
    lognorm = float(-0.5 * (ndim * math.log(2.0 * math.pi) + logdet))
    if rho == 0.0:  # no correlation: the diagonal kernel (O(d) per evaluation)
        fn, grad, data = kernel_diagonal, gradient_diagonal, {"mean": mean, "inv_var": 1.0 / np.diag(cov)}
    else:
        fn, grad, data = kernel, gradient, {"mean": mean, "icov": np.linalg.inv(cov)}
    data["lognorm"] = lognorm
    params = tuple(f"x{i + 1}" for i in range(ndim))
    priors = {p: ("uniform", 0.0, 1.0) for p in params}
    method = "exact (normal CDF)" if rho == 0.0 else "scipy multivariate normal CDF of the unit cube"
    return Builtin(NAME, fn, grad, params, priors, data, reference_logz(mean, cov, rho), method,
                   dict(zip(params, mean.tolist())), DESCRIPTION,
                   {"ndim": ndim, "sigma": sigma, "rho": rho, "centre": centre})
