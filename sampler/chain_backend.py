"""Where the chains run: the CPU, or the GPU when asked for (or, for "auto", when one is usable and has the memory
for the chains)."""

import warnings

import numpy as np

from nestgrad.likelihoods import backends


def choose_backend(backend, likelihood, nchains, ndim, live_rows=0):
    """The chains' backend: "gpu" or "cpu" (the names are `likelihoods.backends.NAMES`; "auto" means the GPU when
    `likelihoods.backends.gpu_usable()`, as for the likelihood itself, and it has room for the chains and the
    ``live_rows`` live points it keeps)."""
    if backend is None:
        return "gpu" if getattr(likelihood, "backend", "cpu") == "gpu" else "cpu"
    if backend == "auto":
        usable = hasattr(likelihood, "cuda_kernels") and backends.resolve("auto") == "gpu"
        return "gpu" if usable and gpu_has_room(likelihood, nchains, ndim, live_rows) else "cpu"
    return "cpu" if backend == "python" else backend


def gpu_has_room(likelihood, nchains, ndim, live_rows=0):
    """Whether this process's GPU has the memory for the chains; warns (and "auto" then means the CPU) if not."""
    from numba import cuda

    from nestgrad.likelihoods.backends import placement

    from .hmc_gpu import DeviceMemoryError, check_device_memory

    try:
        placement.select_device(cuda)
        check_device_memory(cuda, nchains, ndim, getattr(likelihood, "dtype", np.float64),
                            getattr(likelihood, "scratch_size", 0), live_rows)
    except DeviceMemoryError as error:
        warnings.warn(f"backend auto: {error}; sampling on the CPU", stacklevel=4)
        return False
    return True
