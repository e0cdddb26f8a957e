"""After warm-up a batched call allocates nothing per sample (tracemalloc sees numpy's allocations)."""

import tracemalloc

import numpy as np
import pytest

from likelihood_helpers import prior_draws
from nestgrad.likelihoods import builtin


def _growth_and_peak(call, repeats=20):
    call()  # warm-up: compile, allocate the per-batch-size buffers
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for _ in range(repeats):
            call()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (after - before) / repeats, peak - before


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cpu_calls_do_not_allocate_per_sample(dtype):
    b = builtin.get("gaussian4d", n=20)
    L = b.likelihood(backend="cpu", dtype=dtype)
    thetas = prior_draws(b, 4096, np.random.default_rng(0)).astype(dtype)
    per_sample = 4096 * 8  # what one array over the batch would cost
    for call in (lambda: L.logl(thetas), lambda: L.logl_and_grad(thetas), lambda: L.grad(thetas)):
        growth, peak = _growth_and_peak(call)
        assert growth < 64, f"memory grows by {growth:.0f} bytes per call"
        assert peak < per_sample / 4, f"peak {peak} bytes during a call: something per sample is allocated"


def test_float64_input_to_a_float32_likelihood_is_staged_once():
    b = builtin.get("rosenbrock")
    L = b.likelihood(backend="cpu", dtype="float32")
    thetas = prior_draws(b, 4096, np.random.default_rng(0))  # float64: copied into a cached float32 buffer
    growth, peak = _growth_and_peak(lambda: L.logl_and_grad(thetas))
    assert growth < 64 and peak < 4096 * 8 / 4
