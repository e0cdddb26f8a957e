"""Same seed → bit-identical runs in different processes, whatever numba's on-disk cache holds.

The first process below compiles the differentiator's and the likelihood's generated modules (cache cold), the
second loads them from numba's cache (cache warm). A fused HMC kernel that linked cached code, or was itself
loaded from the cache, gave different last bits in the two (see sampler/stable_jit.py); this caught it.
"""
import json
import os
import subprocess
import sys

import numpy as np

import nestgrad.sampler.hmc as hmc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """
import json
from nestgrad.likelihoods import builtin
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.priors import Prior

b = builtin.get("gaussian4d")
s = NestedSampler(b.likelihood(backend="cpu"), Prior.from_spec(b.priors), nlive=2000, seed=11)
r = s.run(dlogz=0.01, progress=False, max_iter=20)
print(json.dumps({"logl": r.dead.logl.tolist(), "u": r.dead.u.tolist()}))
"""


def _run(cache_dir):
    env = dict(os.environ, NESTGRAD_CACHE_DIR=str(cache_dir), NUMBA_CACHE_DIR=str(cache_dir / "numba"),
               PYTHONPATH=ROOT)
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cold_and_warm_cache_processes_give_identical_runs(tmp_path):
    cold = _run(tmp_path)
    assert any(name.endswith(".nbi") for _, _, files in os.walk(tmp_path / "numba") for name in files)
    warm = _run(tmp_path)
    np.testing.assert_array_equal(cold["logl"], warm["logl"])
    np.testing.assert_array_equal(cold["u"], warm["u"])


def test_the_chain_kernel_is_compiled_against_fresh_copies_of_the_likelihood():
    from numba import njit

    @njit(cache=False)
    def value(theta, data):
        return -0.5 * (theta[0] - 0.5) ** 2

    @njit
    def value_and_grad(theta, data, grad, scratch):
        grad[0] = -(theta[0] - 0.5)
        return value(theta, data)

    advance, evaluate = hmc._kernels(value, value_and_grad)
    assert hmc._kernels(value, value_and_grad) == (advance, evaluate)  # compiled once per likelihood
    called = evaluate.py_func.__globals__["value"]
    assert called is not value and called.py_func.__code__ is value.py_func.__code__
