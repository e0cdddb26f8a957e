"""The seed model of the design (docs/api.md): two independent Gaussian rows of data, unknown means and widths."""

import functools
import math

import numpy as np

from ._base import Builtin
from ._options import DATA_POINTS, SEED
from ._reference import log_integral, normal_mass

NAME = "gaussian4d"
DESCRIPTION = "means and widths (mu1, mu2, sigma1, sigma2) of 2-D Gaussian data x of shape (2, N)"
OPTIONS = {"n": DATA_POINTS, "seed": SEED}  # checked by builtin.get before get() runs
PARAMS = ("mu1", "mu2", "sigma1", "sigma2")
PRIORS = {"mu1": ("uniform", 0.0, 1.0), "mu2": ("uniform", 0.0, 1.0),
          "sigma1": ("uniform", 0.01, 0.5), "sigma2": ("uniform", 0.01, 0.5)}


def kernel(theta, x):
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    quad = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        quad += d1 * d1 + d2 * d2
    return -0.5 * quad - n * (math.log(s1) + math.log(s2)) - n * math.log(2.0 * math.pi)


def gradient(theta, x, out):
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    g0 = g1 = q1 = q2 = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        g0 += d1
        g1 += d2
        q1 += d1 * d1
        q2 += d2 * d2
    out[0] = g0 / s1
    out[1] = g1 / s2
    out[2] = (q1 - n) / s1
    out[3] = (q2 - n) / s2


def make_data(rng, n=100, mean=0.5, sigma=0.1):
    return {"x": rng.normal(mean, sigma, size=(2, n))}


def reference_logz(x, priors=PRIORS):
    """Exact in mu (the Gaussian integral over the uniform box, via the normal CDF), quadrature in sigma.

    The likelihood factorises over the two rows and so does the prior, so logZ is a sum of two 2-D integrals;
    for each row  ∫ dmu N-likelihood = exp(-S/2s²) s sqrt(2π/n) [Φ((hi-x̄)√n/s) - Φ((lo-x̄)√n/s)] (2πs²)^(-n/2)
    with S = Σ(x - x̄)², leaving a 1-D integral over sigma for Gauss-Legendre quadrature (_reference.py).
    """
    total = 0.0
    for row, (mu_name, s_name) in enumerate((("mu1", "sigma1"), ("mu2", "sigma2"))):
        _, mu_lo, mu_hi = priors[mu_name]
        _, s_lo, s_hi = priors[s_name]
        data = np.asarray(x[row], dtype=float)
        n = data.size
        mean = data.mean()
        spread = float(((data - mean) ** 2).sum())

        def log_row(s, n=n, mean=mean, spread=spread, mu_lo=mu_lo, mu_hi=mu_hi):
            box = normal_mass((mu_lo - mean) * math.sqrt(n) / s, (mu_hi - mean) * math.sqrt(n) / s)
            return (-0.5 * n * math.log(2.0 * math.pi) - n * math.log(s) - 0.5 * spread / (s * s)
                    + math.log(s * math.sqrt(2.0 * math.pi / n)) + math.log(box))

        total += log_integral(log_row, s_lo, s_hi) - math.log(s_hi - s_lo) - math.log(mu_hi - mu_lo)
    return total


@functools.lru_cache(maxsize=8)
def _default_reference(n, seed):
    # once per process: a config run builds the built-in twice (check, then run)
    return reference_logz(make_data(np.random.default_rng(seed), n)["x"])


def get(n=100, seed=0):
    """``n`` points per row drawn from N(0.5, 0.1²) with ``numpy.random.default_rng(seed)``."""
    data = make_data(np.random.default_rng(seed), n)
    return Builtin(NAME, kernel, gradient, PARAMS, dict(PRIORS), data, _default_reference(n, seed),
                   "exact Gaussian integral over the means, Gauss-Legendre quadrature over the widths",
                   {"mu1": 0.5, "mu2": 0.5, "sigma1": 0.1, "sigma2": 0.1}, DESCRIPTION,
                   {"n": n, "seed": seed})
