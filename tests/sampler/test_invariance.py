"""The constrained-HMC move leaves the uniform distribution on {u : L(u) > L*} invariant: shown by the
shrinkage test (each new point's enclosed-volume fraction V(L_new)/V(L*) is Uniform(0, 1)) and the insertion-
rank test (a new point's rank among the surviving live points is uniform), on Gaussians whose contours the
unit cube does not truncate in the iterations that are tested. A deliberately non-invariant move must fail the
same tests, so they have power. (Chains that are invariant but too short only correlate new points with their
start points; that shows up as a biased/over-dispersed logZ, which test_problems.py checks.)"""

import math

import numpy as np
import pytest
from scipy import stats

import problems
from nestgrad.sampler import NestedSampler

# sigma per dimension: small enough that the tested contours (radius < 0.45) stay inside the cube for long.
SIGMA = {2: 0.1, 10: 0.08, 50: 0.04}


def collect_with(sampler, d, sigma, dlogz=0.5):
    """Volume fractions and normalised insertion ranks of all new points born above untruncated contours."""
    norm = d * (math.log(sigma) + 0.5 * math.log(2 * math.pi))
    fractions, ranks = [], []
    rng = np.random.default_rng(0)

    def record(niter, state, info):
        radius2 = -2.0 * (info.logl_star + norm) * sigma ** 2
        if radius2 > 0.45 ** 2:
            return
        log_v = problems.gaussian_log_volume(state.logl, d, sigma)
        log_v_star = problems.gaussian_log_volume(np.array([info.logl_star]), d, sigma)[0]
        new = state.logl_birth == info.logl_star
        fractions.extend(np.exp(log_v[new] - log_v_star))
        survivors = np.sort(state.logl[~new])
        rank = np.searchsorted(survivors, state.logl[new])
        ranks.extend((rank + rng.random(rank.size)) / (survivors.size + 1))

    sampler.run(dlogz=dlogz, progress=False, callback=record)
    return np.array(fractions), np.array(ranks)


def collect(d, hmc=None, nlive=200, seed=11):
    """The chains' new points (no prior draws, ``sampler.prior_draws``, unless ``hmc`` asks for them)."""
    prob = problems.gaussian(d, sigma=SIGMA[d])
    hmc = {"prior_draws": 0.0, **(hmc or {})}
    return collect_with(NestedSampler(prob, prob.prior, nlive=nlive, seed=seed, hmc=hmc), d, SIGMA[d])


def _pvalues(d, hmc=None, **kw):
    fractions, ranks = collect(d, hmc, **kw)
    assert fractions.size > 300, fractions.size
    return stats.kstest(fractions, "uniform").pvalue, stats.kstest(ranks, "uniform").pvalue


@pytest.mark.parametrize("d", [2, 10])
def test_shrinkage_and_insertion_rank_are_uniform(d):
    p_shrink, p_rank = _pvalues(d)
    assert p_shrink > 1e-3 and p_rank > 1e-3, (p_shrink, p_rank)


@pytest.mark.parametrize("move", ["radial_slices", "pair_slices"])
def test_more_slice_moves_keep_them_uniform(move):
    """Two radial slice moves per refresh (the default makes one), or two pair slice moves (off by default)."""
    p_shrink, p_rank = _pvalues(10, hmc={move: 2})
    assert p_shrink > 1e-3 and p_rank > 1e-3, (p_shrink, p_rank)


def test_prior_draws_pass_the_same_tests():
    """Rejection draws from the prior down to an acceptance of 1e-4: nearly every tested iteration's points."""
    p_shrink, p_rank = _pvalues(2, hmc={"prior_draws": 1e-4})
    assert p_shrink > 1e-3 and p_rank > 1e-3, (p_shrink, p_rank)


@pytest.mark.slow
def test_shrinkage_and_insertion_rank_are_uniform_d50():
    p_shrink, p_rank = _pvalues(50)
    assert p_shrink > 1e-3 and p_rank > 1e-3, (p_shrink, p_rank)


def test_a_move_biased_towards_higher_likelihood_fails():
    """Power check: replace the HMC chains by a move that drifts 10% towards the mode (a non-invariant kernel,
    like integrating with grad logL as a force without correction); both tests must reject it."""
    d, sigma = 2, SIGMA[2]
    prob = problems.gaussian(d, sigma=sigma)
    sampler = NestedSampler(prob, prob.prior, nlive=200, seed=11, hmc={"prior_draws": 0.0})
    proposal = sampler._build()
    noise = np.random.default_rng(5)

    def biased_advance(u_start, logl_start, logl_star, step_sizes, ctrl, rng_states, data, codes, args, *arrays):
        out_u, out_theta, out_logl, out_cluster, stats_out = arrays[-5:]
        out_cluster[:] = 0
        trial = 0.5 + 0.9 * (u_start - 0.5) + 0.005 * noise.standard_normal(u_start.shape)
        trial_logl = prob.logl(trial)
        inside = trial_logl > logl_star
        out_u[:] = np.where(inside[:, None], trial, u_start)
        out_theta[:] = out_u
        out_logl[:] = np.where(inside, trial_logl, logl_start)
        stats_out[:] = 0
        stats_out[:, 0] = 1

    sampler._proposal = proposal._replace(advance=biased_advance, live_store=None)  # a move on plain arrays
    fractions, ranks = collect_with(sampler, d, sigma)
    assert fractions.size > 300
    p_shrink = stats.kstest(fractions, "uniform").pvalue
    p_rank = stats.kstest(ranks, "uniform").pvalue
    assert p_shrink < 1e-6 and p_rank < 1e-6, (p_shrink, p_rank)
