"""Fixtures for the likelihoods tests."""

import numpy as np
import pytest

from likelihood_helpers import prior_draws, reference, small_builtin


@pytest.fixture(scope="module")
def points():
    """1000 prior draws per built-in, rounded to float32 so both precisions see the same points."""
    cache = {}

    def get(name):
        if name not in cache:
            b = small_builtin(name)
            thetas = prior_draws(b, 1000, np.random.default_rng(7)).astype(np.float32).astype(np.float64)
            cache[name] = (b, thetas, *reference(b, thetas))
        return cache[name]

    return get
