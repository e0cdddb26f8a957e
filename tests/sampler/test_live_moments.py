"""The live set's running moments (``sampler.live_moments``): the mean and covariance they give equal those of the
points after many iterations of deaths and births, a run that carries them resumes bit for bit, and the evidence
of runs that carry them from the first iteration stays within its error."""

import math

import numpy as np
import pytest

import problems
from nestgrad.sampler import NestedSampler, live_moments


def _replay(points, rng, iterations, k, spread):
    """Moments updated as the sampler does, over ``iterations`` of ``k`` deaths (the outermost) and ``k`` births."""
    moments = live_moments.exact(points)
    for _ in range(iterations):
        radius = np.sum((points - points.mean(axis=0)) ** 2, axis=1)
        dead = np.argsort(radius)[-k:]
        alive = np.setdiff1d(np.arange(points.shape[0]), dead)
        moments = live_moments.added(moments, points[dead], -1.0)
        mean, cov = live_moments.mean_cov(moments, alive.size)
        exact_mean = [math.fsum(column) / alive.size for column in points[alive].T]  # np.mean errs by 20 ulps here
        np.testing.assert_allclose(mean, exact_mean, rtol=0, atol=1e-12 * spread + 2.3e-16)  # 2 ulps of 0.5
        np.testing.assert_allclose(cov, np.cov(points[alive], rowvar=False), rtol=0, atol=1e-10 * spread ** 2)
        born = points[alive].mean(axis=0) + 0.95 * spread * rng.standard_normal((k, points.shape[1])) / 3
        points = np.concatenate([points[alive], born])
        moments = live_moments.added(moments, born)
    return points


@pytest.mark.parametrize("spread", [0.1, 1e-7])
def test_running_moments_match_the_points(spread):
    rng = np.random.default_rng(0)
    d = 6
    points = 0.5 + spread * rng.standard_normal((3000, d)) @ np.tril(rng.random((d, d)) + np.eye(d)) / 3
    _replay(points, rng, iterations=40, k=300, spread=spread)  # longer than any REFRESH_EVERY


def test_below_the_threshold_the_points_are_used(monkeypatch):
    monkeypatch.setattr(live_moments, "RUNNING_FROM", 100)
    points = np.random.default_rng(1).random((99, 3))
    assert live_moments.survivors(live_moments.unknown(3), 1, points[:0], points) is None
    carried = live_moments.exact(np.random.default_rng(2).random((200, 3)))  # about other points: must be ignored
    got = live_moments.survivors(carried, live_moments.REFRESH_EVERY, points[:0], np.vstack([points, points]))
    np.testing.assert_array_equal(got, live_moments.exact(np.vstack([points, points])))  # refresh iteration


def _run(tmp_path, name, **run):
    problem = problems.gaussian(5)
    sampler = NestedSampler(problem, problem.prior, nlive=300, seed=3)
    return sampler.run(dlogz=0.1, progress=False, checkpoint=str(tmp_path / name), **run)


def test_a_run_carrying_the_moments_resumes_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setattr(live_moments, "RUNNING_FROM", 0)
    whole = _run(tmp_path, "whole.npz")
    _run(tmp_path, "part.npz", max_iter=23)  # not a multiple of REFRESH_EVERY: resumes from carried sums
    resumed = _run(tmp_path, "part.npz", resume=True)
    assert resumed.niter == whole.niter
    for field in ("u", "logl", "logl_birth"):
        np.testing.assert_array_equal(getattr(resumed.dead, field), getattr(whole.dead, field))


@pytest.mark.parametrize("make", [lambda: problems.gaussian(10), lambda: problems.shells(5)],
                         ids=["gauss10", "shells5"])
def test_runs_carrying_the_moments_keep_the_evidence(make, monkeypatch):
    monkeypatch.setattr(live_moments, "RUNNING_FROM", 0)
    problem = make()
    for seed in range(2):
        r = NestedSampler(problem, problem.prior, nlive=400, seed=seed).run(dlogz=0.1, progress=False)
        assert abs(r.logz - problem.logz) <= 3 * r.logz_err, (seed, r.logz, problem.logz, r.logz_err)


def test_a_large_run_at_the_default_threshold_carries_them_and_keeps_the_evidence():
    # 12,000 live points: the survivors (10,800) pass RUNNING_FROM, so the moments are carried from the first
    # iteration on, refreshed every REFRESH_EVERY, as in any run of that size.
    problem = problems.gaussian(5)
    carried = []
    r = NestedSampler(problem, problem.prior, nlive=12_000, seed=0).run(
        dlogz=0.1, progress=False, callback=lambda niter, state, info: carried.append(state.moments.shape == (7, 5)))
    assert all(carried) and len(carried) > 2 * live_moments.REFRESH_EVERY
    assert abs(r.logz - problem.logz) <= 3 * r.logz_err, (r.logz, problem.logz, r.logz_err)
