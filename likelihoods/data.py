"""Kernel data: read files, learn from the kernel how it indexes each argument, check shapes, cast once.

Accepted values for a data key: a number, a list, a numpy array, or a file name — ``.npy``, ``.npz``
(``file.npz:key``, or a file holding one array), ``.csv`` (comma separated, one header line allowed) and
whitespace-separated text (any other extension).
"""

import ast
import os
from dataclasses import dataclass

import numpy as np

from .errors import DataError


@dataclass
class ArgumentUse:
    """How a kernel uses one argument: ``ndim`` (number of indices, 0 for a scalar, None when unknown),
    ``as_integer`` (used as an index or in ``range``: keep it integer), and where (``line``, ``col``)."""

    ndim: object = None
    as_integer: bool = False
    line: int = 0
    col: int = 0
    max_index: int = -1  # largest constant index seen (for theta: how many parameters the kernel reads)


def argument_uses(node):
    """``{arg_name: ArgumentUse}`` from the kernel's FunctionDef (line numbers as in ``node``)."""
    names = [a.arg for a in node.args.args]
    uses = {name: ArgumentUse() for name in names}
    bare = {name: None for name in names}
    inside = set()  # id() of Name nodes already accounted for as subscripted / .shape / len()

    def note(name, ndim, where):
        use = uses[name]
        if use.ndim is None or (ndim is not None and ndim > use.ndim):
            use.ndim = ndim
            use.line, use.col = where.lineno, where.col_offset + 1

    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id in uses:
            index = sub.slice
            count = len(index.elts) if isinstance(index, ast.Tuple) else 1
            note(sub.value.id, count, sub)
            inside.add(id(sub.value))
            if count == 1 and isinstance(index, ast.Constant) and isinstance(index.value, int):
                uses[sub.value.id].max_index = max(uses[sub.value.id].max_index, index.value)
        elif (isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Attribute)
              and sub.value.attr == "shape" and isinstance(sub.value.value, ast.Name)
              and sub.value.value.id in uses):
            name = sub.value.value.id
            inside.add(id(sub.value.value))
            if isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, int):
                at_least = sub.slice.value + 1
                if uses[name].ndim is None or uses[name].ndim < at_least:
                    note(name, at_least, sub)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            if sub.func.id == "len" and sub.args and isinstance(sub.args[0], ast.Name) and sub.args[0].id in uses:
                inside.add(id(sub.args[0]))
                if uses[sub.args[0].id].ndim is None:
                    note(sub.args[0].id, 1, sub)
            if sub.func.id == "range":
                for arg in sub.args:
                    _mark_integer(arg, uses)
        if isinstance(sub, ast.Subscript):
            index = sub.slice
            for part in index.elts if isinstance(index, ast.Tuple) else [index]:
                _mark_integer(part, uses)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in uses and id(sub) not in inside and bare[sub.id] is None:
            bare[sub.id] = sub
    for name, use in uses.items():
        if use.ndim is None and bare[name] is not None and not _passed_to_call(node, name):
            use.ndim = 0  # only ever used as a value: a scalar
            use.line, use.col = bare[name].lineno, bare[name].col_offset + 1
    return uses


def _mark_integer(expr, uses):
    """Arguments whose values feed an index or ``range`` (but not via ``.shape`` or ``len``: sizes)."""
    if isinstance(expr, ast.Attribute) and expr.attr == "shape":
        return
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "len":
        return
    if isinstance(expr, ast.Name) and expr.id in uses:
        uses[expr.id].as_integer = True
        if not uses[expr.id].line:
            uses[expr.id].line, uses[expr.id].col = expr.lineno, expr.col_offset + 1
    for child in ast.iter_child_nodes(expr):
        _mark_integer(child, uses)


def _passed_to_call(node, name):
    """True when ``name`` is passed whole to a helper (then its dimensions are the helper's business)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Attribute)
                                              and isinstance(sub.func.value, ast.Name)
                                              and sub.func.value.id == "math"):
            if any(isinstance(a, ast.Name) and a.id == name for a in sub.args):
                return True
    return False


def load_value(key, value, base_dir=None):
    """A data value as given by the user -> numpy array (files read here). Errors name ``key``."""
    if isinstance(value, (str, os.PathLike)):
        return _load_file(key, os.fspath(value), base_dir)
    if isinstance(value, (bool, np.bool_)):
        raise DataError(key, "booleans are not kernel data")
    try:
        array = np.asarray(value)
    except ValueError as err:  # ragged lists
        raise DataError(key, f"cannot be turned into an array ({err})") from None
    if array.dtype.kind not in "biuf":
        raise DataError(key, f"expected numbers, got an array of {array.dtype}")
    return array


def _load_file(key, spec, base_dir):
    path, array_key = spec, None
    head, sep, tail = spec.rpartition(":")
    if sep and head.lower().endswith(".npz"):
        path, array_key = head, tail
    if base_dir is not None and not os.path.isabs(path):
        path = os.path.join(base_dir, path)
    if not os.path.isfile(path):
        raise DataError(key, f"file {path!r} does not exist")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".npy":
            return np.load(path, allow_pickle=False)
        if ext == ".npz":
            return _load_npz(key, path, array_key)
        if ext == ".csv":
            return _load_text(path, ",")
        return _load_text(path, None)
    except DataError:
        raise
    except (ValueError, OSError) as err:
        raise DataError(key, f"cannot read {path!r}: {err}") from None


def _load_npz(key, path, array_key):
    with np.load(path, allow_pickle=False) as archive:
        names = list(archive.files)
        if array_key is None:
            if len(names) != 1:
                raise DataError(key, f"{path!r} holds {len(names)} arrays ({', '.join(names)}); "
                                     f"name one as '{os.path.basename(path)}:NAME'")
            array_key = names[0]
        if array_key not in names:
            raise DataError(key, f"{path!r} has no array {array_key!r} (it has: {', '.join(names)})")
        return archive[array_key]


def _load_text(path, delimiter):
    try:
        return np.loadtxt(path, delimiter=delimiter, ndmin=1)
    except ValueError:
        return np.loadtxt(path, delimiter=delimiter, ndmin=1, skiprows=1)  # one header line


def prepare(kernel, data, dtype, base_dir=None, integer_dtype=np.int64):
    """Kernel data arguments in kernel order, checked against their uses and cast once.

    ``kernel`` is a :class:`likelihoods.kernel_source.KernelSource`; the first argument is theta, the rest
    are looked up by name in ``data``. Float data become ``dtype``; integer data used as indices (or in
    ``range``) stay integer; scalars become numpy scalars of that type (so numba types them the same way).
    """
    data = {} if data is None else dict(data)
    names = kernel.arg_names[1:]
    uses = argument_uses(kernel.node)
    where = f"{kernel.filename}:{kernel.node.lineno}"
    missing = [n for n in names if n not in data]
    if missing:
        raise DataError(missing[0], f"the kernel argument {missing[0]!r} ({where}) has no entry in data "
                                    f"(given: {', '.join(data) or 'nothing'})")
    extra = [k for k in data if k not in names]
    if extra:
        raise DataError(extra[0], f"not an argument of kernel {kernel.name!r} ({where}); its data arguments "
                                  f"are: {', '.join(names) or 'none'}")
    return tuple(_prepare_one(name, load_value(name, data[name], base_dir), uses[name], kernel, dtype,
                              integer_dtype) for name in names)


def load_all(data, base_dir=None):
    """Read every file-valued entry once: ``{key: array}`` (other values pass through ``load_value``)."""
    return {key: load_value(key, value, base_dir) for key, value in (data or {}).items()}


def _prepare_one(name, array, use, kernel, dtype, integer_dtype):
    place = f"{kernel.filename}:{use.line}:{use.col}"
    if use.ndim is not None and array.ndim != use.ndim:
        if use.ndim == 0 and array.size == 1:
            array = array.reshape(())
        else:
            how = "as a scalar" if use.ndim == 0 else f"with {use.ndim} ind{'ex' if use.ndim == 1 else 'ices'}"
            raise DataError(name, f"the kernel uses it {how} ({place}) but the value has shape "
                                  f"{array.shape} ({array.ndim}-D)")
    if array.ndim > 0 and array.size == 0:
        raise DataError(name, f"is empty (shape {array.shape})")
    integer = use.as_integer and array.dtype.kind in "iub"
    if use.as_integer and not integer:
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise DataError(name, f"the kernel uses it as an integer ({place}) but it holds non-integers")
        integer = True
    target = np.dtype(integer_dtype) if integer else np.dtype(dtype)
    if array.ndim == 0:
        return target.type(array)
    return np.ascontiguousarray(array, dtype=target)
