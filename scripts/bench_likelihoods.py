"""Throughput of batched likelihoods: samples x datapoints per second of ``logl`` and ``logl_and_grad``.

For every built-in and backend, at batch sizes B in {1024, 65536}, next to the same batch driven by a
hand-written numba gradient (scripts/handwritten_kernels.py for gaussian4d, the built-in's analytic gradient
compiled through the same batch drivers for the others): the ratio column is AD / hand-written throughput.

    python scripts/bench_likelihoods.py --quick          # smoke run, tiny sizes
    python scripts/bench_likelihoods.py --write          # full run, table into docs/benchmarks.md
    python scripts/bench_likelihoods.py --gpu [--write]  # on a GPU: the same on the device, plus JAX
                                                         # jit(vmap(value_and_grad)) for the batched Gaussian

Timings are the best of several calls after a warm-up call (compilation excluded).
"""

import argparse
import datetime
import math
import os
import platform
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from nestgrad.likelihoods import Likelihood, builtin  # noqa: E402
from nestgrad.likelihoods.derivatives import AnalyticDerivative  # noqa: E402
from nestgrad.sampler.priors import Prior  # noqa: E402

MARK_START, MARK_END = "<!-- bench_likelihoods:start -->", "<!-- bench_likelihoods:end -->"

# FP32 (non-tensor-core) peak of common GPUs, from NVIDIA's product datasheets; matched against the device name
FP32_PEAK_TFLOPS = (("H200", 67.0), ("H100 PCIe", 51.2), ("H100", 67.0), ("A100", 19.5), ("L40S", 91.6),
                    ("L4", 30.3), ("A10", 31.2), ("V100", 15.7), ("RTX 4090", 82.6), ("T4", 8.1))
PEAK_SOURCE = "NVIDIA product datasheets (FP32, without tensor cores; H100/H200 SXM 67 TFLOP/s)"
# Arithmetic per datapoint of gaussian4d value + gradient, counted by hand on the minimal algorithm
# (scripts/handwritten_kernels.py): per data column 2 subtractions, 2 multiplications by 1/sigma, 2 additions
# into sum(d) and 2 fused multiply-adds into sum(d^2) (2 flops each) = 10 flops.
GAUSS4D_FLOPS_PER_POINT = 10


def datapoints(b):
    """Terms summed per sample: the data length of the kernel's loop (1 for data-free problems)."""
    sizes = {"gaussian4d": lambda: b.data["x"].shape[1], "poisson_rates": lambda: b.data["counts"].size,
             "gaussian": lambda: b.ndim * b.ndim if "icov" in b.data else b.ndim, "gaussian_shells": lambda: b.ndim,
             "linear_regression": lambda: b.data["x"].size, "student_t": lambda: b.data["y"].size,
             "negative_binomial": lambda: b.data["k"].size}
    return sizes.get(b.name, lambda: 1)()


def best_time(call, repeats, sync=lambda: None):
    call()
    sync()  # warm-up: compilation and buffer allocation
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        sync()
        best = min(best, time.perf_counter() - start)
    return best


def handwritten(b, dtype, backend):
    """(logl_and_grad callable factory) for the hand-written reference of ``b`` on ``backend``."""
    if b.name == "gaussian4d" and backend == "cpu":
        import handwritten_kernels

        _, batch = handwritten_kernels.make_gauss4d_kernels(dtype)
        x = b.data["x"].astype(dtype)

        def run(thetas, out, grad_out):
            batch(thetas, x, out, grad_out)
        return run
    L = Likelihood.from_derivative(AnalyticDerivative(b.kernel, b.gradient), b.kernel, b.params, b.data,
                                   backend=backend, dtype=dtype)
    return lambda thetas, out, grad_out: L.logl_and_grad(thetas, out, grad_out)


def bench_builtin(name, options, backends, batches, repeats, dtype, rows):
    b = builtin.get(name, **options)
    points = datapoints(b)
    for backend in backends:
        L = b.likelihood(backend=backend, dtype=dtype)
        for batch in batches:
            if backend == "python" and batch > 1024:
                continue  # minutes per call; the python backend is for debugging
            thetas = Prior.from_spec(b.priors).draw(np.random.default_rng(0), batch).astype(dtype)
            out, grad = np.empty(batch, dtype), np.empty((batch, b.ndim), dtype)
            reps = 1 if backend == "python" else repeats
            t_value = best_time(lambda: L.logl(thetas, out), reps)
            t_grad = best_time(lambda: L.logl_and_grad(thetas, out, grad), reps)
            ratio = ""
            if backend != "python":
                reference = handwritten(b, dtype, backend)
                t_hand = best_time(lambda: reference(thetas, out, grad), reps)
                ratio = f"{t_hand / t_grad:.2f}"
            rows.append((name, backend, batch, points, batch * points / t_value, batch * points / t_grad, ratio))
            print(f"{name:18s} {backend:6s} B={batch:6d} N={points:5d}  logl {batch * points / t_value:10.3e}/s"
                  f"  logl_and_grad {batch * points / t_grad:10.3e}/s  AD/hand {ratio or '-'}", flush=True)


def table(rows, title):
    lines = [title, "", "| built-in | backend | B | datapoints | logl (samples x points / s) | "
             "logl_and_grad (samples x points / s) | AD / hand-written (value+grad) |", "|---|---|---|---|---|---|---|"]
    for name, backend, batch, points, value_rate, grad_rate, ratio in rows:
        lines.append(f"| {name} | {backend} | {batch} | {points} | {value_rate:.3e} | {grad_rate:.3e} | "
                     f"{ratio or '-'} |")
    return "\n".join(lines)


def machine():
    import numba

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as handle:
            cpu = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} logical cores; Python {platform.python_version()}, numpy {np.__version__}, "
            f"numba {numba.__version__}")


def write_section(text, path=os.path.join(ROOT, "docs", "benchmarks.md")):
    """Replace what lies between the markers (create the file or the section when missing)."""
    block = f"{MARK_START}\n{text}\n{MARK_END}"
    if not os.path.exists(path):
        content = f"# Benchmarks\n\n## Batched likelihoods (`scripts/bench_likelihoods.py`)\n\n{block}\n"
    else:
        with open(path, encoding="utf-8") as handle:
            content = handle.read()
        if MARK_START in content and MARK_END in content:
            head, rest = content.split(MARK_START, 1)
            content = head + block + rest.split(MARK_END, 1)[1]
        else:
            content = content.rstrip("\n") + f"\n\n## Batched likelihoods (`scripts/bench_likelihoods.py`)\n\n{block}\n"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(content)
    print(f"wrote {path}")


def gpu_or_exit():
    """The GPU mode needs a CUDA device, CuPy and JAX: say which is missing and stop (exit status 2)."""
    problems = []
    try:
        from numba import cuda

        if not cuda.is_available():
            problems.append("numba.cuda finds no CUDA device/driver")
    except Exception as err:  # an import or driver failure, reported as such
        problems.append(f"numba.cuda cannot be used ({err})")
    for module in ("cupy", "jax"):
        try:
            __import__(module)
        except Exception as err:
            problems.append(f"{module} cannot be imported ({err})")
    if problems:
        print("bench_likelihoods --gpu: no usable GPU set-up: " + "; ".join(problems), file=sys.stderr)
        sys.exit(2)


def gpu_gaussian_vs_jax(batch, n, repeats):
    """gaussian4d value+grad on the GPU (float32, device arrays) vs JAX jit(vmap(value_and_grad))."""
    import cupy
    import jax
    import jax.numpy as jnp
    from numba import cuda

    jax.config.update("jax_enable_x64", False)
    b = builtin.get("gaussian4d", n=n)
    L = b.likelihood(backend="gpu", dtype="float32")
    thetas = cupy.asarray(Prior.from_spec(b.priors).draw(np.random.default_rng(0), batch).astype(np.float32))
    out, grad = cupy.empty(batch, np.float32), cupy.empty((batch, 4), np.float32)
    sync = cuda.synchronize
    t_ours = best_time(lambda: L.logl_and_grad(thetas, out, grad), repeats, sync)

    x = jnp.asarray(b.data["x"].astype(np.float32))

    def logl(theta):
        d1 = (x[0] - theta[0]) / theta[2]
        d2 = (x[1] - theta[1]) / theta[3]
        return (-0.5 * jnp.sum(d1 * d1 + d2 * d2) - n * (jnp.log(theta[2]) + jnp.log(theta[3]))
                - n * jnp.log(2.0 * jnp.pi))

    batched = jax.jit(jax.vmap(jax.value_and_grad(logl)))
    jax_thetas = jnp.asarray(cupy.asnumpy(thetas))
    t_jax = best_time(lambda: jax.block_until_ready(batched(jax_thetas)), repeats)
    ours_v = cupy.asnumpy(out)
    jax_v = np.asarray(batched(jax_thetas)[0])
    agree = float(np.max(np.abs(ours_v - jax_v) / (1 + np.abs(jax_v))))

    name = cuda.get_current_device().name
    name = name.decode() if isinstance(name, bytes) else name
    peak = next((p for key, p in FP32_PEAK_TFLOPS if key in name), None)
    flops = batch * n * GAUSS4D_FLOPS_PER_POINT
    lines = [f"GPU: {name}; gaussian4d value+grad, B={batch}, N={n}, float32, device arrays in and out", "",
             "| implementation | time (ms) | samples x points / s | TFLOP/s (10 flop/point) | % of FP32 peak |",
             "|---|---|---|---|---|"]
    for label, t in (("nestgrad gpu backend", t_ours), ("JAX jit(vmap(value_and_grad))", t_jax)):
        rate = flops / t / 1e12
        share = f"{100 * rate / peak:.1f}" if peak else "unknown device"
        lines.append(f"| {label} | {1e3 * t:.3f} | {batch * n / t:.3e} | {rate:.2f} | {share} |")
    lines += ["", f"nestgrad / JAX speed: {t_jax / t_ours:.2f}x; values agree to {agree:.1e} (relative); "
              f"peak {peak} TFLOP/s from {PEAK_SOURCE}."]
    text = "\n".join(lines)
    print(text)
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny batches and data")
    parser.add_argument("--write", action="store_true", help="put the table into docs/benchmarks.md")
    parser.add_argument("--gpu", action="store_true", help="run on the GPU backend and compare with JAX")
    parser.add_argument("--builtins", default=",".join(builtin.names()), help="comma-separated built-ins")
    parser.add_argument("--dtype", default=None, help="float64 (CPU default) or float32 (GPU default)")
    args = parser.parse_args(argv)

    if args.gpu:
        gpu_or_exit()
    backends = ["gpu"] if args.gpu else ["cpu", "python"]
    dtype = args.dtype or ("float32" if args.gpu else "float64")
    batches = (64, 256) if args.quick else (1024, 65536)
    repeats = 1 if args.quick else 5
    options = {"n": 20} if args.quick else {}
    rows = []
    for name in args.builtins.split(","):
        accepted = builtin.get(name).options
        bench_builtin(name, {k: v for k, v in options.items() if k in accepted}, backends, batches, repeats,
                      dtype, rows)
    command = "python scripts/bench_likelihoods.py " + " ".join(argv if argv is not None else sys.argv[1:])
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = table(rows, f"{stamp} — `{command.strip()}` — {machine()}; dtype {dtype}; best of {repeats} "
                       "after a warm-up call.")
    if args.gpu:
        text += "\n\n" + gpu_gaussian_vs_jax(1024 if args.quick else 65536, 100 if args.quick else 1000, repeats)
    else:
        text += "\n\nGPU: not measured in this run (needs `--gpu` on a machine with a CUDA device)."
    print("\n" + text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
