"""Compiled kernels that run the same machine code in every process, so a resumed run equals an uninterrupted one.

Two numba behaviours make a kernel's last bits depend on the state of numba's on-disk cache:

1. A ``cache=True`` function is loaded from disk as object code, which a caller cannot inline; a caller
   compiled while its callee came from the cache is optimised differently than one compiled together with it.
2. Code that numba JIT-compiles in a process and the same function loaded from numba's cache in a later process
   can differ under fast-math flags. Measured on the built-in gaussian4d (nlive 2000, default flags
   reassoc/contract/arcp/nsz/afn): dead points differed at 1e-10 after 16 iterations between a process that
   compiled the fused HMC kernel and one that loaded it; with any single flag, or none, the bits agreed. Loading
   the freshly written cache entry again in the compiling process did not reproduce the loaded code's bits.

So the fused HMC kernel is never JIT-compiled in the process that samples with it: a child process compiles it
into numba's cache and every run, the first included, loads it from there (``sampler/hmc_cache.py``), so all
runs execute the same machine code. The child compiles it against :func:`fresh_dispatcher` copies of the
likelihood's functions and the prior transform, so it is always compiled together with them, whatever the cache
holds for those; the likelihood's own functions stay cached (the differentiator's and likelihoods' generated
modules). Likelihoods a child cannot import are compiled in-process against fresh copies, as before.
"""
import types

import numba
from numba.core.registry import CPUDispatcher



def fresh_dispatcher(fn, _memo=None):
    """A new, uncached njit dispatcher of ``fn``'s Python function with the same options, whose global
    references to other njit functions are themselves replaced by fresh copies (recursively)."""
    memo = {} if _memo is None else _memo
    if id(fn) in memo:
        return memo[id(fn)]
    py = fn.py_func
    namespace = dict(py.__globals__)
    for name in py.__code__.co_names:
        target = namespace.get(name)
        if isinstance(target, CPUDispatcher):
            namespace[name] = fresh_dispatcher(target, memo)
    copy = types.FunctionType(py.__code__, namespace, py.__name__, py.__defaults__, py.__closure__)
    options = {k: v for k, v in fn.targetoptions.items() if k not in ("cache", "nopython")}
    fresh = numba.njit(**options)(copy)
    memo[id(fn)] = fresh
    return fresh
