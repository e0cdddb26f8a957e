"""A kernel that raises (here a loop step that is 0 for a < 0.02) stops the run with one message naming the
kernel and where the run was, never a bare traceback from numba's batch drivers or the chains."""

import numpy as np
import pytest

from nestgrad.likelihoods import KernelRaisedError, Likelihood
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.nested_sampler import SamplerError
from nestgrad.sampler.priors import Prior, Uniform


def step_zero_below(theta):
    s = 0.0
    for i in range(0, 3, int(theta[0] * 50)):  # range() step 0 for theta[0] < 0.02: ValueError
        s += 1.0
    return -0.5 * ((theta[0] - 0.03) / 0.01) ** 2 - 0.5 * ((theta[1] - 0.5) / 0.1) ** 2 + 0.0 * s


LINE = step_zero_below.__code__.co_firstlineno + 2  # the `for` line


@pytest.fixture(scope="module")
def likelihood():
    return Likelihood(step_zero_below, ["a", "b"], backend="cpu")


def test_batched_calls_name_the_line_and_the_point(likelihood):
    thetas = np.array([[0.5, 0.5], [0.01, 0.5], [0.7, 0.2]])
    for call in (likelihood.logl, likelihood.logl_and_grad):  # (grad alone skips the loop: s adds nothing)
        with pytest.raises(KernelRaisedError) as caught:
            call(thetas)
        error = caught.value
        assert (error.filename, error.lineno) == (__file__, LINE), str(error)
        assert "range() arg 3 must not be zero" in str(error) and "theta = [0.01, 0.5]" in str(error)
    assert np.isfinite(likelihood.logl(thetas[[0, 2]])).all()  # the points that do not raise still evaluate


def _run(likelihood, seed, prior_draws=0.0):
    prior = Prior({"a": Uniform(0.0, 1.0), "b": Uniform(0.0, 1.0)})
    return NestedSampler(likelihood, prior, nlive=10, seed=seed, hmc={"prior_draws": prior_draws}).run(
        progress=False)


def test_a_raise_in_the_prior_draws_of_an_iteration_is_one_sampler_error(likelihood):
    for seed in range(1, 4):
        with pytest.raises(SamplerError) as caught:
            _run(likelihood, seed, prior_draws=0.01)
        text = str(caught.value)
        assert "range() arg 3 must not be zero" in text and "step_zero_below" in text, text
        assert "at the initial prior draws" in text or "in the evaluation of iteration" in text, text


def test_a_raise_in_the_chains_or_at_the_initial_draws_is_one_sampler_error(likelihood):
    seen = set()
    for seed in range(1, 10):  # some seeds draw a < 0.02 among the initial points, the others reach it by chains
        with pytest.raises(SamplerError) as caught:
            _run(likelihood, seed)
        text = str(caught.value)
        assert "range() arg 3 must not be zero" in text and "step_zero_below" in text, text
        if "at the initial prior draws" in text:
            assert f"{__file__}:{LINE}:" in text and "theta = [" in text, text
            seen.add("initial")
        else:
            assert "in the chains of iteration" in text, text
            seen.add("chains")
    assert seen == {"initial", "chains"}, seen
