#!/usr/bin/env bash
# The GPU checks of a session lent a CUDA device, in one call (the device tool runs it from the repository root):
# versions, the device tests (pytest -m device), then scripts/bench_gpu.py. Every step has its own time limit and
# its output goes to $OUT (or ./gpu_out), so a failing step still leaves the others' figures.
#   bash scripts/gpu_device_session.sh [quick|full|probe]   (quick: one 30-D size and a profiled seed run; full: the
#   issue's problems and sizes; probe: the kernel's thread layouts and the host's share of a large GPU run, no
#   full runs, about 4 minutes; runs: the end-to-end targets with the kernel cache, cold then warm, about 6 minutes)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 MPLBACKEND=Agg
OUT=${OUT:-gpu_out}; mkdir -p "$OUT"
mode=${1:-full}
step() {  # step NAME SECONDS COMMAND...: run with a limit into $OUT/NAME.log, print its tail and how it ended
    local name=$1 limit=$2; shift 2
    local t0=$SECONDS
    echo "=== $name (limit ${limit}s): $*"
    timeout "$limit" "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    tail -n 40 "$OUT/$name.log"
    echo "=== $name: exit $rc after $((SECONDS - t0)) s"
}
step versions 30 bash -c 'nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv;
  python3 -c "import sys, numpy, numba, numba.cuda as c; print(sys.version.split()[0], numpy.__version__, numba.__version__);
import importlib.metadata as m; print({p: m.version(p) for p in (\"numba-cuda\", \"cupy-cuda13x\", \"jax\", \"scipy\")});
d = c.get_current_device(); print(d.name, d.compute_capability, d.MULTIPROCESSOR_COUNT, d.CLOCK_RATE)"'
if [ "$mode" = runs ]; then  # at most 460 s of steps: give the call timeout_s 500
    step device_config_test 120 python3 -m pytest -m device -q -p no:cacheprovider tests/app/test_gpu_config_sim.py
    step bench_kernel 40 python3 scripts/bench_gpu.py --no-runs --repeats 20
    step bench_seed_cold_warm 120 python3 scripts/bench_gpu.py --gpu-only --no-kernel --problems seed4d \
        --nlive 100000 100000 --run-timeout 60
    step bench_gauss30 120 python3 scripts/bench_gpu.py --gpu-only --no-kernel --problems gauss30 \
        --nlive 1000 100000 --run-timeout 60
    step bench_gauss100 60 python3 scripts/bench_gpu.py --gpu-only --no-kernel --problems gauss100 --nlive 10000 \
        --run-timeout 55
    exit 0
fi
step device_tests 180 python3 -m pytest -m device -n 4 -q -p no:cacheprovider tests/sampler/test_hmc_gpu.py \
    tests/sampler/test_hmc_gpu_cache.py tests/likelihoods/test_gpu.py tests/app/test_gpu_config_sim.py \
    tests/sampler/test_live_device.py
step bench_kernel 60 python3 scripts/bench_gpu.py --no-runs --repeats 20
if [ "$mode" = probe ]; then
    step layouts 60 python3 scripts/bench_gpu_layouts.py
    step host_step 75 python3 scripts/bench_host_step.py --backend gpu --ndim 30 --nlive 100000 --iterations 6
    step host_step_host_live_set 75 python3 scripts/bench_host_step.py --backend gpu --ndim 30 --nlive 100000 \
        --iterations 6 --host-live-set
elif [ "$mode" = quick ]; then
    step bench_runs 150 python3 scripts/bench_gpu.py --gpu-only --problems gauss30 --nlive 1000 100000 \
        --run-timeout 60
    cat > /tmp/prof.yaml <<'YAML'
name: prof
likelihood: {builtin: gaussian4d}
sampler: {nlive: 100000, dlogz: 0.1, seed: 1}
backend: gpu
output: {dir: /tmp/prof_run, plots: []}
YAML
    step profile 75 bash -c 'python3 -m cProfile -s tottime -m nestgrad run /tmp/prof.yaml 2>&1 | head -70'
else  # the issue's full-run targets, each run stopped at 45 s: at most 580 s in all (give the call timeout_s 600)
    step bench_runs 250 python3 scripts/bench_gpu.py --gpu-only --no-kernel --problems seed4d gauss30 shells30 \
        --nlive 1000 100000 --run-timeout 45
    step bench_runs_100d 60 python3 scripts/bench_gpu.py --gpu-only --no-kernel --problems gauss100 --nlive 10000 \
        --run-timeout 45
fi
