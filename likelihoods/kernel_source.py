"""Find a kernel's source and its plain-Python function, from a function or a file reference.

A kernel can be given as a Python function, as ``(path, function_name)``, as ``"path.py:function_name"`` or as
an already resolved :class:`KernelSource`. Both the text (for ``ad``, so its errors point into the user's file)
and the function itself (for finite differences and the python backend's reference loop) are needed.

This is nestgrad's one importer of user files: the config checks, the :class:`~likelihoods.Likelihood` and an
analytic gradient in the same file all get the file from :func:`load_file`, which parses it and runs its
module-level code once per process (again only when the file changes on disk). A failure in that code is one
:class:`KernelImportError` naming the user's ``file:line``.
"""

import ast
import hashlib
import importlib.util
import inspect
import linecache
import os
import re
import sys
import textwrap
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from .errors import LikelihoodError, did_you_mean, line_and_column


class KernelImportError(LikelihoodError):
    """The module-level code of a user's kernel file raised; the message names the file and the failing line."""


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

    @cached_property
    def use(self):
        """How the kernel (with its helpers) uses its arguments (:class:`likelihoods.kernel_use.KernelUse`),
        analysed once per kernel and shared by every check that needs it."""
        from . import kernel_use

        return kernel_use.of_kernel(self)


@dataclass
class UserFile:
    """A parsed user file: ``path`` (absolute), ``text`` (what was read, compared with the file on disk on
    every request), top-level ``functions`` {name: FunctionDef}; the executed ``module`` (None until a function
    is asked for) and the :class:`KernelSource` of each function asked for so far."""
    path: str
    text: str
    functions: dict
    module: object = None
    sources: dict = field(default_factory=dict)


_FILES = {}  # absolute path -> UserFile: what makes "once per process" true


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
    """A :class:`KernelSource` for a function or a file reference (relative paths from ``base_dir``); a
    KernelSource is returned as it is."""
    if isinstance(fn, KernelSource):
        return fn
    ref = split_reference(fn)
    if ref is not None:
        path, name = ref
        if base_dir is not None and not os.path.isabs(path):
            path = os.path.join(base_dir, path)
        return from_file(path, name, what)
    if not callable(fn):
        raise LikelihoodError(f"{what}: expected a function or 'file.py:function', got {type(fn).__name__}")
    try:
        filename = inspect.getsourcefile(fn) or "<unknown>"
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise LikelihoodError(f"{what} {getattr(fn, '__name__', fn)!r}: its source is not available ({err}); "
                              "define it in a file") from None
    text = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(text)
    except SyntaxError:  # the lines of a lambda inside an expression (a dict entry, a call) do not parse alone
        tree = None
    if tree is not None:
        ast.increment_lineno(tree, first - 1)
    node = tree.body[0] if tree is not None and tree.body else None
    if not isinstance(node, ast.FunctionDef) or getattr(fn, "__name__", "") == "<lambda>":
        raise LikelihoodError(f"{filename}:{first}:1: {what} must be a plain 'def' function")
    return _checked(KernelSource(fn, fn.__name__, filename, text, False, node), what)


def from_file(path, name, what="kernel"):
    """The :class:`KernelSource` of function ``name`` in the file ``path`` (the same object on every call while
    the file is unchanged, so what is computed from it, such as ``use``, is computed once)."""
    loaded = load_file(path, what)
    source = loaded.sources.get(name)
    if source is not None:
        return source
    node = loaded.functions.get(name)
    bound = _other_binding(loaded.text, name) if node is None else None
    if bound is not None:
        line, kind = bound
        raise LikelihoodError(f"{loaded.path}:{line}: {name!r} is {kind}, not a function defined with def; write the "
                              f"{what} as `def {name}(theta, ...):`")
    if node is None:
        raise LikelihoodError(f"{loaded.path}: no function {name!r}{did_you_mean(name, loaded.functions)}; the "
                              f"functions defined at its top level: {', '.join(loaded.functions) or 'none'}")
    function = getattr(_execute(loaded), name, None)
    if not callable(function):
        raise LikelihoodError(f"{loaded.path}:{node.lineno}: {name!r} is no longer a function once the file has run "
                              f"(it is {type(function).__name__}); a later assignment replaced it")
    source = _checked(KernelSource(function, name, loaded.path, loaded.text, True, node), what)
    loaded.sources[name] = source
    return source


def _other_binding(text, name):
    """``(line, what)`` of a top-level statement other than ``def`` that binds ``name`` (``f = lambda ...``, a
    class, ``f = 3``), or None."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node.lineno, "a class"
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            value = getattr(node, "value", None)
            return node.lineno, "a lambda" if isinstance(value, ast.Lambda) else "assigned a value"
    return None


def load_file(path, what="kernel"):
    """The parsed :class:`UserFile` at ``path`` (parsed again only when its text changed on disk); its
    module-level code has not necessarily run yet (:func:`from_file` runs it, once per text)."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise LikelihoodError(f"{what} file {path!r} does not exist")
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:  # e.g. `kernel: x.npy:gauss`, or a file saved in Latin-1
        line, column = line_and_column(raw, error.start)
        kind = "a numpy array file, not Python source" if raw.startswith(b"\x93NUMPY") else "not UTF-8 text"
        raise LikelihoodError(f"{path}:{line}:{column}: the {what} file is {kind} (byte 0x{raw[error.start]:02x}); "
                              f"name a Python file saved as UTF-8") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # as reading in text mode did
    loaded = _FILES.get(path)
    if loaded is not None and loaded.text == text:  # the text itself: a timestamp can miss a quick edit
        return loaded
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as err:
        line, column = err.lineno, err.offset or 0
        if line is None and "\0" in text:  # "source code string cannot contain null bytes" has no position
            line, column = line_and_column(text, text.index("\0"))
        raise LikelihoodError(f"{path}:{line or 1}:{column}: syntax error: {err.msg}") from None
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    loaded = _FILES[path] = UserFile(path, text, functions)
    return loaded


def _execute(loaded):
    """Run the file's module-level code (once per :class:`UserFile`) and return the module. What runs is the
    text that was parsed (not a ``__pycache__`` copy, which a same-size edit within a second can leave stale),
    and ``linecache`` holds that text, so ``inspect`` and ``ad`` read the code that ran. The module is registered
    in ``sys.modules`` (inspect and numba look modules up by name). While it runs, the file's folder is first on
    ``sys.path``, as for ``python kernel.py``: a kernel file imports its sibling modules (``from helpers import
    f``); the path is restored afterwards."""
    if loaded.module is not None:
        return loaded.module
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(loaded.path))[0])
    name = f"_nestgrad_user_{stem}_{hashlib.sha1(loaded.path.encode()).hexdigest()[:8]}"
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, loaded.path))
    sys.modules[name] = module
    linecache.cache[loaded.path] = (len(loaded.text), None, loaded.text.splitlines(True), loaded.path)
    folder = os.path.dirname(loaded.path)
    _forget_other_kernels_siblings(folder)
    sys.path.insert(0, folder)
    try:
        exec(compile(loaded.text, loaded.path, "exec", dont_inherit=True), module.__dict__)
    except (Exception, SystemExit) as error:  # the user's module-level code failed (or exited): say where
        sys.modules.pop(name, None)
        line = _user_line(error, loaded.path)
        raise KernelImportError(f"importing {loaded.path}{':' + str(line) if line else ''} failed: "
                                f"{type(error).__name__}: {error}") from error
    finally:
        if folder in sys.path:
            sys.path.remove(folder)  # the first occurrence: the one inserted above
    loaded.module = module
    return module


def _forget_other_kernels_siblings(folder):
    """Drop from ``sys.modules`` the modules that another kernel file's folder supplied (imported while that folder
    was first on ``sys.path``, which it no longer is) under the name of a module beside this file, so that this
    file's ``from helpers import f`` imports its own ``helpers.py``, as ``python kernel.py`` would: two kernels in
    one process, each beside its own ``helpers.py``, both sampled the first one's likelihood. Modules from folders
    still on ``sys.path`` (installed packages, the user's own) are left alone."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    siblings = {name[:-3] for name in entries if name.endswith(".py")}
    siblings |= {name for name in entries if os.path.isfile(os.path.join(folder, name, "__init__.py"))}
    searched = {os.path.abspath(entry or os.curdir) for entry in sys.path}
    for name in siblings & set(sys.modules):
        origin = getattr(sys.modules[name], "__file__", None)
        if origin is None or name.startswith("__"):  # __main__ is the running program, whatever its folder
            continue
        origin = os.path.abspath(origin)
        top = os.path.dirname(os.path.dirname(origin)) if os.path.basename(origin) == "__init__.py" else \
            os.path.dirname(origin)
        if top == folder or top in searched:
            continue
        for loaded_name in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
            del sys.modules[loaded_name]


def _user_line(error, path):
    """The last line of ``path`` in the error's traceback (the user's line that failed), or None."""
    tb, line = error.__traceback__, None
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(error, SyntaxError) and error.filename == path:
        line = error.lineno
    return line


def _checked(source, what):
    """A kernel (or gradient) takes the parameter vector first: refuse a function without arguments; a kernel's
    arguments are plain positional names (the differentiator's rule, checked here before the data keys are
    matched against the names: ``def f(theta, *data)`` was answered "'x' is not an argument")."""
    node = source.node
    if what == "kernel":
        from nestgrad.ad import KernelError, fence

        try:
            fence.check_signature(node, source.filename)
        except KernelError as error:
            raise LikelihoodError(str(error)) from None
    if not source.arg_names:
        raise LikelihoodError(f"{source.filename}:{node.lineno}:{node.col_offset + 1}: {what} {source.name!r} takes "
                              f"no arguments; a kernel is `def {source.name}(theta, <data>...)`, the parameter "
                              "vector first")
    return source
