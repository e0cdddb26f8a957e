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
