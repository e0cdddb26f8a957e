"""Peers' test problems (tests/sampler/peer_problems.py) against their quadrature evidence and posteriors:
Neal's funnel (a scale that changes by e^9 along one parameter), the LogGamma mixture of the UltraNest and
PolyChord papers (four modes with one-sided exponential tails) and the hybrid Rosenbrock banana (curved and
ill-conditioned at once); in the slow suite also the hyper-pyramid (nearly flat), dynesty's 1/|x| spike and a
likelihood 7.5 prior sds out in a normal prior's tail; PolyChord's many-mode Himmelblau and Rastrigin functions
(tests/sampler/peer_multimodal.py). Default settings; a few seeds in the fast suite with per-seed bounds, the pull
distribution over 30 seeds in the slow one; every problem's hand-written gradient against central differences."""

import math

import numpy as np
import pytest

from peer_multimodal import himmelblau, rastrigin
from peer_problems import PROBLEMS, banana, far_normal, funnel, loggamma, pyramid, spike
from test_mixing import _check_pull_distribution, pulls


def _mode_weights_ok(problem, results, tolerance):
    for res in results:
        weights = problem.mode_weights(res.dead.theta, res.weights)
        assert np.all(np.abs(weights - problem.weights) < tolerance), weights


def _watched_posterior_ok(problem, results):
    # Per seed, from the weighted dead points: the watched parameter's posterior sd within 10% and its mean within
    # half its sd of the quadrature values (the funnel's v scatters 0.14 over seeds at nlive 500; a run that missed
    # the neck or the mouth of the funnel is off by about 1, one that missed an end of the banana's arc by ~0.5).
    index, true_mean, true_sd = problem.watched
    for res in results:
        x = res.dead.theta[:, index]
        mean = res.weights @ x
        sd = math.sqrt(res.weights @ (x - mean) ** 2)
        assert abs(mean - true_mean) < 0.5 * true_sd, mean
        assert abs(sd / true_sd - 1.0) < 0.1, sd


def _sample_means(results, index):
    return np.array([res.samples[:, index].mean() for res in results])


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_each_problems_gradient_is_the_derivative_of_its_value(name):
    """The hand-written gradients against central differences at prior draws (the sampler's HMC trusts them)."""
    problem = PROBLEMS[name]()
    kernels = problem.cpu_kernels()
    scratch = np.empty(max(kernels.scratch_size, 1))
    grad = np.empty(problem.ndim)
    for theta in problem.prior.draw(np.random.default_rng(1), 6):
        value = kernels.value_and_grad(theta, kernels.data, grad, scratch)
        assert value == kernels.value(theta, kernels.data, scratch)
        for i in range(problem.ndim):
            h = 1e-6 * max(1.0, abs(theta[i]))
            up, down = theta.copy(), theta.copy()
            up[i] += h
            down[i] -= h
            fd = (kernels.value(up, kernels.data, scratch) - kernels.value(down, kernels.data, scratch)) / (2 * h)
            # plus the difference's own rounding: a value of -6e5 (a far prior draw) leaves 6e-5 of it at this h
            rounding = 1e-15 * abs(value) / h
            assert abs(fd - grad[i]) <= 1e-5 * (1.0 + abs(grad[i])) + rounding, (name, theta, i, fd, grad[i])


def test_many_mode_functions_on_a_few_seeds():
    """PolyChord's Himmelblau (four modes of unequal mass) and Rastrigin (25 modes carry the 2-D posterior)."""
    problem = himmelblau()
    results, pull, _, _ = pulls(problem, range(2), nlive=300)
    assert np.all(np.abs(pull) < 3.5), pull
    _mode_weights_ok(problem, results, 0.1)
    _, pull, _, _ = pulls(rastrigin(2), range(2), nlive=300)
    assert np.all(np.abs(pull) < 3.5), pull


def test_funnel_and_loggamma_on_a_few_seeds():
    problem = funnel(5)
    results, pull, _, _ = pulls(problem, range(3), nlive=300)
    assert np.all(np.abs(pull) < 3.5), pull
    _watched_posterior_ok(problem, results)
    for res in results:  # v crawls along the funnel, the x forget their start points (sampler.genealogy)
        x_ess = [res.ess_params[p] for p in res.params[1:]]
        assert res.ess_params["v"] < 0.25 * min(x_ess) and res.ess <= res.ess_params["v"], res.ess_params
        assert len(res.clusters) == 1, res.clusters  # one mode, however few samples its slow v leaves
    problem = loggamma(4)
    results, pull, _, _ = pulls(problem, range(3), nlive=300)
    assert np.all(np.abs(pull) < 3.5), pull
    _mode_weights_ok(problem, results, 0.1)
    problem = banana(5)
    results, pull, _, _ = pulls(problem, range(3), nlive=300)
    assert np.all(np.abs(pull) < 3.5), pull
    _watched_posterior_ok(problem, results)


@pytest.mark.slow
@pytest.mark.parametrize("make", [
    pytest.param(lambda: funnel(5), id="funnel5d"),
    # In 10-D the runs used to stop with part of the funnel's neck unexplored (v's sd 2.35 against 2.67): the
    # stopping rule now bounds the rest by the largest live L, not their mean (sampler.evidence.RunningEvidence).
    pytest.param(lambda: funnel(10), id="funnel10d"),
    pytest.param(lambda: loggamma(4), id="loggamma4d"),
    pytest.param(lambda: loggamma(10), id="loggamma10d"),
    pytest.param(lambda: banana(10), id="banana10d"),
    # Nearly flat (H ~ 1e-5 nats): the evidence's last-point volume shows at its error's scale (sampler.evidence).
    pytest.param(pyramid, id="pyramid10d"),
    pytest.param(spike, id="spike2d"),
    pytest.param(lambda: far_normal(2), id="far_normal2d"),
    pytest.param(himmelblau, id="himmelblau2d"),
    pytest.param(lambda: rastrigin(2), id="rastrigin2d"),
    # Tens of small modes alive at once: logZ was +0.04 nats high over 200 seeds while jumps were capped at 20 a
    # refresh among several clusters (docs/benchmarks.md, fifteenth session).
    pytest.param(lambda: rastrigin(3), id="rastrigin3d")])
def test_peer_problems_over_seeds(make):
    check_over_seeds(make())


def check_over_seeds(problem, mode_tolerance=0.1):
    """Seeds 100-129: the pull distribution, no offset beyond 3 standard errors, and per seed the watched
    parameter's posterior or every mode's mass (within ``mode_tolerance``)."""
    results, pull, logz, err = pulls(problem, range(100, 130))
    _check_pull_distribution(pull, logz, err)
    assert abs(pull.mean()) < 3.0 / math.sqrt(len(pull)), pull
    if hasattr(problem, "watched"):
        _watched_posterior_ok(problem, results)
        index, true_mean, _ = problem.watched
        means = _sample_means(results, index)  # unbiased over seeds: within 3.5 standard errors of the seed mean
        assert abs(means.mean() - true_mean) < 3.5 * means.std(ddof=1) / math.sqrt(means.size), means
    elif hasattr(problem, "mode_weights"):
        _mode_weights_ok(problem, results, mode_tolerance)


@pytest.mark.slow
def test_funnel_reported_ess_matches_the_seed_scatter_of_the_posterior_mean():
    """v's reported ESS (sampler.genealogy) against the seed scatter of its posterior mean, seeds 100-129: the
    scatter may not exceed what the ESS implies (a 1.6 margin: the chi-square range of 30 seeds), nor fall far
    below it (an ESS more than ~6x too pessimistic). Before the family-tree ESS, the scatter was 0.141 against
    0.040 implied (Kish's ESS deflated by the chains' pooled start-end correlation)."""
    problem = funnel(5)
    results, _, _, _ = pulls(problem, range(100, 130))
    weighted = np.array([res.weights @ res.dead.theta[:, 0] for res in results])
    v_sd = problem.watched[2]
    implied = math.sqrt(np.median([v_sd ** 2 / res.ess_params["v"] for res in results]))
    assert 0.4 < weighted.std(ddof=1) / implied < 1.6, (weighted.std(ddof=1), implied)
    # The equal-weight samples (as many as the run's ESS) add their own resampling noise, and still agree.
    samples = _sample_means(results, 0)
    implied = math.sqrt(np.median([v_sd ** 2 / res.ess for res in results]))
    assert samples.std(ddof=1) / implied < 1.6, (samples.std(ddof=1), implied)
