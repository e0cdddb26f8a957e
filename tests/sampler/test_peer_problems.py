"""Peers' test problems (tests/sampler/peer_problems.py) against their quadrature evidence and posteriors:
Neal's funnel (a scale that changes by e^9 along one parameter) and the LogGamma mixture of the UltraNest and
PolyChord papers (four modes with one-sided exponential tails). Default settings; a few seeds in the fast
suite with per-seed bounds, the pull distribution over 30 seeds in the slow one."""

import math

import numpy as np
import pytest

from peer_problems import funnel, loggamma
from test_mixing import _check_pull_distribution, pulls


def _mode_weights_ok(problem, results, tolerance):
    for res in results:
        weights = problem.mode_weights(res.dead.theta, res.weights)
        assert np.all(np.abs(weights - problem.weights) < tolerance), weights


def _v_posterior_ok(problem, results):
    # The posterior mean of v within 4.5 standard errors given the reported ESS, and its sd within 10%.
    for res in results:
        v = res.samples[:, 0]
        assert abs(v.mean() - problem.v_mean) < 4.5 * problem.v_sd / math.sqrt(res.ess), (v.mean(), res.ess)
        assert abs(v.std() / problem.v_sd - 1.0) < 0.1, v.std()


def test_funnel_and_loggamma_on_a_few_seeds():
    problem = funnel(5)
    results, pull, _, _ = pulls(problem, range(3), nlive=300)
    assert np.all(np.abs(pull) < 3.5), pull
    _v_posterior_ok(problem, results)
    problem = loggamma(4)
    results, pull, _, _ = pulls(problem, range(3), nlive=300)
    assert np.all(np.abs(pull) < 3.5), pull
    _mode_weights_ok(problem, results, 0.1)


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: funnel(5), lambda: funnel(10), lambda: loggamma(4),
                                  lambda: loggamma(10)], ids=["funnel5d", "funnel10d", "loggamma4d", "loggamma10d"])
def test_peer_problems_over_seeds(make):
    problem = make()
    results, pull, logz, err = pulls(problem, range(100, 130))
    _check_pull_distribution(pull, logz, err)
    assert abs(pull.mean()) < 3.0 / math.sqrt(len(pull)), pull
    if hasattr(problem, "v_mean"):
        _v_posterior_ok(problem, results)
    else:
        _mode_weights_ok(problem, results, 0.1)
