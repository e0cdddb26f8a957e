"""Benchmark of the differentiator: generated gradients vs hand-written numba vs JAX, side by side in one process.

    python scripts/bench_ad.py            # full run (minutes; run it on a quiet machine)
    python scripts/bench_ad.py --quick    # smoke run: B=1024, N=100 only, few repeats
    python scripts/bench_ad.py --write    # also put the tables into docs/benchmarks.md (between the bench_ad markers)
    python scripts/bench_ad.py --mvn-only # the multivariate normal of section 4 alone
    python scripts/bench_ad.py --rk4-only # the RK4 Lotka-Volterra of section 5 alone

Sections: (1) Poisson log-pmf, N=1000, float64, per call; (2) batched 4-parameter Gaussian, numba prange over the
batch, float32/float64; (3) allocations per call after warm-up and compile times (cold, and cached in a fresh
process); (4) the multivariate normal of issue 9 (d=10, N=1000, ad.linalg), per call; (5) the RK4 Lotka-Volterra
fit of configs/lotka_volterra (local arrays, 200 RK4 steps), per call. Every implementation's output is compared
with the hand-written kernel (section 5: with central differences) before it is timed.

Parallel timings need a quiet machine: on a loaded one a numba parallel loop waits at its barrier for threads the
OS has descheduled, and millisecond stalls swamp the figures (NUMBA_NUM_THREADS=1 gives a serial comparison).
"""
import os

os.environ.setdefault("NUMBA_NRT_STATS", "1")  # numba only counts its allocations when this is set before import

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from nestgrad import ad  # noqa: E402
import bench_mvn_kernels as mvn  # noqa: E402
from handwritten_kernels import (FASTMATH, gauss4d, make_gauss4d_kernels,  # noqa: E402
                                 make_poisson_value_and_grad, poisson_logpmf)

TARGETS = {"vg_vs_hand": 1.2, "grad_vs_primal": 0.6, "cached_compile_s": 0.5, "mvn_vg_vs_primal": 3.0,
           "mvn_vg_vs_hand": 1.5, "rk4_vg_vs_primal": 4.0}


def median_seconds(call, repeats, inner=1, warmup_seconds=0.2):
    """Median over ``repeats`` of the time per call, each repeat timing ``inner`` calls.

    Warm-up: at least three calls and ``warmup_seconds`` of calling, because numba's parallel thread pool is
    slow for its first calls (and more so on a loaded machine).
    """
    start = time.perf_counter()
    for _ in range(3):
        call()
    while time.perf_counter() - start < warmup_seconds:
        call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            call()
        times.append((time.perf_counter() - start) / inner)
    return float(np.median(times))


def max_rel_diff(a, b):
    """Largest difference relative to the largest magnitude (componentwise ratios blow up near zero)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def load_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


# ---------------------------------------------------------------- 1. Poisson, per call
# All numba figures are taken before any JAX call: XLA's CPU thread pool keeps spinning for a while after a
# call, which would steal cores from numba's parallel loops.

def poisson_numba(opts):
    c = np.random.default_rng(2).poisson(4.0, 1000).astype(np.float64)
    theta = np.array([3.6])
    d = ad.differentiate(poisson_logpmf)
    jitted = d.jit()
    primal = numba.njit(poisson_logpmf)
    hand = make_poisson_value_and_grad()
    g_ad, g_hand, g_only = np.zeros(1), np.zeros(1), np.zeros(1)
    v_hand = hand(theta, c, g_hand)
    v_ad = jitted.value_and_grad(theta, c, g_ad)
    jitted.grad(theta, c, g_only)
    checks = {"AD value_and_grad": max_rel_diff([v_ad, g_ad[0]], [v_hand, g_hand[0]]),
              "AD grad": max_rel_diff(g_only, g_hand), "primal": max_rel_diff(primal(theta, c), v_hand)}
    inner = 20 if opts.quick else 200
    times = {"primal (njit of the plain kernel)": median_seconds(lambda: primal(theta, c), opts.repeats, inner),
             "AD value_and_grad (d.jit())":
                 median_seconds(lambda: jitted.value_and_grad(theta, c, g_ad), opts.repeats, inner),
             "AD grad (d.jit())": median_seconds(lambda: jitted.grad(theta, c, g_only), opts.repeats, inner),
             "hand-written value+grad (njit)": median_seconds(lambda: hand(theta, c, g_hand), opts.repeats, inner)}
    return {"times": times, "checks": checks, "reference": (v_hand, g_hand[0]), "theta": theta, "c": c,
            "jitted": jitted, "inner": inner}


def poisson_jax(opts, jax, state):
    jnp, gammaln = jax.numpy, jax.scipy.special.gammaln

    def logpmf(theta, c):
        lam = theta[0]
        return jnp.sum(c * jnp.log(lam) - lam - gammaln(c + 1.0))

    vg, gr = jax.jit(jax.value_and_grad(logpmf)), jax.jit(jax.grad(logpmf))
    jt, jc = jnp.asarray(state["theta"]), jnp.asarray(state["c"])
    v_jax, g_jax = vg(jt, jc)
    state["checks"]["JAX value_and_grad"] = max_rel_diff([float(v_jax), float(g_jax[0])], state["reference"])
    state["times"]["JAX jit(value_and_grad)"] = median_seconds(lambda: vg(jt, jc)[1].block_until_ready(),
                                                               opts.repeats, state["inner"])
    state["times"]["JAX jit(grad)"] = median_seconds(lambda: gr(jt, jc).block_until_ready(), opts.repeats,
                                                     state["inner"])


def poisson_table(state, jax):
    t = state["times"]
    lines = ["| implementation | µs / call |", "|---|---:|"]
    lines += [f"| {name} | {sec * 1e6:.2f} |" for name, sec in t.items()]
    if jax is None:
        lines.append("| JAX | not installed |")
    vg_ratio = t["AD value_and_grad (d.jit())"] / t["hand-written value+grad (njit)"]
    grad_ratio = t["AD grad (d.jit())"] / t["primal (njit of the plain kernel)"]
    return lines + ["", "| ratio | measured | target |", "|---|---:|---:|",
                    f"| AD v+g / hand-written v+g | {vg_ratio:.2f} | ≤ {TARGETS['vg_vs_hand']} |",
                    f"| AD grad / primal | {grad_ratio:.2f} | ≤ {TARGETS['grad_vs_primal']} |",
                    "", "Agreement with the hand-written kernel (largest difference relative to its size): "
                    + ", ".join(f"{k} {v:.1e}" for k, v in state["checks"].items())]


# ---------------------------------------------------------------- 2. batched Gaussian

def make_batch_loops(jitted):
    value, raw_vg = jitted.value, jitted.raw_value_and_grad

    @numba.njit(parallel=True, fastmath=FASTMATH)
    def batch_value(thetas, x, out):
        for b in numba.prange(thetas.shape[0]):
            out[b] = value(thetas[b], x)

    @numba.njit(parallel=True, fastmath=FASTMATH)
    def batch_value_and_grad(thetas, x, out, grad_out, scratch):
        for b in numba.prange(thetas.shape[0]):
            out[b] = raw_vg(thetas[b], x, grad_out[b], scratch[b])

    return batch_value, batch_value_and_grad


def gauss_problem(batch, n, dtype):
    rng = np.random.default_rng(7)
    x = np.stack([rng.normal(0.4, 0.1, n), rng.normal(0.6, 0.15, n)]).astype(dtype)
    thetas = np.column_stack([rng.uniform(0.3, 0.5, batch), rng.uniform(0.5, 0.7, batch),
                              rng.uniform(0.08, 0.15, batch), rng.uniform(0.1, 0.2, batch)]).astype(dtype)
    return thetas, x


def gauss_numba(opts):
    """One row per (dtype, B, N) with numba timings; the last row keeps the AD call for the allocation count."""
    d = ad.differentiate(gauss4d)
    sizes = [(1024, 100)] if opts.quick else [(1024, 100), (1024, 1000), (65536, 100), (65536, 1000)]
    rows = []
    for dtype in ("float32", "float64"):
        batch_value, batch_ad = make_batch_loops(d.jit(fastmath=FASTMATH, dtype=dtype))
        _, batch_hand = make_gauss4d_kernels(dtype)
        for batch, n in sizes:
            thetas, x = gauss_problem(batch, n, dtype)
            out, grad = np.empty(batch, dtype), np.empty((batch, 4), dtype)
            out_h, grad_h = np.empty(batch, dtype), np.empty((batch, 4), dtype)
            scratch = np.empty((batch, d.scratch_size(thetas[0], x)), dtype)
            batch_ad(thetas, x, out, grad, scratch)
            batch_hand(thetas, x, out_h, grad_h)
            agree = max([max_rel_diff(out, out_h)] + [max_rel_diff(grad[:, k], grad_h[:, k]) for k in range(4)])
            repeats = max(3, opts.repeats // (4 if batch * n > 1e7 else 1))
            rows.append({"dtype": dtype, "B": batch, "N": n, "agree": agree, "repeats": repeats,
                         "primal": median_seconds(lambda: batch_value(thetas, x, out), repeats),
                         "ad": median_seconds(lambda: batch_ad(thetas, x, out, grad, scratch), repeats),
                         "hand": median_seconds(lambda: batch_hand(thetas, x, out_h, grad_h), repeats),
                         "ad_call": (batch_ad, (thetas, x, out, grad, scratch))})
    return rows


def gauss_jax(jax, rows):
    jnp = jax.numpy

    def logl(theta, x):
        d1 = (x[0] - theta[0]) / theta[2]
        d2 = (x[1] - theta[1]) / theta[3]
        n = x.shape[1]
        return (-0.5 * jnp.sum(d1 * d1 + d2 * d2) - n * (jnp.log(theta[2]) + jnp.log(theta[3]))
                - n * np.log(2.0 * np.pi))

    vmapped = jax.jit(jax.vmap(jax.value_and_grad(logl), in_axes=(0, None)))
    for row in rows:
        thetas, x = (jnp.asarray(a) for a in row["ad_call"][1][:2])
        row["jax"] = median_seconds(lambda: vmapped(thetas, x)[1].block_until_ready(), min(row["repeats"], 3))


def gauss_table(rows):
    lines = [f"Numba fastmath flags for all numba columns: `{sorted(FASTMATH)}`; times in ms per batched call.", "",
             "| dtype | B | N | primal | AD v+g | hand v+g | JAX vmap(v+g) | AD / hand | AD vs hand (rel diff) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        jax_ms = f"{r['jax'] * 1e3:.3f}" if "jax" in r else "not installed"
        lines.append(f"| {r['dtype']} | {r['B']} | {r['N']} | {r['primal'] * 1e3:.3f} | {r['ad'] * 1e3:.3f} | "
                     f"{r['hand'] * 1e3:.3f} | {jax_ms} | {r['ad'] / r['hand']:.2f} | {r['agree']:.1e} |")
    return lines + ["", f"Target: AD v+g / hand ≤ {TARGETS['vg_vs_hand']}."]


# ---------------------------------------------------------------- 3. allocations and compile times

def nrt_allocations():
    return numba.core.runtime.rtsys.get_allocation_stats().alloc


def make_repeat_loop(fn):
    @numba.njit
    def repeat(count, args):
        for _ in range(count):
            fn(*args)

    return repeat


def allocations_per_call(fn, args, calls):
    """(numba allocations per call inside compiled code, net Python bytes per call from Python), after warm-up.

    A call from Python boxes each array argument (one numba allocation each), so the compiled-code figure is
    the difference between running 1 + ``calls`` and 1 call inside an njit loop: only the kernel's own.
    """
    repeat = make_repeat_loop(fn)
    repeat(1, args)
    start = nrt_allocations()
    repeat(1, args)
    one = nrt_allocations()
    repeat(1 + calls, args)
    inside = ((nrt_allocations() - one) - (one - start)) / calls
    fn(*args)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(calls):
        fn(*args)
    from_python = (tracemalloc.get_traced_memory()[0] - before) / calls
    tracemalloc.stop()
    return inside, from_python


COMPILE_SCRIPT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/scripts")
import numpy as np, numba, ad
from handwritten_kernels import poisson_logpmf
c = np.arange(50, dtype=np.float64) % 7
start = time.perf_counter()
jitted = ad.differentiate(poisson_logpmf).jit()
jitted.value_and_grad(np.array([3.6]), c, np.zeros(1))
jitted.grad(np.array([3.6]), c, np.zeros(1))
print(json.dumps({"seconds": time.perf_counter() - start}))
"""


def compile_seconds(cache_dir):
    env = dict(os.environ, NESTGRAD_CACHE_DIR=str(cache_dir), PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, str(REPO)], capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"compile-time subprocess failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["seconds"]


def bench_allocations_and_compile(poisson_state, gauss_rows):
    jitted, theta, c = poisson_state["jitted"], poisson_state["theta"], poisson_state["c"]
    grad = np.zeros(1)
    rows = [("Poisson AD value_and_grad", allocations_per_call(jitted.value_and_grad, (theta, c, grad), 2000)),
            ("Poisson AD grad", allocations_per_call(jitted.grad, (theta, c, grad), 2000))]
    batch_ad, args = gauss_rows[-1]["ad_call"]
    rows.append((f"Gaussian AD batched v+g (B={args[0].shape[0]}, N={args[1].shape[1]}, {args[1].dtype})",
                 allocations_per_call(batch_ad, args, 20)))
    lines = ["| call (after warm-up) | numba allocations / call, inside compiled code | "
             "Python bytes / call from Python (tracemalloc, net) |", "|---|---:|---:|"]
    lines += [f"| {name} | {nrt:g} | {py:g} |" for name, (nrt, py) in rows]
    lines += ["", "Target: zero allocations per call.", ""]
    with tempfile.TemporaryDirectory(prefix="nestgrad-bench-cache-") as cache:
        cold, cached = compile_seconds(cache), compile_seconds(cache)
    lines += ["| compile (Poisson: differentiate + jit + first calls of value_and_grad and grad) | seconds |",
              "|---|---:|", f"| first, empty cache (fresh process) | {cold:.2f} |",
              f"| cached (another fresh process, same `$NESTGRAD_CACHE_DIR`) | {cached:.2f} |",
              "", f"Target: cached compile ≤ {TARGETS['cached_compile_s']} s."]
    return lines


# ---------------------------------------------------------------- 4. multivariate normal, per call

def mvn_section(opts):
    """d=10, N=1000, float64, one sample per call (no prange: steadier on a shared machine)."""
    theta, x = mvn.mvn_problem(10, 1000)
    grad, hand_grad = np.zeros_like(theta), np.zeros_like(theta)
    work = np.empty(mvn.work_size(10))
    hand_value = mvn.mvn_value_and_grad(theta, x, hand_grad, work)
    times, checks, lines = {}, {}, []
    for label, kernel in (("Cholesky-factor parameters", mvn.mvn_chol_params),
                          ("covariance parameters, ad.linalg.cholesky", mvn.mvn_cov_params)):
        d = ad.differentiate(kernel)
        fast = d.jit(fastmath=FASTMATH)
        scratch = np.empty(d.scratch_size(theta, x))
        value = fast.raw_value_and_grad(theta, x, grad, scratch)
        fast.raw_grad(theta, x, grad, scratch)
        checks[label] = max_rel_diff(np.append(grad, value), np.append(hand_grad, hand_value))
        inner = 20 if opts.quick else 200
        times[f"primal ({label})"] = median_seconds(lambda: fast.raw_value(theta, x, scratch), opts.repeats, inner)
        times[f"AD value_and_grad ({label})"] = median_seconds(
            lambda: fast.raw_value_and_grad(theta, x, grad, scratch), opts.repeats, inner)
        times[f"AD grad ({label})"] = median_seconds(lambda: fast.raw_grad(theta, x, grad, scratch), opts.repeats,
                                                     inner)
        nrt, _ = allocations_per_call(fast.raw_value_and_grad, (theta, x, grad, scratch), 200)
        reported = d.report(theta, x).splitlines()[-1]
        lines.append(f"{label}: scratch measured {scratch.nbytes} bytes per sample, report() says `{reported}`; "
                     f"numba allocations per v+g call {nrt:g}")
    times["hand-written value+grad (njit, one pass over the data)"] = median_seconds(
        lambda: mvn.mvn_value_and_grad(theta, x, hand_grad, work), opts.repeats, 20 if opts.quick else 200)
    primal, vg = times["primal (Cholesky-factor parameters)"], times["AD value_and_grad (Cholesky-factor parameters)"]
    hand = times["hand-written value+grad (njit, one pass over the data)"]
    cov_ratio = (times["AD value_and_grad (covariance parameters, ad.linalg.cholesky)"]
                 / times["primal (covariance parameters, ad.linalg.cholesky)"])
    table = ["| implementation | µs / call |", "|---|---:|"]
    table += [f"| {name} | {sec * 1e6:.2f} |" for name, sec in times.items()]
    table += ["", "| ratio | measured | target |", "|---|---:|---:|",
              f"| AD v+g / primal | {vg / primal:.2f} | ≤ {TARGETS['mvn_vg_vs_primal']} |",
              f"| AD v+g / hand-written v+g | {vg / hand:.2f} | ≤ {TARGETS['mvn_vg_vs_hand']} |",
              f"| AD v+g / primal, covariance parameters | {cov_ratio:.2f} | - |", ""]
    return table + lines + ["", "Agreement with the hand-written kernel (value and gradient, largest difference "
                            "relative to its size): " + ", ".join(f"{k} {v:.1e}" for k, v in checks.items())]


def rk4_section(opts):
    """configs/lotka_volterra's kernel on its first 20 observations x 10 steps = 200 RK4 steps, float64."""
    sys.path.insert(0, str(REPO / "configs" / "lotka_volterra" / "kernels"))
    import lv

    data = REPO / "configs" / "lotka_volterra" / "data"
    t_obs, prey, predators = (np.load(data / f"{name}.npy")[:20] for name in ("t_obs", "prey", "predators"))
    theta = np.array([1.0, 0.6, 0.8, 0.5, 0.05])
    args = (theta, t_obs, prey, predators, 0.05, 10)
    d = ad.differentiate(lv.lotka_volterra)
    fast = d.jit(fastmath=FASTMATH)
    scratch, grad = np.empty(d.scratch_size(*args)), np.zeros(5)
    value = fast.raw_value_and_grad(*args, grad, scratch)
    fd = np.array([(lv.lotka_volterra(theta + h, *args[1:]) - lv.lotka_volterra(theta - h, *args[1:])) / (2e-6 * t)
                   for h, t in ((np.eye(5)[i] * 1e-6 * theta[i], theta[i]) for i in range(5))])
    check = max(abs(value - lv.lotka_volterra(*args)) / abs(value), max_rel_diff(grad, fd))
    inner = 50 if opts.quick else 1000
    times = {"primal (raw_value)": median_seconds(lambda: fast.raw_value(*args, scratch), opts.repeats, inner),
             "AD value_and_grad": median_seconds(lambda: fast.raw_value_and_grad(*args, grad, scratch),
                                                 opts.repeats, inner),
             "AD grad": median_seconds(lambda: fast.raw_grad(*args, grad, scratch), opts.repeats, inner)}
    nrt, _ = allocations_per_call(fast.raw_value_and_grad, args + (grad, scratch), 200)
    ratio = times["AD value_and_grad"] / times["primal (raw_value)"]
    table = ["| implementation | µs / call |", "|---|---:|"]
    table += [f"| {name} | {sec * 1e6:.2f} |" for name, sec in times.items()]
    table += ["", "| ratio | measured | target |", "|---|---:|---:|",
              f"| AD v+g / primal | {ratio:.2f} | ≤ {TARGETS['rk4_vg_vs_primal']} |", ""]
    return table + [f"scratch measured {scratch.nbytes} bytes per sample, report() says "
                    f"`{d.report(*args).splitlines()[-1]}`; numba allocations per v+g call {nrt:g}; "
                    f"largest relative difference from central differences {check:.1e}"]


# ---------------------------------------------------------------- report

def machine_description(jax):
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        threading = f"numba threading layer {numba.threading_layer()} with {numba.get_num_threads()} threads"
    except ValueError:  # no parallel function has run yet
        threading = f"numba {numba.get_num_threads()} threads"
    versions = (f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__} "
                f"({threading}), JAX {jax.__version__ if jax is not None else 'not installed'}")
    return f"{cpu}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}; {versions}"


def write_section(path, text, start="<!-- bench_ad:start -->", end="<!-- bench_ad:end -->"):
    """Replace what lies between the markers (creating the file or the section if missing), keep the rest."""
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    if start in old and end in old:
        head, rest = old.split(start, 1)
        tail = rest.split(end, 1)[1]
        new = f"{head}{start}\n{text}\n{end}{tail}"
    else:
        new = f"{old.rstrip()}\n\n## Differentiator (`scripts/bench_ad.py`)\n\n{start}\n{text}\n{end}\n"
    path.write_text(new)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: B=1024, N=100 only, few repeats")
    parser.add_argument("--write", action="store_true", help="write the tables into docs/benchmarks.md")
    parser.add_argument("--repeats", type=int, default=None, help="timed repeats per figure (default 20, quick 3)")
    parser.add_argument("--no-jax", action="store_true", help="leave JAX out even when it is installed")
    parser.add_argument("--mvn-only", action="store_true", help="run section 4 only (prints, never writes)")
    parser.add_argument("--rk4-only", action="store_true", help="run section 5 only (prints, never writes)")
    opts = parser.parse_args(argv)
    opts.repeats = opts.repeats or (3 if opts.quick else 20)
    if opts.mvn_only or opts.rk4_only:
        load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
        machine = machine_description(None).replace("JAX not installed", "JAX not used")
        print("\n".join([f"Machine: {machine}; load average {load}", ""]
                        + (mvn_section(opts) if opts.mvn_only else rk4_section(opts))))
        return
    jax = None if opts.no_jax else load_jax()

    command = "python scripts/bench_ad.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    started = datetime.datetime.now(datetime.timezone.utc)
    poisson_state, gauss_rows = poisson_numba(opts), gauss_numba(opts)
    compile_and_allocations = bench_allocations_and_compile(poisson_state, gauss_rows)
    mvn_lines, rk4_lines = mvn_section(opts), rk4_section(opts)
    if jax is not None:
        poisson_jax(opts, jax, poisson_state)
        gauss_jax(jax, gauss_rows)
    header = [f"Measured {started:%Y-%m-%d %H:%M} UTC with `{command}`"
              + (" (quick smoke run: not for quoting)" if opts.quick else "") + ".",
              f"Machine: {machine_description(jax)}.",  # after the parallel runs: numba then names its threading layer
              f"Medians over {opts.repeats} repeats (fewer for the largest batches and JAX) after a warm-up of at "
              "least 0.2 s.", ""]
    text = "\n".join(header + ["### Poisson log-pmf, N=1000, float64 (`lgamma` in the kernel)", ""]
                     + poisson_table(poisson_state, jax)
                     + ["", "### Batched 4-parameter Gaussian (numba prange over the batch)", ""]
                     + gauss_table(gauss_rows) + ["", "### Allocations and compile time", ""] + compile_and_allocations
                     + ["", "### Multivariate normal, d=10, N=1000, float64, per call (ad.linalg)", ""] + mvn_lines
                     + ["", "### RK4 Lotka-Volterra, 200 steps, float64, per call (local arrays)", ""] + rk4_lines)
    print(text)
    if opts.write:
        write_section(REPO / "docs" / "benchmarks.md", text)
        print(f"\nwritten to {REPO / 'docs' / 'benchmarks.md'}")


if __name__ == "__main__":
    main()
