"""Benchmark nestgrad's sampler against dynesty (rwalk, rslice) and UltraNest on the same machine, same run.

Every sampler gets the same likelihood implementation: the numba-compiled per-sample ``value`` of the built-in
problem (nestgrad calls it inside its fused HMC kernel; the peers call it from Python), and the same prior
transform. Wall times exclude compilation. Peers run in a subprocess with a 180 s limit and are reported as
"did not finish" beyond it.

    python scripts/bench_sampler.py                 # full table (takes a while; run on a quiet machine)
    python scripts/bench_sampler.py --quick         # nestgrad alone on a small subset
    python scripts/bench_sampler.py --write         # also put the table into docs/benchmarks.md
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
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
QUICK = ["seed4d", "gauss10"]
PEERS = ["dynesty-rwalk", "dynesty-rslice", "ultranest"]
PEER_TIMEOUT = 180.0
MARK_START, MARK_END = "<!-- bench_sampler:start -->", "<!-- bench_sampler:end -->"


def load_problem(name):
    from nestgrad.likelihoods import builtin
    from nestgrad.sampler import Prior
    bname, options, peers = PROBLEMS[name]
    b = builtin.get(bname, **options)
    return b, b.likelihood(backend="cpu"), Prior.from_spec(b.priors)


def run_nestgrad(name, nlive, seed):
    from nestgrad.sampler import NestedSampler
    b, like, prior = load_problem(name)
    sampler = NestedSampler(like, prior, nlive=nlive, seed=seed)
    sampler.compile()  # outside the timed run
    res = sampler.run(dlogz=0.1, progress=False)
    return {"wall": res.wall_time, "nlike": res.nlike, "ngrad": res.ngrad, "logz": res.logz,
            "logz_err": res.logz_err, "truth": b.reference_logz}


def run_peer(peer, name, nlive, seed):
    """Run one peer in this process and return its figures (called in a subprocess by ``--peer``)."""
    b, like, prior = load_problem(name)
    k = like.cpu_kernels()
    value, data = k.value, k.data
    ndim = prior.ndim
    theta_buf = np.empty(ndim, dtype=k.dtype)
    calls = [0]

    def loglike(theta):
        calls[0] += 1
        theta_buf[:] = theta
        v = float(value(theta_buf, data))
        return v if np.isfinite(v) else -1e300

    def transform(u):
        return prior.transform(np.asarray(u, dtype=np.float64))

    loglike(transform(np.full(ndim, 0.5)))  # compile / warm up before timing
    calls[0] = 0
    start = time.perf_counter()
    if peer.startswith("dynesty"):
        import dynesty
        method = peer.split("-")[1]
        ns = dynesty.NestedSampler(loglike, transform, ndim, nlive=nlive, sample=method,
                                   rstate=np.random.default_rng(seed))
        ns.run_nested(dlogz=0.1, print_progress=False)
        r = ns.results
        logz, err = float(r.logz[-1]), float(r.logzerr[-1])
    elif peer == "ultranest":
        import ultranest
        names = [f"p{i}" for i in range(ndim)]
        ns = ultranest.ReactiveNestedSampler(names, loglike, transform)
        r = ns.run(min_num_live_points=nlive, dlogz=0.1, show_status=False, viz_callback=False)
        logz, err = float(r["logz"]), float(r["logzerr"])
    else:
        raise SystemExit(f"unknown peer {peer!r}; known: {', '.join(PEERS)}")
    wall = time.perf_counter() - start
    return {"wall": wall, "nlike": calls[0], "ngrad": 0, "logz": logz, "logz_err": err, "truth": b.reference_logz}


def peer_in_subprocess(peer, name, nlive, seed):
    cmd = [sys.executable, os.path.abspath(__file__), "--peer", peer, "--problem", name, "--nlive", str(nlive),
           "--seed", str(seed)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=PEER_TIMEOUT, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"dnf": f"did not finish in {PEER_TIMEOUT:.0f} s"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"dnf": f"failed (exit {out.returncode}): {out.stderr.strip().splitlines()[-1:]}"}
    return json.loads(lines[-1])


def format_row(problem, who, r):
    if "dnf" in r:
        return f"| {problem} | {who} | {r['dnf']} | | | | |"
    truth = "—" if r["truth"] is None else f"{r['truth']:.3f}"
    return (f"| {problem} | {who} | {r['wall']:.2f} | {r['nlike']:,} | {r['ngrad']:,} | "
            f"{r['logz']:.3f} ± {r['logz_err']:.3f} | {truth} |")


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


def write_docs(table, command):
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    block = (f"{MARK_START}\nMeasured {stamp} on {machine_info()}.\nCommand: `{command}`\n\n{table}\n{MARK_END}")
    if MARK_START in text and MARK_END in text:
        head, rest = text.split(MARK_START, 1)
        text = head + block + rest.split(MARK_END, 1)[1]
    else:
        text = text.rstrip() + "\n\n## Sampler (`scripts/bench_sampler.py`)\n\n" + block + "\n"
    with open(path, "w") as fh:
        fh.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="nestgrad alone on a small subset")
    ap.add_argument("--write", action="store_true", help="write the table into docs/benchmarks.md")
    ap.add_argument("--nlive", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--problems", nargs="*", choices=list(PROBLEMS), help="subset of problems")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--peer", help=argparse.SUPPRESS)
    ap.add_argument("--problem", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.peer:  # child process of peer_in_subprocess
        print(json.dumps(run_peer(args.peer, args.problem, args.nlive, args.seed)))
        return 0

    names = args.problems or (QUICK if args.quick else list(PROBLEMS))
    rows = ["| problem | sampler | wall s | likelihood evals | gradient evals | logZ | truth |",
            "|---|---|---|---|---|---|---|"]
    for name in names:
        r = run_nestgrad(name, args.nlive, args.seed)
        rows.append(format_row(name, "nestgrad (CHMC)", r))
        print(rows[-1], flush=True)
        if PROBLEMS[name][2] and not (args.quick or args.no_peers):
            for peer in PEERS:
                rows.append(format_row(name, peer, peer_in_subprocess(peer, name, args.nlive, args.seed)))
                print(rows[-1], flush=True)
    table = "\n".join(rows)
    print(table)
    if args.write:
        write_docs(table, "python scripts/bench_sampler.py " + " ".join(argv if argv is not None else sys.argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
