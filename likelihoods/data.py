"""Kernel data: read files, check shapes against how the kernel uses each argument, cast once.

How the kernel uses an argument (helpers included) comes from likelihoods/kernel_use.py.

The one reader of data values, for the Likelihood and for the config checks alike: a number, a list, a numpy
array, or a file name of one of :data:`FILE_TYPES` — ``.npy``, ``.npz`` (``file.npz:key``, or a file holding one
array), ``.csv`` (comma separated, one header line allowed) and whitespace-separated ``.txt``/``.dat``.
"""

import os
import re
import zipfile
from collections.abc import Mapping

import numpy as np

from nestgrad.ad.sugar import whole_array_advice

from . import bounds, kernel_use
from .errors import DataError, LikelihoodError, did_you_mean
from .ranges import describe

FILE_TYPES = {".npy": "numpy array", ".npz": "numpy archive ('file.npz:NAME' picks an array)",
              ".csv": "comma-separated text", ".txt": "whitespace-separated text",
              ".dat": "whitespace-separated text"}


def split_spec(spec):
    """A file value -> ``(path, array name or None)``: ``'d.npz:obs'`` names an array of an archive."""
    head, sep, tail = spec.rpartition(":")
    if sep and head.lower().endswith(".npz"):
        return head, tail
    return spec, None


def load_value(key, value, base_dir=None):
    """A data value as given by the user -> numpy array of numbers (files read here). Errors name ``key``."""
    if isinstance(value, (str, os.PathLike)):
        return _numbers(key, _load_file(key, os.fspath(value), base_dir))
    if isinstance(value, (bool, np.bool_)):
        raise DataError(key, "booleans are not kernel data")
    try:
        array = np.asarray(value)
    except ValueError as err:  # numpy's "inhomogeneous shape after 1 dimensions" is about its own construction
        lengths = sorted({len(row) for row in value if hasattr(row, "__len__")}) if hasattr(value, "__iter__") else []
        if len(lengths) > 1:
            raise DataError(key, f"a ragged list (rows of lengths {', '.join(map(str, lengths))}): kernel data is a "
                                 f"rectangular array, every row as long as the others") from None
        raise DataError(key, f"cannot be turned into an array of numbers ({err})") from None
    return _numbers(key, array)


def _numbers(key, array):
    if array.dtype.kind not in "biuf":
        raise DataError(key, f"expected numbers, got an array of {array.dtype}")
    return array


def _load_file(key, spec, base_dir):
    path, array_key = split_spec(spec)
    if base_dir is not None and not os.path.isabs(path):
        path = os.path.join(base_dir, path)
    if os.path.isdir(path):
        raise DataError(key, f"{path!r} is a folder; name a data file in it (.npy, .npz, .csv or .txt)")
    if not os.path.isfile(path):
        raise DataError(key, f"file {path!r} does not exist")
    ext = os.path.splitext(path)[1].lower()
    if ext not in FILE_TYPES:
        raise DataError(key, f"unsupported data file type {ext or 'without an extension'!r} ({path!r}): use "
                             f"{', '.join(FILE_TYPES)}")
    if os.path.getsize(path) == 0:  # numpy's own word for it was a bare EOFError traceback
        raise DataError(key, f"file {path!r} is empty (0 bytes): write the data into it, or name another file")
    array = _read(key, path, ext, array_key)
    if array.size == 0:  # found here, where the file is known (an empty array is no kernel data)
        raise DataError(key, f"file {path!r} holds no values (an array of shape {array.shape}): write the data "
                             f"into it, or name another file")
    return array


def _read(key, path, ext, array_key):
    try:
        if ext == ".npy":
            return np.load(path, allow_pickle=False)
        if ext == ".npz":
            return _load_npz(key, path, array_key)
        return _load_text(path, "," if ext == ".csv" else None)
    except DataError:
        raise
    except UnicodeDecodeError:
        with open(path, "rb") as handle:
            npy = handle.read(6) == b"\x93NUMPY"
        raise DataError(key, f"cannot read {path!r} as {FILE_TYPES[ext]}: it is binary"
                             + ("; it is a numpy array file: name it .npy" if npy else "")) from None
    except zipfile.BadZipFile:  # begins like an archive, but is not a readable one
        raise DataError(key, f"cannot read {path!r} as {FILE_TYPES[ext]}: it is not a readable .npz (zip) archive "
                             f"(cut short or damaged); write it again with np.savez") from None
    except (ValueError, OSError, EOFError) as err:  # EOFError: a .npy or .npz cut short
        if "allow_pickle" in str(err):  # numpy's advice would be to unpickle the file
            raise DataError(key, f"cannot read {path!r}: it holds Python objects (an object array, e.g. numbers "
                                 f"mixed with text), which nestgrad never unpickles; save an array of numbers") from None
        raise DataError(key, f"cannot read {path!r}: {err}") from None


def _load_npz(key, path, array_key):
    with np.load(path, allow_pickle=False) as archive:
        names = list(archive.files)
        if not names:
            raise DataError(key, f"file {path!r} is an empty archive (no arrays in it): write the data into it, or "
                                 f"name another file")
        if array_key is None:
            if len(names) != 1:
                raise DataError(key, f"{path!r} holds {len(names)} arrays ({', '.join(names)}); "
                                     f"name one as '{os.path.basename(path)}:NAME'")
            array_key = names[0]
        if array_key not in names:
            raise DataError(key, f"{path!r} has no array {array_key!r}{did_you_mean(array_key, names)}; it has: "
                                 f"{', '.join(names)}")
        return archive[array_key]


# A first line is a header when every field is a name: starts with a letter or underscore (optionally quoted) and
# is not a number or a missing-value marker. "1O.0" (a letter O typed for a zero) or "NA" is a bad value, not a
# header: taking such a line for one dropped a data row silently.
_NAME = re.compile(r"""^["']?[A-Za-z_][^"']*["']?$""")
_MISSING = {"na", "n/a", "null", "none", "missing", "nil", "-"}


def _is_name(field):
    """Whether a first-line field is a column name: ``nan``, ``inf`` and ``-Infinity`` are numbers (a first row of
    them was dropped as a header), ``NA`` a missing value."""
    bare = field.strip("\"'")
    try:
        float(bare)
        return False
    except ValueError:
        return bool(_NAME.match(field)) and bare.lower() not in _MISSING


def _load_text(path, delimiter):
    lines = _content_lines(path)
    first = next(lines, None)
    header = first is not None and all(_is_name(field) for field in _fields(first[1], delimiter))
    if first is None or (header and next(lines, None) is None):
        return np.zeros(0)  # no values (numpy would warn "input contained no data"): the caller says it is empty
    try:  # utf-8-sig: a byte-order mark (Excel's "CSV UTF-8") is not part of the first value
        return np.loadtxt(path, delimiter=delimiter, ndmin=1, skiprows=first[0] if header else 0,
                          encoding="utf-8-sig")
    except ValueError as error:  # read again, in Python, only to say where
        lines = list(_content_lines(path))
        raise ValueError(_text_problem(lines[1:] if header else lines, delimiter) or str(error)) from None


def _content_lines(path):
    """``(line number, text)`` of the lines that hold values (not blank, not ``#`` comments), in order."""
    with open(path, encoding="utf-8-sig") as handle:
        for number, text in enumerate(handle, 1):
            content = text.split("#", 1)[0].strip()
            if content:
                yield number, content


def _fields(text, delimiter):
    return [field.strip() for field in (text.split(delimiter) if delimiter else text.split())]


def _text_problem(lines, delimiter):
    """What is wrong with a text table, by file line: a field that is not a number, or a row of another length."""
    width = None
    for number, text in lines:
        fields = _fields(text, delimiter)
        for column, field in enumerate(fields, 1):
            try:
                float(field)
            except ValueError:
                return f"line {number}, column {column}: {field!r} is not a number"
        if width is None:
            width, first = len(fields), number
        elif len(fields) != width:
            return f"line {number} has {len(fields)} values, line {first} has {width}: every row needs as many"
    return None


def prepare(kernel, data, dtype, base_dir=None, integer_dtype=np.int64, use=None):
    """Kernel data arguments in kernel order, checked against their uses and cast once.

    ``kernel`` is a :class:`likelihoods.kernel_source.KernelSource`; the first argument is theta, the rest
    are looked up by name in ``data``. Float data become ``dtype``; integer data used as indices (or in
    ``range``) stay integer; scalars become numpy scalars of that type (so numba types them the same way).
    ``use``: the kernel's :class:`likelihoods.kernel_use.KernelUse` (default: ``kernel.use``).
    """
    data = {} if data is None else dict(data)
    uses = (use or kernel.use).uses
    problem = key_problem(kernel, data)
    if problem:
        raise DataError(*problem)
    return tuple(_prepare_one(name, load_value(name, data[name], base_dir), uses[name], dtype, integer_dtype)
                 for name in kernel.arg_names[1:])


def key_problem(kernel, data):
    """``(key, message)`` for the first kernel data argument without an entry in ``data`` or the first entry
    that is not a data argument of ``kernel``; None when the keys match."""
    names = kernel.arg_names[1:]
    where = f"{kernel.filename}:{kernel.node.lineno}"
    for name in names:
        if name not in data:
            return name, (f"no data given for the kernel argument {name!r} (def {kernel.name}("
                          f"{', '.join(kernel.arg_names)}), {where}): data has no entry for it (given: "
                          f"{', '.join(data) or 'nothing'})")
    for key in data:
        if key not in names:
            return key, (f"{key!r} is not an argument of kernel {kernel.name!r} ({where}){did_you_mean(key, names)}; "
                         f"its data arguments are: {', '.join(names) or 'none'}")
    return None


def array_problem(use, name, array):
    """Why ``array`` cannot be the kernel argument ``name``: its dimensions (:func:`shape_problem`), or a read
    out of its bounds that this array's shape alone decides (likelihoods/bounds.py); None when neither. The
    Likelihood checks the same with every argument at once; this is for reporting one value at a time."""
    problem = shape_problem(name, array, use.uses[name])
    if problem:
        return problem
    problems, _ = bounds.static_problems(use, {name: np.shape(array)}, only=name)
    if problems:
        access = problems[0].access
        return f"{access.filename}:{access.node.lineno}:{access.node.col_offset + 1}: {problems[0].message}"
    return None


def shape_problem(name, array, use):
    """Why ``array`` cannot be the kernel argument ``name`` with :class:`ArgumentUse` ``use``, or None."""
    ndim = use.ndim
    if ndim is not None and array.ndim != ndim and not (ndim == 0 and array.size == 1):
        place = kernel_use.describe(use.where)
        how = (f"uses '{name}' as a scalar" if ndim == 0 else
               f"indexes '{name}' with {ndim} ind{'ex' if ndim == 1 else 'ices'}")
        message = f"the kernel {how} ({place}) but the value has shape {array.shape} ({array.ndim}-D)"
        if ndim == 0:  # most often whole-array arithmetic (`x - theta[0]`) meant for every element
            message += (f": pass a number, or if '{name}' is an array, index it ({name}[i]); "
                        + whole_array_advice(name))
        return message
    if ndim is None and array.ndim < use.min_ndim:
        return (f"the kernel reads '{name}'.shape[{use.min_ndim - 1}] ({kernel_use.describe(use.min_at)}) but "
                f"the value has shape {array.shape} ({array.ndim}-D)")
    return None


def nonfinite_messages(kernel, prepared):
    """A message for each data argument (in kernel order, ``prepared`` as :func:`prepare` returns them) holding
    NaN or inf: the kernel reads them as they are, so the log-likelihood is NaN or infinite wherever it uses one."""
    out = []
    for name, array in zip(kernel.arg_names[1:], prepared):
        array = np.asarray(array)
        if array.dtype.kind != "f":
            continue
        bad = ~np.isfinite(array)
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0]) if array.ndim else ()
            at = f" (the first at index {first[0] if len(first) == 1 else first})" if first else ""
            out.append(f"data key {name!r}: {int(bad.sum())} of {array.size} values are NaN or inf{at}; the "
                       f"kernel {kernel.name!r} reads them as they are, so the log-likelihood is NaN or infinite "
                       f"wherever it uses one (a zero likelihood for NaN and -inf)")
    return out


def load_all(data, base_dir=None):
    """Read every file-valued entry once: ``{key: array}`` (other values pass through ``load_value``)."""
    if data is not None and not isinstance(data, Mapping):  # a list of arrays ended in "'list' has no .items"
        got = describe(data) if isinstance(data, str) else f"a {type(data).__name__}"  # not a whole array's repr
        raise LikelihoodError(f"data: expected a dict kernel-argument name -> value (an array, a number, a list "
                              f"or a file name), e.g. {{'x': x}}; got {got}")
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
        whole = bool(np.all(np.isfinite(array)) and np.all(array == np.round(array)))
        largest = float(np.max(np.abs(array))) if whole and array.size else 0.0
        if use.implicit_integer_at is None:  # read as an integer only through int(), which truncates on purpose
            integer = whole and largest < 2.0 ** 63  # else kept as numbers (int() of each element as it is read)
        elif not whole:
            place = kernel_use.describe(use.implicit_integer_at)
            raise DataError(name, f"the kernel uses it as an integer ({place}) but it holds non-integers (write "
                                  f"int(...) around it to truncate them)")
        elif largest >= 2.0 ** 63:
            place = kernel_use.describe(use.implicit_integer_at)
            raise DataError(name, f"the kernel uses it as an integer ({place}) but it holds {largest:g}, beyond "
                                  f"the 64-bit integers (below 9.2e18)")
        else:
            integer = True
    target = np.dtype(integer_dtype) if integer else np.dtype(dtype)
    if array.ndim == 0:
        return target.type(array)
    return np.ascontiguousarray(array, dtype=target)
