"""Arrays allocated once per (purpose, shape) and reused by every later call of the same batch size."""

import numpy as np


class BufferCache:
    """``get(name, shape, dtype)`` returns the same array while the shape stays the same; a new batch size
    replaces the old buffer (the sampler uses few batch sizes, so one per purpose is enough)."""

    def __init__(self, allocate=np.empty):
        self._allocate = allocate
        self._buffers = {}

    def get(self, name, shape, dtype):
        buffer = self._buffers.get(name)
        if buffer is None or buffer.shape != tuple(shape) or buffer.dtype != dtype:
            buffer = self._allocate(tuple(shape), dtype=dtype)
            self._buffers[name] = buffer
        return buffer


def as_batch(thetas, ndim, dtype, cache):
    """Validate ``thetas`` (B, ndim); return a C-contiguous array of ``dtype`` (a cached copy when needed)."""
    shape = getattr(thetas, "shape", None)
    if shape is None:
        thetas = np.asarray(thetas)
        shape = thetas.shape
    if len(shape) != 2 or shape[1] != ndim:
        raise ValueError(f"thetas must have shape (batch, {ndim}), got {tuple(shape)}")
    if isinstance(thetas, np.ndarray) and thetas.dtype == dtype and thetas.flags.c_contiguous:
        return thetas
    staged = cache.get("thetas", shape, dtype)
    np.copyto(staged, thetas, casting="unsafe")
    return staged


def check_out(out, shape, dtype, name):
    if out.shape != tuple(shape) or out.dtype != dtype:
        raise ValueError(f"{name} must have shape {tuple(shape)} and dtype {dtype}, got {out.shape} {out.dtype}")
    return out


def outputs(cache, batch, ndim, dtype, out=None, grad_out=None, values=True, grad=True):
    """The caller's ``out``/``grad_out`` (checked), or cached buffers reused by every call of this batch size."""
    if values:
        out = cache.get("out", (batch,), dtype) if out is None else check_out(out, (batch,), dtype, "out")
    if grad:
        grad_out = (cache.get("grad", (batch, ndim), dtype) if grad_out is None
                    else check_out(grad_out, (batch, ndim), dtype, "grad_out"))
    return out, grad_out
