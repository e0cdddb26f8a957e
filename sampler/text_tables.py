"""Float tables as text, fast enough for large runs: numpy's ``savetxt`` bytes, written in blocks, and several
tables written at once by forked children.

Formatting floats is Python work (about 0.5 us per number whatever the method: ``savetxt``, ``%`` on whole
rows, ``repr``), so a run of nlive 1e5 (1.6M dead points, three tables of ~24M numbers) spent 18 s here. Writing
each table in blocks of rows with one ``%`` per block saves the per-row calls (about 20%); writing the tables in
forked children uses the other cores. Forking is used only on Linux and only for large tables: the children run
nothing but this formatting and exit with ``os._exit``.
"""

import os
import sys

import numpy as np

FLOAT_FMT = "%.17e"  # 17 significant digits: reading the text back gives the same float64 values
_BLOCK_NUMBERS = 1 << 16  # numbers formatted per ``%`` (a few MB of text)
PARALLEL_NUMBERS = 1_000_000  # tables holding at least this many numbers in all are written in parallel


def write_rows(handle, table) -> None:
    """``table`` (rows x columns) into the binary file ``handle``, the bytes ``np.savetxt(handle, table,
    fmt=FLOAT_FMT)`` writes: columns separated by one space, one row per line."""
    table = np.atleast_2d(np.asarray(table, dtype=np.float64))
    if table.size == 0:
        return
    row = " ".join([FLOAT_FMT] * table.shape[1]) + "\n"
    rows = max(1, _BLOCK_NUMBERS // table.shape[1])
    for start in range(0, table.shape[0], rows):
        block = table[start:start + rows]
        handle.write(((row * block.shape[0]) % tuple(block.ravel().tolist())).encode("ascii"))


def run_all(tasks, numbers) -> list:
    """Call every function in ``tasks``; each returns None or an error message. With ``numbers`` (the work's
    size) at least ``PARALLEL_NUMBERS`` on Linux, each runs in a forked child, all at once. The messages, in
    the order of ``tasks``."""
    if numbers < PARALLEL_NUMBERS or len(tasks) < 2 or sys.platform != "linux":
        return [task() for task in tasks]
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
