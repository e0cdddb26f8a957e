"""Assembling a run's dead and final live points in logl order (``sampler.run_results``)."""

import numpy as np
import pytest

from nestgrad.sampler import evidence, run_results


@pytest.mark.parametrize("dead_in_order", [True, False])
def test_ordered_points_are_the_sorted_concatenation(dead_in_order):
    rng = np.random.default_rng(0)
    dead_logl = np.sort(rng.random(50)) if dead_in_order else rng.random(50)
    live_logl = 1.0 + rng.random(20)
    logl = np.concatenate([dead_logl, live_logl])
    order = evidence.sort_dead(logl, None)
    dead, live = rng.random((50, 3)), rng.random((20, 3))
    got = run_results._ordered([dead[:20], dead[20:20], dead[20:]], live, order)  # the chunks the points died in
    np.testing.assert_array_equal(got, np.concatenate([dead, live])[order])
    np.testing.assert_array_equal(np.concatenate([dead_logl, live_logl])[order], np.sort(logl))
