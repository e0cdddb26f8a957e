"""Kernel data: read files, check shapes against how the kernel uses each argument, cast once.

How the kernel uses an argument (helpers included) comes from likelihoods/kernel_use.py.

Accepted values for a data key: a number, a list, a numpy array, or a file name — ``.npy``, ``.npz``
(``file.npz:key``, or a file holding one array), ``.csv`` (comma separated, one header line allowed) and
whitespace-separated text (any other extension).
"""

import os

import numpy as np

from . import kernel_use
from .errors import DataError


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


def prepare(kernel, data, dtype, base_dir=None, integer_dtype=np.int64, use=None):
    """Kernel data arguments in kernel order, checked against their uses and cast once.

    ``kernel`` is a :class:`likelihoods.kernel_source.KernelSource`; the first argument is theta, the rest
    are looked up by name in ``data``. Float data become ``dtype``; integer data used as indices (or in
    ``range``) stay integer; scalars become numpy scalars of that type (so numba types them the same way).
    ``use``: the kernel's :class:`likelihoods.kernel_use.KernelUse` (computed when not given).
    """
    data = {} if data is None else dict(data)
    names = kernel.arg_names[1:]
    uses = (use or kernel_use.of_kernel(kernel)).uses
    where = f"{kernel.filename}:{kernel.node.lineno}"
    missing = [n for n in names if n not in data]
    if missing:
        raise DataError(missing[0], f"the kernel argument {missing[0]!r} ({where}) has no entry in data "
                                    f"(given: {', '.join(data) or 'nothing'})")
    extra = [k for k in data if k not in names]
    if extra:
        raise DataError(extra[0], f"not an argument of kernel {kernel.name!r} ({where}); its data arguments "
                                  f"are: {', '.join(names) or 'none'}")
    return tuple(_prepare_one(name, load_value(name, data[name], base_dir), uses[name], dtype, integer_dtype)
                 for name in names)


def shape_problem(name, array, use):
    """Why ``array`` cannot be the kernel argument ``name`` with :class:`ArgumentUse` ``use``, or None."""
    ndim = use.ndim
    if ndim is not None and array.ndim != ndim and not (ndim == 0 and array.size == 1):
        place = kernel_use.describe(use.where)
        how = (f"uses '{name}' as a scalar" if ndim == 0 else
               f"indexes '{name}' with {ndim} ind{'ex' if ndim == 1 else 'ices'}")
        return f"the kernel {how} ({place}) but the value has shape {array.shape} ({array.ndim}-D)"
    if ndim is None and array.ndim < use.min_ndim:
        return (f"the kernel reads '{name}'.shape[{use.min_ndim - 1}] ({kernel_use.describe(use.min_at)}) but "
                f"the value has shape {array.shape} ({array.ndim}-D)")
    return None


def load_all(data, base_dir=None):
    """Read every file-valued entry once: ``{key: array}`` (other values pass through ``load_value``)."""
    return {key: load_value(key, value, base_dir) for key, value in (data or {}).items()}


def _prepare_one(name, array, use, dtype, integer_dtype):
    problem = shape_problem(name, array, use)
    if problem:
        raise DataError(name, problem)
    if use.ndim == 0 and array.ndim > 0:
        array = array.reshape(())
    if array.ndim > 0 and array.size == 0:
        raise DataError(name, f"is empty (shape {array.shape})")
    integer = use.as_integer and array.dtype.kind in "iub"
    if use.as_integer and not integer:
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            place = kernel_use.describe(use.integer_at)
            raise DataError(name, f"the kernel uses it as an integer ({place}) but it holds non-integers")
        integer = True
    target = np.dtype(integer_dtype) if integer else np.dtype(dtype)
    if array.ndim == 0:
        return target.type(array)
    return np.ascontiguousarray(array, dtype=target)
