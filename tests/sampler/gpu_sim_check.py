"""Run under NUMBA_ENABLE_CUDASIM=1 (by test_hmc_gpu.py, in a subprocess): the CUDA chain kernel against the
CPU one on identical inputs, then a small nested-sampling run on the GPU path. Prints one JSON line."""

import json
import os
import sys
import warnings

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The simulator runs the xoroshiro arithmetic on numpy uint64 scalars, which wrap as intended but warn.
warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)

import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402

import problems  # noqa: E402
from nestgrad.sampler import NestedSampler  # noqa: E402
from nestgrad.sampler import geometry  # noqa: E402
from nestgrad.sampler.hmc import make_chain_kernel  # noqa: E402
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
    k, nchains, d = prob.cpu_kernels(), 6, 3
    gen = np.random.default_rng(0)
    u0 = 0.5 + 0.05 * gen.standard_normal((nchains, d))
    logl0 = prob.logl(u0)
    logl_star = float(np.min(logl0)) - 1e-9
    steps = np.full(nchains, 1.5)  # whitened units: large enough to reflect often
    states = seed_chain_states(gen, nchains)
    # Two clusters, dense metric and jumps: every branch of the trajectory body runs on both targets.
    labels = (np.arange(40) % 2).astype(np.int64)
    geo = geometry.build(0.5 + 0.05 * gen.standard_normal((40, d)), labels, True)
    ctrl = np.array([12, 4, 2, 1], np.int64)
    results = []
    for name, advance in (("cpu", make_chain_kernel(k.value, k.value_and_grad)),
                          ("gpu", GpuChainKernel(prob.cuda_kernels(), prob.prior.codes, prob.prior.args, nchains, d))):
        ws = ChainWorkspace(nchains, d, np.float64, 0)
        st = states.copy()
        advance(u0, logl0, logl_star, steps, ctrl, st, k.data, prob.prior.codes, prob.prior.args, *geo[:5],
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


if __name__ == "__main__":
    print(json.dumps({"kernels": compare_kernels(), "run": small_run()}))
