"""Negative-binomial counts with mean mu and dispersion r (both inside lgamma / log terms)."""

import functools
import math

import numpy as np

from ._base import Builtin
from ._options import DATA_POINTS, SEED
from ._reference import log_integral_box
from ._special import digamma

NAME = "negative_binomial"
DESCRIPTION = "negative-binomial counts k of shape (N,): mean mu and dispersion r"
OPTIONS = {"n": DATA_POINTS, "seed": SEED}  # checked by builtin.get before get() runs
PARAMS = ("mu", "r")
PRIORS = {"mu": ("loguniform", 0.1, 100.0), "r": ("loguniform", 0.1, 100.0)}


def kernel(theta, k):
    mu, r = theta[0], theta[1]
    n = k.shape[0]
    total = 0.0
    for i in range(n):
        total += math.lgamma(k[i] + r) - math.lgamma(k[i] + 1.0) + k[i] * math.log(mu / (r + mu))
    return total + n * (r * math.log(r / (r + mu)) - math.lgamma(r))


def gradient(theta, k, out):
    mu, r = theta[0], theta[1]
    n = k.shape[0]
    k_sum = 0.0
    psi_sum = 0.0
    for i in range(n):
        k_sum += k[i]
        psi_sum += digamma(k[i] + r)
    out[0] = k_sum / mu - (k_sum + n * r) / (r + mu)
    out[1] = psi_sum - n * digamma(r) + n * math.log(r / (r + mu)) + n - (k_sum + n * r) / (r + mu)


def make_data(rng, n=100, mu=5.0, r=2.0):
    return {"k": rng.negative_binomial(r, r / (r + mu), size=n).astype(float)}


def reference_logz(k, priors=PRIORS):
    """Two-dimensional Simpson quadrature in (log mu, log r), where both loguniform priors are flat,
    over the window holding the posterior mass (likelihoods/builtin/_reference.py: log_integral_box)."""
    from scipy.special import gammaln

    k = np.asarray(k, dtype=float)
    counts, multiplicity = np.unique(k, return_counts=True)  # sums over distinct counts: much cheaper
    (_, mu_lo, mu_hi), (_, r_lo, r_hi) = priors["mu"], priors["r"]

    def log_f(log_mu, log_r):
        mu, r = np.exp(log_mu), np.exp(log_r)
        total = np.zeros(np.broadcast(mu, r).shape)
        for c, m in zip(counts, multiplicity):
            total += m * (gammaln(c + r) - gammaln(c + 1.0) + c * np.log(mu / (r + mu)))
        return total + k.size * (r * np.log(r / (r + mu)) - gammaln(r))

    box = ((math.log(mu_lo), math.log(mu_hi)), (math.log(r_lo), math.log(r_hi)))
    return log_integral_box(log_f, box) - math.log(box[0][1] - box[0][0]) - math.log(box[1][1] - box[1][0])


@functools.lru_cache(maxsize=8)
def _default_reference(n, seed):
    return reference_logz(make_data(np.random.default_rng(seed), n)["k"])


def get(n=100, seed=0):
    """``n`` counts with mean 5 and dispersion 2."""
    data = make_data(np.random.default_rng(seed), n)
    return Builtin(NAME, kernel, gradient, PARAMS, dict(PRIORS), data, _default_reference(n, seed),
                   "Simpson quadrature in (log mu, log r) over the posterior window", {"mu": 5.0, "r": 2.0},
                   DESCRIPTION, {"n": n, "seed": seed})
