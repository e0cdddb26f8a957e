"""What large live sets change, checked where it is cheap to check: above ``geometry.MAX_COVARIANCE_ROWS`` live
points the metric's covariance comes from every s-th live point, and issue 13 asks for k up to nlive / 2 chains
per iteration. Neither may bias the evidence.

The covariance cap is lowered here so that a small run uses a subset far smaller than a large run ever does (64
rows against at least 8192): a noisier metric than production can have, on the problems where the metric matters
most (a 20-D Gaussian with correlation 0.95, an unequal mixture). The fast tests run two seeds each with a 3 sigma
bound; the ``slow`` ones 16 seeds each and check the distribution of pulls (as test_mixing.py does).
"""

import numpy as np
import pytest

import problems
from hard_problems import correlated_gaussian, unequal_mixture
from nestgrad.sampler import NestedSampler
from nestgrad.sampler import geometry
from test_mixing import _check_pull_distribution

SMALL_CAP = 64


def _pulls(problem, seeds, nlive, **options):
    results = [NestedSampler(problem, problem.prior, nlive=nlive, seed=s, **options).run(dlogz=0.1, progress=False)
               for s in seeds]
    logz = np.array([r.logz for r in results])
    err = np.array([r.logz_err for r in results])
    return (logz - problem.logz) / err, logz, err


COVARIANCE_CASES = [("corr20", lambda: correlated_gaussian(20, rho=0.95), 500), ("mixture5d", unequal_mixture, 500)]
FRACTION_CASES = [("gauss10", lambda: problems.gaussian(10), 400), ("shells5", lambda: problems.shells(5), 400),
                  ("seed4d", problems.seed4d, 300)]


@pytest.mark.parametrize("name,make,nlive", COVARIANCE_CASES, ids=[c[0] for c in COVARIANCE_CASES])
def test_a_covariance_from_a_strided_subset_keeps_the_evidence(monkeypatch, name, make, nlive):
    monkeypatch.setattr(geometry, "MAX_COVARIANCE_ROWS", SMALL_CAP)
    pull, _, _ = _pulls(make(), range(2), nlive)
    assert np.all(np.abs(pull) <= 3), pull


@pytest.mark.parametrize("name,make,nlive", FRACTION_CASES[:2], ids=[c[0] for c in FRACTION_CASES[:2]])
def test_half_the_live_points_replaced_per_iteration_keeps_the_evidence(name, make, nlive):
    pull, _, _ = _pulls(make(), range(2), nlive, delete_fraction=0.5)
    assert np.all(np.abs(pull) <= 3), pull


@pytest.mark.slow
@pytest.mark.parametrize("name,make,nlive", COVARIANCE_CASES, ids=[c[0] for c in COVARIANCE_CASES])
def test_a_covariance_from_a_strided_subset_over_seeds(monkeypatch, name, make, nlive):
    monkeypatch.setattr(geometry, "MAX_COVARIANCE_ROWS", SMALL_CAP)
    _check_pull_distribution(*_pulls(make(), range(100, 116), nlive))


@pytest.mark.slow
@pytest.mark.parametrize("name,make,nlive", FRACTION_CASES, ids=[c[0] for c in FRACTION_CASES])
def test_half_the_live_points_replaced_per_iteration_over_seeds(name, make, nlive):
    _check_pull_distribution(*_pulls(make(), range(200, 216), nlive, delete_fraction=0.5))
