"""Find a kernel's source and its plain-Python function, from a function or a file reference.

A kernel can be given as a Python function, as ``(path, function_name)`` or as ``"path.py:function_name"``.
Both the text (for ``ad``, so its errors point into the user's file) and the function itself (for finite
differences and the python backend's reference loop) are needed.
"""

import ast
import importlib.util
import inspect
import os
import sys
import textwrap
from dataclasses import dataclass
from typing import Callable

from .errors import LikelihoodError


@dataclass(frozen=True)
class KernelSource:
    """function: the plain Python callable; name; filename; text: source the differentiator reads;
    from_file: whether ``text`` is the whole file (line numbers are the file's); node: the FunctionDef, with
    line numbers of the file in either case."""

    function: Callable
    name: str
    filename: str
    text: str
    from_file: bool
    node: ast.FunctionDef

    @property
    def arg_names(self):
        return tuple(a.arg for a in self.node.args.args)


def split_reference(ref):
    """``"path.py:name"`` or ``(path, name)`` -> ``(path, name)``; anything else -> None."""
    if isinstance(ref, (tuple, list)) and len(ref) == 2 and all(isinstance(r, (str, os.PathLike)) for r in ref):
        return os.fspath(ref[0]), str(ref[1])
    if isinstance(ref, str):
        path, sep, name = ref.rpartition(":")
        if not sep or not path or not name.isidentifier():
            raise LikelihoodError(f"kernel reference {ref!r}: expected 'path/to/file.py:function_name'")
        return path, name
    return None


def resolve(fn, base_dir=None, what="kernel"):
    """A :class:`KernelSource` for a function or a file reference (relative paths from ``base_dir``)."""
    ref = split_reference(fn)
    if ref is not None:
        return _from_file(*ref, base_dir=base_dir, what=what)
    if not callable(fn):
        raise LikelihoodError(f"{what}: expected a function or 'file.py:function', got {type(fn).__name__}")
    try:
        filename = inspect.getsourcefile(fn) or "<unknown>"
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise LikelihoodError(f"{what} {getattr(fn, '__name__', fn)!r}: its source is not available ({err}); "
                              "define it in a file") from None
    text = textwrap.dedent("".join(lines))
    tree = ast.parse(text)
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise LikelihoodError(f"{filename}:{first}:1: {what} must be a plain 'def' function")
    return KernelSource(fn, fn.__name__, filename, text, False, node)


def load_module(path):
    """Import a user file as a module of its own (the file's folder is not added to sys.path)."""
    name = "_nestgrad_user_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # inspect and numba look modules up by name
    spec.loader.exec_module(module)
    return module


def _from_file(path, name, base_dir=None, what="kernel"):
    if base_dir is not None and not os.path.isabs(path):
        path = os.path.join(base_dir, path)
    if not os.path.isfile(path):
        raise LikelihoodError(f"{what} file {path!r} does not exist")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as err:
        raise LikelihoodError(f"{path}:{err.lineno}:{err.offset}: syntax error: {err.msg}") from None
    nodes = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if name not in nodes:
        raise LikelihoodError(f"{path}: no function {name!r} (functions defined there: "
                              f"{', '.join(nodes) or 'none'})")
    function = getattr(load_module(path), name)
    return KernelSource(function, name, path, text, True, nodes[name])
