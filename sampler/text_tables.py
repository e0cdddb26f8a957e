"""Float tables as text, fast enough for large runs: ``%.17e`` numbers (18 significant digits, so reading the
text back gives the same float64 values), one space between columns, one row per line; several tables written at
once by forked children.

Formatting floats with Python costs about 0.5 us per number whatever the method (``savetxt``, ``%`` on whole
rows, ``repr``), so a run of nlive 1e5 (1.6M dead points, three tables of ~24M numbers) spent 18 s here; numpy
array arithmetic in long double took 0.13-0.2 us. The digits now come from compiled code
(``sampler.float_text``, about 0.08 us per number, printf's digits), on one thread per core (up to eight) for
the blocks of a table. Several large tables are written at once by forked children (Linux only): they run nothing
but this formatting and exit with ``os._exit``.
"""

import os
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import float_text

FLOAT_FMT = "%.17e"  # 17 digits after the point: reading the text back gives the same float64 values
PARALLEL_NUMBERS = 1_000_000  # tables holding at least this many numbers in all are written in parallel
_BLOCK_NUMBERS = 1 << 20  # numbers formatted per call (at most 26 MB of text)
MAX_THREADS = 8  # formatting threads per table by default: 122M numbers in about 1.3 s, 260 MB of blocks at most


class Columns:
    """A table given as its column blocks (1-D columns or 2-D groups of columns, the same number of rows each),
    stacked a block of rows at a time as it is written, so a large run's tables are never whole in memory (at 4M
    dead points in 30-D, writing the run folder peaked 2.0 GB lower than stacking each table first)."""

    def __init__(self, *blocks):
        self.blocks = [np.asarray(b, dtype=np.float64) for b in blocks]
        rows = {b.shape[0] for b in self.blocks}
        if len(rows) != 1 or any(b.ndim not in (1, 2) for b in self.blocks):
            raise ValueError(f"column blocks of shapes {[b.shape for b in self.blocks]}: expected 1-D or 2-D "
                             "blocks with the same number of rows")
        width = sum(1 if b.ndim == 1 else b.shape[1] for b in self.blocks)
        self.shape = (rows.pop(), width)
        self.size = self.shape[0] * self.shape[1]

    def __getitem__(self, rows):
        return np.column_stack([b[rows] for b in self.blocks])

    def __array__(self, dtype=None, copy=None):
        whole = self[:]
        return whole if dtype is None else whole.astype(dtype)


def write_rows(handle, table, threads=None) -> None:
    """``table`` (rows x columns, or :class:`Columns`) into the binary file ``handle`` as ``FLOAT_FMT`` numbers,
    one space between columns, one row per line (the layout of ``np.savetxt(handle, table, fmt=FLOAT_FMT)``).
    Blocks of rows are formatted on ``threads`` threads (default: one per core, at most ``MAX_THREADS``; the
    formatter releases the GIL) and written in order, with at most ``threads + 2`` blocks in memory."""
    if not isinstance(table, Columns):
        table = np.atleast_2d(np.asarray(table, dtype=np.float64))
    if table.size == 0:
        return
    rows = max(1, _BLOCK_NUMBERS // table.shape[1])
    starts = range(0, table.shape[0], rows)
    threads = max(1, min(threads or min(os.cpu_count() or 1, MAX_THREADS), len(starts)))
    if threads == 1:
        for start in starts:
            handle.write(float_text.format_rows(table[start:start + rows]))
        return
    float_text.ready()  # compiled once, before the threads start
    with ThreadPoolExecutor(threads) as pool:
        pending = deque()
        for start in starts:
            pending.append(pool.submit(_format_block, table, start, rows))  # Columns stack in the thread
            if len(pending) >= threads + 2:
                handle.write(pending.popleft().result())
        while pending:
            handle.write(pending.popleft().result())


def _format_block(table, start, rows) -> bytes:
    return float_text.format_rows(table[start:start + rows])


def run_all(tasks, numbers) -> list:
    """Call every function in ``tasks``; each returns None or an error message. With ``numbers`` (the work's
    size) at least ``PARALLEL_NUMBERS`` on Linux, each runs in a forked child, all at once. The messages, in
    the order of ``tasks``."""
    if numbers < PARALLEL_NUMBERS or len(tasks) < 2 or sys.platform != "linux":
        return [task() for task in tasks]
    float_text.ready()  # compiled (or loaded) once here, not in every child
    sys.stdout.flush()
    sys.stderr.flush()
    children = []
    for task in tasks:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run the task, report, never return into the caller's code
            status = 1
            try:
                os.close(read_end)
                try:
                    message = task()
                    status = 0
                except BaseException as error:  # a bug, not a write error: still one message, not a hang
                    message = f"{type(error).__name__}: {error}"
                os.write(write_end, (message or "").encode("utf-8", "replace"))
            finally:
                os._exit(status)
        os.close(write_end)
        children.append((pid, read_end))
    messages = []
    for pid, read_end in children:
        with os.fdopen(read_end, "rb") as pipe:
            text = pipe.read().decode("utf-8", "replace")
        _, status = os.waitpid(pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            text = text or f"the writing process ended with status {status}"
        messages.append(text or None)
    return messages
