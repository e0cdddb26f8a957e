"""Float tables as text, fast enough for large runs: ``%.17e`` numbers (18 significant digits, so reading the
text back gives the same float64 values), one space between columns, one row per line; several tables written at
once by forked children.

Formatting floats with Python costs about 0.5 us per number whatever the method (``savetxt``, ``%`` on whole
rows, ``repr``), so a run of nlive 1e5 (1.6M dead points, three tables of ~24M numbers) spent 18 s here. Where
numpy's long double has a 64-bit mantissa (x86), the digits are computed with array arithmetic instead (about 3x
faster): the decimal exponent from log10, the 18 digits as one integer from the number scaled in long double.
That integer is within one unit of printf's correctly rounded one (scaling errors stay below 0.2 units), so about
one number in sixty differs from printf in its last digit, and every number still reads back to the same float64
(the error is under 1e-17 of the value, a tenth of half a float64 spacing). Forking is used only on Linux and
only for large tables: the children run nothing but this formatting and exit with ``os._exit``.
"""

import os
import sys

import numpy as np

FLOAT_FMT = "%.17e"  # 17 significant digits: reading the text back gives the same float64 values
_BLOCK_NUMBERS = 1 << 16  # numbers formatted per ``%`` (a few MB of text)
PARALLEL_NUMBERS = 1_000_000  # tables holding at least this many numbers in all are written in parallel


_ARRAY_DIGITS = np.finfo(np.longdouble).nmant >= 63  # the scaled digits are exact to within a unit (above)
_ARRAY_BLOCK = 1 << 20  # numbers formatted per array pass (26 MB of characters)
_POW10_LOW = -330  # 10^e in long double for every decimal exponent a float64 has (and one step beyond)
_POW10 = np.power(np.longdouble(10), np.arange(_POW10_LOW, 311).astype(np.longdouble)) if _ARRAY_DIGITS else None
_FIELD = 26  # sign, digit, point, 17 digits, "e", sign, 3 exponent digits, separator; unused bytes are NUL


def write_rows(handle, table) -> None:
    """``table`` (rows x columns) into the binary file ``handle`` as ``FLOAT_FMT`` numbers, one space between
    columns, one row per line (the layout of ``np.savetxt(handle, table, fmt=FLOAT_FMT)``)."""
    table = np.atleast_2d(np.asarray(table, dtype=np.float64))
    if table.size == 0:
        return
    rows = max(1, (_ARRAY_BLOCK if _ARRAY_DIGITS else _BLOCK_NUMBERS) // table.shape[1])
    row = " ".join([FLOAT_FMT] * table.shape[1]) + "\n"
    for start in range(0, table.shape[0], rows):
        block = table[start:start + rows]
        if _ARRAY_DIGITS:
            handle.write(_array_text(block))
        else:
            handle.write(((row * block.shape[0]) % tuple(block.ravel().tolist())).encode("ascii"))


def _array_text(block) -> bytes:
    """The rows of ``block`` formatted with array arithmetic (module docstring)."""
    nrows, ncols = block.shape
    x = np.ascontiguousarray(block).ravel()
    out = np.zeros((x.size, _FIELD), dtype=np.uint8)
    nonzero = np.isfinite(x) & (x != 0.0)
    exponent = np.zeros(x.size, np.int64)
    digits = np.zeros(x.size, np.uint64)  # the 18 significant digits as one integer
    magnitude = np.abs(x[nonzero])
    e = np.floor(np.log10(magnitude)).astype(np.int64)
    scaled = magnitude.astype(np.longdouble) / _POW10[e - _POW10_LOW]
    low, high = scaled < 1, scaled >= 10  # log10 rounded across a power of ten
    scaled[low] *= 10
    scaled[high] /= 10
    e += high.astype(np.int64) - low.astype(np.int64)
    d = np.rint(scaled * np.longdouble(1e17)).astype(np.uint64)
    carry = d >= np.uint64(10 ** 18)  # 9.99...95 rounded up to 10
    d[carry] = np.uint64(10 ** 17)
    e[carry] += 1
    digits[nonzero], exponent[nonzero] = d, e
    out[:, 0] = np.where(np.signbit(x), ord("-"), 0)
    for position in range(19, 2, -1):
        digits, digit = np.divmod(digits, np.uint64(10))
        out[:, position] = digit.astype(np.uint8) + ord("0")
    out[:, 1] = digits.astype(np.uint8) + ord("0")
    out[:, 2], out[:, 20] = ord("."), ord("e")
    out[:, 21] = np.where(exponent < 0, ord("-"), ord("+"))
    size = np.abs(exponent)
    out[:, 22] = np.where(size >= 100, size // 100 + ord("0"), 0)
    out[:, 23] = size // 10 % 10 + ord("0")
    out[:, 24] = size % 10 + ord("0")
    special = ~np.isfinite(x)
    if special.any():  # as printf writes them
        out[special, :25] = 0
        for which, text in ((np.isnan(x), b"nan"), (x == np.inf, b"inf"), (x == -np.inf, b"-inf")):
            out[which, 25 - len(text):25] = np.frombuffer(text, np.uint8)
    out[:, 25] = ord(" ")
    out.reshape(nrows, ncols, _FIELD)[:, -1, 25] = ord("\n")
    return out.tobytes().replace(b"\0", b"")


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
