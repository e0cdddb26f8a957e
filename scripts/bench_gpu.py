"""GPU benchmark of issue 13, to run on a machine with a CUDA device (prints Markdown tables; never fakes figures).

    PYTHONPATH=$PWD python scripts/bench_gpu.py              # (a) batched kernel and (b) full runs, nlive 1000
    PYTHONPATH=$PWD python scripts/bench_gpu.py --nlive 1000 100000 --skip-cpu-above 10000
    NUMBA_ENABLE_CUDASIM=1 python scripts/bench_gpu.py --simulate   # tiny smoke run of the script itself
    PYTHONPATH=$PWD python scripts/bench_gpu.py --cpu-only --problems seed4d --nlive 100000
                                    # (b) on the CPU backend alone: the baseline of the GPU targets, on any machine

(a) Batched gaussian4d value+grad, float32, B samples x N data points (default 65536 x 1000), through the GPU
    backend with the thetas already on the device: samples x points per second, the fraction of the device's FP32
    peak that is (FLOPS_PER_POINT below, counted by hand from the kernel and its gradient), and the ratio to JAX
    ``jit(vmap(value_and_grad))`` of the same function on the same GPU, in the same process.
(b) Full runs with ``nestgrad run`` in fresh processes (end to end: process start to finished run folder), seed
    4-D, 30-D and 100-D Gaussians and 30-D Gaussian shells, ``--backend gpu`` and ``--backend cpu``, each at its
    backend's default precision (float32 with float64 sums on the GPU, float64 on the CPU; the row says which):
    wall time, logZ +- error against the analytic value.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
# Per sample and data point, value and gradient of gaussian4d's two rows: per row a subtraction, a
# multiplication by the reciprocal width, a square and an accumulation (value), then the gradient's two
# accumulations -- 2 x (1 + 1 + 1 + 1 + 2) = 12, with the one-off per-sample work (logs, reciprocals) not counted.
FLOPS_PER_POINT = 12
LARGE_BATCH_FACTOR = 16  # the large-batch row: whether a bigger grid fills the device better
FP32_LANES_PER_SM = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 9): 128, (9, 0): 128}
PROBLEMS = {  # name: the likelihood section of its config
    "seed4d": {"builtin": "gaussian4d"},
    "gauss30": {"builtin": "gaussian", "options": {"ndim": 30}},
    "gauss100": {"builtin": "gaussian", "options": {"ndim": 100}},
    "shells30": {"builtin": "gaussian_shells", "options": {"ndim": 30}},
}


def require_device(simulate):
    from numba import cuda

    if simulate:
        if not SIMULATED:
            sys.exit("bench_gpu.py --simulate: set NUMBA_ENABLE_CUDASIM=1 (before Python starts)")
        return "numba CUDA simulator (figures meaningless: a smoke run of the script)"
    if SIMULATED or not cuda.is_available():
        sys.exit("bench_gpu.py: no CUDA device is usable here, so nothing is measured (use --simulate for a "
                 "smoke run under NUMBA_ENABLE_CUDASIM=1)")
    device = cuda.get_current_device()
    return f"{device.name.decode() if isinstance(device.name, bytes) else device.name}, cc {device.compute_capability}"


def fp32_peak_flops():
    """Device FP32 peak: SMs x FP32 lanes per SM x 2 (fused multiply-add) x clock."""
    from numba import cuda

    device = cuda.get_current_device()
    lanes = FP32_LANES_PER_SM.get(tuple(device.compute_capability))
    if lanes is None:
        return None
    return device.MULTIPROCESSOR_COUNT * lanes * 2 * device.CLOCK_RATE * 1e3  # CLOCK_RATE is in kHz


def timed(call, repeats):
    from numba import cuda

    call()
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        cuda.synchronize()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def batched_kernel(batch, npoints, repeats, simulate):
    from numba import cuda

    from nestgrad.likelihoods import builtin

    b = builtin.get("gaussian4d", n=npoints)
    like = b.likelihood(backend="gpu", dtype="float32")
    rng = np.random.default_rng(0)
    thetas = np.column_stack([rng.uniform(0.4, 0.6, batch), rng.uniform(0.4, 0.6, batch),
                              rng.uniform(0.05, 0.2, batch), rng.uniform(0.05, 0.2, batch)]).astype(np.float32)
    d_thetas = cuda.to_device(thetas)
    out, grad = cuda.device_array(batch, np.float32), cuda.device_array((batch, 4), np.float32)
    seconds = timed(lambda: like.logl_and_grad(d_thetas, out=out, grad_out=grad), repeats)
    rate = batch * npoints / seconds
    rows = [("nestgrad (generated adjoint, GPU backend)", seconds, rate)]
    wide = b.likelihood(backend="gpu", dtype="float32", sum_dtype="float64")
    wide_seconds = timed(lambda: wide.logl_and_grad(d_thetas, out=out, grad_out=grad), repeats)
    rows.append(("nestgrad, float64 sums (`sum_dtype: float64`)", wide_seconds, batch * npoints / wide_seconds))
    queued = kernel_only_seconds(like, d_thetas, out, grad, repeats)
    rows.append((f"nestgrad, the kernel alone ({repeats} launches queued back to back, CUDA events)", queued,
                 batch * npoints / queued))
    big = batch * LARGE_BATCH_FACTOR
    d_big = cuda.to_device(np.tile(thetas, (LARGE_BATCH_FACTOR, 1)))
    big_out, big_grad = cuda.device_array(big, np.float32), cuda.device_array((big, 4), np.float32)
    big_seconds = timed(lambda: like.logl_and_grad(d_big, out=big_out, grad_out=big_grad), max(2, repeats // 4))
    rows.append((f"nestgrad, B = {big} in one call (per {batch} samples)", big_seconds / LARGE_BATCH_FACTOR,
                 big * npoints / big_seconds))
    peak = None if simulate else fp32_peak_flops()
    jax_seconds = None if simulate else jax_batched(b, thetas, repeats)
    if jax_seconds is not None:
        rows.append(("JAX jit(vmap(value_and_grad))", jax_seconds, batch * npoints / jax_seconds))
    lines = [f"Batched gaussian4d value+grad, float32, B = {batch}, N = {npoints}, median of {repeats}:", "",
             "| implementation | ms / batch | samples x points / s | fraction of FP32 peak |", "|---|---:|---:|---:|"]
    for name, sec, r in rows:
        frac = f"{r * FLOPS_PER_POINT / peak:.1%}" if peak else "-"
        lines.append(f"| {name} | {sec * 1e3:.3f} | {r:.3e} | {frac} |")
    if jax_seconds is not None:
        lines += ["", f"nestgrad / JAX speed: {jax_seconds / seconds:.2f}x (target >= 3); FP32 peak "
                  f"{peak:.3e} FLOP/s from the device's attributes, {FLOPS_PER_POINT} FLOPs per sample-point"
                  if peak else ""]
    return lines


def kernel_only_seconds(like, d_thetas, out, grad, repeats):
    """GPU time per launch of the batched value-and-gradient kernel, launched directly (no bad-sample count copy,
    no argument checks) ``repeats`` times back to back between two CUDA events. Where the host launches slower
    than the device runs a kernel this is the launch rate instead, which the per-call row then also shows."""
    from numba import cuda

    from nestgrad.likelihoods.backends.launch import configured

    backend = like._impl
    batch = d_thetas.shape[0]
    launch = configured(backend.drivers["batch_value_and_grad"], *backend._launch(batch))
    args = (d_thetas, out, grad, backend.scratch(batch), backend.nbad, *backend.data)
    launch(*args)
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(repeats):
        launch(*args)
    end.record()
    end.synchronize()
    milliseconds = start.elapsed_time(end)  # the simulator's events keep no time: -1
    return milliseconds / 1e3 / repeats if milliseconds > 0 else float("nan")


def jax_batched(b, thetas, repeats):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    if not any(d.platform == "gpu" for d in jax.devices()):
        return None
    x = jnp.asarray(b.data["x"], dtype=jnp.float32)

    def logl(theta):
        mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
        n = x.shape[1]
        quad = jnp.sum(((x[0] - mu1) / s1) ** 2 + ((x[1] - mu2) / s2) ** 2)
        return -0.5 * quad - n * (jnp.log(s1) + jnp.log(s2)) - n * jnp.log(2.0 * jnp.pi)

    f = jax.jit(jax.vmap(jax.value_and_grad(logl)))
    t = jnp.asarray(thetas)
    jax.block_until_ready(f(t))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(f(t))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def cpu_description():
    import platform

    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() \
        else platform.processor()
    return f"{model or 'a CPU'}, {os.cpu_count()} cores (CPU backend only)"


def full_run(problem, nlive, backend, folder, dlogz, timeout=None):
    """One ``nestgrad run`` in a fresh process: a table row (wall time end to end, the run's own split of it into
    compile, sampling, evidence and output, logZ against the truth)."""
    import yaml

    spec = {"name": problem, "likelihood": PROBLEMS[problem], "sampler": {"nlive": nlive, "dlogz": dlogz, "seed": 1},
            "output": {"dir": str(folder / f"{problem}_{nlive}_{backend}"), "plots": []}}
    config = folder / f"{problem}_{nlive}_{backend}.yaml"
    config.write_text(yaml.safe_dump(spec, sort_keys=False))
    head = f"| {problem} | {nlive} | {backend} |"
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "nestgrad", "run", str(config), "--backend", backend, "--quiet"],
                              cwd=REPO, capture_output=True, text=True, timeout=timeout,
                              env=dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")))
    except subprocess.TimeoutExpired:
        return f"{head} stopped after {timeout} s (--run-timeout) | | | |"
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        return f"{head} failed: {(proc.stderr or proc.stdout).strip()[-300:]} | | | |"
    r = json.loads((Path(spec["output"]["dir"]) / "results.json").read_text())
    t = r.get("timing", {})
    split = (f"{t.get('compile', float('nan')):.2f} / {t.get('sampling', float('nan')):.2f} / "
             f"{t.get('evidence', float('nan')):.2f} / {t.get('output', float('nan')):.2f} ({t.get('kernel', '?')})")
    truth = r.get("reference_logz")
    pull = f"{(r['logz'] - truth) / r['logz_err']:+.2f}" if truth is not None else "-"
    logz = f"{r['logz']:.3f} ± {r['logz_err']:.3f}" + (f" (truth {truth:.3f})" if truth is not None else "")
    settings = r.get("settings", {})  # each backend's default precision (the config gives none)
    precision = settings.get("dtype", "?") + (", float64 sums" if settings.get("sum_dtype") == "float64" else "")
    head = f"| {problem} | {nlive} | {backend} ({precision}) |"
    return f"{head} {wall:.2f} | {split} | {r['niter']} | {logz} | {pull} |"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulate", action="store_true", help="tiny smoke run under NUMBA_ENABLE_CUDASIM=1")
    parser.add_argument("--batch", type=int, default=65536)
    parser.add_argument("--npoints", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--nlive", type=int, nargs="+", default=[1000])
    parser.add_argument("--problems", nargs="+", choices=sorted(PROBLEMS), default=list(PROBLEMS))
    parser.add_argument("--dlogz", type=float, default=0.1)
    parser.add_argument("--skip-cpu-above", type=int, default=None, help="no CPU run above this nlive")
    parser.add_argument("--run-timeout", type=float, default=None, help="stop a full run after this many seconds")
    parser.add_argument("--gpu-only", action="store_true", help="section (b) on the GPU backend only")
    parser.add_argument("--no-runs", action="store_true", help="section (a) only")
    parser.add_argument("--no-kernel", action="store_true", help="section (b) only")
    parser.add_argument("--cpu-only", action="store_true", help="section (b) on the CPU backend only (no device)")
    opts = parser.parse_args(argv)
    if opts.simulate:
        opts.batch, opts.npoints, opts.repeats, opts.nlive, opts.dlogz = 64, 10, 2, [20], 2.0
        opts.problems = ["seed4d"]
    device = cpu_description() if opts.cpu_only else require_device(opts.simulate)
    started = datetime.datetime.now(datetime.timezone.utc)
    lines = [f"Measured {started:%Y-%m-%d %H:%M} UTC on {device} with "
             f"`python scripts/bench_gpu.py {' '.join(argv if argv is not None else sys.argv[1:])}`.", ""]
    if not opts.cpu_only and not opts.no_kernel:
        lines += batched_kernel(opts.batch, opts.npoints, opts.repeats, opts.simulate)
    if not opts.no_runs:
        lines += ["", f"Full runs, `nestgrad run` in a fresh process each (dlogz {opts.dlogz}, seed 1), end to end:",
                  "", "| problem | nlive | backend | wall, s | compile / sampling / evidence / output, s (kernel from) | iterations "
                  "| logZ | pull |", "|---|---:|---|---:|---:|---:|---|---:|"]
        with tempfile.TemporaryDirectory() as tmp:
            for problem in opts.problems:
                for nlive in opts.nlive:
                    backends = ["cpu"] if opts.cpu_only else ["gpu"] if opts.simulate or opts.gpu_only \
                        else ["gpu", "cpu"]
                    if opts.skip_cpu_above is not None and nlive > opts.skip_cpu_above:
                        backends = ["gpu"]
                    for backend in backends:
                        lines.append(full_run(problem, nlive, backend, Path(tmp), opts.dlogz, opts.run_timeout))
                        print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
