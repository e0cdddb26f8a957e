"""The fused HMC kernel is compiled once per likelihood and machine: a second process loads it from numba's
on-disk cache (generated module in $NESTGRAD_CACHE_DIR) and gives bit-identical results."""

import glob
import json
import os
import subprocess
import sys

import numpy as np

import sampler.hmc as hmc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """
import json
import numpy as np
from likelihoods import builtin
from sampler import NestedSampler
from sampler.priors import Prior

b = builtin.get("gaussian", ndim=2)
s = NestedSampler(b.likelihood(backend="cpu"), Prior.from_spec(b.priors), nlive=40, seed=11)
r = s.run(dlogz=1.0, progress=False, max_iter=30)
advance = s._build().advance.advance
print(json.dumps({"hits": sum(advance.stats.cache_hits.values()), "misses": sum(advance.stats.cache_misses.values()),
                  "module": advance.py_func.__module__, "logl": r.dead.logl.tolist(), "u": r.dead.u.tolist()}))
"""


def _run(cache_dir):
    env = dict(os.environ, NESTGRAD_CACHE_DIR=str(cache_dir), PYTHONPATH=ROOT)
    env.pop("NUMBA_DISABLE_JIT", None)
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_loads_the_chain_kernel_from_numbas_cache(tmp_path):
    first = _run(tmp_path)
    module = first["module"]
    assert module.startswith("nestgrad_hmc_chain_")
    assert os.path.exists(tmp_path / f"{module}.py")
    index = glob.glob(str(tmp_path / "__pycache__" / f"{module}._advance-*.nbi"))
    assert index, os.listdir(tmp_path / "__pycache__")
    assert first["misses"] >= 1 and first["hits"] == 0
    second = _run(tmp_path)
    assert second["module"] == module
    assert second["hits"] >= 1 and second["misses"] == 0  # loaded, not compiled
    np.testing.assert_array_equal(first["logl"], second["logl"])
    np.testing.assert_array_equal(first["u"], second["u"])


def test_kernel_module_is_keyed_by_the_sampler_sources():
    a = hmc.chain_module_text("nestgrad_cpu_driver_x", "tuple_value", "tuple_value_and_grad")
    b = hmc.chain_module_text("nestgrad_cpu_driver_y", "tuple_value", "tuple_value_and_grad")
    assert a != b and hmc._sources_digest() in a
    compile(a, "<generated>", "exec")  # valid Python


def test_functions_outside_generated_modules_are_compiled_in_memory():
    from numba import njit

    @njit
    def value(theta, data):
        return -0.5 * (theta[0] - 0.5) ** 2

    assert hmc._generated_home(value) is None
    assert hmc._generated_home(lambda t, d: 0.0) is None
