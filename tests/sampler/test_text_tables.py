"""The run folder's text tables: numbers that read back exactly, in savetxt's layout, serially or from forked
children."""

import io
import sys

import numpy as np
import pytest

from nestgrad.sampler import text_tables


EDGES = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, -2.2250738585072014e-308, 1.7976931348623157e308,
         9.999999999999999e22, 1e23, 1e22, 0.1, 1e-5, 9.9999999999999995e-6, 123456789012345678.0, -2.5, 1.0]


def _table(shape, seed=0):
    rng = np.random.default_rng(seed)
    table = rng.standard_normal(shape) * 10.0 ** rng.integers(-300, 300, size=shape)
    if table.size:
        table.flat[:min(table.size, len(EDGES))] = EDGES[:table.size]
    return table


def _fields(text):
    return [line.split(b" ") for line in text.splitlines()]


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 3), (60000, 6)])
def test_numbers_read_back_exactly_in_the_savetxt_layout_within_a_last_digit_of_printf(shape):
    table = _table(shape)
    mine, printf = io.BytesIO(), io.BytesIO()
    text_tables.write_rows(mine, table)
    np.savetxt(printf, np.atleast_2d(table), fmt=text_tables.FLOAT_FMT)
    if not table.size:
        assert mine.getvalue() == b""
        return
    back = np.loadtxt(io.BytesIO(mine.getvalue()), ndmin=2)
    np.testing.assert_array_equal(back, table)
    np.testing.assert_array_equal(np.signbit(back[np.isfinite(table)]), np.signbit(table[np.isfinite(table)]))
    ours, theirs = _fields(mine.getvalue()), _fields(printf.getvalue())
    assert [len(row) for row in ours] == [len(row) for row in theirs]
    differ = 0
    for row_a, row_b in zip(ours, theirs):
        for a, b in zip(row_a, row_b):
            if a != b:  # the same number of characters, mantissas one unit apart, the same exponent
                differ += 1
                assert len(a) == len(b) and a.split(b"e")[1] == b.split(b"e")[1], (a, b)
                assert abs(int(a.split(b"e")[0].replace(b".", b"")) - int(b.split(b"e")[0].replace(b".", b""))) == 1
    assert differ <= 0.05 * table.size


@pytest.mark.parametrize("seed", range(4))
def test_the_bytes_are_printf_s_across_every_exponent(seed):
    """Double-double digits: printf's own (a difference needs a value within ~1e-30 of a rounding tie). The
    exponents span subnormals to the largest float64, where the formatter rescales by 2^+-256."""
    rng = np.random.default_rng(100 + seed)
    table = _table((4000, 5), seed=seed)
    bits = rng.integers(0, 2 ** 63, size=2000, dtype=np.uint64) | (rng.integers(0, 2, 2000, dtype=np.uint64) << 63)
    raw = bits.view(np.float64)  # every bit pattern: subnormals, huge and tiny exponents, NaN and inf payloads
    extremes = np.array([5e-324, 1e-320, 2.2250738585072014e-308, 1e-300, 1e-290, 1e290, 1e300, 1.7976931348623157e308,
                         9.5e-322, 4.9406564584124654e-324 * 3])
    for part in (table, raw.reshape(-1, 4), np.concatenate([extremes, -extremes]).reshape(-1, 5)):
        mine, printf = io.BytesIO(), io.BytesIO()
        text_tables.write_rows(mine, part)
        np.savetxt(printf, part, fmt=text_tables.FLOAT_FMT)
        assert mine.getvalue() == printf.getvalue()


def test_blocks_join_into_the_same_text(monkeypatch):
    table = _table((101, 7), seed=9)
    whole = io.BytesIO()
    text_tables.write_rows(whole, table)
    monkeypatch.setattr(text_tables, "_BLOCK_NUMBERS", 20)  # 2 rows of 7 per block
    blocks = io.BytesIO()
    text_tables.write_rows(blocks, table)
    assert blocks.getvalue() == whole.getvalue()


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


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_threads_write_the_same_bytes_in_order(monkeypatch, threads):
    """Blocks formatted on several threads come out in row order, byte for byte as one thread writes them (small
    blocks, so that many blocks are in flight and finish out of order)."""
    monkeypatch.setattr(text_tables, "_BLOCK_NUMBERS", 96)
    table = _table((5003, 7), seed=threads)
    one, many = io.BytesIO(), io.BytesIO()
    text_tables.write_rows(one, table, threads=1)
    text_tables.write_rows(many, table, threads=threads)
    assert many.getvalue() == one.getvalue()
    assert many.getvalue().count(b"\n") == 5003
    np.testing.assert_array_equal(np.loadtxt(io.BytesIO(many.getvalue()), ndmin=2), table)


@pytest.mark.parametrize("threads", [1, 3])
def test_a_table_given_by_its_columns_writes_the_bytes_of_the_stacked_table(threads, monkeypatch):
    """Columns are stacked a block of rows at a time; blocks of 1000 numbers make many blocks (and a short one
    at the end) of a table of 10,000 rows."""
    monkeypatch.setattr(text_tables, "_BLOCK_NUMBERS", 1000)
    rng = np.random.default_rng(3)
    first, middle, last = rng.standard_normal(10_001), _table((10_001, 4)), -rng.exponential(size=10_001)
    stacked, columns = io.BytesIO(), io.BytesIO()
    text_tables.write_rows(stacked, np.column_stack([first, middle, last]), threads=threads)
    table = text_tables.Columns(first, middle, last)
    assert table.shape == (10_001, 6) and table.size == 60_006
    text_tables.write_rows(columns, table, threads=threads)
    assert columns.getvalue() == stacked.getvalue() and stacked.getvalue().count(b"\n") == 10_001


def test_column_blocks_of_different_lengths_are_refused():
    with pytest.raises(ValueError, match=r"the same number of rows"):
        text_tables.Columns(np.zeros(3), np.zeros((4, 2)))
