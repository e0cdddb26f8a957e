"""Errors raised while differentiating a kernel.

Positions: ``lineno`` is the 1-based line in the kernel's file and ``col`` is 1-based as well (``ast``'s
``col_offset + 1``), so ``file:line:col`` matches what editors show. Every message starts with that prefix.
"""
from typing import NamedTuple, Optional


class Pos(NamedTuple):
    """Where in the user's source an IR statement comes from (``file`` None: unknown, use the kernel's)."""
    line: int
    col: int
    file: Optional[str] = None


NO_POS = Pos(0, 0)


class KernelError(Exception):
    """A kernel the differentiator cannot read (bad syntax, undefined name, wrong argument kind...)."""

    def __init__(self, message, filename="<unknown>", lineno=0, col=0):
        self.filename = filename
        self.lineno = int(lineno)
        self.col = int(col)
        self.message = message
        super().__init__(f"{filename}:{self.lineno}:{self.col}: {message}")


class UnsupportedError(KernelError):
    """A construct outside the differentiable subset; the message says what to write instead."""


def error_at(pos, message, filename, cls=KernelError):
    """An error at the statement position ``pos``, in its own file (a helper's) or else in ``filename``."""
    return cls(message, pos.file or filename, pos.line, pos.col)


class Where:
    """A file name plus a way to turn an ``ast`` node into error positions."""

    def __init__(self, filename):
        self.filename = filename

    def pos(self, node):
        return Pos(getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1, self.filename)

    def error(self, node, message, cls=KernelError):
        return error_at(self.pos(node), message, self.filename, cls)

    def unsupported(self, node, message):
        return self.error(node, message, UnsupportedError)
