"""A config with `backend: gpu` run end to end by `nestgrad run` under numba's CUDA simulator (a subprocess:
NUMBA_ENABLE_CUDASIM must be set before numba is imported): batched initial draws, chains and likelihood as CUDA
kernels, the run folder, `--resume` of the finished run, the same dead points as the CPU backend, and
`mpiexec -n 2 nestgrad run` of the same config (each rank runs its block of the chains as CUDA threads on its own
device, `likelihoods.backends.placement`) with the single process's dead points bit for bit."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nestgrad.likelihoods.backends import placement

CONFIG = """name: gpu_sim
likelihood:
  builtin: gaussian4d
  options: {n: 5}
params:
  mu1: {}
  mu2: {}
  sigma1: {}
  sigma2: {}
sampler:
  nlive: 20
  dlogz: 1.0
  seed: 1
  hmc: {n_steps: 8}
backend: gpu
dtype: float64
output:
  dir: run
  plots: []
"""


@pytest.fixture(scope="module")
def runs(app_env, tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpu_sim")
    (folder / "gpu_sim.yaml").write_text(CONFIG)
    sim = dict(app_env, NUMBA_ENABLE_CUDASIM="1")

    def nestgrad(env, *args):
        proc = subprocess.run([sys.executable, "-m", "nestgrad", "run", "gpu_sim.yaml", "--no-check", *args],
                              cwd=folder, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
        return proc

    return {"gpu": nestgrad(sim, "--out", "gpu"), "resume": nestgrad(sim, "--out", "gpu", "--resume"),
            "cpu": nestgrad(app_env, "--out", "cpu", "--backend", "cpu"), "folder": folder, "sim": sim}


def test_gpu_config_runs_end_to_end_under_the_simulator(runs):
    results = json.loads((runs["folder"] / "gpu" / "results.json").read_text())
    assert results["settings"]["backend"] == "gpu"
    # nlive 20 and 8 steps keep the simulator fast; at these settings the CPU backend's pulls over seeds 0-59 have
    # rms 1.18 and reach 3.04 (this seed), so the bound is 4 error bars.
    assert abs(results["logz"] - results["reference_logz"]) < 4 * results["logz_err"]
    assert "GPU kernel" in runs["gpu"].stdout  # the summary says where the chains ran
    # The simulator's uint64 arithmetic of the chains' generator wraps as intended; the user is not warned of it.
    assert "overflow" not in runs["gpu"].stdout + runs["gpu"].stderr


def test_resume_of_the_finished_gpu_run_prints_the_stored_summary(runs):
    first = json.loads((runs["folder"] / "gpu" / "results.json").read_text())
    assert f"{first['logz']:.3f}" in runs["resume"].stdout


def test_gpu_backend_gives_the_cpu_backends_dead_points(runs):
    """Same seed, same path: the dead points agree to rounding (the CPU kernels are compiled with fast-math
    reassociation, the simulator runs the same code in plain Python). Without the radial slice moves the two
    stayed within 1e-13 relative over the whole run; with them the difference grows from 1e-14 in the first
    100 dead points to 1e-9 and one 1.5e-7 in the last (a line through the centre and a point near it turns a
    last-bit difference of the point into a larger one of the line's direction, which later chains inherit).
    A different path would differ by O(1); that the kernels agree bit for bit is tested chain by chain
    (tests/sampler/gpu_sim_check.py)."""
    gpu, cpu = (np.loadtxt(runs["folder"] / b / "gpu_sim_dead-birth.txt") for b in ("gpu", "cpu"))
    assert gpu.shape == cpu.shape and gpu.shape[0] > 100
    assert np.array_equal(np.isfinite(gpu), np.isfinite(cpu))
    finite = np.isfinite(cpu)
    difference = np.abs(np.where(finite, gpu, 0.0) - np.where(finite, cpu, 0.0))
    relative = (difference / np.maximum(1.0, np.abs(np.where(finite, cpu, 0.0)))).max(axis=1)  # per dead point
    assert relative[:100].max() < 1e-12 and relative.max() < 1e-5, relative


MPIEXEC = Path(sys.executable).parent / "mpiexec"
LAUNCHER = str(MPIEXEC) if MPIEXEC.exists() else shutil.which("mpiexec")


def test_two_ranks_on_the_gpu_backend_give_the_single_process_dead_points(runs):
    has_mpi4py = subprocess.run([sys.executable, "-c", "from mpi4py import MPI"], capture_output=True).returncode == 0
    if LAUNCHER is None or not has_mpi4py:
        pytest.skip("no MPI installed: mpiexec or mpi4py missing (pip install -e '.[test]' brings both)")
    folder = runs["folder"]
    env = dict(runs["sim"], NUMBA_NUM_THREADS="1")
    proc = subprocess.run([LAUNCHER, "-n", "2", sys.executable, "-m", "nestgrad", "run", "gpu_sim.yaml", "--no-check",
                           "--quiet", "--out", "ranks"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    single, ranks = (json.loads((folder / name / "results.json").read_text()) for name in ("gpu", "ranks"))
    assert single["settings"]["backend"] == ranks["settings"]["backend"] == "gpu"
    assert ranks["mpi"]["ranks"] == 2 and all(chains > 0 for chains in ranks["mpi"]["chains"])
    for table in ("gpu_sim_dead-birth.txt", "gpu_sim.txt"):
        assert (folder / "ranks" / table).read_bytes() == (folder / "gpu" / table).read_bytes(), table


def test_each_rank_takes_the_device_of_its_node_local_rank(monkeypatch):
    for name in placement.LOCAL_RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert placement.device_index(4) == 0  # no launcher: the first device
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5")
    assert placement.device_index(4) == 1 and placement.device_index(1) == 0
    monkeypatch.delenv("OMPI_COMM_WORLD_LOCAL_RANK")
    monkeypatch.setenv("SLURM_LOCALID", "2")
    assert placement.device_index(8) == 2


@pytest.mark.device
def test_gpu_config_runs_end_to_end_on_a_device(app_env, cuda_device, tmp_path):
    """The same config on a real GPU: float32 and float64 likelihoods and the default (no dtype: float32 with
    float64 sums), the evidence within 3 sigma of the truth."""
    env = {k: v for k, v in app_env.items() if k != "NUMBA_ENABLE_CUDASIM"}
    for dtype in ("float64", "float32", "default"):
        line = "" if dtype == "default" else f"dtype: {dtype}\n"
        (tmp_path / f"{dtype}.yaml").write_text(CONFIG.replace("dtype: float64\n", line)
                                                .replace("nlive: 20", "nlive: 200"))
        proc = subprocess.run([sys.executable, "-m", "nestgrad", "run", f"{dtype}.yaml", "--no-check", "--out", dtype],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
        results = json.loads((tmp_path / dtype / "results.json").read_text())
        assert results["settings"]["backend"] == "gpu" and "GPU kernel" in proc.stdout
        assert abs(results["logz"] - results["reference_logz"]) < 3 * results["logz_err"]
        if dtype == "default":
            assert (results["settings"]["dtype"], results["settings"]["sum_dtype"]) == ("float32", "float64")
