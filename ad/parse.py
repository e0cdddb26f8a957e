"""Parse pass: find a kernel's ``ast.FunctionDef`` with absolute file positions and its name space.

Kernels come either as function objects (``inspect`` finds the file; the whole file is parsed so line and column
numbers are exact even for nested or indented functions) or as source text plus a function name (the text is
executed in a fresh module name space so helpers, ``import math`` and ``ad.rule`` registrations in it work).
"""
import ast
import inspect
import linecache
import textwrap
import types as pytypes
from dataclasses import dataclass

from .errors import KernelError, UnsupportedError


@dataclass
class Source:
    """One parsed function: its definition node, where it lives, and the names it can see."""

    node: ast.FunctionDef
    filename: str
    namespace: dict
    text: str          # the function's own source text (for cache keys)
    obj: object = None  # the function object, when there is one

    @property
    def name(self):
        return self.node.name

    @property
    def arg_names(self):
        return tuple(a.arg for a in self.node.args.args)


_FILE_TREES = {}


def _definition(filename, name, firstlineno):
    """``(node, own source text)`` of the function ``name`` that starts at ``firstlineno`` in the file, or None.
    Cached per file content: the fence pass and lowering both look up every helper of a kernel."""
    text = "".join(linecache.getlines(filename))
    key = (filename, hash(text))
    if key not in _FILE_TREES:
        _FILE_TREES[key] = (ast.parse(text, filename), {})
    tree, found = _FILE_TREES[key]
    if (name, firstlineno) not in found:
        node = _find_def(tree, name, firstlineno)
        found[name, firstlineno] = node and (node, ast.get_source_segment(text, node) or ast.dump(node))
    return found[name, firstlineno]


def _find_def(tree, name, firstlineno=None):
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if firstlineno is None or firstlineno in (start, node.lineno):
                found.append(node)
    return found[0] if found else None


def _namespace_of(fn):
    names = dict(fn.__globals__)
    if fn.__closure__:
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                names[var] = cell.cell_contents
            except ValueError:  # empty cell: the name is not bound yet
                pass
    return names


def from_function(fn):
    """Parse a Python function object."""
    if not isinstance(fn, pytypes.FunctionType):
        raise KernelError(f"expected a Python function, got {type(fn).__name__}", "<unknown>", 0, 0)
    code = fn.__code__
    filename = code.co_filename
    if fn.__name__ == "<lambda>":  # its source is an expression inside another statement, not a def to parse
        raise UnsupportedError("lambdas are not supported as kernels or helpers: define the function with `def` "
                               "at module level", filename, code.co_firstlineno, 1)
    try:
        found = _definition(filename, fn.__name__, code.co_firstlineno)
    except (SyntaxError, OSError, ValueError):
        found = None
    if found is None:
        # fall back to inspect.getsource (e.g. a file that changed since import): shift positions by hand
        try:
            src = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError) as exc:
            raise KernelError(f"cannot read the source of {fn.__name__!r} ({exc}); define it in a file or pass "
                              "the text to ad.differentiate_source", filename, code.co_firstlineno, 1) from None
        tree = ast.parse(src, filename)
        ast.increment_lineno(tree, code.co_firstlineno - 1)
        found = _find_def(tree, fn.__name__), src
    node, own = found
    return Source(node, filename, _namespace_of(fn), own, fn)


def from_text(text, name, filename="<string>"):
    """Parse kernel source text and return the ``Source`` of function ``name`` defined in it."""
    try:
        tree = ast.parse(text, filename)
    except SyntaxError as exc:
        raise KernelError(f"syntax error: {exc.msg}", filename, exc.lineno or 0, exc.offset or 0) from None
    node = None
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            node = stmt
    if node is None:
        raise KernelError(f"no function named {name!r} at the top level of this file", filename, 1, 1)
    # register the text with linecache so helpers defined in it can be found again by from_function
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"__name__": f"nestgrad_kernel_{abs(hash(filename))}", "__file__": filename}
    try:
        exec(compile(tree, filename, "exec"), namespace)
    except Exception as exc:  # the user's module failed to import: say where
        raise KernelError(f"executing the kernel file failed: {type(exc).__name__}: {exc}",
                          filename, 1, 1) from None
    own = ast.get_source_segment(text, node) or ast.dump(node)
    return Source(node, filename, namespace, own, namespace.get(name))
