"""Sampling a float32 likelihood (the GPU's default precision: float32 arithmetic, float64 loop sums) finds the
analytic evidence: on the CPU backend, whose float32 builds do the GPU's arithmetic, over seeds. The fast test
runs a few seeds with a 3 sigma bound; the slow one checks the distribution of pulls (as test_mixing.py does).
Larger runs: docs/benchmarks.md, "2026-12-02 (fourteenth session)" (``scripts/seed_pulls.py builtin:NAME --dtype
float32 --sum-dtype float64``)."""

import numpy as np
import pytest

from nestgrad.likelihoods import builtin
from nestgrad.likelihoods.likelihood import default_precision
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.priors import Prior
from test_mixing import _check_pull_distribution

GPU_DTYPE, GPU_SUMS = default_precision("gpu", None, None, True)
# gaussian4d: a 1000-point data loop, the sums float64 matter for; negative_binomial: lgamma in float32
CASES = [("gaussian4d", {"n": 1000}), ("negative_binomial", {})]


def _pulls(name, options, seeds, nlive):
    b = builtin.get(name, **options)
    likelihood = b.likelihood(backend="cpu", dtype=GPU_DTYPE, sum_dtype=GPU_SUMS)
    assert likelihood.dtype == np.float32 and likelihood.sum_dtype == "float64"
    results = [NestedSampler(likelihood, Prior.from_spec(b.priors), nlive=nlive, seed=s).run(dlogz=0.1, progress=False)
               for s in seeds]
    logz, err = np.array([r.logz for r in results]), np.array([r.logz_err for r in results])
    return (logz - b.reference_logz) / err, logz, err


@pytest.mark.parametrize("name, options", CASES, ids=[c[0] for c in CASES])
def test_float32_likelihood_with_float64_sums_finds_the_evidence(name, options):
    pull, _, _ = _pulls(name, options, range(3), 300)
    assert np.all(np.abs(pull) <= 3), pull


@pytest.mark.slow
@pytest.mark.parametrize("name, options", CASES, ids=[c[0] for c in CASES])
def test_float32_likelihood_with_float64_sums_over_seeds(name, options):
    _check_pull_distribution(*_pulls(name, options, range(300, 330), 500))
