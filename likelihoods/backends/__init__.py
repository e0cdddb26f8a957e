"""Batched backends behind one interface, and the one list of backend names.

Each backend is built as ``Backend(derivative, data, dtype, ndim, scratch_size)`` and offers
``logl(thetas, out=None) -> (out, nbad)``, ``logl_and_grad(thetas, out=None, grad_out=None) ->
((out, grad_out), nbad)``, ``grad(thetas, grad_out=None) -> (grad_out, nbad)`` and ``kernels()``.

:data:`NAMES` is what every layer accepts (the Likelihood, the sampler, the config's ``backend`` key, the
command line's ``--backend``): "auto" (gpu when :func:`gpu_usable`, else cpu), "cpu" (numba, parallel over the
batch), "gpu" (numba-cuda + CuPy) and "python" (plain Python, for debugging).
"""

import os
import sys

NAMES = ("auto", "cpu", "gpu", "python")

# Where a Linux machine's NVIDIA driver (or WSL's GPU bridge) shows itself. Without any of them no CUDA device can
# be usable, and asking numba.cuda costs its imports: 1.5-3.5 s of every "auto" run on the 2-core machine.
LINUX_DRIVER_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia", "/dev/dxg")


def gpu_usable():
    """A real CUDA device is present and CuPy imports: the condition for "auto" to mean "gpu"."""
    if _no_cuda_driver():
        return False
    from .gpu import gpu_usable as usable

    return usable()


def _no_cuda_driver():
    """True where no CUDA driver can be there (a Linux machine without NVIDIA's device files), known without
    importing numba.cuda; under the CUDA simulator numba.cuda decides."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return False
    return sys.platform.startswith("linux") and not any(os.path.exists(path) for path in LINUX_DRIVER_FILES)


def resolve(name):
    """The concrete backend name for ``name`` ("auto": gpu when :func:`gpu_usable`, else cpu)."""
    if name not in NAMES:
        raise ValueError(f"backend must be one of {', '.join(NAMES)}; got {name!r}")
    if name == "auto":
        return "gpu" if gpu_usable() else "cpu"
    return name


def backend_class(name):
    if name == "cpu":
        from .cpu import CpuBackend

        return CpuBackend
    if name == "gpu":
        from .gpu import GpuBackend

        return GpuBackend
    from .python import PythonBackend

    return PythonBackend
