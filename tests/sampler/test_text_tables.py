"""The run folder's text tables: the bytes numpy's savetxt writes, serially or from forked children."""

import io
import sys

import numpy as np
import pytest

from nestgrad.sampler import text_tables


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 3), (20000, 6)])
def test_rows_are_the_bytes_savetxt_writes(shape):
    table = np.random.default_rng(0).standard_normal(shape) * 10.0 ** np.random.default_rng(1).integers(
        -300, 300, size=shape)
    if table.size:  # every fifth number one of the values that format specially
        table.flat[::5] = np.resize([-np.inf, np.inf, np.nan, 0.0, -0.0], table.flat[::5].size)
    mine, theirs = io.BytesIO(), io.BytesIO()
    text_tables.write_rows(mine, table)
    np.savetxt(theirs, np.atleast_2d(table), fmt=text_tables.FLOAT_FMT)
    assert mine.getvalue() == theirs.getvalue()
    if table.size:
        np.testing.assert_array_equal(np.loadtxt(io.BytesIO(mine.getvalue()), ndmin=2), table)


@pytest.mark.skipif(sys.platform != "linux", reason="tables are written by forked children on Linux only")
def test_forked_children_write_every_table_and_report_errors_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(text_tables, "PARALLEL_NUMBERS", 0)
    tables = [np.arange(12.0).reshape(4, 3) * (i + 1) for i in range(3)]

    def task(i):
        def write():
            if i == 1:
                return "table 1: cannot write"
            with open(tmp_path / f"t{i}.txt", "wb") as handle:
                text_tables.write_rows(handle, tables[i])
            return None
        return write

    def crashes():
        raise ValueError("a bug")

    messages = text_tables.run_all([task(0), task(1), task(2), crashes], numbers=36)
    assert messages == [None, "table 1: cannot write", None, "ValueError: a bug"]
    for i in (0, 2):
        np.testing.assert_array_equal(np.loadtxt(tmp_path / f"t{i}.txt"), tables[i])
    assert not (tmp_path / "t1.txt").exists()
