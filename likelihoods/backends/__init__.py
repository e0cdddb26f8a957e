"""Batched backends behind one interface.

Each backend is built as ``Backend(derivative, data, dtype, ndim, scratch_size)`` and offers
``logl(thetas, out=None) -> (out, nbad)``, ``logl_and_grad(thetas, out=None, grad_out=None) ->
((out, grad_out), nbad)``, ``grad(thetas, grad_out=None) -> (grad_out, nbad)`` and ``kernels()``.
"""

NAMES = ("cpu", "gpu", "python", "auto")


def resolve(name):
    """The concrete backend name for ``name`` ("auto": gpu when a device and CuPy are usable, else cpu)."""
    if name not in NAMES:
        raise ValueError(f"backend must be one of {', '.join(NAMES)}; got {name!r}")
    if name == "auto":
        from .gpu import gpu_usable

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
