"""A float32 likelihood that cannot resolve the posterior is named at the end of the run (sampler/precision.py)."""
import warnings

import numpy as np
import pytest

from nestgrad.likelihoods import Likelihood
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.precision import MIN_STEPS, Float32ResolutionWarning, coarse_parameters
from nestgrad.sampler.priors import Prior, Uniform


def test_coarse_parameters_names_only_the_posteriors_narrower_than_the_float32_steps():
    rng = np.random.default_rng(0)
    step = float(np.spacing(np.float32(1000.0)))  # 6.1e-5
    theta = np.column_stack([1000.0 + 0.2 * MIN_STEPS * step * rng.standard_normal(4000),   # 20 steps: coarse
                             1000.0 + 5.0 * MIN_STEPS * step * rng.standard_normal(4000),   # 500 steps: fine
                             0.5 + 1e-3 * rng.standard_normal(4000)])                         # near 0.5: fine
    weights = rng.uniform(size=4000)
    messages = coarse_parameters(["a", "b", "c"], theta, weights, np.float32)
    assert len(messages) == 1 and messages[0].startswith("parameter a:") and "dtype: float64" in messages[0]
    assert coarse_parameters(["a", "b", "c"], theta, weights, np.float64) == []
    assert coarse_parameters(["a", "b", "c"], theta[:0], weights[:0], np.float32) == []


def narrow(theta, mu, s):
    r = (theta[0] - mu) / s
    return -0.5 * r * r


@pytest.mark.parametrize("dtype, sd, warns", [("float32", 1e-3, True), ("float64", 1e-3, False),
                                              ("float32", 1.0, False)])
def test_a_run_warns_when_float32_rounds_its_posterior(dtype, sd, warns):
    """A posterior of sd 1e-3 at 1000 is 16 float32 steps wide (spacing 6.1e-5): a float32 run says so; the same
    in float64, or a posterior of sd 1 (16,000 steps), says nothing."""
    likelihood = Likelihood(narrow, ["x"], {"mu": 1000.0, "s": sd}, backend="cpu", dtype=dtype)
    prior = Prior({"x": Uniform(1000.0 - 10 * sd, 1000.0 + 10 * sd)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        NestedSampler(likelihood, prior, nlive=50, seed=3).run(dlogz=1.0, progress=False)
    found = [w for w in caught if issubclass(w.category, Float32ResolutionWarning)]
    assert len(found) == int(warns), [str(w.message) for w in caught]
    if warns:
        assert "parameter x:" in str(found[0].message)
