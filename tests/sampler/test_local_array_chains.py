"""A kernel with local arrays (they live in the per-sample scratch) through the CPU sampler path: the batch
drivers, the initial-draw evaluator and the fused chain kernel call the scratch-taking primal and gradient, so
no likelihood call allocates: numba's runtime, which every array allocation in compiled code goes through,
counts as many allocations for many calls as for few (what it does count is the wrapping of the arguments
passed in from Python, once per call into compiled code)."""
import os

import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

import problems
from nestgrad.likelihoods import Likelihood
from nestgrad.sampler import geometry
from nestgrad.sampler.hmc import STAT_NGRAD, STAT_NLIKE
from nestgrad.sampler.hmc_cpu import make_batch_evaluator, make_chain_kernel
from nestgrad.sampler.hmc_runtime import ChainWorkspace
from nestgrad.sampler.rng import seed_chain_states

KERNEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "local_array_gauss.py") + ":shifted_gauss"


def _allocations(call):
    _nrt_python.memsys_enable_stats()  # off unless NUMBA_NRT_STATS=1 was set at start-up
    call()  # warm-up: compiles
    before = rtsys.get_allocation_stats().alloc
    call()
    return rtsys.get_allocation_stats().alloc - before


@pytest.fixture(scope="module")
def likelihood():
    p = problems.gaussian(3)
    return p, Likelihood(KERNEL, p.params, {"mu": np.full(3, 0.5), "sigma": 0.1}, backend="cpu", dtype="float64")


def test_batch_calls_of_a_local_array_kernel_do_not_allocate(likelihood):
    _, L = likelihood
    assert L.scratch_size >= 3
    thetas = np.random.default_rng(0).random((64, 3))
    out, grad = np.empty(64), np.empty((64, 3))
    for n in (8, 64):
        assert _allocations(lambda: L.logl(thetas[:n], out=out[:n])) == _allocations(
            lambda: L.logl(thetas[:1], out=out[:1]))
        assert _allocations(lambda: L.logl_and_grad(thetas[:n], out=out[:n], grad_out=grad[:n])) == _allocations(
            lambda: L.logl_and_grad(thetas[:1], out=out[:1], grad_out=grad[:1]))


def test_chain_kernel_and_evaluator_of_a_local_array_kernel_do_not_allocate(likelihood):
    p, L = likelihood
    k = L.cpu_kernels()
    nchains, d = 4, 3
    gen = np.random.default_rng(1)
    u0 = 0.5 + 0.02 * gen.standard_normal((nchains, d))
    logl0 = L.logl(p.prior.transform(u0)).copy()
    geo = geometry.build(0.5 + 0.05 * gen.standard_normal((40, d)), np.zeros(40, np.int64), True)
    ws = ChainWorkspace(nchains, d, np.float64, k.scratch_size)
    states = seed_chain_states(gen, nchains)
    advance = make_chain_kernel(k.value, k.value_and_grad)
    counted = {}
    for steps in (1, 40):
        ctrl = np.array([steps, 5, 2, 1, 1, 1, 1], np.int64)  # steps, refresh 5, 2 jumps, dense, 1 slice of each kind
        counted[steps] = _allocations(lambda: advance(u0, logl0, float(logl0.min()) - 1.0, np.full(nchains, 0.3),
                                                      ctrl, states, k.data, p.prior.codes, p.prior.args,
                                                      *geo.kernel_arrays(),
                                                      *ws.arrays()))
    # the long chains evaluated the likelihood at least once per step, and its gradient at reflections
    assert np.all(ws.stats[:, STAT_NLIKE] >= 40) and ws.stats[:, STAT_NGRAD].sum() > 0
    assert counted[40] == counted[1]
    evaluate = make_batch_evaluator(k.value, k.value_and_grad)
    thetas, out = p.prior.transform(gen.random((16, d))), np.empty(16)
    assert _allocations(lambda: evaluate(thetas, k.data, np.empty((16, d)), ws.scratch[0], out)) == _allocations(
        lambda: evaluate(thetas[:1], k.data, np.empty((1, d)), ws.scratch[0], out[:1]))
    np.testing.assert_allclose(out, L.logl(thetas), rtol=1e-12)
