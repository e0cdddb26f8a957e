"""New points drawn from the prior while the contour holds a large share of it (``sampler.prior_draws``), and a
plateau above the lowest live points (``sampler.nested``).

The problem these came from (an outsider's): half a 3-D prior is a plateau, logL = 0; the other half holds a peak
cut off from it by a gap where logL falls far below 0, and the peak holds half the evidence. Chains alone lost the
peak's last live points on 1 of 40 seeds, and then the plateau was killed together with the one point left below
it, ending the run at once with logZ 0.80 low (pull -17).
"""

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from cut_off_peak import cut_off_peak
from problems import gaussian
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.prior_draws import draw_above


def _runs(problem, seeds, nlive=400, **hmc):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "only n live points lay above the plateau": the pulls are the test
        for seed in seeds:
            out.append(NestedSampler(problem, problem.prior, nlive=nlive, seed=seed, hmc=hmc or None)
                       .run(progress=False))
    return out


def _pulls(problem, results):
    return np.array([(r.logz - problem.logz) / r.logz_err for r in results])


# --- the rejection draws ------------------------------------------------------------------------------------

def _disc(u):
    """theta = u, logl = -|u - c|^2 (c the cube's centre): above -R^2 is the disc of radius R."""
    return u.copy(), -np.sum((u - 0.5) ** 2, axis=1)


def test_draws_lie_above_the_contour_and_are_uniform_over_it():
    radius2 = 0.2 ** 2
    drawn = draw_above(np.random.default_rng(1), 3000, 2, -radius2, math.pi * radius2, 0.01, _disc)
    assert drawn.u.shape == (3000, 2) and np.array_equal(drawn.theta, drawn.u)
    assert np.all(drawn.logl > -radius2) and np.array_equal(drawn.logl, _disc(drawn.u)[1])
    # uniform in the disc: r^2 / R^2 uniform on (0, 1), the angle uniform
    r2 = -drawn.logl / radius2
    angle = np.arctan2(drawn.u[:, 1] - 0.5, drawn.u[:, 0] - 0.5)
    assert stats.kstest(r2, "uniform").pvalue > 1e-3
    assert stats.kstest((angle + np.pi) / (2 * np.pi), "uniform").pvalue > 1e-3
    # what was drawn: about k / (pi R^2), every draw counted
    assert abs(drawn.drawn * math.pi * radius2 / 3000 - 1) < 0.25 and drawn.nan == 0


def test_draws_from_a_contour_far_smaller_than_expected_give_up_within_their_limit():
    radius2 = 1e-6  # acceptance 3e-6, where 0.5 was expected
    drawn = draw_above(np.random.default_rng(2), 50, 2, -radius2, 0.5, 0.01, _disc)
    assert drawn.u is None and 0 < drawn.drawn <= 4 * 50 / 0.01


def test_nan_draws_are_counted_and_never_kept():
    def half_nan(u):
        logl = -np.sum((u - 0.5) ** 2, axis=1)
        logl[u[:, 0] < 0.5] = np.nan
        return u.copy(), logl

    drawn = draw_above(np.random.default_rng(3), 500, 2, -np.inf, 0.5, 0.01, half_nan)
    assert np.all(drawn.u[:, 0] >= 0.5) and drawn.nan > 0
    assert abs(drawn.nan / drawn.drawn - 0.5) < 0.1


# --- in runs --------------------------------------------------------------------------------------------------

def test_new_points_are_prior_draws_exactly_while_the_expected_acceptance_is_above_the_threshold():
    """A 3-D Gaussian (finite everywhere): an iteration's new points are prior draws (no parent, no gradients)
    exactly while the run's E[log X] is at least log 0.01, chains' after; about 46 iterations of draws at
    k = nlive / 10."""
    problem = gaussian(3)
    sampler = NestedSampler(problem, problem.prior, nlive=200, seed=4)
    k, log_x, seen = sampler.k, [0.0], []

    def record(niter, state, info):
        seen.append((log_x[-1], info.ngrad, state.parent[-k:].copy(), info.acceptance, info.rho_logl))
        log_x.append(log_x[-1] - float(np.sum(1.0 / (info.nlive_before - np.arange(info.dead_logl.size)))))
        return niter >= 80

    result = sampler.run(progress=False, callback=record)
    for before, ngrad, parents, acceptance, rho in seen:
        if before >= math.log(0.01):  # no chains, so no chain statistics
            assert ngrad == 0 and np.all(parents == -1) and np.isnan(acceptance) and np.isnan(rho)
        else:
            assert ngrad > 0 and np.all(parents >= 0) and 0 <= acceptance <= 1 and np.isfinite(rho)
    drawing = sum(row[0] >= math.log(0.01) for row in seen)
    assert 40 <= drawing <= 50
    # the HMC plot shades them
    from nestgrad.sampler.plots_hmc import _prior_draw_iterations
    assert _prior_draw_iterations(result.diagnostics, result.niter) == drawing


def test_no_prior_draws_with_a_threshold_of_zero():
    problem = gaussian(3)
    seen = []
    NestedSampler(problem, problem.prior, nlive=200, seed=4, hmc={"prior_draws": 0.0}).run(
        progress=False, callback=lambda niter, state, info: seen.append(info.ngrad) or niter >= 5)
    assert all(ngrad > 0 for ngrad in seen)


def test_the_peak_cut_off_from_the_plateau_keeps_its_share():
    """10 seeds at nlive 400 (the default settings): each logZ within 4 of its error bars of the truth, and the
    posterior mass of the plateau within 0.2 of its true 0.5 (it was 0.999 on the failing seed)."""
    problem = cut_off_peak()
    results = _runs(problem, range(10))
    pulls = _pulls(problem, results)
    mass = np.array([np.sum(r.weights[r.dead.theta[:, 0] < 0]) / np.sum(r.weights) for r in results])
    assert np.all(np.abs(pulls) < 4), pulls
    assert np.all(np.abs(mass - 0.5) < 0.2), mass


def test_a_plateau_above_the_lowest_point_is_widened_not_ended_on():
    """With the chains alone (``prior_draws: 0``) the seed that lost the peak: the plateau held every live point
    but one below it, and both died together, ending the run; now the point below dies alone and the plateau
    widens, so the run goes on past it to the peak (or warns that it ended on the plateau)."""
    problem = cut_off_peak()
    [result] = _runs(problem, [37], prior_draws=0.0)
    assert np.max(result.dead.logl) > 5.0 and abs(result.logz - problem.logz) < 5 * result.logz_err


@pytest.mark.slow
def test_cut_off_peak_over_many_seeds():
    """100 seeds with the defaults: mean pull within 3 of its standard error of 0, rms pull below 1.4, no pull
    beyond 5."""
    problem = cut_off_peak()
    pulls = _pulls(problem, _runs(problem, range(100)))
    assert abs(pulls.mean()) < 3 / math.sqrt(pulls.size) * max(1.0, pulls.std()), pulls.mean()
    assert np.sqrt(np.mean(pulls ** 2)) < 1.4 and np.all(np.abs(pulls) < 5), pulls
