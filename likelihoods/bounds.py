"""Array reads outside their bounds, caught before any sampling: numba does not check bounds, so a kernel that
reads ``x[i + 1]`` up to ``i = n - 1`` silently reads memory after the array.

Two passes, both ending in :class:`KernelIndexError` (:class:`ParamsError` for theta) at the kernel's
``file:line:col``:

- static (:func:`static_problems`): each read ``a[f0, f1, ...]`` whose per-axis forms are constants or
  ``c + k * i`` for a loop ``for i in range(start, stop, step)`` with sizes known from the data's shapes is
  judged exactly: the extremes of the index are reached when the loop runs and no ``if`` guards the read;
- dynamic (:func:`checked_evaluation`): where the static pass cannot decide (data-dependent indices, guarded
  reads, loops whose bounds depend on another loop, and every kernel with local arrays, whose accesses it does not
  judge), the plain-Python kernel runs on numpy arrays, which do check bounds, at a few parameter points; an
  ``IndexError`` is traced back to the user's line.

A loop-dependent index that goes negative is an error too: Python and numba wrap it around to the end of the
array, which in a kernel is nearly always a slip (write ``x[(i - 1) % n]`` to wrap on purpose).
"""

import ast
import linecache
import re
import traceback
from dataclasses import dataclass

import numpy as np

from .errors import KernelIndexError, ParamsError
from .index_forms import size_value


@dataclass
class Problem:
    """A read proven out of bounds: the access, the offending index and axis, and the message (no position)."""
    access: object
    index: int
    axis: int
    message: str


def static_problems(use, shapes, values=None, only=None):
    """``(problems, proven)``: reads proven out of bounds, and whether every read (of ``only``, if given) was
    proven in bounds or out. ``shapes``: {argument: shape} (theta included as ``(ndim,)``); ``values``:
    {argument: int} of integer scalar data used in sizes."""
    values = values or {}
    problems, proven = [], True
    for access in use.accesses:
        if only is not None and access.array != only:
            continue
        verdict = _judge(access, shapes, values)
        if isinstance(verdict, Problem):
            problems.append(verdict)
        elif verdict is None:
            proven = False
    return problems, proven


def _judge(access, shapes, values):
    """A Problem, True (in bounds or never executed), or None (cannot tell)."""
    shape = shapes.get(access.array)
    if shape is None or len(shape) != len(access.forms):
        return None
    runs = {}
    for loop in access.loops:
        start, stop = (None, None) if loop.start is None else (size_value(loop.start, shapes, values),
                                                               size_value(loop.stop, shapes, values))
        if start is not None and stop is not None:
            span = range(start, stop, loop.step)
            if len(span) == 0:
                return True  # the read never runs for this data
            runs[id(loop)] = span
    certain = not access.guarded and len(runs) == len(access.loops)
    verdict = True
    for axis, (form, size) in enumerate(zip(access.forms, shape)):
        const = None if form is None else size_value(form.const, shapes, values)
        if const is None or (form.loop is not None and id(form.loop) not in runs):
            verdict = None
            continue
        if form.loop is None:
            if const >= size or const < -size:
                return _problem(access, axis, const, size, shape, None, None) if certain else None
            continue
        span = runs[id(form.loop)]
        for var in (span[0], span[-1]):
            index = const + form.coef * var
            if index >= size or index < 0:
                return _problem(access, axis, index, size, shape, form.loop, (var, span)) if certain else None
    return verdict


def _problem(access, axis, index, size, shape, loop, witness):
    text = ast.unparse(access.node)
    where = f"{text} reads index {index} on axis {axis} of '{access.array}', which has shape {tuple(shape)}"
    if loop is None:
        return Problem(access, index, axis, f"{where}: out of bounds")
    var, span = witness
    step = f", {span.step}" if span.step != 1 else ""
    runs = f"range({span.start}, {span.stop}{step})"
    if index < 0:
        return Problem(access, index, axis, f"{where}, when {loop.var} = {var} (the loop runs over {runs}): a "
                                            "negative index wraps around to the end of the array; keep the index "
                                            "in range, or write the wrap explicitly with %")
    return Problem(access, index, axis, f"{where}, when {loop.var} = {var} (the loop runs over {runs}): out of "
                                        "bounds (numba does not check bounds and would read past the array)")


def to_error(problem, use, params=None):
    """The exception for a :class:`Problem` (ParamsError for theta, naming ``params``)."""
    access = problem.access
    filename, line, col = access.filename, access.node.lineno, access.node.col_offset + 1
    if access.array == use.args[0] and params is not None and problem.index >= 0:  # negative: it wraps around
        return ParamsError(filename, line, col, _params_message(ast.unparse(access.node), problem.index,
                                                                params), array=access.array)
    return KernelIndexError(filename, line, col, problem.message, array=access.array)


def _params_message(text, index, params):
    return (f"the kernel reads {text} (index {index}) but params names only {len(params)} parameter(s): "
            f"{', '.join(params)}")


def data_sizes(use, data, nparams):
    """``(shapes, values)``: {argument: shape} (theta as ``(nparams,)``) and {argument: int} of the integer
    scalar data, what sizes in the kernel's loops and indices evaluate with."""
    names = use.args
    shapes, values = {names[0]: (nparams,)}, {}
    for name, value in zip(names[1:], data):
        shapes[name] = np.shape(value)
        if np.ndim(value) == 0 and np.isfinite(value) and float(value) == int(value):
            values[name] = int(value)
    return shapes, values


def check(kernel, use, data, params, points):
    """Raise for reads proven out of bounds; run :func:`checked_evaluation` at ``points()`` (a callable giving
    parameter vectors, only called when needed) when the static pass cannot decide every read."""
    shapes, values = data_sizes(use, data, len(params))
    problems, proven = static_problems(use, shapes, values)
    if problems:
        raise to_error(problems[0], use, params) from None
    _check_reduction_lengths(use, shapes, values, params)
    if not (proven and use.complete):
        checked_evaluation(kernel, use, data, points(), params)
    elif use.local_arrays:  # one run of the plain kernel (a large one costs seconds of Python)
        checked_evaluation(kernel, use, data, points()[:1], params)


def checked_evaluation(kernel, use, data, thetas, params):
    """Run the plain-Python kernel at each of ``thetas``; an IndexError becomes a KernelIndexError at the
    user's line. Math errors (log of a negative number...) just move on to the next point."""
    for theta in thetas:
        theta = np.array(theta, dtype=np.float64)
        try:
            with np.errstate(all="ignore"):
                kernel.function(theta, *data)
        except IndexError as error:
            raise _from_traceback(error, use, theta, params) from None
        except ValueError as error:
            if _SHAPES_DIFFER.search(str(error)):
                raise _lengths_differ(error, use, theta, params) from None
            continue  # a value error here is the gradient check's business, not ours
        except Exception:  # noqa: BLE001 - as a value error
            continue


def _from_traceback(error, use, theta, params):
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if f.filename in use.files] or frames[-1:]
    frame = ours[-1]
    line, col = frame.lineno, (frame.colno or 0) + 1
    access = next((a for a in use.accesses if a.filename == frame.filename and a.node.lineno == line
                   and a.node.col_offset + 1 == col), None)
    if access is None:
        access = next((a for a in use.accesses if a.filename == frame.filename and a.node.lineno == line), None)
    text = ast.unparse(access.node) if access is not None else _failing_expression(frame)
    at = f"theta = [{', '.join(f'{v:.6g}' for v in theta)}]"
    index = _index_in(str(error))
    if access is not None and access.array == use.args[0] and index != "?":  # (else not a read past theta's end)
        return ParamsError(frame.filename, line, col, _params_message(text, index, params), array=access.array)
    array = f"'{access.array if access is not None else _subscripted(text)}'" if (
        access is not None or _subscripted(text)) else "an array"
    return KernelIndexError(frame.filename, line, col, f"{text} reads {array} out of bounds ({error}), found by "
                                                       f"running the kernel in Python at {at}; numba does not "
                                                       "check bounds and would read past the array",
                            array=None if access is None else access.array)


def _check_reduction_lengths(use, shapes, values, params):
    """A reduction whose array operands have different lengths (known from the data's shapes): the generated loop
    runs over the first one's length, without numpy's broadcasting (a length-1 operand is not repeated) and
    reading past a shorter operand."""
    for text, (filename, line, col), operands in use.reduction_lengths:
        known = [(what, size_value(size, shapes, values)) for what, size in operands]
        if any(n is None for _, n in known) or len({n for _, n in known}) < 2:
            continue
        listed = ", ".join(f"{what} has {n}" for what, n in known)
        message = (f"{text} reduces arrays of different lengths ({listed}): its loop runs over the first one's "
                   f"length, element by element (no broadcasting); make the operands equally long")
        raise _lengths_error(filename, line, col, message, any(size[1] == use.args[0] for _, size in operands),
                             use, params)


def _lengths_error(filename, line, col, message, with_theta, use, params):
    """The error for a reduction over arrays of different lengths: a ParamsError naming params when theta is one."""
    if with_theta:
        return ParamsError(filename, line, col, f"{message} ({use.args[0]} holds the {len(params)} parameter(s) "
                                                f"params names: {', '.join(params)})", array=use.args[0])
    return KernelIndexError(filename, line, col, message, array=None)


# numpy's messages for operands of different lengths (np.dot; elementwise arithmetic inside np.sum)
_SHAPES_DIFFER = re.compile(r"not aligned|could not be broadcast")


def _lengths_differ(error, use, theta, params):
    """A reduction over arrays of different lengths, as the user's line and what numpy said."""
    frames = traceback.extract_tb(error.__traceback__)
    frame = ([f for f in frames if f.filename in use.files] or frames[-1:])[-1]
    line, col = frame.lineno, (frame.colno or 0) + 1
    text = _failing_expression(frame)
    where = f"theta = [{', '.join(f'{v:.6g}' for v in theta)}]"
    message = (f"{text} combines arrays of different lengths ({error}), found by running the kernel in Python at "
               f"{where}; the compiled reduction runs over the first operand's length and would read past the "
               "shorter one")
    return _lengths_error(frame.filename, line, col, message, re.search(rf"\b{re.escape(use.args[0])}\b", text),
                          use, params)


def _failing_expression(frame):
    """The expression that raised, where Python says which (3.11+: its columns on the line), else the line."""
    line, start, end = frame.line or "", getattr(frame, "colno", None), getattr(frame, "end_colno", None)
    if start is not None and end is not None and getattr(frame, "end_lineno", frame.lineno) == frame.lineno:
        raw = linecache.getline(frame.filename, frame.lineno)
        if raw[start:end].strip():
            return raw[start:end].strip()
    return line.strip()


def _subscripted(text):
    """The array's name in a subscript expression ``name[...]`` (a local array's read), else None."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    return node.value.id if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) else None


def _index_in(message):
    words = message.split()
    return words[1] if len(words) > 1 and words[0] == "index" else "?"


__all__ = ["Problem", "check", "checked_evaluation", "data_sizes", "static_problems", "to_error"]
