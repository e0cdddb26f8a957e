"""What a compiled kernel that raised was doing: the batch is run again through the plain-Python kernel, one
parameter point at a time, and the first exception it raises is traced to the user's ``file:line:col``.

numba runs the batch drivers in parallel, and an exception raised in a parallel region comes out as a bare
``SystemError: ... returned a result with an exception set``, which names neither the kernel nor the cause.
Python raises for more than numba does (``math.log(-1.0)`` is NaN compiled, ``ValueError`` in Python), so a
Python exception is reported as the likely cause, beside numba's own message."""

import traceback

import numpy as np

from .errors import KernelRaisedError

MAX_POINTS = 2000  # rows of the batch tried in Python (about a second for a long data loop)


def python_failure(kernel, use, data64, thetas, why):
    """A :class:`KernelRaisedError` at the user's line for the first row of ``thetas`` where the plain-Python
    kernel raises (``why``: what sent us looking, for the message), or None when it raises nowhere."""
    rows = np.asarray(thetas, dtype=np.float64).reshape(-1, np.shape(thetas)[-1])[:MAX_POINTS]
    for theta in rows:
        try:
            with np.errstate(all="ignore"):
                kernel.function(theta.copy(), *data64)
        except Exception as raised:  # noqa: BLE001 - whatever the user's code raises is the report
            frames = traceback.extract_tb(raised.__traceback__)
            ours = [f for f in frames if f.filename in use.files] or frames[-1:]
            frame = ours[-1]
            at = ", ".join(f"{v:.6g}" for v in theta)
            return KernelRaisedError(frame.filename, frame.lineno, (frame.colno or 0) + 1,
                                     f"the kernel {kernel.name!r} raised {type(raised).__name__}: {raised} at theta "
                                     f"= [{at}]: `{(frame.line or '').strip()}` (found by running it in Python when "
                                     f"{why})")
    return None


def diagnose(kernel, use, data64, thetas, error) -> KernelRaisedError:
    """The :class:`KernelRaisedError` for ``error``, raised by the compiled kernel over the rows of ``thetas``."""
    compiled = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}".rstrip(": ")
    found = python_failure(kernel, use, data64, thetas, "the compiled kernel stopped the batch")
    if found is not None:
        return found
    rows = np.asarray(thetas, dtype=np.float64).reshape(-1, np.shape(thetas)[-1])[:MAX_POINTS]
    node = kernel.node
    return KernelRaisedError(kernel.filename, node.lineno, node.col_offset + 1,
                             f"the compiled kernel {kernel.name!r} raised {compiled} (the plain-Python kernel "
                             f"raised nothing at the first {rows.shape[0]} points of the batch)")
