"""The CPU backend's live set in slots (sampler/live_rows.py) against plain arrays: the rows are the same float64
values wherever they are stored, so a run must give the same dead points bit for bit, in every regime of the
step: one cluster, two, a plateau that widens the live set past the store's capacity (the store grows), the
large-live-set path (running moments, the bounding radius read in place; ``RUNNING_FROM`` lowered) and resume
from a checkpoint. (Runs over MPI ranks keep plain arrays: test_mpi.py compares them with single-process runs,
which use the store.)"""

import numpy as np
import pytest

import problems
from hard_problems import floor_peak
from nestgrad.sampler import NestedSampler, geometry, live_moments, live_rows


def _run(problem, slots, monkeypatch, nlive=200, seed=3, delete_fraction=0.1, **options):
    monkeypatch.setattr(live_rows, "ENABLED", slots)
    sampler = NestedSampler(problem, problem.prior, nlive=nlive, seed=seed, delete_fraction=delete_fraction)
    res = sampler.run(dlogz=0.5, progress=False, **options)
    store = sampler._proposal.live_store
    assert isinstance(store, live_rows.HostLiveStore) if slots else store is None
    d = res.dead
    return np.column_stack([d.u, d.theta, d.logl, d.logl_birth]), res, store


def _same(a, b):
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("make", [lambda: problems.gaussian(2), lambda: problems.shells(2)],
                         ids=["one_cluster", "two_clusters"])
def test_slots_give_the_plain_arrays_dead_points_bit_for_bit(make, monkeypatch):
    (a, res, store), (b, _, _) = _run(make(), True, monkeypatch), _run(make(), False, monkeypatch)
    assert _same(a, b) and store.rows_to_host > 0
    if "shells" in res.name:
        assert np.max(res.diagnostics["nclusters"]) >= 2  # the several-cluster path ran


def test_half_the_live_set_replaced_each_iteration(monkeypatch):
    """k = nlive / 2 (the largest share issue 13 asks for): as many slots are taken as released every iteration,
    half the store turning over; the dead points are still the plain arrays'."""
    make = lambda: problems.shells(2)  # noqa: E731
    (a, res, store), (b, _, _) = (_run(make(), slots, monkeypatch, delete_fraction=0.5) for slots in (True, False))
    assert res.settings["k"] == 100 and _same(a, b)
    assert store.capacity == 300 and a.shape[0] >= 4 * 100  # several iterations of 100 deaths each


def test_a_widening_plateau_grows_the_store_and_changes_nothing(monkeypatch):
    problem = floor_peak()
    (a, _, store), (b, _, _) = _run(problem, True, monkeypatch, seed=2), _run(problem, False, monkeypatch, seed=2)
    assert _same(a, b)
    assert store.capacity > 200 + 20  # nlive + k slots at first: the live set widened past them


def test_the_large_live_set_path_reads_the_radius_in_place(monkeypatch):
    monkeypatch.setattr(live_moments, "RUNNING_FROM", 20)
    calls = []
    in_place = live_rows.HostLiveStore.max_whitened_norm2

    def counted(self, *args):
        calls.append(1)
        return in_place(self, *args)

    monkeypatch.setattr(live_rows.HostLiveStore, "max_whitened_norm2", counted)
    problem = problems.gaussian(3)
    (a, res, _), (b, _, _) = _run(problem, True, monkeypatch, max_iter=40), _run(problem, False, monkeypatch,
                                                                                max_iter=40)
    assert _same(a, b) and len(calls) >= res.niter // 2


def test_resume_from_a_checkpoint_gives_the_run_through(monkeypatch, tmp_path):
    problem = problems.shells(2)
    whole, _, _ = _run(problem, True, monkeypatch)
    path = tmp_path / "checkpoint.npz"
    _run(problem, True, monkeypatch, checkpoint=path, max_iter=6)
    again, _, _ = _run(problem, True, monkeypatch, checkpoint=path, resume=True)
    assert _same(again, whole)


def test_slots_are_reused_low_first_and_the_store_doubles():
    store = live_rows.HostLiveStore(4, 2)
    assert store.take(3).tolist() == [0, 1, 2]
    store.release(np.array([1]))
    assert store.take(2).tolist() == [1, 3]
    store.u[:] = np.arange(8.0).reshape(4, 2)
    assert store.take(1).tolist() == [4] and store.capacity == 8  # the new half, lowest first
    np.testing.assert_array_equal(store.u[:4], np.arange(8.0).reshape(4, 2))  # rows kept through the growth
    assert store.take(3).tolist() == [5, 6, 7]


@pytest.mark.parametrize("dense", [False, True])
def test_the_radius_in_place_equals_the_radius_of_the_gathered_rows(dense):
    rng = np.random.default_rng(1)
    store = live_rows.HostLiveStore(500, 4)
    store.u[:] = rng.normal(size=(500, 4))
    store.u[17] = np.nan  # a row whose norm is NaN never counts, as on the host
    slots = np.concatenate([[17], rng.permutation(np.delete(np.arange(500), 17))[:299]])
    points = store.u[slots]
    finite = points[1:]
    chol = np.linalg.cholesky(np.cov(finite.T))
    chol = chol if dense else np.diag(np.diag(chol))
    rows = live_rows.ResidentRows(store, "u", slots)
    want = geometry.max_whitened_norm2(points, finite.mean(axis=0), chol, not dense)
    assert np.isfinite(want) and want > 0
    assert geometry.max_whitened_norm2(rows, finite.mean(axis=0), chol, not dense) == want


def test_a_callback_reads_the_state_as_it_would_read_arrays(monkeypatch):
    """The rows views are what a run's callback sees in ``state.u``/``state.theta``: they read like arrays."""
    problem = problems.gaussian(2)
    seen = {}

    def callback(niter, state, info):
        for key, rows in (("slots", state.u), ("array", np.asarray(state.u))):
            seen.setdefault(key, []).append((rows[:, 0], rows[3], rows[3, 1], rows[-2:, 1:], rows - 0.5,
                                             np.mean(rows, axis=0), rows.mean(axis=0), rows.copy(),
                                             np.asarray(rows[np.asarray(state.logl) > np.median(state.logl)])))
        return niter >= 3

    monkeypatch.setattr(live_rows, "ENABLED", True)
    NestedSampler(problem, problem.prior, nlive=50, seed=1).run(progress=False, callback=callback)
    assert len(seen["slots"]) == 3
    for got, want in zip(seen["slots"], seen["array"]):
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.array_equal(g, w)
    rows = live_rows.ResidentRows(live_rows.HostLiveStore(4, 2), "u", np.array([1, 0]))
    with pytest.raises(TypeError):
        rows[0] = 1.0  # read-only
    with pytest.raises(TypeError):
        np.add(rows, 1.0, out=rows)
