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


def test_a_run_stopped_by_a_limit_says_it_did_not_converge(tmp_path):
    """An outsider's max_iter: 10 run exited 0 with an ordinary summary while 24.6 nats of dlogz remained."""
    import json

    from problems import gaussian
    from nestgrad.sampler import NestedSampler
    from nestgrad.sampler.run_folder import write_results_json

    problem = gaussian(2)
    short = NestedSampler(problem, problem.prior, nlive=50, seed=1).run(progress=False, max_iter=5)
    assert short.converged is False and short.dlogz_left > 0.1
    assert "NOT CONVERGED: the run stopped with dlogz = " in short.summary()
    full = NestedSampler(problem, problem.prior, nlive=50, seed=1).run(progress=False)
    assert full.converged is True and "NOT CONVERGED" not in full.summary()
    write_results_json(short, tmp_path / "results.json")
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["converged"] is False and stored["dlogz_left"] == pytest.approx(short.dlogz_left)


@pytest.mark.parametrize("limit", [{"max_nlike": 1}, {"max_time": 1e-9}])
def test_a_run_stopped_before_its_first_iteration_did_not_converge(limit):
    """An outsider's max_nlike: 1 run (the initial draws alone) reported no NOT CONVERGED line and stored
    converged null: no iteration had recorded what was left."""
    from problems import gaussian
    from nestgrad.sampler import NestedSampler

    problem = gaussian(2)
    short = NestedSampler(problem, problem.prior, nlive=50, seed=1).run(progress=False, **limit)
    assert short.niter == 0
    assert short.converged is False and short.dlogz_left > 0.1
    assert "NOT CONVERGED" in short.summary()
