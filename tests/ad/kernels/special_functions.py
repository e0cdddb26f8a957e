"""Kernels calling ad.special: digamma, trigamma, lbeta, logaddexp, log1pexp, xlogy."""
import math

import numpy as np

from nestgrad.ad import special

from .case import Case, rng


def digamma_sum(theta, x):
    # d/da digamma needs trigamma
    s = 0.0
    for i in range(x.shape[0]):
        s += special.digamma(theta[0] + x[i]) * x[i]
    return s


def _digamma_args():
    return np.array([1.7]), np.linspace(0.3, 6.0, 10)


def trigamma_terms(theta):
    return special.trigamma(theta[0]) + special.trigamma(theta[1] + 3.5) * theta[0]


def _trigamma_args():
    return (np.array([2.3, 0.9]),)


def beta_lbeta(theta, x):
    # Beta(a, b) log-density with active shapes through lbeta
    a, b = theta[0], theta[1]
    s = 0.0
    for i in range(x.shape[0]):
        s += (a - 1.0) * math.log(x[i]) + (b - 1.0) * math.log(1.0 - x[i])
    return s - x.shape[0] * special.lbeta(a, b)


def _beta_args():
    return np.array([2.2, 3.1]), rng(9).beta(2.0, 3.0, 30)


def mixture_logaddexp(theta, x):
    w, mu1, mu2 = theta[0], theta[1], theta[2]
    s = 0.0
    for i in range(x.shape[0]):
        s += special.logaddexp(math.log(w) - 0.5 * (x[i] - mu1) ** 2,
                               math.log(1.0 - w) - 0.5 * (x[i] - mu2) ** 2)
    return s


def _mixture_logaddexp_args():
    r = rng(10)
    return np.array([0.35, -1.1, 1.2]), np.concatenate([r.normal(-1.0, 1.0, 15), r.normal(1.0, 1.0, 20)])


def xlogy_counts(theta, c, t):
    # xlogy(c, rate): c = 0 entries contribute exactly 0; also xlogy with an active first argument
    s = 0.0
    for i in range(c.shape[0]):
        rate = theta[0] * t[i]
        s += special.xlogy(c[i], rate) - rate
    return s + special.xlogy(theta[1], 2.0 + theta[0])


def _xlogy_args():
    c = np.array([0.0, 1.0, 3.0, 0.0, 2.0, 5.0, 4.0, 0.0])
    return np.array([1.6, 0.7]), c, np.linspace(0.5, 2.0, 8)


def log1pexp_softplus(theta, x):
    # both tails of log1pexp: large positive and large negative arguments
    s = 0.0
    for i in range(x.shape[0]):
        s += special.log1pexp(theta[0] * x[i] - theta[1])
    return s


def _log1pexp_args():
    return np.array([3.0, 0.5]), np.array([-12.0, -3.0, -0.5, 0.0, 0.4, 2.0, 8.0, 15.0])


CASES = [
    Case("digamma_sum", digamma_sum, _digamma_args, cuda=True, tags=("special.digamma",)),
    Case("trigamma_terms", trigamma_terms, _trigamma_args, tags=("special.trigamma", "no data")),
    Case("beta_lbeta", beta_lbeta, _beta_args, tags=("special.lbeta",)),
    Case("mixture_logaddexp", mixture_logaddexp, _mixture_logaddexp_args, tags=("special.logaddexp",)),
    Case("xlogy_counts", xlogy_counts, _xlogy_args, tags=("special.xlogy",)),
    Case("log1pexp_softplus", log1pexp_softplus, _log1pexp_args, tags=("special.log1pexp",)),
]
