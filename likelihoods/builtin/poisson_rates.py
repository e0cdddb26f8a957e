"""Independent Poisson counts, one unknown rate per bin (dimension = number of bins)."""

import math

import numpy as np

from ._base import Builtin
from ._options import DIMENSIONS, POSITIVE, SEED, OptionError
from ..ranges import Range

NAME = "poisson_rates"
DESCRIPTION = "one Poisson rate per bin of independent counts (ndim = bins); uniform or loguniform rate priors"
# checked by builtin.get before get() runs (low None: the prior's own default); low against high below
OPTIONS = {"bins": DIMENSIONS, "prior": ("uniform", "loguniform"), "low": (Range(float, 0.0, 1e6), None),
           "high": POSITIVE, "seed": SEED}


def kernel(theta, counts):
    m = counts.shape[0]
    total = 0.0
    for j in range(m):
        total += counts[j] * math.log(theta[j]) - theta[j] - math.lgamma(counts[j] + 1.0)
    return total


def gradient(theta, counts, out):
    for j in range(counts.shape[0]):
        out[j] = counts[j] / theta[j] - 1.0


def make_data(rng, bins=5, low=1.0, high=20.0):
    rates = rng.uniform(low, high, bins)
    return {"counts": rng.poisson(rates).astype(float)}, rates


def _log_bin_evidence(k, family, low, high):
    """One bin's evidence in closed form: regularized lower incomplete gamma P(a, λ) = gammainc(a, λ).

    uniform:     (1/(hi-lo)) ∫ λ^k e^-λ / k! dλ   = [P(k+1, hi) - P(k+1, lo)] / (hi - lo)
    loguniform:  (1/ln(hi/lo)) ∫ λ^(k-1) e^-λ / k! dλ = [P(k, hi) - P(k, lo)] / (k ln(hi/lo))   (k >= 1)
                 and [E1(lo) - E1(hi)] / ln(hi/lo) for k = 0.
    """
    from scipy.special import exp1, gammainc

    if family == "uniform":
        return math.log(gammainc(k + 1.0, high) - gammainc(k + 1.0, low)) - math.log(high - low)
    if k == 0:
        return math.log(exp1(low) - exp1(high)) - math.log(math.log(high / low))
    return math.log((gammainc(k, high) - gammainc(k, low)) / k) - math.log(math.log(high / low))


def reference_logz(counts, priors, params):
    return sum(_log_bin_evidence(float(k), *priors[p]) for k, p in zip(counts, params))


def get(bins=5, prior="uniform", low=None, high=50.0, seed=0):
    """``bins`` rates drawn from U[1, 20]; rate priors ``prior`` on [low, high] (low defaults to 0 / 0.1)."""
    given_low = low is not None
    if low is None:
        low = 0.0 if prior == "uniform" else 0.1
    if prior == "loguniform" and low <= 0:
        raise OptionError(NAME, "low", f"a loguniform prior needs low > 0, got {low}")
    if not low < high:  # blame the one the user wrote (high, when low is the default)
        raise OptionError(NAME, *(("low", f"must be less than high ({high}), got {low}") if given_low
                                  else ("high", f"must be greater than low ({low}, the default), got {high}")))
    data, rates = make_data(np.random.default_rng(seed), bins)
    params = tuple(f"rate{j + 1}" for j in range(bins))
    priors = {p: (prior, float(low), float(high)) for p in params}
    return Builtin(NAME, kernel, gradient, params, priors, data,
                   reference_logz(data["counts"], priors, params),
                   "closed form per bin (regularized incomplete gamma / exponential integral)",
                   dict(zip(params, rates.tolist())), DESCRIPTION,
                   {"bins": bins, "prior": prior, "low": low, "high": high, "seed": seed})
