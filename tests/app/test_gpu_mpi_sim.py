"""`mpiexec -n 2 nestgrad run` of a `backend: gpu` config under numba's CUDA simulator: each rank runs its block of
the chains as CUDA threads on its own device (`likelihoods.backends.placement`), and the run folder's dead points
are the single process's bit for bit. Skipped, saying why, where no MPI is installed."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nestgrad.likelihoods.backends import placement
from test_gpu_config_sim import CONFIG

MPIEXEC = Path(sys.executable).parent / "mpiexec"
LAUNCHER = str(MPIEXEC) if MPIEXEC.exists() else shutil.which("mpiexec")
HAS_MPI4PY = subprocess.run([sys.executable, "-c", "from mpi4py import MPI"], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def runs(app_env, tmp_path_factory):
    if LAUNCHER is None or not HAS_MPI4PY:
        pytest.skip("no MPI installed: mpiexec or mpi4py missing (pip install -e '.[test]' brings both)")
    folder = tmp_path_factory.mktemp("gpu_mpi_sim")
    (folder / "gpu_sim.yaml").write_text(CONFIG)
    env = dict(app_env, NUMBA_ENABLE_CUDASIM="1", NUMBA_NUM_THREADS="1")
    command = [sys.executable, "-m", "nestgrad", "run", "gpu_sim.yaml", "--no-check", "--quiet", "--out"]
    for launch, out in (([], "single"), ([LAUNCHER, "-n", "2"], "ranks")):
        proc = subprocess.run(launch + command + [out], cwd=folder, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return folder


def test_two_ranks_on_the_gpu_backend_give_the_single_process_dead_points(runs):
    single, ranks = (json.loads((runs / name / "results.json").read_text()) for name in ("single", "ranks"))
    assert single["settings"]["backend"] == ranks["settings"]["backend"] == "gpu"
    assert ranks["mpi"]["ranks"] == 2 and all(chains > 0 for chains in ranks["mpi"]["chains"])
    for table in ("gpu_sim_dead-birth.txt", "gpu_sim.txt"):
        assert (runs / "ranks" / table).read_bytes() == (runs / "single" / table).read_bytes(), table


def test_each_rank_takes_the_device_of_its_node_local_rank(monkeypatch):
    for name in placement.LOCAL_RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert placement.device_index(4) == 0  # no launcher: the first device
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "5")
    assert placement.device_index(4) == 1 and placement.device_index(1) == 0
    monkeypatch.delenv("OMPI_COMM_WORLD_LOCAL_RANK")
    monkeypatch.setenv("SLURM_LOCALID", "2")
    assert placement.device_index(8) == 2
