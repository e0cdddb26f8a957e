"""Proposals that mix: evidence, mode weights and posteriors on the geometries that once broke the sampler
(ill-conditioned Gaussians, unequal mixtures, a slanted two-mode ridge, heavy tails, an ignored parameter).

References are analytic (``hard_problems``). Statistical claims are made over seeds: the fast tests run a few
seeds of small instances with loose per-seed bounds; the ``slow`` tests run >= 10 seeds of the full problems
and check the distribution of pulls, the error/scatter ratio and the mode weights on every seed, with default
settings (nothing is tuned per problem).
"""

import math

import numpy as np
import pytest
from scipy import stats

from hard_problems import (IGNORED_FAMILIES, VARIANTS, cauchy, correlated_gaussian, ignored_families,
                           ignored_parameter, plateau, slanted_ridge, unequal_mixture)
from nestgrad.sampler import NestedSampler


def run(problem, seed, nlive=500, callback=None):
    return NestedSampler(problem, problem.prior, nlive=nlive, seed=seed).run(progress=False, callback=callback)


def pulls(problem, seeds, nlive=500):
    results = [run(problem, s, nlive) for s in seeds]
    logz = np.array([r.logz for r in results])
    err = np.array([r.logz_err for r in results])
    return results, (logz - problem.logz) / err, logz, err


def insertion_ranks(problem, seed, nlive=300):
    """Rank of each new point's logl among the survivors it joined, divided by their number: U(0, 1) when new
    points are independent draws from the constrained prior (Fowlie, Handley & Su 2020)."""
    out = []

    def record(niter, state, info):
        n_new = info.reflections.size
        survivors, new = state.logl[:-n_new], state.logl[-n_new:]
        ranks = np.searchsorted(np.sort(survivors), new) / survivors.size
        out.extend(ranks.tolist())

    run(problem, seed, nlive, callback=record)
    return np.array(out)


# --- fast subset (CI) -----------------------------------------------------------------------------------------

def test_ignored_parameter_posterior_is_its_prior():
    problem = ignored_parameter()
    for seed in range(3):
        res = run(problem, seed, nlive=300)
        free = res.samples[:, 2]
        # The equal-weight samples number the reported ESS, so a KS test against the prior is fair.
        assert stats.kstest(free, "norm", args=(0.0, 5.0)).pvalue > 1e-3, seed
        assert abs(free.mean()) < 4 * 5.0 / math.sqrt(res.ess), (seed, free.mean(), res.ess)
        assert abs(res.logz - problem.logz) < 3.5 * res.logz_err


def test_ignored_parameters_of_six_prior_families_keep_their_priors():
    """Uniform, log-uniform, half-normal, Cauchy, beta and exponential parameters the likelihood ignores: each
    one's equal-weight samples against its prior (over 12 seeds at nlive 500 the KS p-values were uniform,
    smallest 0.001; rms logZ pull 0.76)."""
    problem = ignored_families()
    for seed in range(2):
        res = run(problem, seed, nlive=300)
        for j, (name, (_, (family, args))) in enumerate(IGNORED_FAMILIES.items()):
            posterior = res.samples[:, 2 + j]
            assert stats.kstest(posterior, getattr(stats, family)(*args).cdf).pvalue > 1e-4, (seed, name)
        assert abs(res.logz - problem.logz) < 3.5 * res.logz_err


def test_unequal_mixture_mode_weights_and_evidence():
    problem = unequal_mixture()
    results, pull, _, _ = pulls(problem, range(3))
    for res, p in zip(results, pull):
        weights = problem.mode_weights(res.dead.theta, res.weights)
        assert np.all(np.abs(weights - problem.weights) < 0.1), weights
        assert abs(p) < 3.5
        # The posterior's modes, found by clustering the equal-weight samples: exactly the three (groups under
        # 1% of the samples, such as a few tail samples, are counted in their nearest mode)
        masses = sorted(c["mass"] for c in res.clusters)
        assert len(masses) == 3 and np.all(np.abs(np.array(masses) - [0.1, 0.3, 0.6]) < 0.1), res.clusters


def test_slanted_ridge_mode_weights():
    problem = slanted_ridge()
    results, pull, _, _ = pulls(problem, range(3), nlive=300)
    for res, p in zip(results, pull):
        weights = problem.mode_weights(res.dead.theta, res.weights)
        assert np.all(np.abs(weights - 0.5) < 0.1), weights
        assert abs(p) < 3.5


def test_ill_conditioned_gaussian_evidence_and_posterior():
    problem = correlated_gaussian(10, rho=0.95, scale_min=0.05)
    results, pull, _, _ = pulls(problem, range(2), nlive=300)
    sd = np.sqrt(np.diag(problem.covs[0]))
    for res, p in zip(results, pull):
        assert abs(p) < 3.5, p
        # Posterior means within 4.5 standard errors given the reported ESS, in every coordinate.
        z = res.samples.mean(axis=0) / (sd / math.sqrt(res.ess))
        assert np.max(np.abs(z)) < 4.5, z


def test_insertion_ranks_are_uniform_on_a_correlated_gaussian_and_a_mixture():
    for problem in (correlated_gaussian(10, rho=0.95), unequal_mixture()):
        ranks = insertion_ranks(problem, seed=1)
        assert ranks.size > 1000
        assert stats.kstest(ranks, "uniform").pvalue > 1e-3, problem.name


def test_heavy_tailed_cauchy_evidence_over_seeds():
    """Star-shaped contours with narrow arms (product of Cauchy densities): chains that crawl leave the live
    set's memory across iterations, which no single run shows (insertion ranks stay uniform) but the seed
    scatter of logZ does. At nlive 200, seeds 0-11: with the old step-size target (outside fraction 0.2) rms pull
    2.00 and error / scatter 0.53; with the current defaults 0.91 and 1.21. Simulated normal pulls: 12 correct
    runs fail one of the two bounds with probability 0.03, runs whose scatter is twice their error with 0.87."""
    problem = cauchy(6, width=0.05)
    _, pull, logz, err = pulls(problem, range(12), nlive=200)
    _check_pull_distribution(pull, logz, err)


def test_plateau_evidence_against_the_analytic_value():
    """Ties in logL (a likelihood constant on parts of the prior) die together; the evidence is right."""
    problem = plateau()
    for seed in range(4):
        res = run(problem, seed)
        assert abs(res.logz - problem.logz) < 3.5 * res.logz_err, (seed, res.logz, problem.logz)
        assert np.all(res.dead.logl > res.dead.logl_birth)


# --- the full problems over seeds ------------------------------------------------------------------------------

SEEDS = range(10)


def _check_pull_distribution(pull, logz, err):
    assert math.sqrt(np.mean(pull ** 2)) <= 1.5, pull
    # Reported error against the seed scatter, within the 99% range of that ratio for n normal draws whose sd is
    # the reported error: (n - 1) s^2 / sigma^2 is chi-square with n - 1 degrees of freedom (0.62-2.28 for 10
    # seeds, 0.70-1.67 for 20).
    n = len(logz)
    low, high = np.sqrt((n - 1) / stats.chi2.ppf([0.995, 0.005], n - 1))
    ratio = err.mean() / logz.std(ddof=1)
    assert low <= ratio <= high, (ratio, low, high)


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["uniform", "normal"])
def test_ill_conditioned_20d_gaussian_over_seeds(prior):
    problem = correlated_gaussian(20, rho=0.95, prior=prior)
    results, pull, logz, err = pulls(problem, SEEDS)
    _check_pull_distribution(pull, logz, err)
    if prior == "uniform":
        # Posterior means: the seed-to-seed scatter implies an ESS of at least half the reported one.
        means = np.array([r.samples.mean(axis=0) for r in results])
        var_post = np.diag(problem.covs[0])
        implied = np.mean(var_post / means.var(axis=0, ddof=1))
        reported = np.mean([r.ess for r in results])
        assert implied >= 0.5 * reported, (implied, reported)


@pytest.mark.slow
def test_unequal_mixture_over_seeds():
    """Weights 0.6 / 0.3 / 0.1 with equal widths (the issue's class): every mode kept, weights within 0.1."""
    problem = unequal_mixture((0.5, 0.5, 0.5), "mixture5d_equal_widths")
    # 30 seeds: its rms pull is about 1.1 (1.09 over 50 seeds), and 10 seeds would exceed 1.5 by chance in ~5% of
    # draws (seeds 0-9 give 1.56); 30 seeds do so in ~0.3%.
    results, pull, logz, err = pulls(problem, range(30))
    _check_pull_distribution(pull, logz, err)
    for res in results:
        assert np.all(np.abs(problem.mode_weights(res.dead.theta, res.weights) - problem.weights) < 0.1)


@pytest.mark.slow
def test_narrow_light_mode_lost_no_more_often_than_perfect_sampling():
    """The 0.1 mode is also the narrowest: at low contours it holds ~1% of the volume, and even perfect nested
    sampling (nlive 500) runs its live count down to zero in 16% of runs (scripts/perfect_ns_mode_loss.py).
    A lost mode must be the only error: the surviving modes keep their relative weights."""
    problem = unequal_mixture()
    results, pull, logz, err = pulls(problem, SEEDS)
    _check_pull_distribution(pull, logz, err)
    lost = 0
    for res in results:
        found = problem.mode_weights(res.dead.theta, res.weights)
        if found[2] < 0.01:
            lost += 1
            found = found[:2] / found[:2].sum()
            truth = problem.weights[:2] / problem.weights[:2].sum()
        else:
            truth = problem.weights
        assert np.all(np.abs(found - truth) < 0.05), found
    # Lost modes leave ghosts that jumps refill (sampler.ghosts): 1 of 100 seeds lost it (8 of 100 before).
    # P(>= 2 of 10) is 0.004 at that rate and 0.19 at the old one.
    assert lost <= 1, lost


@pytest.mark.slow
def test_slanted_ridge_over_seeds():
    problem = slanted_ridge()
    results, pull, logz, err = pulls(problem, SEEDS)
    _check_pull_distribution(pull, logz, err)
    for res in results:
        assert np.all(np.abs(problem.mode_weights(res.dead.theta, res.weights) - 0.5) <= 0.1)


@pytest.mark.slow
def test_heavy_tailed_cauchy_over_seeds():
    # 20 seeds: with 10 the error / scatter ratio has too wide a range to check (seeds 0-9 happen to give 1.79,
    # seeds 0-19 1.11, seeds 0-39 1.13).
    problem = cauchy(6, width=0.05)
    _, pull, logz, err = pulls(problem, range(20))
    _check_pull_distribution(pull, logz, err)


@pytest.mark.slow
@pytest.mark.parametrize("name", [
    "cauchy6d_w001", "cauchy10d", "mixture10d_4modes", "floor_peak5d", "ignored8d_families", "wedding_cake4d", "boxed5d",
    "crossed4d", "student6d", "student6d_nu3"])
def test_held_out_variants_over_seeds(name):
    """Problems of the same classes with other widths, dimensions and mode counts (hard_problems.VARIANTS),
    written as an outsider's held-out set would be: a narrower Cauchy core (its star-shaped contour was split into
    arms that lagged behind their volume shares: mean pull +1.1 before clusters followed the contour; rms pull
    1.58 on these seeds, 1.12 over seeds 0-59, with two pulls above +3, while lone points far out on the arms kept
    clusters of their own), the Cauchy
    product in 10-D (the billiard alone left each coordinate's distance from the core nearly unchanged over a
    trajectory: mean pull +1.17 over 20 seeds, +0.05 with the axis slice moves), four unequal modes in 10-D, a
    likelihood clipped to a floor over 99.9% of the prior (every live point tied: rms pull 5.35 before the live
    set widened on plateaus), six ignored parameters of six prior families, the wedding cake, and a likelihood
    that is -inf on 99.8% of the prior (its error left out the spread of that share: rms pull 2.13), two modes
    each correlated its own way (rho +0.95 and -0.95), and a correlated multivariate Cauchy the box cuts (and
    its Student-t sibling with nu = 3).
    The mean pull is bounded too: a bias of one error bar can hide under an rms pull below 1.5."""
    problem = VARIANTS[name]()
    results, pull, logz, err = pulls(problem, SEEDS)
    _check_pull_distribution(pull, logz, err)
    assert abs(pull.mean()) < 3.0 / math.sqrt(len(pull)), pull  # 3 sigma of the mean of unit-variance pulls
    if hasattr(problem, "mode_weights"):
        for res in results:
            assert np.all(np.abs(problem.mode_weights(res.dead.theta, res.weights) - problem.weights) < 0.1)


@pytest.mark.slow
def test_rotated_heavy_tails_over_seeds():
    """The Cauchy product of the heavy-tailed test with its axes rotated away from the coordinate axes: the axis
    slice moves follow the metric's axes, which a symmetric star leaves at the coordinate axes, so none runs
    along an arm; the radial slice moves do. Without them seeds 0-49 gave a mean pull of +0.52 +- 0.20, rms 1.47
    (docs/benchmarks.md). 50 seeds: the first 10 alone (rms pull 0.97) do not show what 50 do."""
    problem = VARIANTS["rotated_cauchy6d"]()
    _, pull, logz, err = pulls(problem, range(50))
    _check_pull_distribution(pull, logz, err)
    assert abs(pull.mean()) < 3.0 / math.sqrt(len(pull)), pull


@pytest.mark.slow
def test_ignored_parameter_over_seeds():
    problem = ignored_parameter()
    means = []
    for seed in SEEDS:
        res = run(problem, seed)
        assert stats.kstest(res.samples[:, 2], "norm", args=(0.0, 5.0)).pvalue > 1e-3
        means.append(res.samples[:, 2].mean())
    assert abs(np.mean(means)) < 4 * np.std(means, ddof=1) / math.sqrt(len(means))
