"""Run by test_hmc_gpu_cache.py in a subprocess; prints one JSON line.

``keys`` (no device, no simulator): the CUDA chain kernel of two built-ins as numba-cuda would cache it: its
defining file, the kind of cache it has, and numba-cuda's index key for its signature (with the target's compute
capability, since no driver is here to ask); with ``ptx``, the file's kernel also compiles to PTX for sm_90.
``run`` (on a device): a small GPU run and where its chain kernel's machine code came from.
"""

import json
import sys
import time
import types

import numba
import numpy as np

from nestgrad.likelihoods import builtin
from nestgrad.likelihoods.backends.gpu import gpu_drivers
from nestgrad.sampler.hmc_gpu import make_gpu_chain_kernel

SM90 = types.SimpleNamespace(compute_capability=(9, 0))


def chain_signature(data, dtype):
    f8, i8, u8, fd = numba.float64, numba.int64, numba.uint64, numba.from_dtype(np.dtype(dtype))
    mat, vec, cube, dmat = f8[:, ::1], f8[::1], f8[:, :, ::1], fd[:, ::1]
    work, dwork = f8[::1, :], fd[::1, :]  # the chains' work arrays are column-major (GpuChainKernel)
    return (mat, vec, f8, vec, i8[::1], u8[:, ::1], numba.typeof(data), i8[::1], mat,
            mat, cube, cube, vec, vec, mat, i8[::1],
            work, work, work, work, work, work, dwork, work, dwork, dwork,
            mat, mat, vec, i8[::1], i8[:, ::1])


def keys(ptx):
    import numba.cuda.dispatcher as dispatcher

    dispatcher.get_current_device = lambda: SM90  # the compute capability a driver would report
    codegen = types.SimpleNamespace(magic_tuple=lambda: ("runtime", (9, 0)))
    report = {}
    for name in ("gaussian4d", "gaussian_shells"):
        b = builtin.get(name)
        like = b.likelihood(backend="python", dtype="float32")  # prepared data, no device needed
        drivers = gpu_drivers(like.derivative.cuda(dtype="float32"), len(like.data))
        advance = make_gpu_chain_kernel(drivers["tuple_value"], drivers["tuple_value_and_grad"])
        data = tuple(np.asarray(d) for d in like.data)
        signature = chain_signature(data, "float32")
        cache = advance._cache
        report[name] = {"file": advance.py_func.__code__.co_filename, "cache": type(cache).__name__,
                        "cache_path": cache.cache_path,
                        "index_key": repr(cache._index_key(signature, codegen)),
                        "driver_cache": type(drivers["batch_value_and_grad"]._cache).__name__,
                        "driver_file": drivers["batch_value_and_grad"].py_func.__code__.co_filename}
        if ptx and name == "gaussian4d":
            text, _ = numba.cuda.compile_ptx(advance.py_func, signature, cc=(9, 0))
            report[name]["ptx"] = ".entry" in text and ".target sm_90" in text
    return report


def run():
    from nestgrad.sampler import NestedSampler
    from nestgrad.sampler.priors import Prior

    b = builtin.get("gaussian4d")
    start = time.perf_counter()
    # chains from the first iteration (no prior draws): the 30 iterations run the kernel the cache gave
    sampler = NestedSampler(b.likelihood(backend="gpu", dtype="float32"), Prior.from_spec(b.priors), nlive=200,
                            seed=5, backend="gpu", hmc={"prior_draws": 0.0})
    result = sampler.run(dlogz=0.5, progress=False, max_iter=30)
    return {"kernel": sampler.compile_info["kernel"], "compile_s": sampler.compile_info["seconds"],
            "total_s": time.perf_counter() - start, "logl": result.dead.logl.tolist()}


if __name__ == "__main__":
    mode = sys.argv[1]
    print(json.dumps(keys("ptx" in sys.argv[2:]) if mode == "keys" else run()))
