"""Local arrays: ``buf = np.zeros(n)`` / ``np.empty((n, m))`` in a kernel, read and written by index.

Where they live: each array is a region of the per-sample ``scratch`` buffer the caller allocates once per batch
(``Derivative.scratch_size``), so a call never allocates.  The regions of the kernel's arrays come first, at
offsets computed from the arguments at the top of every generated function (``layout``), then the adjoint
arrays and the loops' stored values (reverse.py).  Element ``[i, j]`` of an ``n x m`` array is scratch slot
``offset + i * m + j``: a read is an ``aload`` of that slot, a write an ``AStore``.

How the reverse sweep sees them (array_adjoint.py): every write first reads the value it overwrites (``old``),
and the reverse of the write puts it back, so the array rolls back to what it held at each point of the sweep;
a loop that writes an array keeps a copy of it per iteration, read back before the iteration is replayed.

What is accepted (anything else is rejected at its position): the allocation at the top level of the kernel,
one or two dimensions from data shapes, integer arguments and constants; the kernel's float type; element reads
and writes (``buf[i] = v``, ``buf[i, j] += v``) anywhere, in loops, branches and helpers the array is passed to;
``buf.shape[k]``, ``len(buf)``, and the array inside ``np.sum`` / ``np.dot``.  Inputs stay read-only.
"""
import ast
from dataclasses import dataclass, replace
from typing import List

import numpy as np

from .errors import NO_POS, UnsupportedError, error_at
from .ir import AStore, Assign, Const, ScratchZero, is_var

_SHAPE_OPS = {"copy", "add", "sub", "mul", "floordiv", "mod", "neg", "shape", "toint", "index"}


@dataclass(eq=False)
class ArrayInfo:
    """One local array: IR names of its size and offset, its dimensions (operands), where it was made."""
    name: str          # IR name (also the array's key in activity analysis)
    user_name: str
    dims: List[object]
    size: str          # IR name: elements
    offset: str        # IR name: first scratch slot
    zero: bool
    line: int


def allocation(e, resolve):
    """``'zeros'`` / ``'empty'`` when ``e`` is a call of ``np.zeros`` / ``np.empty``, else None."""
    if not isinstance(e, ast.Call):
        return None
    try:
        fn = resolve(e.func)
    except Exception:
        return None
    return {id(np.zeros): "zeros", id(np.empty): "empty"}.get(id(fn))


def allocate(low, node, kind, user_name):
    """Lower ``user_name = np.zeros(shape)`` (``node`` the assignment); return the ``ArrayInfo``."""
    call = node.value
    if low.prefix or low.nesting:
        raise low.unsupported(node, "allocate local arrays at the top level of the kernel (not inside a loop, a "
                                    "branch or a helper): its scratch region is laid out before the kernel runs")
    if len(call.args) != 1:
        raise low.unsupported(call, f"np.{kind} takes one argument in kernels, the shape (n or (n, m)); the "
                                    "kernel's float type is the dtype")
    shape = call.args[0]
    parts = shape.elts if isinstance(shape, ast.Tuple) else [shape]
    if not 1 <= len(parts) <= 2:
        raise low.unsupported(shape, "local arrays have one or two dimensions")
    dims = [low.expr(p) for p in parts]
    for d, p in zip(dims, parts):
        if isinstance(d, Const) and not (isinstance(d.value, int) and not isinstance(d.value, bool) and d.value >= 0):
            raise low.err(p, "an array dimension must be a non-negative integer")
    name = low.fresh(user_name)
    info = ArrayInfo(name, user_name, dims, f"{name}_size", f"{name}_offset", kind == "zeros", node.lineno)
    low.ctx.local_arrays.append(info)
    if info.zero:
        low.emit(ScratchZero(info.offset, info.size, pos=low.pos(node)))
    return info


def slot(low, info, parts, node):
    """The scratch slot of ``info[parts]`` (ast index expressions), as an operand."""
    if len(parts) != len(info.dims):
        raise low.err(node, f"{info.user_name!r} has {len(info.dims)} dimension(s); index it with as many")
    idx = [_from_the_end(low, node, low.expr(p), d) for p, d in zip(parts, info.dims)]
    flat = idx[0]
    if len(idx) == 2:
        flat = low.binop(node, "add", low.binop(node, "mul", idx[0], info.dims[1]), idx[1])
    return low.binop(node, "add", info.offset, flat, hint="slot")


def _from_the_end(low, node, index, dim):
    """Python's meaning of a negative index, counted from the end of the axis: ``index + dim`` below 0. A variable
    index that may be negative (``buf[i - 1]``) gets the branch-free ``index + dim * int(index < 0)``; one known to
    be >= 0 (a loop index counting up from 0, sums and products of such, shapes) stays as it is, so the analyses
    of which elements a loop reads (array_entry.py, nested_rows.py) still see its plain form. Without this,
    ``buf[-1]`` read the slot before the array."""
    if isinstance(index, Const):
        return low.binop(node, "add", index, dim) if index.value < 0 else index
    if low.ctx.is_nonneg(index):
        return index
    below = low.assign(node, "cmp", [index, Const(0)], fn="<", hint="negative")
    shift = low.binop(node, "mul", low.assign(node, "toint", [below], hint="wraps"), dim)
    return low.binop(node, "add", index, shift, hint="index")


def read(low, info, parts, node):
    return low.assign(node, "aload", [slot(low, info, parts, node)], fn=info.name, hint=info.user_name)


def write(low, node, target, value):
    """``target = value`` for a subscript target: a local array's element (inputs are read-only)."""
    info = low.env.get(target.value.id) if isinstance(target.value, ast.Name) else None
    if not isinstance(info, ArrayInfo):
        raise low.unsupported(target, "writing into arrays is not supported for inputs (they are never "
                                      "written): make a local array (`buf = np.zeros(n)`) or keep values in "
                                      "scalar variables")
    parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    if any(isinstance(p, ast.Slice) for p in parts):
        raise low.unsupported(target, "write single elements of a local array (`buf[i] = v`), not slices")
    at = slot(low, info, parts, target)
    if isinstance(value, ArrayInfo):
        raise low.unsupported(node, "an element of a local array is a number: index the array on the right")
    old = low.assign(target, "aload", [at], fn=info.name, hint=f"{info.user_name}_old")
    low.emit(AStore(info.name, at, value, old, pos=low.pos(node)))


def layout(arrays, producers, counts, filename, arg_names, wrt=()):
    """Statements computing every array's size and offset from the arguments (run first in every generated
    function), and the operand holding the end of the arrays' regions.  A shape may not depend on the
    parameters (``wrt``): the caller sizes scratch once per batch."""
    out, seen = [], set()

    def visit(op, info):
        if not is_var(op) or op in seen or op in arg_names:
            return
        seen.add(op)
        s = producers.get(op)
        if s is not None and s.op == "index" and s.args[0] in wrt:
            raise error_at(s.pos, f"the shape of the local array {info.user_name!r} depends on the parameter "
                           f"array {s.args[0]!r}: shapes come from the data (shapes, integer arguments, "
                           "constants), the same for every sample", filename, UnsupportedError)
        if s is None or counts.get(op) != 1 or s.op not in _SHAPE_OPS:
            raise error_at(producers[op].pos if op in producers else NO_POS, f"the shape of the local array "
                           f"{info.user_name!r} must be computed from the kernel's arguments (data shapes, integer "
                           "arguments, constants)", filename, UnsupportedError)
        for a in s.args:
            visit(a, info)
        out.append(s)

    end = Const(0)
    for info in arrays:
        for d in info.dims:
            visit(d, info)
        size = info.dims[0] if len(info.dims) == 1 else None
        out.append(Assign(info.size, "copy", [size]) if size is not None else
                   Assign(info.size, "mul", list(info.dims)))
        out.append(Assign(info.offset, "copy", [end]))
        nxt = f"{info.name}_end"
        out.append(Assign(nxt, "add", [info.offset, info.size]))
        end = nxt
    order = {id(s): k for k, s in enumerate(producers.values())}
    # copies: the body keeps its own statements (passes may rewrite either list)
    shapes = [replace(s) for s in sorted((s for s in out if id(s) in order), key=lambda s: order[id(s)])]
    return shapes + [s for s in out if id(s) not in order], end

