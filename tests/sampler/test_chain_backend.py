"""Where the chains run (``sampler.chain_backend``) and the GPU memory check (``sampler.hmc_gpu``), without a GPU:
a fake ``numba.cuda`` reports the device's free memory."""

import warnings

import numpy as np
import pytest

from nestgrad.likelihoods import backends
from nestgrad.likelihoods.backends import placement
from nestgrad.sampler import chain_backend, hmc_gpu


class FakeCuda:
    def __init__(self, free):
        self.free = free

    def current_context(self):
        return self

    def get_memory_info(self):
        return self.free, self.free


def test_memory_check_refuses_a_device_too_small_and_says_what_to_lower():
    need = hmc_gpu.chain_memory_bytes(50_000, 30, np.float32, 0)
    hmc_gpu.check_device_memory(FakeCuda(need), 50_000, 30, np.float32, 0)  # exactly enough: no error
    with pytest.raises(hmc_gpu.DeviceMemoryError, match="lower nlive or delete_fraction") as caught:
        hmc_gpu.check_device_memory(FakeCuda(need - 1), 50_000, 30, np.float32, 0)
    assert "50000 chains of 30 parameters, float32" in str(caught.value)


def test_memory_estimate_grows_with_chains_parameters_precision_and_scratch():
    base = hmc_gpu.chain_memory_bytes(1000, 10, np.float32, 0)
    assert hmc_gpu.chain_memory_bytes(2000, 10, np.float32, 0) == 2 * base
    assert hmc_gpu.chain_memory_bytes(1000, 20, np.float32, 0) > base
    assert hmc_gpu.chain_memory_bytes(1000, 10, np.float64, 0) > base
    assert hmc_gpu.chain_memory_bytes(1000, 10, np.float32, 64) > base


class GpuCapable:
    dtype, scratch_size = np.dtype(np.float32), 0

    def cuda_kernels(self):
        raise AssertionError("not needed to choose")


@pytest.mark.parametrize("free, expected", [(1 << 40, "gpu"), (1 << 10, "cpu")])
def test_auto_uses_the_gpu_only_when_the_chains_fit(monkeypatch, free, expected):
    real_check = hmc_gpu.check_device_memory
    monkeypatch.setattr(backends, "resolve", lambda name: "gpu")
    monkeypatch.setattr(placement, "select_device", lambda cuda: 0)
    monkeypatch.setattr(hmc_gpu, "check_device_memory", lambda cuda, *args: real_check(FakeCuda(free), *args))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert chain_backend.choose_backend("auto", GpuCapable(), 250, 4) == expected
    assert any("sampling on the CPU" in str(w.message) for w in caught) == (expected == "cpu")
    assert chain_backend.choose_backend("cpu", GpuCapable(), 250, 4) == "cpu"
