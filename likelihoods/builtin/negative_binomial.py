"""Negative-binomial counts with mean mu and dispersion r (both inside lgamma / log terms)."""

import math

import numpy as np

from ._base import Builtin
from ._special import digamma

NAME = "negative_binomial"
DESCRIPTION = "negative-binomial counts k of shape (N,): mean mu and dispersion r"
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


def get(n=100, seed=0):
    """``n`` counts with mean 5 and dispersion 2."""
    return Builtin(NAME, kernel, gradient, PARAMS, dict(PRIORS), make_data(np.random.default_rng(seed), n),
                   None, "none known (not computed)", {"mu": 5.0, "r": 2.0}, DESCRIPTION,
                   {"n": n, "seed": seed})
