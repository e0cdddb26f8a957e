"""Issue 13 asks for k up to nlive / 2 chains per iteration (``delete_fraction`` 0.5): the evidence must stay right
when half the live points are replaced at once. The fast tests run two seeds each with a 3 sigma bound; the
``slow`` ones 16 seeds each and check the distribution of pulls (as test_mixing.py does).
"""

import numpy as np
import pytest

import problems
from hard_problems import unequal_mixture
from nestgrad.sampler import NestedSampler
from test_mixing import _check_pull_distribution


def _pulls(problem, seeds, nlive, **options):
    results = [NestedSampler(problem, problem.prior, nlive=nlive, seed=s, **options).run(dlogz=0.1, progress=False)
               for s in seeds]
    logz = np.array([r.logz for r in results])
    err = np.array([r.logz_err for r in results])
    return (logz - problem.logz) / err, logz, err


FRACTION_CASES = [("gauss10", lambda: problems.gaussian(10), 400), ("shells5", lambda: problems.shells(5), 400),
                  ("mixture5d", unequal_mixture, 500), ("seed4d", problems.seed4d, 300)]


@pytest.mark.parametrize("name,make,nlive", FRACTION_CASES[:2], ids=[c[0] for c in FRACTION_CASES[:2]])
def test_half_the_live_points_replaced_per_iteration_keeps_the_evidence(name, make, nlive):
    pull, _, _ = _pulls(make(), range(2), nlive, delete_fraction=0.5)
    assert np.all(np.abs(pull) <= 3), pull


@pytest.mark.slow
@pytest.mark.parametrize("name,make,nlive", FRACTION_CASES, ids=[c[0] for c in FRACTION_CASES])
def test_half_the_live_points_replaced_per_iteration_over_seeds(name, make, nlive):
    _check_pull_distribution(*_pulls(make(), range(200, 216), nlive, delete_fraction=0.5))
