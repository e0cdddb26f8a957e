"""The CUDA chain kernel against the CPU one on identical inputs, then a small nested-sampling run on the GPU path.
Prints one JSON line. Run by test_hmc_gpu.py in a subprocess: under NUMBA_ENABLE_CUDASIM=1 (CI), or with
``--device`` on a real CUDA device (the device test, skipped where none is usable)."""

import json
import os
import sys

ON_DEVICE = "--device" in sys.argv
assert ON_DEVICE or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1 or --device"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import problems  # noqa: E402
from nestgrad.sampler import NestedSampler  # noqa: E402
from nestgrad.sampler import geometry  # noqa: E402
from nestgrad.sampler.hmc_cpu import make_chain_kernel  # noqa: E402
from nestgrad.sampler.hmc_runtime import ChainWorkspace  # noqa: E402
from nestgrad.sampler.hmc_gpu import GpuChainKernel  # noqa: E402
from nestgrad.sampler.rng import seed_chain_states  # noqa: E402


class GpuProblem(problems.Problem):
    """A test problem that also offers ``cuda_kernels()`` (device functions from the same Python code)."""

    backend = "gpu"

    def cuda_kernels(self):
        k = self.cpu_kernels()
        dev = cuda.jit(device=True)
        return k._replace(value=dev(k.value.py_func), value_and_grad=dev(k.value_and_grad.py_func))


def compare_kernels():
    prob = GpuProblem("g", *_gauss_parts(3))
    report = compare_chains(prob.cpu_kernels(), prob.cuda_kernels(), prob.prior, prob.logl)
    report["kernel_file"] = _kernel_file(prob.cuda_kernels())
    return report


def compare_chains(k, cuda_kernels, prior, logl):
    """The CPU and the CUDA chain kernels advanced from identical inputs."""
    nchains, d = 6, len(prior.names)
    gen = np.random.default_rng(0)
    u0 = 0.5 + 0.05 * gen.standard_normal((nchains, d))
    logl0 = np.asarray(logl(u0), dtype=np.float64)
    logl_star = float(np.min(logl0)) - 1e-9
    steps = np.full(nchains, 1.5)  # whitened units: large enough to reflect often
    states = seed_chain_states(gen, nchains)
    # Two clusters, dense metric and jumps: every branch of the trajectory body runs on both targets.
    labels = (np.arange(40) % 2).astype(np.int64)
    geo = geometry.build(0.5 + 0.05 * gen.standard_normal((40, d)), labels, True)
    ctrl = np.array([12, 4, 2, 1, 1, 1, 1], np.int64)
    results = []
    for name, advance in (("cpu", make_chain_kernel(k.value, k.value_and_grad)),
                          ("gpu", GpuChainKernel(cuda_kernels, prior.codes, prior.args, nchains, d))):
        ws = ChainWorkspace(nchains, d, np.float64, k.scratch_size)
        st = states.copy()
        advance(u0, logl0, logl_star, steps, ctrl, st, k.data, prior.codes, prior.args, *geo.kernel_arrays(),
                *ws.arrays())
        results.append((ws.out_u.copy(), ws.out_logl.copy(), ws.stats.copy(), st))
    (cu, cl, cs, cst), (gu, gl, gs, gst) = results
    return {"max_du": float(np.max(np.abs(cu - gu))), "max_dlogl": float(np.max(np.abs(cl - gl))),
            "stats_equal": bool(np.array_equal(cs, gs)), "rng_equal": bool(np.array_equal(cst, gst)),
            "reflections": int(cs[:, 2].sum()), "jumps_accepted": int(cs[:, 8].sum()), "all_inside": bool(np.all(gl > logl_star))}


def _gauss_parts(d):
    p = problems.gaussian(d)
    k = p.cpu_kernels()
    return p.params, k.value, k.value_and_grad, k.data, p.prior, p.logz


def small_run():
    prob = GpuProblem("g", *_gauss_parts(2))
    res = NestedSampler(prob, prob.prior, nlive=40, delete_fraction=0.1, seed=4,
                        hmc={"n_steps": 12}).run(dlogz=0.5, progress=False)
    return {"backend": res.settings["backend"], "logz": res.logz, "logz_err": res.logz_err, "truth": prob.logz,
            "birth_ok": bool(np.all(res.dead.logl > res.dead.logl_birth))}


def local_arrays():
    """A kernel with a local array (its primal and gradient need scratch) on the GPU backend: batched values and
    gradients equal the CPU backend's, the chain kernels agree, and a run finds the analytic evidence."""
    from nestgrad.likelihoods import Likelihood

    p = problems.gaussian(2)
    fn = os.path.join(os.path.dirname(os.path.abspath(__file__)), "local_array_gauss.py") + ":shifted_gauss"
    data = {"mu": np.full(2, 0.5), "sigma": 0.1}
    cpu, gpu = (Likelihood(fn, p.params, data, backend=b, dtype="float64") for b in ("cpu", "gpu"))
    thetas = np.random.default_rng(1).random((9, 2))
    (cv, cg), (gv, gg) = cpu.logl_and_grad(thetas), gpu.logl_and_grad(thetas)
    report = {"scratch_size": int(gpu.scratch_size),
              "max_dvalue": float(max(np.max(np.abs(cv - gv)), np.max(np.abs(cpu.logl(thetas) - gpu.logl(thetas))))),
              "max_dgrad": float(max(np.max(np.abs(cg - gg)), np.max(np.abs(cpu.grad(thetas) - gpu.grad(thetas)))))}
    report["chains"] = compare_chains(cpu.cpu_kernels(), gpu.cuda_kernels(), p.prior, cpu.logl)
    res = NestedSampler(gpu, p.prior, nlive=40, delete_fraction=0.1, seed=4,
                        hmc={"n_steps": 12}).run(dlogz=0.5, progress=False)
    report["run"] = {"backend": res.settings["backend"], "logz": res.logz, "logz_err": res.logz_err,
                     "truth": p.logz}
    report["kernel_file"] = _kernel_file(gpu.cuda_kernels())
    return report


def _kernel_file(kernels):
    """Where the chain kernel for these device functions was defined: a generated file (numba-cuda's disk cache
    applies) or the in-memory text."""
    from nestgrad.likelihoods.backends.cuda_cache import python_function
    from nestgrad.sampler.hmc_gpu import make_gpu_chain_kernel

    advance = make_gpu_chain_kernel(kernels.value, kernels.value_and_grad)
    return os.path.basename(python_function(advance).__code__.co_filename)


def device_memory():
    """The memory estimate against what the GPU chain kernel allocates, and a device reported too small for the
    chains: ``backend="gpu"`` refuses with the sampler's error, naming what to lower."""
    from nestgrad.sampler.hmc_gpu import chain_memory_bytes
    from nestgrad.sampler.nested_sampler import SamplerError

    prob = GpuProblem("g", *_gauss_parts(3))
    kernels = prob.cuda_kernels()
    nchains, d = 6, 3
    advance = GpuChainKernel(kernels, prob.prior.codes, prob.prior.args, nchains, d)
    ws = ChainWorkspace(nchains, d, np.float64, kernels.scratch_size)
    staged = (np.zeros((nchains, d)), np.zeros(nchains), np.zeros(nchains), seed_chain_states(np.random.default_rng(0),
                                                                                                nchains))
    allocated = sum(a.nbytes for a in advance.work) + sum(a.nbytes for a in ws.arrays()[-5:]) + \
        sum(a.nbytes for a in staged)
    context = type(cuda.current_context())
    real = context.get_memory_info
    context.get_memory_info = lambda self: (1 << 20, 1 << 20)
    try:
        NestedSampler(prob, prob.prior, nlive=100_000, seed=1, backend="gpu").run(dlogz=0.5, progress=False)
        refusal = None
    except SamplerError as error:
        refusal = str(error)
    finally:
        context.get_memory_info = real
    return {"allocated": int(allocated), "estimate": chain_memory_bytes(nchains, d, kernels.dtype,
                                                                         kernels.scratch_size), "refusal": refusal}


if __name__ == "__main__":
    print(json.dumps({"kernels": compare_kernels(), "run": small_run(), "local_arrays": local_arrays(),
                      "memory": device_memory()}))
