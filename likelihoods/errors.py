"""Errors for mistakes in what a user hands to :class:`likelihoods.Likelihood` (kernel references, data)."""

import difflib


def line_and_column(text, offset):
    """1-based ``(line, column)`` of ``offset`` in ``text`` (str or bytes): for messages about a character that
    no parser gave a position for (a byte that is not UTF-8, a NUL)."""
    newline = b"\n" if isinstance(text, bytes) else "\n"
    return text.count(newline, 0, offset) + 1, offset - (text.rfind(newline, 0, offset) + 1) + 1


def did_you_mean(word, choices):
    """' (did you mean 'x'?)' for the closest of ``choices``, or '' when nothing is close."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class LikelihoodError(ValueError):
    """A user mistake; the message names the place (``file:line:col``, a data key or an argument)."""


class DataError(LikelihoodError):
    """Data that does not fit the kernel. ``key`` is the data key (kernel argument name) concerned; ``reason``
    the message without the leading ``data key 'x':`` (for callers that name the key their own way)."""

    def __init__(self, key, message):
        self.key, self.reason = key, message
        super().__init__(f"data key {key!r}: {message}")


class KernelIndexError(LikelihoodError):
    """The kernel reads an array outside its bounds (numba would read memory outside it, without an error).

    ``filename``, ``lineno``, ``col`` (1-based) locate the read in the kernel (or helper) file; the message
    starts with ``file:line:col:``. ``array`` is the argument read; ``config_key`` the config entry to blame.
    """

    config_key = ("likelihood", "kernel")

    def __init__(self, filename, lineno, col, message, array=None):
        self.filename, self.lineno, self.col, self.array = filename, int(lineno), int(col), array
        self.key = None
        super().__init__(f"{filename}:{self.lineno}:{self.col}: {message}")


class ParamsError(KernelIndexError):
    """The kernel reads more parameters than ``params`` names (theta[k] with k >= len(params))."""

    config_key = ("params",)


class KernelRaisedError(LikelihoodError):
    """The compiled kernel raised an exception for a batch (a loop step of zero, an integer division by zero, a
    ``raise`` in the kernel...). numba's parallel batch drivers turn it into a bare ``SystemError``; this names the
    kernel's ``file:line:col`` and the parameters where the plain-Python kernel raises the same (or, where Python
    raises nothing, the compiled kernel's own message). ``config_key`` is the config entry to blame."""

    config_key = ("likelihood", "kernel")

    def __init__(self, filename, lineno, col, message):
        self.filename, self.lineno, self.col = filename, int(lineno), int(col)
        self.key = None
        super().__init__(f"{filename}:{self.lineno}:{self.col}: {message}")
