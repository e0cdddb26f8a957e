"""numba-cuda's on-disk kernel cache for nestgrad's generated CUDA kernels (batch drivers, the chain kernel).

A kernel compiled with ``cuda.jit(cache=True)`` from a generated file is keyed by that file (its name hashes
everything the kernel's code depends on) and by the device's compute capability, so a later process loads the
cubin instead of compiling again (seconds to tens of seconds per kernel). The cache is an optimisation only:
when numba-cuda cannot write or read an entry, the kernel is compiled in the process, with a warning.
"""

import sys
import warnings


class CudaCacheWarning(UserWarning):
    """A CUDA kernel's machine code could not be saved to or loaded from numba-cuda's disk cache."""


def file_module(stem, text):
    """The generated module for ``text`` (written to nestgrad's cache folder and imported), or None when it
    cannot be written or imported there (the caller compiles the same code from memory instead)."""
    from .. import codegen

    try:
        return codegen.load_file_module(stem, text)
    except (OSError, ImportError, RuntimeError) as error:  # RuntimeError: numba finds no writable cache place
        warnings.warn(f"CUDA kernels are compiled without a disk cache ({type(error).__name__}: {error})",
                      CudaCacheWarning, stacklevel=3)
        return None


def guard(dispatcher):
    """Make a failed save or load of ``dispatcher``'s cache entry a warning rather than an error (the kernel is
    then compiled in this process); no effect on dispatchers without a disk cache (the CUDA simulator's)."""
    cache = getattr(dispatcher, "_cache", None)
    if cache is None or getattr(cache, "_nestgrad_guarded", False):
        return dispatcher
    save, load = cache.save_overload, cache.load_overload
    name = getattr(getattr(dispatcher, "py_func", None), "__name__", "kernel")

    def save_overload(sig, data):
        try:
            save(sig, data)
        except Exception as error:  # noqa: BLE001 -- any failure only costs a compile in the next process
            warnings.warn(f"CUDA kernel {name} not saved to the disk cache ({type(error).__name__}: {error})",
                          CudaCacheWarning, stacklevel=2)

    def load_overload(sig, target_context):
        try:
            return load(sig, target_context)
        except Exception as error:  # noqa: BLE001 -- a damaged entry: compile instead
            warnings.warn(f"CUDA kernel {name} not loaded from the disk cache ({type(error).__name__}: {error}); "
                          f"compiling it", CudaCacheWarning, stacklevel=2)
            return None

    cache.save_overload, cache.load_overload = save_overload, load_overload
    cache._nestgrad_guarded = True
    return dispatcher


def origin(dispatcher):
    """Where ``dispatcher``'s machine code came from in this process: "cache" (loaded from disk), "compiled"
    (compiled here, then saved), or None when numba-cuda keeps no statistics (the simulator)."""
    stats = getattr(dispatcher, "stats", None)
    if stats is None or not hasattr(stats, "cache_hits"):
        return None
    if sum(stats.cache_misses.values()):
        return "compiled"
    return "cache" if sum(stats.cache_hits.values()) else None


def python_function(function):
    """The Python function behind a numba-cuda dispatcher (``py_func``) or the CUDA simulator's kernel (``fn``)."""
    return getattr(function, "py_func", None) or getattr(function, "fn", None)


def module_of(function):
    """The imported generated module whose attribute ``function`` is (found by its Python function's module
    name), or None (a function defined in memory, e.g. an analytic gradient given as a closure)."""
    py = python_function(function)
    module = sys.modules.get(getattr(py, "__module__", None) or "")
    if module is None or not getattr(module, "__file__", None):
        return None
    name = getattr(py, "__name__", None)
    return module if name and getattr(module, name, None) is function else None
