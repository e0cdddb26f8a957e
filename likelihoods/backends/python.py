"""Reference backend: a plain Python loop over the batch calling the pure-Python generated functions.

Slow, but it runs the exact text ``ad`` generated without numba, so it is the one to debug with. Python's
``math`` raises where numba returns NaN (log of a negative number, overflow, division by zero); those
exceptions are caught per sample and the sample becomes NaN, as on the compiled backends.
"""

import math

import numpy as np

from .buffers import BufferCache, as_batch, outputs

MATH_ERRORS = (ValueError, OverflowError, ZeroDivisionError)


class PythonBackend:
    name = "python"

    def __init__(self, derivative, data, dtype, ndim, scratch_size):
        self.derivative, self.data, self.dtype, self.ndim = derivative, data, np.dtype(dtype), ndim
        self.scratch_size = scratch_size
        self.buffers = BufferCache()

    def _value(self, theta):
        try:
            return float(self.derivative.value(theta, *self.data))
        except MATH_ERRORS:
            return math.nan

    def _value_and_grad(self, theta, grad_row):
        try:
            return float(self.derivative.value_and_grad(theta, *self.data, grad_row))
        except MATH_ERRORS:
            return math.nan

    def logl(self, thetas, out=None):
        thetas = as_batch(thetas, self.ndim, self.dtype, self.buffers)
        out, _ = outputs(self.buffers, thetas.shape[0], self.ndim, self.dtype, out, grad=False)
        nbad = 0
        with np.errstate(all="ignore"):
            for b in range(thetas.shape[0]):
                v = self._value(thetas[b])
                if not v < math.inf:
                    v = math.nan
                    nbad += 1
                out[b] = v
        return out, nbad

    def logl_and_grad(self, thetas, out=None, grad_out=None):
        thetas = as_batch(thetas, self.ndim, self.dtype, self.buffers)
        out, grad_out = outputs(self.buffers, thetas.shape[0], self.ndim, self.dtype, out, grad_out)
        row = self.buffers.get("grad_row", (self.ndim,), self.dtype)
        nbad = 0
        with np.errstate(all="ignore"):
            for b in range(thetas.shape[0]):
                v = self._value_and_grad(thetas[b], row)
                grad_out[b] = row
                if not v < math.inf or (v > -math.inf and not np.all(np.isfinite(row))):
                    v = math.nan
                    grad_out[b] = math.nan
                    nbad += 1
                out[b] = v
        return (out, grad_out), nbad

    def grad(self, thetas, grad_out=None):
        values = self.buffers.get("grad_values", (np.shape(thetas)[0],), self.dtype)
        (_, grad_out), _ = self.logl_and_grad(thetas, values, grad_out)
        # a -inf value is not a bad sample for the gradient-only call as long as the gradient is finite
        return grad_out, int(np.count_nonzero(~np.isfinite(grad_out).all(axis=1)))

    def kernels(self):
        raise NotImplementedError("the python backend has no compiled kernels; use backend='cpu'")
