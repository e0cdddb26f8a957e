"""The fused constrained-HMC kernel on the CPU: the templates of ``sampler.hmc`` compiled by numba, one
``advance_range`` over a stride of chains per host thread (``sampler.hmc_runtime.ChainThreads``).

Loaded from numba's on-disk cache after a child process compiled it (``sampler.hmc_cache``), so every process runs
the same machine code; likelihoods whose functions cannot be imported by a child are compiled here instead,
against fresh copies of their functions (``sampler.stable_jit``).
"""

import ast
import inspect
import math
import time
from typing import Any, NamedTuple

from . import hmc
from .prior_families import transform_one
from .rng import normal, uniform
from .stable_jit import fresh_dispatcher

_KERNEL_CACHE = {}


def _draw_normal(states, j):
    return normal(states, j)


def _draw_uniform(states, j):
    return uniform(states, j)


# Templates of the CPU kernel, their compiled names, and the options of the two entry points.
CPU_TEMPLATES = {"_mahalanobis2": "mahalanobis2", "_region": "region", "_ellipsoid_count": "ellipsoid_count",
                 "_correlated_normal": "correlated_normal", "_in_cube": "in_cube", "_draw_normal": "draw_normal",
                 "_draw_uniform": "draw_uniform", "_counted_value": "counted_value", "_slice_along": "slice_along",
                 "_evaluate": "evaluate"}
CPU_ENTRY_POINTS = ("advance_range", "evaluate")


def _template(name):
    """A template of the kernel: the RNG draws are this module's, the rest ``sampler.hmc``'s."""
    return globals()[name] if name.startswith("_draw_") else getattr(hmc, name)


def _advance_range_source():
    """``advance_range(start, stride, u_start, ...)``: the ``_chain`` body inside ``for j in range(start,
    nchains, stride)``, one call per host thread (``sampler.hmc_runtime.ChainThreads``). Written out rather
    than calling a compiled ``_chain``: numba optimises a callee's whole module again inside its caller, and
    the chain is the largest function (measured here: 4 s of a 26 s compile went to a two-line wrapper). Serial
    and nogil rather than a ``prange`` loop: the parfor lowering more than doubled the compile time (12 s for
    the chain alone, 30 s with the prange wrapper)."""
    function = ast.parse(inspect.getsource(hmc._chain)).body[0]
    loop = ast.For(target=ast.Name("j", ast.Store()),
                   iter=ast.parse("range(start, u_start.shape[0], stride)", mode="eval").body,
                   body=function.body, orelse=[])
    function.name = "_advance_range"
    function.args.args = [ast.arg("start"), ast.arg("stride")] + function.args.args[1:]  # j is the loop's now
    function.body = [loop]
    return ast.unparse(ast.fix_missing_locations(function))


def cpu_kernel_source(cache):
    """Source of the CPU kernel's functions for a namespace that already holds ``value``, ``value_and_grad``,
    ``transform`` (prior), ``normal``, ``uniform`` (RNG), ``math`` and ``numba``: the templates above, the
    ``STAT_``/``CTRL_`` constants, and ``advance_range``/``evaluate`` compiled with ``cache=cache``."""
    lines = [f"{name} = {value}" for name, value in sorted(vars(hmc).items())
             if name.startswith(("STAT_", "CTRL_", "MAX_SHRINK")) and isinstance(value, int)]
    for name in CPU_TEMPLATES:
        lines += ["", "", inspect.getsource(_template(name)).rstrip()]
    lines += ["", "", _advance_range_source(), "", "", '_OPTIONS = dict(error_model="numpy")']
    for name, compiled in CPU_TEMPLATES.items():
        lines.append(f"{compiled} = numba.njit({'cache=' + repr(cache) + ', ' if compiled in CPU_ENTRY_POINTS else ''}"
                     f"**_OPTIONS)({name})")
    lines.append(f"advance_range = numba.njit(nogil=True, cache={cache!r}, **_OPTIONS)(_advance_range)")
    return "\n".join(lines) + "\n"


def _compiled_in_memory(value, value_and_grad):
    """``(advance_range, evaluate)`` compiled in this process (not cached), from the same source as the cached
    kernel (sampler/hmc_cache.py)."""
    import numba

    namespace = {"__name__": "nestgrad_hmc_kernel_in_memory", "math": math, "numba": numba, "value": value,
                 "value_and_grad": value_and_grad, "transform": fresh_dispatcher(transform_one),
                 "normal": normal, "uniform": uniform}
    exec(compile(cpu_kernel_source(cache=False), "<nestgrad hmc kernel>", "exec"), namespace)  # our own templates
    return namespace["advance_range"], namespace["evaluate"]


class CompiledKernel(NamedTuple):
    """advance: ``advance(u_start, ..., stats)`` over all chains (``sampler.hmc_runtime.ChainThreads`` around
    the compiled ``advance_range``); evaluate: njit ``evaluate(thetas, data, theta_buf, scratch, out)`` (one
    scratch row); origin: "cache" (loaded from numba's cache), "compiled" (a child process compiled it into the
    cache, then it was loaded) or "in-process" (compiled here, not cached); seconds: time spent getting it in this
    call; child_seconds: wall time of the child process that compiled it (from its start, possibly before this
    call), else None."""

    advance: Any
    evaluate: Any
    origin: str
    seconds: float
    child_seconds: Any = None


def compiled_kernel(value, value_and_grad, advance_sig=None, evaluate_sig=None, notify=None, request=None):
    """The fused CPU kernel for one likelihood (kept per pair of dispatchers for this process).

    With the numba signatures of ``advance_range`` and ``evaluate`` it is taken from numba's on-disk cache,
    compiled there first by a child process when missing (``notify("compiling ...")`` is called then; pass the
    ``request`` of an earlier ``hmc_cache.begin`` to use a child already started); without them, or when the
    likelihood's functions cannot be imported by another process, it is compiled in this process against fresh
    copies of the likelihood's functions, and numba compiles on first call."""
    from .hmc_runtime import ChainThreads

    key = (id(value), id(value_and_grad), advance_sig, evaluate_sig)
    hit = _KERNEL_CACHE.get(key)
    if hit is not None and hit[0] is value and hit[1] is value_and_grad:
        return hit[2]
    start = time.perf_counter()
    loaded, child_seconds = None, None
    if advance_sig is not None and evaluate_sig is not None:
        from . import hmc_cache

        if request is None:
            request = hmc_cache.begin(value, value_and_grad,
                                      {"advance_range": advance_sig, "evaluate": evaluate_sig}, notify)
        loaded = None if request is None else hmc_cache.finish(request)
        child_seconds = None if request is None or request.child is None else request.child.seconds
    if loaded is not None:
        functions, origin = loaded
        advance_range, evaluate = functions["advance_range"], functions["evaluate"]
    else:
        memo = {}
        advance_range, evaluate = _compiled_in_memory(fresh_dispatcher(value, memo),
                                                      fresh_dispatcher(value_and_grad, memo))
        origin = "in-process"
    kernel = CompiledKernel(ChainThreads(advance_range), evaluate, origin, time.perf_counter() - start,
                            child_seconds)
    _KERNEL_CACHE[key] = (value, value_and_grad, kernel)
    return kernel


def _kernels(value, value_and_grad):
    """``(advance, evaluate)`` for one likelihood, compiled in this process on first call."""
    kernel = compiled_kernel(value, value_and_grad)
    return kernel.advance, kernel.evaluate


def make_chain_kernel(value, value_and_grad):
    """The fused CPU kernel for one likelihood: ``advance(...)`` runs all chains through whole trajectories
    (threads over chains), with the likelihood's njit ``value``/``value_and_grad`` compiled inline."""
    return _kernels(value, value_and_grad)[0]


def make_batch_evaluator(value, value_and_grad=None):
    """njit ``evaluate(thetas, data, theta_buf, scratch, out)``: ``value`` on every row (initial draws). Pass the
    ``value_and_grad`` of the same likelihood to share the compiled pair with :func:`make_chain_kernel`."""
    if value_and_grad is None:
        return _compiled_in_memory(fresh_dispatcher(value), fresh_dispatcher(value))[1]
    return _kernels(value, value_and_grad)[1]
