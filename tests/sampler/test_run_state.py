"""The run record's dead points: kept as the chunks they die in, joined or streamed into a checkpoint whole."""

import numpy as np

from nestgrad.sampler import run_state
from nestgrad.sampler.checkpoint import Stacked, read_checkpoint, write_checkpoint
from nestgrad.sampler.run_state import DEAD_FIELDS, ChunkedRows, RunRecord


def _chunks(rng, sizes, d=3):
    return [(rng.random((m, d)), rng.integers(0, 99, m)) for m in sizes]


def test_appends_equal_the_concatenation(monkeypatch):
    monkeypatch.setattr(run_state, "MERGE_EVERY", 3)  # merges happen within the test
    rng = np.random.default_rng(0)
    chunks = _chunks(rng, [5, 0, 1, 200, 63, 64, 1000, 7])
    rows = ChunkedRows()
    for count, chunk in enumerate(chunks, start=1):
        rows.append(chunk)
        for i in range(2):
            want = np.concatenate([c[i] for c in chunks[:count]])
            np.testing.assert_array_equal(np.concatenate(rows.parts(i)), want)
        assert rows.size == sum(c[0].shape[0] for c in chunks[:count])
        assert len(rows.blocks) + len(rows.tail) <= count // 3 + 2
    for i, whole in enumerate(rows.arrays()):
        np.testing.assert_array_equal(whole, np.concatenate([c[i] for c in chunks]))
    assert rows.arrays()[0] is rows.arrays()[0]  # joined once


def test_appending_copies_nothing():
    chunk = _chunks(np.random.default_rng(1), [10])[0]
    rows = ChunkedRows()
    rows.append(chunk)
    assert rows.parts(0)[0] is chunk[0] and rows.arrays()[1] is chunk[1]


def test_stacked_parts_are_written_as_their_concatenation(tmp_path):
    rng = np.random.default_rng(2)
    parts = (rng.random((4, 3)).astype(np.float32), rng.random((0, 3)), rng.random((7, 3)))
    write_checkpoint(tmp_path / "c.npz", {"rows": Stacked(parts), "plain": np.arange(5), "one": Stacked(parts[2:])},
                     {"x": 1})
    arrays, meta = read_checkpoint(tmp_path / "c.npz")
    want = np.concatenate(parts)
    assert arrays["rows"].dtype == want.dtype == np.float64
    np.testing.assert_array_equal(arrays["rows"], want)
    np.testing.assert_array_equal(arrays["one"], parts[2])
    np.testing.assert_array_equal(arrays["plain"], np.arange(5))
    assert meta["x"] == 1
    assert np.load(tmp_path / "c.npz", allow_pickle=False)["rows"].shape == (11, 3)  # numpy reads it as it is


def test_record_round_trip_through_a_checkpoint(tmp_path):
    rng = np.random.default_rng(3)
    record = RunRecord(3, 4)
    chunks = []
    for m in (4, 6, 0, 4):
        chunk = (rng.random((m, 3)), rng.random((m, 3)), rng.random(m), rng.random(m)) + tuple(
            rng.integers(0, 50, m) for _ in DEAD_FIELDS[4:])
        chunks.append(chunk)
        record.dead.append(chunk)
    write_checkpoint(tmp_path / "r.npz", record.arrays(), {})
    arrays, _ = read_checkpoint(tmp_path / "r.npz")
    back = RunRecord.from_saved(arrays, record.scalars())
    for i, field in enumerate(DEAD_FIELDS):
        want = np.concatenate([c[i] for c in chunks])
        np.testing.assert_array_equal(back.dead_arrays()[i], want)
        np.testing.assert_array_equal(np.concatenate(record.dead_parts(field)), want)
