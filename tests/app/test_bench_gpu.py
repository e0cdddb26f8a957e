"""scripts/bench_gpu.py (issue 13's GPU benchmark): without a device it refuses and measures nothing; under the
CUDA simulator its smoke mode runs every part of the script (the batched kernel and a full `nestgrad run`)."""
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bench_gpu.py"


def _run(app_env, *args, **extra):
    env = dict(app_env)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.update(extra)
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)


def test_without_a_device_the_benchmark_refuses_and_claims_nothing(app_env):
    from numba import cuda

    if cuda.is_available():
        pytest.skip("a CUDA device (or the simulator) is usable in this process: the refusal cannot be tested")
    proc = _run(app_env)
    assert proc.returncode != 0 and "no CUDA device" in proc.stderr
    assert "|" not in proc.stdout  # no table


def test_simulated_smoke_run_prints_both_tables(app_env):
    proc = _run(app_env, "--simulate", NUMBA_ENABLE_CUDASIM="1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "numba CUDA simulator (figures meaningless" in proc.stdout
    kernel_row = next(line for line in proc.stdout.splitlines() if line.startswith("| nestgrad (generated"))
    assert float(kernel_row.split("|")[3]) > 0  # samples x points per second
    assert "| nestgrad, the kernel alone" in proc.stdout  # the simulator's events keep no time: nan
    large_row = next(line for line in proc.stdout.splitlines() if line.startswith("| nestgrad, B = 1024 in one call"))
    assert float(large_row.split("|")[3]) > 0
    run_row = next(line for line in proc.stdout.splitlines() if line.startswith("| seed4d | 20 | gpu ("))
    assert "| gpu (float32, float64 sums) |" in run_row  # the GPU's default precision (the config gives none)
    assert "failed" not in run_row and abs(float(run_row.split("|")[-2])) < 3  # logZ pull against the truth


def test_cpu_only_runs_the_baseline_without_a_device(app_env):
    """The CPU figures the GPU targets are compared with, measured on any machine: no device section, one CPU row."""
    proc = _run(app_env, "--cpu-only", "--problems", "seed4d", "--nlive", "50", "--dlogz", "1.0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "CPU backend only" in proc.stdout and "Batched gaussian4d" not in proc.stdout
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| seed4d | 50 | cpu (float64) |"))
    assert "failed" not in row and float(row.split("|")[4]) > 0 and abs(float(row.split("|")[-2])) < 4


def test_layouts_script_checks_every_layout_under_the_simulator(app_env):
    """scripts/bench_gpu_layouts.py: under the simulator (no shuffles there) every shared-memory layout agrees with
    the float64 reference; without the simulator or a device it refuses."""
    script = REPO / "scripts" / "bench_gpu_layouts.py"
    env = dict(app_env, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, str(script), "--simulate"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split("|") for line in proc.stdout.splitlines() if line.startswith("| 37 |")]
    shared = [r for r in rows if r[3].strip() == "shared"]
    blocked = [r[3].strip() for r in rows if "samples a thread" in r[3]]
    assert [int(r[2]) for r in shared] == [1, 2, 4, 8, 16, 32] and len(rows) == len(shared) + len(blocked)
    # 37 samples: the last thread of each blocked layout has a partial block
    assert blocked == [f"- ({b} samples a thread)" for b in (2, 4, 8)]
    assert all(float(r[-2]) < 1e-5 for r in rows)  # max relative error against the float64 reference


def test_register_blocked_layouts_keep_their_accumulators_in_registers():
    """The blocked layouts' premise: the R samples' accumulators (local arrays indexed by unrolled loops) become
    registers, not local memory, in the sm_90 PTX."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import bench_gpu_layouts as layouts
    finally:
        sys.path.pop(0)
    from numba import cuda, float32

    signature = (float32[:, :], float32[:, :], float32[:], float32[:, :])
    for block in (2, 4, 8):
        ptx, _ = cuda.compile_ptx(layouts.make_blocked_kernel(block).py_func, signature, cc=(9, 0))
        assert ".entry" in ptx and "ld.local" not in ptx and "st.local" not in ptx, block
