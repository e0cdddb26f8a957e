"""The same run over MPI ranks (sampler/mpi_pool.py, docs/mpi.md): ``mpiexec -n 2``, ``-n 3`` and ``-n 4`` give
the dead points and logZ of the single-process run bit for bit, a run stopped on R ranks resumes on another R to
the same bits, and a failed or killed rank stops the run leaving a checkpoint that resumes to the same bits.

Each run is a subprocess (tests/sampler/mpi_child.py) of the small built-in 4-D Gaussian; the chain kernel comes
from the on-disk cache, so a launch costs a few seconds. The MPI is the ``mpich`` wheel with ``mpi4py``, both in
the ``test`` extra; without them these tests skip, saying so."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nestgrad.sampler import mpi_pool, mpi_rows

CHILD = Path(__file__).with_name("mpi_child.py")
REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 300


def _mpiexec():
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def _no_mpi_reason():
    if _mpiexec() is None:
        return "no mpiexec next to this Python or on PATH (pip install -e '.[test]' installs the mpich wheel)"
    probe = subprocess.run([sys.executable, "-c", "from mpi4py import MPI"], capture_output=True, text=True)
    if probe.returncode:
        return f"mpi4py cannot be imported: {probe.stderr.strip().splitlines()[-1:]}"
    return None


NO_MPI = _no_mpi_reason()
needs_mpi = pytest.mark.skipif(NO_MPI is not None, reason=f"no MPI installed: {NO_MPI}")


def _env():
    env = {k: v for k, v in os.environ.items() if k not in mpi_pool.SIZE_VARIABLES + ("NESTGRAD_MPI",)}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["NUMBA_NUM_THREADS"] = "1"  # R processes on a 2-core machine
    return env


def launch(out, ranks=1, *options, check=True):
    """Run the child alone (ranks=1, no launcher) or under ``mpiexec -n ranks``; returns (process, arrays, info)."""
    command = [sys.executable, str(CHILD), str(out), *map(str, options)]
    if ranks > 1:
        command = [_mpiexec(), "-n", str(ranks)] + command
    process = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=TIMEOUT)
    if check:
        assert process.returncode == 0, process.stderr[-3000:]
        with open(f"{out}.json") as handle:
            return process, dict(np.load(out)), json.load(handle)
    return process, None, None


def assert_same_bits(a, b):
    for key in ("u", "theta", "logl", "birth", "logz"):
        assert a[key].dtype == b[key].dtype and a[key].shape == b[key].shape, key
        assert a[key].tobytes() == b[key].tobytes(), f"{key} differs"


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """The single-process run, no launcher: the reference."""
    out = tmp_path_factory.mktemp("mpi") / "single.npz"
    return launch(out)


# --- without a launcher ----------------------------------------------------------------------------------------

def test_blocks_split_every_row_once():
    for rows in (0, 1, 5, 10, 11, 200):
        for size in (1, 2, 3, 4, 7):
            counts = mpi_rows.blocks(rows, size)
            assert counts.sum() == rows and counts.max() - counts.min() <= (1 if rows else 0)
            assert list(counts) == sorted(counts)  # rank 0, which also does the serial work, never gets more


def test_whole_blocks_give_every_rank_whole_blocks_of_rows():
    for rows in (0, 1, 255, 256, 257, 600, 2000, 5000):
        for size in (1, 2, 3, 7):
            counts = mpi_rows.whole_blocks(rows, size, 256)
            assert counts.sum() == rows and (counts >= 0).all()
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            assert all(s % 256 == 0 for s, c in zip(starts, counts) if c)  # every share starts at a block edge


def test_packed_rows_carry_every_bit_of_every_dtype():
    rng = np.random.default_rng(0)
    signalling_nan = np.array([0x7FF0000000000001, 0xFFF8000000000123], np.uint64).view(np.float64)
    arrays = [rng.random((6, 3)), np.r_[signalling_nan, -0.0, np.inf, 5e-324, 1.0],
              rng.integers(0, 2**63, (6, 2)).astype(np.uint64), rng.random((6, 4)).astype(np.float32),
              np.arange(6, dtype=np.int64)]
    packed = mpi_rows.pack_rows(arrays)
    assert packed.shape == (6, sum(a.nbytes // 6 for a in arrays)) == (6, mpi_rows.packed_width(arrays))
    copies = [np.zeros_like(a) for a in arrays]
    mpi_rows.unpack_rows(packed[2:], [c[2:] for c in copies])  # a block of rows, as rank 0 receives the others'
    for a, c in zip(arrays, copies):
        assert a[2:].tobytes() == c[2:].tobytes() and not c[:2].any()
    assert mpi_rows.pack_rows([np.zeros((0, 3)), np.zeros(0)]).shape == (0, 32)


def test_launcher_detection_from_the_environment(monkeypatch):
    for name in mpi_pool.SIZE_VARIABLES + ("NESTGRAD_MPI",):
        monkeypatch.delenv(name, raising=False)
    assert not mpi_pool.wanted()
    monkeypatch.setenv("PMI_SIZE", "1")
    assert not mpi_pool.wanted()  # one rank: a plain run
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    monkeypatch.delenv("PMI_SIZE")
    assert mpi_pool.wanted() and mpi_pool.launched_size() == 4
    monkeypatch.setenv("NESTGRAD_MPI", "0")
    assert not mpi_pool.wanted()


def test_plain_run_never_imports_mpi4py(single):
    _, _, info = single
    assert info["mpi"] is None and info["mpi4py_imported"] is False


# --- under mpiexec ---------------------------------------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("ranks", [2, 3, 4])
def test_ranks_give_the_single_process_bits(single, tmp_path, ranks):
    _, reference, _ = single
    _, arrays, info = launch(tmp_path / "run.npz", ranks)
    assert_same_bits(reference, arrays)
    stats = info["mpi"]
    assert stats["ranks"] == ranks and len(stats["idle_fraction"]) == ranks
    assert all(0.0 <= x <= 1.0 for x in stats["idle_fraction"])
    # every chain ran exactly once, somewhere (the iterations of prior draws ran none)
    assert 0 < info["chain_iterations"] < info["niter"]
    assert sum(stats["chains"]) == info["k"] * info["chain_iterations"]
    assert all(c > 0 for c in stats["chains"])


@needs_mpi
def test_a_widening_plateau_gives_the_single_process_bits(tmp_path):
    """Iterations that only add live points (a plateau holds them all) split over ranks like any other."""
    _, reference, info = launch(tmp_path / "one.npz", 1, "--plateau")
    assert (reference["logl"] == -6.0).sum() > 2 * 200  # more points died on the floor than nlive: it widened
    _, arrays, _ = launch(tmp_path / "two.npz", 2, "--plateau")
    assert_same_bits(reference, arrays)


@needs_mpi
def test_clustering_split_over_ranks_gives_the_single_process_bits(tmp_path):
    """The kNN rows of the clustering go to the ranks in whole blocks: the labels, hence the run, do not change."""
    _, reference, one = launch(tmp_path / "one.npz", 1, "--modes")
    assert one["split_neighbours"] == 0  # no pool in a single process
    for ranks in (2, 3):
        _, arrays, info = launch(tmp_path / f"r{ranks}.npz", ranks, "--modes")
        assert info["split_neighbours"] > 10
        assert_same_bits(reference, arrays)


@needs_mpi
def test_resume_on_another_rank_count_gives_the_same_bits(single, tmp_path):
    _, reference, _ = single
    checkpoint = tmp_path / "checkpoint.npz"
    _, partial, info = launch(tmp_path / "part.npz", 2, "--checkpoint", checkpoint, "--max-iter", 30)
    assert info["niter"] == 30 and checkpoint.is_file()
    _, arrays, info = launch(tmp_path / "rest.npz", 3, "--checkpoint", checkpoint, "--resume")
    assert info["mpi"]["ranks"] == 3
    assert_same_bits(reference, arrays)


@needs_mpi
def test_failing_rank_stops_the_run_naming_it_and_the_checkpoint_resumes(single, tmp_path):
    _, reference, _ = single
    checkpoint = tmp_path / "checkpoint.npz"
    process, _, _ = launch(tmp_path / "failed.npz", 2, "--checkpoint", checkpoint, "--fail-at", 25, check=False)
    assert process.returncode == 4, process.stderr[-3000:]
    assert "MPI rank 1 of 2" in process.stderr and "fault injected by the test" in process.stderr
    assert "Traceback" not in process.stderr
    _, arrays, _ = launch(tmp_path / "resumed.npz", 1, "--checkpoint", checkpoint, "--resume")
    assert_same_bits(reference, arrays)


@needs_mpi
@pytest.mark.slow  # launcher-level failures; the Python-level one above runs in CI
def test_sigterm_on_rank_0_checkpoints_releases_the_ranks_and_resumes(single, tmp_path):
    _, reference, _ = single
    checkpoint = tmp_path / "checkpoint.npz"
    process, _, _ = launch(tmp_path / "stopped.npz", 3, "--checkpoint", checkpoint, "--term-at", 20, check=False)
    assert process.returncode == 143, process.stderr[-3000:]  # every rank ended: mpiexec did not hang
    assert "Traceback" not in process.stderr
    _, arrays, _ = launch(tmp_path / "resumed.npz", 2, "--checkpoint", checkpoint, "--resume")
    assert_same_bits(reference, arrays)


@needs_mpi
@pytest.mark.slow  # launcher-level failures; the Python-level one above runs in CI
def test_killed_rank_ends_the_job_and_rank_0s_checkpoint_resumes(single, tmp_path):
    _, reference, _ = single
    checkpoint = tmp_path / "checkpoint.npz"
    process, _, _ = launch(tmp_path / "killed.npz", 2, "--checkpoint", checkpoint, "--kill-at", 40, check=False)
    assert process.returncode != 0
    assert checkpoint.is_file()
    _, arrays, _ = launch(tmp_path / "resumed.npz", 2, "--checkpoint", checkpoint, "--resume")
    assert_same_bits(reference, arrays)
