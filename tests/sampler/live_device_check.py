"""The live set kept on the GPU (sampler/live_device.py) against the same GPU runs with the live set on the host,
under the CUDA simulator (or with ``--device`` on a real GPU). Prints one JSON line; run by test_live_device.py in
a subprocess (NUMBA_ENABLE_CUDASIM must be set before numba is imported).

Residency moves only where rows are stored; the host's arithmetic reads the same float64 values, so every run
must give the non-resident run's dead points bit for bit. ``live_moments.RUNNING_FROM`` is lowered so that these
small runs take the large-run path (running moments, the bounding radius measured on the device), where the
survivors' rows stay on the device between the refreshes."""

import json
import math
import os
import sys
import tempfile

ON_DEVICE = "--device" in sys.argv
assert ON_DEVICE or os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run with NUMBA_ENABLE_CUDASIM=1 or --device"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

import problems  # noqa: E402
from gpu_sim_check import GpuProblem  # noqa: E402
from nestgrad.sampler import NestedSampler, decorrelation, live_device, live_moments  # noqa: E402
from nestgrad.sampler.priors import Prior, Uniform  # noqa: E402

live_moments.RUNNING_FROM = 20


# Kernels the simulator runs as device functions: self-contained (it retargets these two functions only).
@njit
def _two_modes_value(theta, data, scratch):
    a, b = 0.0, 0.0
    for i in range(theta.shape[0]):
        a += (theta[i] - 0.25) ** 2
        b += (theta[i] - 0.75) ** 2
    a, b = -0.5 * a / 0.003, -0.5 * b / 0.003
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


@njit
def _two_modes_value_and_grad(theta, data, grad_out, scratch):
    a, b = 0.0, 0.0
    for i in range(theta.shape[0]):
        a += (theta[i] - 0.25) ** 2
        b += (theta[i] - 0.75) ** 2
    a, b = -0.5 * a / 0.003, -0.5 * b / 0.003
    top = max(a, b)
    wa, wb = math.exp(a - top), math.exp(b - top)
    for i in range(theta.shape[0]):
        grad_out[i] = -(wa * (theta[i] - 0.25) + wb * (theta[i] - 0.75)) / (0.003 * (wa + wb))
    return top + math.log(wa + wb)


@njit
def _cake_value(theta, data, scratch):
    r = 0.0
    for i in range(theta.shape[0]):
        r = max(r, abs(theta[i] - 0.5))
    return float(max(int(math.log(2.0 * r) / math.log(0.5)) - 2, 0))  # a floor, then a tier per halving


@njit
def _cake_value_and_grad(theta, data, grad_out, scratch):
    r = 0.0
    for i in range(theta.shape[0]):
        r = max(r, abs(theta[i] - 0.5))
        grad_out[i] = 0.0
    return float(max(int(math.log(2.0 * r) / math.log(0.5)) - 2, 0))  # a floor, then a tier per halving


def two_modes():
    return GpuProblem("two_modes", ["x0", "x1"], _two_modes_value, _two_modes_value_and_grad, (np.zeros(1),),
                      Prior({"x0": Uniform(0.0, 1.0), "x1": Uniform(0.0, 1.0)}))


def plateaus():
    """A floor over all but the central 1/16 of the square, then nested squares, each a plateau (the wedding cake's
    shape): the live set widens beyond the store's first capacity before the floor dies."""
    return GpuProblem("plateaus", ["x0", "x1"], _cake_value, _cake_value_and_grad, (np.zeros(1),),
                      Prior({"x0": Uniform(0.0, 1.0), "x1": Uniform(0.0, 1.0)}))


def as_gpu(problem):
    return GpuProblem(problem.name, problem.params, *problem.cpu_kernels()[:3], problem.prior, problem.logz)


# The chains from the first iteration (no prior draws, sampler.prior_draws), unless a run asks for them.
HMC = {"n_steps": 8, "prior_draws": 0.0}


def run(problem, resident, nlive=30, seed=3, max_iter=18, prior_draws=0.0, **options):
    """(dead points as one array, per-iteration rows copied to the host, live points) of one GPU run."""
    live_device.ENABLED = resident
    copied = []

    def record(niter, state, info):
        store = getattr(state.u, "store", None)
        copied.append((int(store.rows_to_host) if store is not None else -1, int(info.nlive_before),
                       int(info.dead_logl.size), int(state.iteration) - 1, int(info.nclusters),
                       int(store.capacity) if store is not None else -1))

    sampler = NestedSampler(problem, problem.prior, nlive=nlive, delete_fraction=0.1, seed=seed,
                            hmc={**HMC, "prior_draws": prior_draws}, backend="gpu")
    res = sampler.run(dlogz=0.5, progress=False, callback=record, max_iter=max_iter, **options)
    d = res.dead
    return np.column_stack([d.u, d.theta, d.logl, d.logl_birth]), copied, res


def identical(problem, measured_chains=decorrelation.MAX_CHAINS, **options):
    """The resident and the host live set's runs; ``measured_chains``: how many chains' start-end correlation is
    measured at most (below the chain count: the resident starts are read as a strided subset)."""
    decorrelation.MAX_CHAINS, default = measured_chains, decorrelation.MAX_CHAINS
    try:
        (a, copied, res), (b, _, _) = run(problem, True, **options), run(problem, False, **options)
    finally:
        decorrelation.MAX_CHAINS = default
    return {"same": bool(a.shape == b.shape and np.array_equal(a, b, equal_nan=True)), "points": int(a.shape[0]),
            "max_relative": _relative(a, b),
            "logz": res.logz, "logz_err": res.logz_err, "truth": problem.logz, "copied": copied}


def _relative(a, b):
    """Largest difference between the two runs' dead points relative to max(1, |value|) (None: not comparable)."""
    if a.shape != b.shape or not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return None
    finite = np.isfinite(a)
    a, b = np.where(finite, a, 0.0), np.where(finite, b, 0.0)
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))))


def resumed(problem):
    """A resident run stopped after 6 iterations and resumed from its checkpoint, against one run through."""
    whole, _, _ = run(problem, True)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "checkpoint.npz")
        live_device.ENABLED = True
        sampler = NestedSampler(problem, problem.prior, nlive=30, delete_fraction=0.1, seed=3, hmc=HMC,
                                backend="gpu")
        sampler.run(dlogz=0.5, progress=False, checkpoint=path, max_iter=6)
        again = NestedSampler(problem, problem.prior, nlive=30, delete_fraction=0.1, seed=3, hmc=HMC,
                              backend="gpu")
        d = again.run(dlogz=0.5, progress=False, checkpoint=path, resume=True, max_iter=18).dead
        parts = np.column_stack([d.u, d.theta, d.logl, d.logl_birth])
    return {"same": bool(parts.shape == whole.shape and np.array_equal(parts, whole, equal_nan=True))}


if __name__ == "__main__":
    print(json.dumps({"gaussian": identical(as_gpu(problems.gaussian(2))),
                      "two_modes": identical(two_modes(), measured_chains=2),
                      "plateaus": identical(plateaus()),
                      "prior_draws": identical(as_gpu(problems.gaussian(2)), prior_draws=0.01),
                      "resumed": resumed(as_gpu(problems.gaussian(2)))}))
