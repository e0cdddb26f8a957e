"""The CUDA chain kernel (sampler/hmc_gpu.py) under the CUDA simulator, in a subprocess because
NUMBA_ENABLE_CUDASIM must be set before numba is first imported."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="module")
def sim_report():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, os.path.join(HERE, "gpu_sim_check.py")], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_gpu_kernel_reproduces_the_cpu_kernel_exactly(sim_report):
    k = sim_report["kernels"]
    assert k["reflections"] > 0  # the comparison exercised the reflection branch
    assert k["jumps_accepted"] > 0  # and the independence jumps
    assert k["max_du"] == 0.0 and k["max_dlogl"] == 0.0
    assert k["stats_equal"] and k["rng_equal"] and k["all_inside"]


def test_gpu_backend_nested_sampling_run(sim_report):
    r = sim_report["run"]
    assert r["backend"] == "gpu" and r["birth_ok"]
    assert abs(r["logz"] - r["truth"]) <= 3 * r["logz_err"]


def test_gpu_path_runs_kernels_with_local_arrays(sim_report):
    """Local arrays live in the per-sample scratch on the device too: the primal, the gradient and the chain
    kernel take each sample's scratch row instead of allocating (which a device function cannot)."""
    r = sim_report["local_arrays"]
    assert r["scratch_size"] >= 2
    assert r["max_dvalue"] < 1e-12 and r["max_dgrad"] < 1e-10
    c = r["chains"]
    assert c["max_du"] == 0.0 and c["max_dlogl"] == 0.0 and c["stats_equal"] and c["rng_equal"]
    run = r["run"]
    assert run["backend"] == "gpu" and abs(run["logz"] - run["truth"]) <= 3 * run["logz_err"]


def test_generated_likelihoods_get_the_cached_kernel_file_and_in_memory_ones_the_same_text(sim_report):
    """A likelihood from a kernel file runs the chain kernel defined in a generated file (numba-cuda's disk cache
    keys it by that file); device functions defined in memory run the same kernel text compiled in memory."""
    assert sim_report["local_arrays"]["kernel_file"].startswith("hmc_gpu_kernel_")
    assert sim_report["kernels"]["kernel_file"] == "<nestgrad gpu chain kernel>"


def test_device_memory_estimate_covers_the_allocations_and_a_small_device_is_refused(sim_report):
    m = sim_report["memory"]
    assert m["allocated"] <= m["estimate"] <= 2 * m["allocated"]
    assert m["refusal"] is not None and m["refusal"].startswith("backend gpu: the GPU has 0.00 GiB free")
    assert "lower nlive or delete_fraction" in m["refusal"]


@pytest.fixture(scope="module")
def device_report(cuda_device):
    """The same checks on a real GPU (``--device``): skipped where none is usable."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = ROOT
    out = subprocess.run([sys.executable, os.path.join(HERE, "gpu_sim_check.py"), "--device"], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.device
def test_on_a_device_the_chain_kernel_agrees_with_the_cpu_kernel(device_report):
    """On hardware the last bits differ (fused multiply-adds, the device's exp and log), so the chains agree to
    rounding, not exactly; every end point stays inside the contour and the branches ran."""
    k = device_report["kernels"]
    assert k["reflections"] > 0 and k["jumps_accepted"] > 0 and k["all_inside"]
    assert k["max_du"] < 1e-9 and k["max_dlogl"] < 1e-7


@pytest.mark.device
def test_on_a_device_nested_sampling_finds_the_evidence(device_report):
    for r in (device_report["run"], device_report["local_arrays"]["run"]):
        assert r["backend"] == "gpu" and abs(r["logz"] - r["truth"]) <= 3 * r["logz_err"]
    la = device_report["local_arrays"]
    assert la["max_dvalue"] < 1e-12 and la["max_dgrad"] < 1e-10


@pytest.mark.device
def test_on_a_device_the_memory_estimate_holds(device_report):
    m = device_report["memory"]
    assert m["allocated"] <= m["estimate"] <= 2 * m["allocated"]
    assert m["refusal"] is not None and "lower nlive or delete_fraction" in m["refusal"]
