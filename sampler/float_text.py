"""``%.17e`` text for float64 arrays, compiled: 18 significant digits per number, computed in double-double
arithmetic (about 106 bits), so that they match printf's correctly rounded digits except within ~1e-30 of a
rounding tie, and always read back to the same float64.

A number ``a = |x|`` with decimal exponent ``e`` is written as the integer ``round(a * 10^(17 - e))`` (18 digits).
The product is formed exactly as ``hi + lo`` (Dekker's two-product; numba does not contract to FMA without
fast-math), with ``10^k`` held as a double-double from exact rational arithmetic. Exponents beyond float64's
range are brought in by exact powers of two: the tiniest numbers are multiplied by 2^256 and the largest by
2^-256 before the product, with the table entry scaled by the inverse.
"""

from fractions import Fraction

import numba
import numpy as np

FIELD = 26  # the widest number: sign, digit, point, 17 digits, "e", sign, 3 exponent digits, separator
_K_LOW, _K_HIGH = -300, 360  # 10^k for k = 17 - e over every decimal exponent e of a float64 (-324 .. 308)
_SCALE = 256
_TEN, _ZERO = np.uint64(10), np.uint64(48)
_TABLE = None


def _scale_of(k):
    """The power of two folded into table entry ``k`` (its inverse multiplies the number first)."""
    return -_SCALE if k > 290 else (_SCALE if k < -250 else 0)


def _table():
    """``(hi, lo)`` with ``hi + lo = 10^k * 2^s(k)`` to about 106 bits, for k in [_K_LOW, _K_HIGH] (built once)."""
    global _TABLE
    if _TABLE is None:
        ks = range(_K_LOW, _K_HIGH + 1)
        hi, lo = np.empty(len(ks)), np.empty(len(ks))
        for i, k in enumerate(ks):
            exact = Fraction(10) ** k * Fraction(2) ** _scale_of(k)
            hi[i] = float(exact)  # correctly rounded
            lo[i] = float(exact - Fraction(hi[i]))
        _TABLE = (hi, lo)
    return _TABLE


@numba.njit(cache=True, nogil=True)
def _split(a):
    c = 134217729.0 * a  # 2^27 + 1
    high = c - (c - a)
    return high, a - high


@numba.njit(cache=True, nogil=True)
def _scaled_digits(a, k, hi, lo):
    """``round(a * 10^k)`` as an int64 (a * 10^k below 2^62), from the double-double table entry."""
    index = k - _K_LOW
    if k > 290:
        a = a * 1.157920892373162e77  # 2^256, exact
    elif k < -250:
        a = a * 8.636168555094445e-78  # 2^-256, exact
    th, tl = hi[index], lo[index]
    p = a * th
    ah, al = _split(a)
    bh, bl = _split(th)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    rest = err + a * tl
    whole = np.int64(p)  # p >= 2^53 here is an integer; below, its fraction joins the rest
    return whole + np.int64(np.rint((p - np.float64(whole)) + rest))


@numba.njit(cache=True, nogil=True)
def _write_text(x, ncols, hi, lo, out):
    """Rows of ``ncols`` numbers from the flat ``x`` into the byte buffer ``out``; returns the bytes written."""
    pos, column = 0, 0
    for i in range(x.size):
        v = x[i]
        if np.isnan(v):  # as printf writes them
            out[pos], out[pos + 1], out[pos + 2] = 110, 97, 110  # "nan"
            pos += 3
        elif np.isinf(v):
            if v < 0:
                out[pos] = 45  # "-"
                pos += 1
            out[pos], out[pos + 1], out[pos + 2] = 105, 110, 102  # "inf"
            pos += 3
        else:
            if np.signbit(v):
                out[pos] = 45
                pos += 1
            a = abs(v)
            digits, e = np.int64(0), 0
            if a != 0.0:
                e = int(np.floor(np.log10(a)))
                digits = _scaled_digits(a, 17 - e, hi, lo)
                if digits < 100000000000000000:  # log10 rounded up across a power of ten
                    e -= 1
                    digits = _scaled_digits(a, 17 - e, hi, lo)
                elif digits >= 1000000000000000000:
                    e += 1
                    digits = _scaled_digits(a, 17 - e, hi, lo)
                if digits >= 1000000000000000000:  # 9.99...95 rounded up to 10
                    digits = np.int64(100000000000000000)
                    e += 1
            rest = np.uint64(digits)  # unsigned: division by ten is a multiply and a shift, no sign fix-ups
            for position in range(18, 1, -1):  # the 17 digits after the point, last first
                quotient = rest // _TEN
                out[pos + position] = np.uint8(_ZERO + (rest - quotient * _TEN))
                rest = quotient
            out[pos] = np.uint8(_ZERO + rest)
            out[pos + 1] = 46  # "."
            pos += 19
            out[pos] = 101  # "e"
            out[pos + 1] = 45 if e < 0 else 43
            pos += 2
            size = abs(e)
            if size >= 100:
                out[pos] = 48 + size // 100
                pos += 1
            out[pos] = 48 + size // 10 % 10
            out[pos + 1] = 48 + size % 10
            pos += 2
        column += 1
        if column == ncols:  # a newline after a row, else a space
            out[pos], column = 10, 0
        else:
            out[pos] = 32
        pos += 1
    return pos


def compiled_signatures():
    """``[(dispatcher, signature)]`` of the formatter as :func:`format_rows` calls it."""
    f8, u8 = numba.float64[::1], numba.uint8[::1]
    return [(_write_text, (f8, numba.int64, f8, f8, u8))]


def ready() -> None:
    """Compile the formatter, or load it from numba's cache, now (before forking writers)."""
    for dispatcher, signature in compiled_signatures():
        dispatcher.compile(signature)


def format_rows(table) -> bytes:
    """``table`` (rows x columns, float64) as ``%.17e`` text: one space between columns, one row per line."""
    table = np.ascontiguousarray(np.atleast_2d(table), dtype=np.float64)
    if table.size == 0:
        return b""
    hi, lo = _table()
    out = np.empty(table.size * FIELD, np.uint8)
    used = _write_text(table.ravel(), table.shape[1], hi, lo, out)
    return out[:used].tobytes()
