"""CPU backend: one numba function runs the whole batch, ``prange`` over samples.

The batch drivers (likelihoods/codegen.py) are compiled once per set of per-sample functions and data
arity, kept in a process-wide cache, and reused by every Likelihood of the same kernel.
"""

import math
import sys
import threading

import numba
import numpy as np

from .. import codegen
from ..derivatives import FASTMATH
from ..kernels import CpuKernels
from .buffers import BufferCache, as_batch, outputs

DRIVER_NAMES = ("batch_value", "batch_value_and_grad", "batch_grad", "tuple_value", "tuple_value_and_grad")
_DRIVERS = {}
_LOCK = threading.Lock()


def cpu_drivers(functions, n_data, fastmath=FASTMATH):
    """Compiled drivers for the ``functions`` object returned by ``Derivative.jit()``.

    When the per-sample functions live in an imported generated module (ad's), the drivers go to a file
    next to it and are compiled with ``cache=True``; otherwise (e.g. AnalyticDerivative) they are compiled
    from memory and cached for this process only.
    """
    key = (id(functions), n_data, frozenset(fastmath))
    with _LOCK:
        entry = _DRIVERS.get(key)
        if entry is None or entry[0] is not functions:
            module = getattr(functions, "module", None)
            if module is not None and sys.modules.get(getattr(module, "__name__", None)) is module:
                text = codegen.cpu_module_text(module.__name__, n_data, fastmath)
                drivers = vars(codegen.load_file_module("cpu_driver", text))
            else:
                drivers = _in_memory_drivers(functions, n_data, fastmath)
            entry = (functions, {name: drivers[name] for name in DRIVER_NAMES})
            _DRIVERS[key] = entry  # keeps `functions` alive so its id stays unique
    return entry[1]


def _in_memory_drivers(functions, n_data, fastmath):
    namespace = {"prange": numba.prange, "INF": math.inf, "NAN": math.nan,
                 "raw_value": functions.raw_value, "raw_value_and_grad": functions.raw_value_and_grad,
                 "raw_grad": functions.raw_grad}
    codegen.compile_module(codegen.cpu_source(n_data), namespace, f"<nestgrad cpu driver {n_data}>")
    flags = set(fastmath)
    drivers = {name: numba.njit(namespace[name], parallel=True, fastmath=flags, nogil=True)
               for name in DRIVER_NAMES[:3]}
    drivers.update({name: numba.njit(namespace[name], fastmath=flags) for name in DRIVER_NAMES[3:]})
    return drivers


class CpuBackend:
    name = "cpu"

    def __init__(self, derivative, data, dtype, ndim, scratch_size):
        self.dtype, self.ndim, self.data = np.dtype(dtype), ndim, data
        self.scratch_size = scratch_size
        self.functions = derivative.jit(fastmath=FASTMATH, dtype=self.dtype.name)
        self.drivers = cpu_drivers(self.functions, len(data))
        self.buffers = BufferCache()

    def _scratch(self, batch):
        return self.buffers.get("scratch", (batch, self.scratch_size), self.dtype)

    def logl(self, thetas, out=None):
        thetas = as_batch(thetas, self.ndim, self.dtype, self.buffers)
        out, _ = outputs(self.buffers, thetas.shape[0], self.ndim, self.dtype, out, grad=False)
        return out, int(self.drivers["batch_value"](thetas, out, self._scratch(thetas.shape[0]), *self.data))

    def logl_and_grad(self, thetas, out=None, grad_out=None):
        thetas = as_batch(thetas, self.ndim, self.dtype, self.buffers)
        out, grad_out = outputs(self.buffers, thetas.shape[0], self.ndim, self.dtype, out, grad_out)
        nbad = self.drivers["batch_value_and_grad"](thetas, out, grad_out, self._scratch(thetas.shape[0]),
                                                    *self.data)
        return (out, grad_out), int(nbad)

    def grad(self, thetas, grad_out=None):
        thetas = as_batch(thetas, self.ndim, self.dtype, self.buffers)
        _, grad_out = outputs(self.buffers, thetas.shape[0], self.ndim, self.dtype, grad_out=grad_out,
                              values=False)
        return grad_out, int(self.drivers["batch_grad"](thetas, grad_out, self._scratch(thetas.shape[0]),
                                                        *self.data))

    def kernels(self):
        return CpuKernels(self.drivers["tuple_value"], self.drivers["tuple_value_and_grad"], tuple(self.data),
                          self.scratch_size, self.dtype)
