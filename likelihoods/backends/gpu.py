"""GPU backend: numba.cuda kernels, one thread per sample in a grid-stride loop.

Data are uploaded once and stay on the device. Inputs may be numpy arrays (copied through cached device
buffers, results come back as numpy), CuPy arrays or numba device arrays (results stay on the device, as
the same kind of array). Per-sample scratch rows come from one device buffer of shape (batch, scratch_size).
Under the CUDA simulator (NUMBA_ENABLE_CUDASIM=1) everything is numpy and the same code runs on the CPU.
"""

import math
import sys
import threading

import numpy as np

from .. import codegen
from ..kernels import CudaKernels
from . import cuda_cache, placement
from .buffers import BufferCache
from .launch import configured

THREADS_PER_BLOCK = 128
MAX_BLOCKS = 4096  # grid-stride beyond this: enough blocks to fill any current GPU
MAX_LAUNCHERS = 64  # configured launches kept, one per driver and batch size
NBAD_RESET_ABOVE = 2**30  # the running bad-sample count (int32 on the device) is set back to 0 above this

_DRIVERS = {}
_LOCK = threading.Lock()


def cupy_or_none():
    try:
        import cupy
    except Exception:  # ImportError, or a CUDA runtime error raised while importing
        return None
    return cupy


def gpu_usable():
    """A real CUDA device is present and CuPy imports (the condition for backend="auto" to pick gpu)."""
    try:
        from numba import cuda

        return bool(cuda.is_available()) and cupy_or_none() is not None
    except Exception:
        return False


DRIVER_NAMES = ("batch_value", "batch_value_and_grad", "batch_grad", "tuple_value", "tuple_value_and_grad")


def gpu_drivers(functions, n_data):
    """Driver kernels for the ``functions`` object returned by ``Derivative.cuda()``: from a generated file with
    numba-cuda's disk cache when the per-sample functions live in an imported generated module (ad's), else
    compiled from memory for this process only (e.g. an AnalyticDerivative's closures)."""
    key = (id(functions), n_data)
    with _LOCK:
        entry = _DRIVERS.get(key)
        if entry is None or entry[0] is not functions:
            module = getattr(functions, "module", None)
            drivers = None
            if module is not None and sys.modules.get(getattr(module, "__name__", None)) is module:
                loaded = cuda_cache.file_module("gpu_driver", codegen.gpu_module_text(module.__name__, n_data))
                if loaded is not None:
                    drivers = {name: getattr(loaded, name) for name in DRIVER_NAMES}
                    for name in DRIVER_NAMES[:3]:  # the kernels; the device functions are compiled into them
                        cuda_cache.guard(drivers[name])
            if drivers is None:
                drivers = _in_memory_drivers(functions, n_data)
            entry = (functions, drivers)
            _DRIVERS[key] = entry  # keeps `functions` alive so its id stays unique
    return entry[1]


def _in_memory_drivers(functions, n_data):
    from numba import cuda

    namespace = {"cuda": cuda, "INF": math.inf, "NAN": math.nan, "raw_value": functions.raw_value,
                 "raw_value_and_grad": functions.raw_value_and_grad, "raw_grad": functions.raw_grad}
    codegen.compile_module(codegen.gpu_source(n_data), namespace, f"<nestgrad gpu driver {n_data}>")
    drivers = {name: cuda.jit(namespace[name]) for name in DRIVER_NAMES[:3]}
    drivers.update({name: cuda.jit(namespace[name], device=True) for name in DRIVER_NAMES[3:]})
    return drivers


def _upload(value):
    from numba import cuda

    if isinstance(value, np.ndarray):
        return cuda.to_device(value)
    return value  # numpy scalars go by value


class GpuBackend:
    name = "gpu"

    def __init__(self, derivative, data, dtype, ndim, scratch_size):
        from numba import cuda

        placement.select_device(cuda)  # before the first allocation: under MPI each rank on its own GPU
        self.cuda = cuda
        self.dtype, self.ndim, self.scratch_size = np.dtype(dtype), ndim, scratch_size
        self.functions = derivative.cuda(dtype=self.dtype.name)
        self.drivers = gpu_drivers(self.functions, len(data))
        self.data = tuple(_upload(v) for v in data)
        self.device = BufferCache(lambda shape, dtype: cuda.device_array(shape, dtype=dtype))
        self.host = BufferCache(lambda shape, dtype: cuda.pinned_array(shape, dtype=dtype))
        self.nbad_host = np.zeros(1, dtype=np.int32)
        self.nbad = cuda.to_device(self.nbad_host)
        self._launchers = {}

    def _launch(self, batch):
        blocks = min(max(1, -(-batch // THREADS_PER_BLOCK)), MAX_BLOCKS)
        return blocks, THREADS_PER_BLOCK

    def _stage(self, thetas):
        """Device view of thetas: device inputs are used in place, host inputs copied into a cached buffer."""
        if not isinstance(thetas, np.ndarray) and (hasattr(thetas, "__cuda_array_interface__")
                                                   or hasattr(thetas, "copy_to_host")):
            device = self._as_device(thetas)
            if device.dtype != self.dtype or device.ndim != 2 or device.shape[1] != self.ndim:
                raise ValueError(f"thetas on the device must have shape (batch, {self.ndim}) and dtype "
                                 f"{self.dtype}, got {device.shape} {device.dtype}")
            return device, True
        array = np.asarray(thetas)
        if array.ndim != 2 or array.shape[1] != self.ndim:
            raise ValueError(f"thetas must have shape (batch, {self.ndim}), got {array.shape}")
        host = self.host.get("thetas", array.shape, self.dtype)
        np.copyto(host, array, casting="unsafe")
        device = self.device.get("thetas", array.shape, self.dtype)
        device.copy_to_device(host)
        return device, False

    def _run(self, name, thetas, arrays):
        """Launch a batch driver; the number of bad samples it found. The device's bad-sample counter runs on
        from call to call (this call's count is the difference), so a call makes one small copy, back, not two;
        it is reset before it could overflow."""
        before = int(self.nbad_host[0])
        if before > NBAD_RESET_ABOVE:
            self.nbad_host[0] = before = 0
            self.nbad.copy_to_device(self.nbad_host)
        key = (name, thetas.shape[0])
        launch = self._launchers.get(key)
        if launch is None:  # configuring a launch per call cost more than the launch itself on an H200
            if len(self._launchers) > MAX_LAUNCHERS:
                self._launchers.clear()
            launch = self._launchers[key] = configured(self.drivers[name], *self._launch(thetas.shape[0]))
        launch(thetas, *arrays, self.nbad, *self.data)
        self.nbad.copy_to_host(self.nbad_host)
        return int(self.nbad_host[0]) - before

    def _as_device(self, array):
        """numba device arrays as they are (also the simulator's); CuPy and others through the interface."""
        return array if hasattr(array, "copy_to_host") else self.cuda.as_cuda_array(array)

    def _output(self, name, given, shape, on_device):
        """Where the kernel writes: the caller's device array, or a cached device buffer."""
        if on_device and given is not None:
            device = self._as_device(given)
            if device.shape != shape or device.dtype != self.dtype:
                raise ValueError(f"{name} must have shape {shape} and dtype {self.dtype}, got "
                                 f"{device.shape} {device.dtype}")
            return device
        return self.device.get(name, shape, self.dtype)

    def _result(self, name, device, given, like, on_device):
        """Hand back results as the caller gave thetas: device arrays stay put, host gets numpy."""
        if on_device:
            if given is not None:
                return given
            if type(like).__module__.startswith("cupy"):
                return cupy_or_none().asarray(device)  # zero-copy view through __cuda_array_interface__
            return device
        host = given if given is not None else self.host.get(name, device.shape, self.dtype)
        if host.shape != device.shape or host.dtype != self.dtype:
            raise ValueError(f"{name} must have shape {device.shape} and dtype {self.dtype}, got "
                             f"{host.shape} {host.dtype}")
        device.copy_to_host(host)
        return host

    def logl(self, thetas, out=None):
        staged, on_device = self._stage(thetas)
        d_out = self._output("out", out, (staged.shape[0],), on_device)
        nbad = self._run("batch_value", staged, (d_out, self.scratch(staged.shape[0])))
        return self._result("out", d_out, out, thetas, on_device), nbad

    def logl_and_grad(self, thetas, out=None, grad_out=None):
        staged, on_device = self._stage(thetas)
        batch = staged.shape[0]
        d_out = self._output("out", out, (batch,), on_device)
        d_grad = self._output("grad", grad_out, (batch, self.ndim), on_device)
        nbad = self._run("batch_value_and_grad", staged, (d_out, d_grad, self.scratch(batch)))
        return (self._result("out", d_out, out, thetas, on_device),
                self._result("grad", d_grad, grad_out, thetas, on_device)), nbad

    def grad(self, thetas, grad_out=None):
        staged, on_device = self._stage(thetas)
        batch = staged.shape[0]
        d_grad = self._output("grad", grad_out, (batch, self.ndim), on_device)
        nbad = self._run("batch_grad", staged, (d_grad, self.scratch(batch)))
        return self._result("grad", d_grad, grad_out, thetas, on_device), nbad

    def scratch(self, batch):
        return self.device.get("scratch", (batch, self.scratch_size), self.dtype)

    def kernels(self):
        return CudaKernels(self.drivers["tuple_value"], self.drivers["tuple_value_and_grad"], self.data,
                           self.scratch_size, self.dtype)
