"""The run record's dead-point buffers: appending chunks gives the concatenation, whatever the chunk sizes."""

import numpy as np

from nestgrad.sampler.run_state import DEAD_FIELDS, GrowingRows, RunRecord


def _chunks(rng, sizes, d=3):
    return [(rng.random((m, d)), rng.integers(0, 99, m)) for m in sizes]


def test_appends_equal_the_concatenation():
    rng = np.random.default_rng(0)
    chunks = _chunks(rng, [5, 0, 1, 200, 63, 64, 1000, 7])
    rows = GrowingRows()
    for count, chunk in enumerate(chunks, start=1):
        rows.append(chunk)
        filled = rows.arrays()
        seen = chunks[:count]
        for i in range(2):
            np.testing.assert_array_equal(filled[i], np.concatenate([c[i] for c in seen]))
    assert rows.buffers[0].shape[0] <= 1.5 * rows.size + 64  # room kept stays bounded


def test_earlier_views_survive_later_appends():
    rng = np.random.default_rng(1)
    rows = GrowingRows()
    rows.append(_chunks(rng, [10])[0])
    before = rows.arrays()
    copy = [a.copy() for a in before]
    for chunk in _chunks(rng, [3, 500]):  # the second forces a larger buffer
        rows.append(chunk)
    for view, kept in zip(before, copy):
        np.testing.assert_array_equal(view, kept)


def test_a_wider_dtype_later_is_kept_exactly():
    rows = GrowingRows()
    rows.append((np.ones(4, np.float32),))
    rows.append((np.full(2, 1.0 + 2.0 ** -40),))
    (values,) = rows.arrays()
    assert values.dtype == np.float64 and values[-1] == 1.0 + 2.0 ** -40


def test_record_round_trip_through_checkpoint_arrays():
    rng = np.random.default_rng(2)
    record = RunRecord(3, 4)
    chunks = []
    for m in (4, 6, 4):
        chunk = (rng.random((m, 3)), rng.random((m, 3)), rng.random(m), rng.random(m)) + tuple(
            rng.integers(0, 50, m) for _ in DEAD_FIELDS[4:])
        chunks.append(chunk)
        record.dead.append(chunk)
    arrays = {f"dead_{f}": a for f, a in zip(DEAD_FIELDS, record.dead_arrays())}
    arrays.update({f"diag_{k}": v for k, v in record.diagnostics().items()})
    back = RunRecord.from_saved(arrays, record.scalars())
    for i, (got, want) in enumerate(zip(back.dead_arrays(), record.dead_arrays())):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, np.concatenate([c[i] for c in chunks]))
