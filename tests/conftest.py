"""Fixtures shared by every test folder.

``cuda_device``: skips the test unless a real CUDA device is usable here (CI has none; a machine with a GPU runs
these with ``pytest -m device``). Whether one is usable is asked in a subprocess once per worker, so that the test
process itself never initialises CUDA (and a simulator test's subprocess is not affected by it).
"""
import functools
import os
import subprocess
import sys

import pytest

_PROBE = ("import os; os.environ.pop('NUMBA_ENABLE_CUDASIM', None)\n"
          "from numba import cuda\nprint('usable' if cuda.is_available() else 'absent')")


@functools.lru_cache(maxsize=1)
def cuda_device_usable() -> bool:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip().endswith("usable")


@pytest.fixture(scope="session")
def cuda_device():
    if not cuda_device_usable():
        pytest.skip("no CUDA device is usable here (these run on a GPU machine: pytest -m device)")


# The modules that take longest (CPU seconds of a clean-checkout CI run on the 2-core machine, 2026-12-02), longest
# first. pytest-xdist's ``--dist loadscope`` hands whole modules to the workers in collection order, so a long
# module collected late ran alone at the end (two to three minutes of the suite's 13); collected first, the short
# modules fill in behind them and the workers finish together. Order only: every test still runs.
LONGEST_FIRST = (
    "ad/test_corpus.py", "ad/test_cuda_ptx.py", "sampler/test_mpi.py", "app/test_example_runs.py",
    "ad/test_local_arrays.py", "likelihoods/test_backends.py", "app/test_app_cli.py", "sampler/test_problems.py",
    "app/test_bench_gpu.py", "sampler/test_kernel_cache.py", "ad/test_fuzz_jax.py", "sampler/test_mixing.py",
    "likelihoods/test_gpu.py", "app/test_app_readme.py", "sampler/test_peer_problems.py",
    "ad/test_reproducer_classes.py", "app/test_gpu_config_sim.py", "sampler/test_hmc_gpu.py",
)


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def key(item):
        path = item.nodeid.split("::", 1)[0]
        return rank.get(path.split("tests/", 1)[-1], len(LONGEST_FIRST))

    items.sort(key=key)  # stable: each module's tests keep their order, the other modules theirs
