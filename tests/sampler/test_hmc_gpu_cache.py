"""The CUDA chain kernel and batch drivers go through numba-cuda's disk cache (sampler/hmc_gpu_cache.py,
likelihoods/backends/cuda_cache.py).

Without a device (CI) this checks what decides whether a later process finds the cached kernel: it is defined in
a generated file under the cache folder with a CUDACache, and two processes give the same file and the same
numba-cuda index key, while another likelihood gets another file; that file's kernel compiles to PTX for sm_90;
the file's name changes with the sampler code compiled into it; a failed save or load of a cache entry is a
warning, not an error. On a device (``pytest -m device``) a second process loads the kernel instead of compiling
it and samples the same dead points.
"""

import json
import os
import subprocess
import sys
import types
import warnings

import pytest

from nestgrad.likelihoods.backends import cuda_cache
from nestgrad.sampler import hmc_gpu_cache

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _check(cache_dir, *args):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "NUMBA_DISABLE_JIT")}
    env.update(NESTGRAD_CACHE_DIR=str(cache_dir), NUMBA_CACHE_DIR=str(cache_dir / "numba"), PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, os.path.join(HERE, "gpu_cache_check.py"), *args], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_later_process_looks_up_the_same_cache_entry_and_the_kernel_compiles_to_ptx(tmp_path):
    first = _check(tmp_path, "keys", "ptx")
    second = _check(tmp_path, "keys")
    assert first["gaussian4d"]["ptx"]
    for name in ("gaussian4d", "gaussian_shells"):
        a, b = first[name], second[name]
        assert a["cache"] == "CUDACache" and a["driver_cache"] == "CUDACache"
        assert os.path.dirname(a["file"]) == str(tmp_path) and os.path.isfile(a["file"])
        assert os.path.basename(a["file"]).startswith("hmc_gpu_kernel_")
        assert (a["file"], a["driver_file"], a["index_key"]) == (b["file"], b["driver_file"], b["index_key"])
    assert first["gaussian4d"]["file"] != first["gaussian_shells"]["file"]
    assert first["gaussian4d"]["driver_file"] != first["gaussian_shells"]["driver_file"]


def test_the_kernel_file_changes_with_the_sampler_code_compiled_into_it(tmp_path, monkeypatch):
    stand_in = tmp_path / "templates.py"
    stand_in.write_text("STEP = 1\n")
    module = types.ModuleType("templates")
    module.__file__ = str(stand_in)
    monkeypatch.setattr(hmc_gpu_cache, "_SAMPLER_MODULES", (module,))
    before = hmc_gpu_cache.sampler_digest()
    assert hmc_gpu_cache.sampler_digest() == before
    stand_in.write_text("STEP = 2\n")
    assert hmc_gpu_cache.sampler_digest() != before


def test_functions_outside_a_generated_module_get_no_kernel_file():
    def value(theta, data, scratch):
        return 0.0

    assert cuda_cache.module_of(value) is None
    assert hmc_gpu_cache.module_text(value, value) is None


class _BrokenCache:
    def save_overload(self, sig, data):
        raise TypeError("cannot pickle this")

    def load_overload(self, sig, target_context):
        raise EOFError("truncated index")


def test_a_cache_entry_that_cannot_be_saved_or_loaded_is_a_warning_and_a_compile():
    dispatcher = types.SimpleNamespace(_cache=_BrokenCache(), py_func=lambda: None)
    cuda_cache.guard(dispatcher)
    with pytest.warns(cuda_cache.CudaCacheWarning, match="not saved.*TypeError: cannot pickle"):
        dispatcher._cache.save_overload("sig", object())
    with pytest.warns(cuda_cache.CudaCacheWarning, match="not loaded.*EOFError"):
        assert dispatcher._cache.load_overload("sig", None) is None
    cuda_cache.guard(dispatcher)  # guarding twice does not wrap twice: one warning per failure
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dispatcher._cache.save_overload("sig", object())
    assert len(caught) == 1


def test_an_unwritable_cache_folder_means_kernels_from_memory(monkeypatch):
    from nestgrad.likelihoods import codegen

    def refuse(stem, text):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(codegen, "load_file_module", refuse)
    with pytest.warns(cuda_cache.CudaCacheWarning, match="without a disk cache.*read-only"):
        assert cuda_cache.file_module("gpu_driver", "x = 1\n") is None


def test_origin_reads_numba_cudas_hit_and_miss_counts():
    from collections import Counter

    def dispatcher(hits, misses):
        stats = types.SimpleNamespace(cache_hits=Counter(hits), cache_misses=Counter(misses))
        return types.SimpleNamespace(stats=stats)

    assert cuda_cache.origin(dispatcher({"sig": 1}, {})) == "cache"
    assert cuda_cache.origin(dispatcher({}, {"sig": 1})) == "compiled"
    assert cuda_cache.origin(types.SimpleNamespace()) is None  # the simulator keeps no statistics


@pytest.mark.device
def test_on_a_device_a_second_process_loads_the_chain_kernel_and_samples_the_same_points(tmp_path, cuda_device):
    cold = _check(tmp_path, "run")
    warm = _check(tmp_path, "run")
    assert cold["kernel"] == "gpu compiled" and warm["kernel"] == "gpu cache"
    assert warm["logl"] == cold["logl"]
    assert warm["compile_s"] < cold["compile_s"]
