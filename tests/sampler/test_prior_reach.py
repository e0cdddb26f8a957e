"""The unit cube's float64 reach into unbounded prior tails, and the warning of a posterior against its end
(sampler/precision.py)."""
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from nestgrad.likelihoods import Likelihood
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.precision import PriorReachWarning, beyond_reach, reach
from nestgrad.sampler.priors import (Beta, Cauchy, Exponential, HalfNormal, LogNormal, Normal, Prior, TruncatedNormal,
                                    Uniform)

TOP = 2.0 ** -53  # 1 - TOP is the largest float64 below 1


@pytest.mark.parametrize("dist, low, high", [
    (Normal(0.0, 1.0), stats.norm.ppf(5e-324), stats.norm.isf(TOP)),
    (Normal(-15.0, 2.0), -15.0 + 2.0 * stats.norm.ppf(5e-324), -15.0 + 2.0 * stats.norm.isf(TOP)),
    (HalfNormal(3.0), None, 3.0 * stats.norm.isf(TOP)),  # (1 + u) / 2 = 1 - 2^-53 at the second value below 1
    (Exponential(2.0), None, -2.0 * math.log(TOP)),
    (LogNormal(0.0, 0.5), None, math.exp(0.5 * stats.norm.isf(TOP))),
    (Cauchy(0.0, 1.0), -math.inf, math.inf),  # beyond 1e15 scales (tan near pi/2 rounds: no sharper claim)
    (Uniform(-1.0, 1.0), None, None),
    # Bounded sides count only where the cube does not reach the bound: a truncated normal past 8.2 sds above its
    # mean ends there (an outsider's posterior at 10 sds was cut silently); mirrored or within reach it does not.
    (TruncatedNormal(0.0, 1.0, -5.0, 100.0), None, stats.norm.isf(TOP)),
    (TruncatedNormal(0.0, 1.0, -100.0, 5.0), stats.norm.ppf(5e-324), None),
    (TruncatedNormal(0.0, 1.0, 3.0, 4.0), None, None),
    (TruncatedNormal(0.0, 1.0, 10.0, 12.0), None, None),
])
def test_reach_is_the_quantile_of_the_last_float64_unit_cube_values(dist, low, high):
    got_low, got_high = reach(dist)
    for got, want in ((got_low, low), (got_high, high)):
        if want is None:
            assert got is None
        elif math.isinf(want):
            assert got * math.copysign(1.0, want) > 1e15
        else:
            assert got == pytest.approx(want, rel=1e-6)


def _posterior(mean, sd, n=5000, seed=0):
    rng = np.random.default_rng(seed)
    return (mean + sd * rng.standard_normal(n))[:, None], rng.uniform(size=n)


def test_beyond_reach_names_a_posterior_against_the_end_of_the_upper_tail_only():
    # jaxns's far-normal test mirrored: prior N(-15, 1), posterior N(-7.5, 0.5), 7.5 prior sds into the upper
    # tail, which float64 quantiles end at -15 + 8.21 = -6.79: 1.0 posterior sd above the posterior mean.
    theta, w = _posterior(-7.5, math.sqrt(0.5))
    messages = beyond_reach(Prior({"x": Normal(-15.0, 1.0)}), theta, w)
    assert len(messages) == 1 and messages[0].startswith("parameter x:") and "upper tail" in messages[0]
    assert "-6.79" in messages[0] and "mirrored normal prior" in messages[0]
    # The same posterior in the lower tail (prior N(15, 1) and data at 7.5) is 44 sds from the end: no message.
    theta, w = _posterior(7.5, math.sqrt(0.5))
    assert beyond_reach(Prior({"x": Normal(15.0, 1.0)}), theta, w) == []
    # A posterior that is the prior, and one 5 prior sds out with sd 0.1 (32 sds from the end): no message.
    for mean, sd in ((0.0, 1.0), (5.0, 0.1)):
        theta, w = _posterior(mean, sd)
        assert beyond_reach(Prior({"x": Normal(0.0, 1.0)}), theta, w) == []
    # An exponential prior's posterior near its end (37 scales); a bounded prior has no such end.
    theta, w = _posterior(36.0, 0.5)
    assert len(beyond_reach(Prior({"x": Exponential(1.0)}), theta, w)) == 1
    assert beyond_reach(Prior({"x": Uniform(0.0, 36.75)}), theta, w) == []
    # A truncated normal whose bound lies beyond the cube's reach ends where the normal does.
    theta, w = _posterior(8.0, 0.45)
    messages = beyond_reach(Prior({"x": TruncatedNormal(0.0, 1.0, -5.0, 100.0)}), theta, w)
    assert len(messages) == 1 and "upper tail" in messages[0] and "8.2" in messages[0], messages
    assert "mirrored normal prior" in messages[0]
    # Bounds the cube nearly reaches: the part out of reach is narrower than the posterior sd.
    assert beyond_reach(Prior({"x": TruncatedNormal(0.0, 1.0, 3.0, 9.0)}), theta, w) == []
    theta, w = _posterior(1.0 - 3e-4, 1e-4)
    assert beyond_reach(Prior({"x": Beta(2.0, 5.0)}), np.minimum(theta, 1.0), w) == []


def narrow(theta, mu, s):
    r = (theta[0] - mu) / s
    return -0.5 * r * r


@pytest.mark.parametrize("prior_mean, data, warns", [(-15.0, -6.5, True), (15.0, 6.5, False)])
def test_a_run_warns_when_its_posterior_is_cut_by_the_unit_cube(prior_mean, data, warns):
    """Data 8.5 prior sds above the prior mean (sd 0.3): float64 ends the prior at 8.21 sds, and the run says so
    (and its posterior stops there); 8.5 sds below, nothing to say, and the posterior reaches past the mirrored
    end with its true weight."""
    likelihood = Likelihood(narrow, ["x"], {"mu": data, "s": 0.3}, backend="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = NestedSampler(likelihood, Prior({"x": Normal(prior_mean, 1.0)}), nlive=100, seed=1).run(
            dlogz=0.5, progress=False)
    found = [w for w in caught if issubclass(w.category, PriorReachWarning)]
    assert len(found) == int(warns), [str(w.message) for w in caught]
    theta, weights = np.asarray(result.dead.theta)[:, 0], np.asarray(result.weights) / np.sum(result.weights)
    end = prior_mean + stats.norm.isf(TOP)
    # the posterior is N(+-7.20, 0.287) in truth, of which 7.6% lies beyond the end (1.4 sds from its mean)
    precision = 1.0 + 1.0 / 0.3 ** 2
    mean, sd = (prior_mean + data / 0.3 ** 2) / precision, precision ** -0.5
    beyond = stats.norm.sf(abs((end if warns else 2.0 * prior_mean - end) - mean) / sd)
    if warns:  # the posterior cannot pass the end
        assert theta.max() <= end
    else:  # its mirror image reaches past the mirrored end with the right weight (dead points weigh the tail)
        assert 0.5 * beyond < np.sum(weights[theta < 2.0 * prior_mean - end]) < 2.0 * beyond
