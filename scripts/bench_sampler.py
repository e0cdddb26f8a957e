"""Benchmark nestgrad end to end (process start to finished run) next to its sampling time, against dynesty
(rwalk, rslice) and UltraNest, side by side on one machine.

Two tables, every number the median of ``--repeats`` runs (default 5), each run a fresh process:

1. ``nestgrad run configs/gaussian4d.yaml`` as a user types it: wall time from process start to the finished run
   folder, cold cache (a fresh ``$NESTGRAD_CACHE_DIR`` and ``$NUMBA_CACHE_DIR`` for every run) and warm, with the
   config's plots and without plots; the stage split comes from each run's ``results.json`` (``timing``).
2. Per problem, each sampler in its own process with warm caches (one untimed run first): end-to-end wall time
   of that process (imports, likelihood, kernel load or compile, sampling; nestgrad also writes its run folder,
   without plots) and the sampling time inside it. Every sampler gets the same likelihood implementation (the
   numba-compiled per-sample ``value`` of the built-in problem; the peers call it from Python) and the same
   prior transform, nlive, dlogz and seed. ratio = the peer's end-to-end time / nestgrad's.

nestgrad's modules are byte-compiled first (``byte_compile``), as an installed package is.
The 1-minute load average of the machine is printed with each table: others' processes slow every figure.

    python scripts/bench_sampler.py                        # both tables (takes a while)
    python scripts/bench_sampler.py --quick                # nestgrad alone, 3 repeats, seed 4-D only
    python scripts/bench_sampler.py --write                # also put the tables into docs/benchmarks.md
    python scripts/bench_sampler.py --no-cli --problems seed4d gauss30 --peers dynesty-rwalk
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# name -> (built-in, options, run the peers?)
PROBLEMS = {
    "seed4d": ("gaussian4d", {}, True),
    "gauss10": ("gaussian", {"ndim": 10}, True),
    "gauss30": ("gaussian", {"ndim": 30}, True),
    "shells2": ("gaussian_shells", {"ndim": 2}, True),
    "gauss100": ("gaussian", {"ndim": 100}, False),
    "shells30": ("gaussian_shells", {"ndim": 30}, False),
}
DEFAULT_PROBLEMS = ["seed4d", "gauss30"]
PEERS = ["dynesty-rwalk", "dynesty-rslice", "ultranest"]
DEFAULT_PEERS = ["dynesty-rwalk", "dynesty-rslice"]
PEER_TIMEOUT = 600.0
CONFIG = os.path.join(ROOT, "configs", "gaussian4d.yaml")
STAGES = ("startup", "setup", "compile", "sampling", "evidence", "output", "plots")
MARK_START, MARK_END = "<!-- bench_sampler:start -->", "<!-- bench_sampler:end -->"


# --- one sampler in this process (the child side) ---------------------------------------------------------------

def load_problem(name):
    from nestgrad.likelihoods import builtin
    from nestgrad.sampler import Prior
    bname, options, _ = PROBLEMS[name]
    b = builtin.get(bname, **options)
    return b, b.likelihood(backend="cpu"), Prior.from_spec(b.priors)


def run_nestgrad(name, nlive, seed, dlogz, outdir):
    from nestgrad.sampler import NestedSampler
    b, like, prior = load_problem(name)
    res = NestedSampler(like, prior, nlive=nlive, seed=seed).run(dlogz=dlogz, progress=False)
    start = time.perf_counter()
    res.save(outdir)
    timing = dict(res.timing, output=time.perf_counter() - start)
    return {"sampling": res.wall_time, "compile": timing["compile"], "kernel": timing["kernel"], "nlike": res.nlike,
            "ngrad": res.ngrad, "logz": res.logz, "logz_err": res.logz_err, "truth": b.reference_logz}


def run_peer(peer, name, nlive, seed, dlogz):
    b, like, prior = load_problem(name)
    k = like.cpu_kernels()
    value, data = k.value, k.data
    ndim = prior.ndim
    theta_buf, scratch = np.empty(ndim, dtype=k.dtype), np.empty(k.scratch_size, dtype=k.dtype)
    calls = [0]

    def loglike(theta):
        calls[0] += 1
        theta_buf[:] = theta
        v = float(value(theta_buf, data, scratch))
        return v if np.isfinite(v) else -1e300

    from nestgrad.sampler.prior_families import transform_one
    theta_out, jac_out = np.empty(ndim), np.empty(ndim)

    def transform(u):  # the prior's own compiled transform, one point per call (no thread launch per point)
        transform_one(prior.codes, prior.args, np.asarray(u, dtype=np.float64), theta_out, jac_out)
        return theta_out.copy()

    loglike(transform(np.full(ndim, 0.5)))  # loads the numba likelihood before the sampling clock starts
    calls[0] = 0
    start = time.perf_counter()
    if peer.startswith("dynesty"):
        import dynesty
        ns = dynesty.NestedSampler(loglike, transform, ndim, nlive=nlive, sample=peer.split("-")[1],
                                   rstate=np.random.default_rng(seed))
        ns.run_nested(dlogz=dlogz, print_progress=False)
        r = ns.results
        logz, err = float(r.logz[-1]), float(r.logzerr[-1])
    elif peer == "ultranest":
        import ultranest
        ns = ultranest.ReactiveNestedSampler([f"p{i}" for i in range(ndim)], loglike, transform)
        r = ns.run(min_num_live_points=nlive, dlogz=dlogz, show_status=False, viz_callback=False)
        logz, err = float(r["logz"]), float(r["logzerr"])
    else:
        raise SystemExit(f"unknown peer {peer!r}; known: {', '.join(PEERS)}")
    return {"sampling": time.perf_counter() - start, "nlike": calls[0], "ngrad": 0, "logz": logz,
            "logz_err": err, "truth": b.reference_logz}


# --- processes, timed from the outside ---------------------------------------------------------------------------

def bench_env(cache):
    env = dict(os.environ, NESTGRAD_CACHE_DIR=os.path.join(cache, "nestgrad"),
               NUMBA_CACHE_DIR=os.path.join(cache, "numba"))
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def timed(command, env, timeout=None):
    """(wall seconds from process start to exit, CompletedProcess)."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return time.perf_counter() - start, done


def sampler_process(sampler, name, args, cache):
    """One sampler in a fresh process: its end-to-end wall time and what it reports."""
    outdir = tempfile.mkdtemp(prefix="nestgrad-bench-run-")
    command = [sys.executable, os.path.abspath(__file__), "--child", sampler, "--problems", name, "--nlive",
               str(args.nlive), "--seed", str(args.seed), "--dlogz", str(args.dlogz), "--out", outdir]
    try:
        wall, done = timed(command, bench_env(cache), timeout=PEER_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"dnf": f"did not finish in {PEER_TIMEOUT:.0f} s"}
    finally:
        shutil.rmtree(outdir, ignore_errors=True)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"dnf": f"failed (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}"}
    return dict(json.loads(lines[-1]), wall=wall)


def nestgrad_command():
    script = os.path.join(os.path.dirname(sys.executable), "nestgrad")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "nestgrad"]


def cli_run(config, outdir, env):
    """``nestgrad run config`` in a fresh process: (wall, results.json timing, whether it said "compiling")."""
    wall, done = timed(nestgrad_command() + ["run", config], env)
    if done.returncode != 0:
        raise SystemExit(f"nestgrad run {config} failed:\n{done.stderr}")
    with open(os.path.join(outdir, "results.json"), encoding="utf-8") as handle:
        timing = json.load(handle)["timing"]
    return wall, timing, "compiling" in done.stderr


def median(values):
    return statistics.median(values) if values else float("nan")


def load():
    return f"{os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else "?"


# --- the two tables ------------------------------------------------------------------------------------------

def cli_table(repeats):
    work = tempfile.mkdtemp(prefix="nestgrad-bench-cli-")
    text = open(CONFIG, encoding="utf-8").read()
    configs, outdirs = {}, {}
    for plots in (True, False):
        outdirs[plots] = os.path.join(work, "run-plots" if plots else "run")
        body = text.replace("dir: ../runs/gaussian4d", f"dir: {outdirs[plots]}")
        if not plots:
            body = body.replace("plots: [corner, run, trace, hmc]", "plots: []")
        assert "dir: ../runs" not in body and (plots or "plots: []" in body), "configs/gaussian4d.yaml changed"
        configs[plots] = os.path.join(work, "gaussian4d.yaml" if plots else "gaussian4d_noplots.yaml")
        with open(configs[plots], "w", encoding="utf-8") as handle:
            handle.write(body)
    rows, before = [], load()
    cases = [("cold cache, with plots", True, True), ("warm cache, with plots", False, True),
             ("warm cache, without plots", False, False)]
    for label, cold, plots in cases:
        walls, timings, said = [], [], []
        warm_cache = os.path.join(work, "cache")
        if not cold:
            cli_run(configs[plots], outdirs[plots], bench_env(warm_cache))  # untimed: fills the cache
        for i in range(repeats):
            cache = os.path.join(work, f"cold{i}") if cold else warm_cache
            wall, timing, compiling = cli_run(configs[plots], outdirs[plots], bench_env(cache))
            walls.append(wall), timings.append(timing), said.append(compiling)
            print(f"  {label}: {wall:.2f} s", flush=True)
        stages = ", ".join(f"{s} {median([t.get(s, 0.0) for t in timings]):.2f}" for s in STAGES
                           if any(s in t for t in timings))
        kernel = "/".join(sorted({t.get("kernel", "?") for t in timings}))
        rows.append(f"| {label} | {median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | {stages} | {kernel} | "
                    f"{sum(said)} of {len(said)} |")
    shutil.rmtree(work, ignore_errors=True)
    head = (f"`nestgrad run configs/gaussian4d.yaml` (nlive 200, dlogz 0.1, seed 1, plots corner/run/trace/hmc), "
            f"{repeats} runs each, median (min-max); load average {before} before, {load()} after.\n\n"
            "| case | end to end, s | median stages from results.json, s | kernel | said \"compiling\" |\n"
            "|---|---|---|---|---|")
    return head + "\n" + "\n".join(rows)


def problem_table(args):
    cache = args.cache or os.path.join(tempfile.gettempdir(), "nestgrad-bench-cache")
    rows, before = [], load()
    for name in args.problems:
        samplers = ["nestgrad"] + (args.peers if PROBLEMS[name][2] else [])
        ours = None
        for sampler in samplers:
            sampler_process(sampler, name, args, cache)  # untimed: warm caches (nestgrad compiles its kernel)
            runs = [sampler_process(sampler, name, args, cache) for _ in range(args.repeats)]
            done = [r for r in runs if "dnf" not in r]
            if not done:
                rows.append(f"| {name} | {sampler} | {runs[0]['dnf']} | | | | | |")
                continue
            wall, sampling = median([r["wall"] for r in done]), median([r["sampling"] for r in done])
            r = done[len(done) // 2]
            if sampler == "nestgrad":
                ours = wall
                who = f"nestgrad (kernel {'/'.join(sorted({d['kernel'] for d in done}))})"
            else:
                who = sampler
            ratio = "1" if sampler == "nestgrad" else (f"{wall / ours:.1f}x" if ours else "—")
            truth = "—" if r["truth"] is None else f"{r['truth']:.3f}"
            rows.append(f"| {name} | {who} | {wall:.2f} | {sampling:.2f} | {ratio} | {r['nlike']:,} | "
                        f"{r['ngrad']:,} | {r['logz']:.3f} ± {r['logz_err']:.3f} (truth {truth}) |")
            print(rows[-1], flush=True)
    head = (f"Each sampler in its own process, warm caches, nlive {args.nlive}, dlogz {args.dlogz}, seed {args.seed}; "
            f"median of {args.repeats} processes; load average {before} before, {load()} after. End to end: "
            "process start to exit (imports, likelihood, kernel load, sampling; nestgrad also writes its run "
            "folder). Sampling: the sampler's own run, inside that time. ratio: end to end / nestgrad's.\n\n"
            "| problem | sampler | end to end, s | sampling, s | ratio | likelihood evals | gradient evals | "
            "logZ |\n|---|---|---|---|---|---|---|---|")
    return head + "\n" + "\n".join(rows)


def machine_info():
    import numba
    versions = {"numpy": np.__version__, "numba": numba.__version__}
    for mod in ("dynesty", "ultranest"):
        try:
            versions[mod] = __import__(mod).__version__
        except ImportError:
            versions[mod] = "not installed"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            + ", ".join(f"{k} {v}" for k, v in versions.items()))


def write_docs(text, command):
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    doc = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    block = f"{MARK_START}\nMeasured {stamp} on {machine_info()}.\nCommand: `{command}`\n\n{text}\n{MARK_END}"
    if MARK_START in doc and MARK_END in doc:
        head, rest = doc.split(MARK_START, 1)
        doc = head + block + rest.split(MARK_END, 1)[1]
    else:
        doc = doc.rstrip() + "\n\n## Sampler, end to end (`scripts/bench_sampler.py`)\n\n" + block + "\n"
    with open(path, "w") as fh:
        fh.write(doc)


def byte_compile():
    """Write nestgrad's bytecode first, as installing a package does (pip byte-compiles it; a checkout gets it at its
    first import unless PYTHONDONTWRITEBYTECODE is set, as it is in some sandboxes and CI images). The peers'
    installed modules carry theirs; without this every timed nestgrad process would compile its own ~200 modules
    from source (0.1-0.25 s on the 2-core machine) where a user's would not."""
    import compileall

    for package in ("nestgrad", "ad", "likelihoods", "sampler"):
        compileall.compile_dir(os.path.join(ROOT, package), quiet=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="nestgrad alone, 3 repeats, seed 4-D only")
    ap.add_argument("--write", action="store_true", help="write the tables into docs/benchmarks.md")
    ap.add_argument("--repeats", type=int, default=5, help="runs per figure (median reported; default 5)")
    ap.add_argument("--nlive", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dlogz", type=float, default=0.1)
    ap.add_argument("--problems", nargs="*", choices=list(PROBLEMS), help=f"default: {' '.join(DEFAULT_PROBLEMS)}")
    ap.add_argument("--peers", nargs="*", choices=PEERS, default=DEFAULT_PEERS)
    ap.add_argument("--no-cli", action="store_true", help="skip the `nestgrad run` table")
    ap.add_argument("--no-problems", action="store_true", help="skip the side-by-side table")
    ap.add_argument("--cache", help="cache folder of the side-by-side table (default: a fixed temporary folder)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.child:  # one sampler in this process, for sampler_process
        name = args.problems[0]
        if args.child == "nestgrad":
            result = run_nestgrad(name, args.nlive, args.seed, args.dlogz, args.out)
        else:
            result = run_peer(args.child, name, args.nlive, args.seed, args.dlogz)
        print(json.dumps(result))
        return 0

    byte_compile()
    if args.quick:
        args.repeats, args.peers, args.problems = 3, [], args.problems or ["seed4d"]
    args.problems = args.problems or DEFAULT_PROBLEMS
    parts = []
    if not args.no_cli:
        parts.append(cli_table(args.repeats))
        print(parts[-1], flush=True)
    if not args.no_problems:
        parts.append(problem_table(args))
        print(parts[-1], flush=True)
    if args.write:
        write_docs("\n\n".join(parts),
                   "python scripts/bench_sampler.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
