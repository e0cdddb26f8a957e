"""Accuracy over seeds on the hard problem classes, nestgrad next to dynesty (rslice) in one run.

For each problem of ``tests/sampler/hard_problems.py`` (analytic logZ and mode weights) nestgrad runs with its
default settings for ``--seeds`` seeds; dynesty's random slice sampler (``sample='rslice'``, same nlive, same
likelihood and prior transform, called from Python) runs ``--peer-seeds`` seeds with a time limit per run. Reported
per problem: rms and mean logZ pull, the ratio of the mean reported error to the seed scatter, the worst mode
weight error over seeds, the ESS implied by the seed scatter of the posterior means against the reported ESS
(correlated Gaussian), and wall times: the first nestgrad run of a problem includes compiling its kernel, the
median of the others does not.

    python scripts/bench_accuracy.py                       # all problems, 10 seeds, dynesty 3 seeds
    python scripts/bench_accuracy.py --problems mixture5d ridge2d --seeds 20 --peer-seeds 0
    python scripts/bench_accuracy.py --write               # also put the table into docs/benchmarks.md
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "sampler")]
PEER_TIMEOUT = 600.0
MARK_START, MARK_END = "<!-- bench_accuracy:start -->", "<!-- bench_accuracy:end -->"


def nestgrad_runs(name, seeds, nlive):
    from hard_problems import PROBLEMS
    from nestgrad.sampler import NestedSampler
    problem = PROBLEMS[name]()
    rows = []
    for seed in seeds:
        start = time.perf_counter()
        res = NestedSampler(problem, problem.prior, nlive=nlive, seed=seed).run(progress=False)
        row = {"logz": res.logz, "err": res.logz_err, "wall": time.perf_counter() - start, "ess": res.ess,
               "nlike": res.nlike, "mean": res.samples.mean(axis=0).tolist()}
        if hasattr(problem, "mode_weights"):
            row["modes"] = problem.mode_weights(res.dead.theta, res.weights).tolist()
        rows.append(row)
    return problem, rows


def peer_run(name, seed, nlive):
    """dynesty rslice on one seed (run in a subprocess by ``--peer``)."""
    import dynesty
    from hard_problems import PROBLEMS
    problem = PROBLEMS[name]()
    k = problem.cpu_kernels()

    scratch = np.empty(k.scratch_size)

    def loglike(theta):
        v = float(k.value(np.ascontiguousarray(theta, dtype=np.float64), k.data, scratch))
        return v if np.isfinite(v) else -1e300

    def transform(u):
        return problem.prior.transform(np.asarray(u, dtype=np.float64)[None])[0]

    loglike(transform(np.full(problem.ndim, 0.5)))
    start = time.perf_counter()
    sampler = dynesty.NestedSampler(loglike, transform, problem.ndim, nlive=nlive, sample="rslice",
                                    rstate=np.random.default_rng(seed))
    sampler.run_nested(dlogz=0.1, print_progress=False)
    res = sampler.results
    weights = np.exp(res.logwt - res.logz[-1])
    out = {"logz": float(res.logz[-1]), "err": float(res.logzerr[-1]), "wall": time.perf_counter() - start,
           "nlike": int(np.sum(res.ncall))}
    if hasattr(problem, "mode_weights"):
        out["modes"] = problem.mode_weights(res.samples, weights / weights.sum()).tolist()
    return out


def peer_runs(name, seeds, nlive):
    rows = []
    for seed in seeds:
        cmd = [sys.executable, __file__, "--peer", name, str(seed), str(nlive)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=PEER_TIMEOUT, check=True)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        except subprocess.TimeoutExpired:
            rows.append({"timeout": True})
        except subprocess.CalledProcessError as error:
            rows.append({"failed": error.stderr.strip().splitlines()[-1:]})
    return rows


def ratio_interval(ratio, n):
    """90% interval of (reported error / true scatter) given the ratio to the scatter of ``n`` seeds: the sample
    variance is sigma^2 chi2_{n-1} / (n-1), so 10 seeds leave the ratio uncertain by about +-30%."""
    from scipy.stats import chi2
    return [ratio * math.sqrt(chi2.ppf(q, n - 1) / (n - 1)) for q in (0.05, 0.95)]


def summarise(problem, rows):
    ok = [r for r in rows if "logz" in r]
    if not ok:
        return {"n": 0}
    logz = np.array([r["logz"] for r in ok])
    err = np.array([r["err"] for r in ok])
    pull = (logz - problem.logz) / err
    out = {"n": len(ok), "rms_pull": float(np.sqrt(np.mean(pull ** 2))), "mean_pull": float(pull.mean()),
           "ratio": float(err.mean() / logz.std(ddof=1)) if len(ok) > 1 else math.nan,
           "ratio_90": ratio_interval(float(err.mean() / logz.std(ddof=1)), len(ok)) if len(ok) > 2 else None,
           "wall_first": ok[0]["wall"], "wall_median": float(np.median([r["wall"] for r in ok[1:] or ok])),
           "nlike": float(np.median([r["nlike"] for r in ok])), "timeouts": len(rows) - len(ok)}
    if "modes" in ok[0]:
        errors = [np.max(np.abs(np.array(r["modes"]) - problem.weights)) for r in ok]
        out["mode_error"] = float(max(errors))
        out["mode_error_median"] = float(np.median(errors))
        out["modes_lost"] = int(sum(np.min(np.array(r["modes"]) / problem.weights) < 0.1 for r in ok))
    if "mean" in ok[0] and len(ok) > 2 and hasattr(problem, "covs") and len(problem.covs) == 1:
        means = np.array([r["mean"] for r in ok])
        implied = float(np.mean(np.diag(problem.covs[0]) / np.maximum(means.var(axis=0, ddof=1), 1e-300)))
        out["ess_implied"], out["ess_reported"] = implied, float(np.mean([r["ess"] for r in ok]))
    return out


def fmt(s):
    if not s.get("n"):
        return "did not finish"
    text = f"{s['n']} seeds: rms pull {s['rms_pull']:.2f} (mean {s['mean_pull']:+.2f}), err/scatter {s['ratio']:.2f}"
    if s.get("ratio_90"):
        text += f" (90%: {s['ratio_90'][0]:.2f}-{s['ratio_90'][1]:.2f})"
    text += f", {s['wall_median']:.1f} s/run, {s['nlike'] / 1e6:.2f}M likelihood calls/run"
    if "mode_error" in s:
        text += (f", mode weight error median {s['mode_error_median']:.3f} worst {s['mode_error']:.2f}, "
                 f"a mode lost on {s['modes_lost']} of {s['n']}")
    if "ess_implied" in s:
        text += f", ESS implied {s['ess_implied']:.0f} vs reported {s['ess_reported']:.0f}"
    if s.get("timeouts"):
        text += f", {s['timeouts']} run(s) over {PEER_TIMEOUT:.0f} s"
    return text


def main():
    from hard_problems import PROBLEMS, VARIANTS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="*", choices=list(PROBLEMS), metavar="PROBLEM",
                        default=[p for p in PROBLEMS if p != "plateau" and p not in VARIANTS],
                        help="default: the issue's classes; also: plateau, " + ", ".join(VARIANTS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--peer-seeds", type=int, default=3)
    parser.add_argument("--peer-problems", nargs="*", default=None,
                        help="problems dynesty runs on (default: all); the others say 'not run'")
    parser.add_argument("--seed-start", type=int, default=0, help="first seed (seeds run from here on)")
    parser.add_argument("--json", help="also write every run's figures to this file")
    parser.add_argument("--nlive", type=int, default=500)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--peer", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        print(json.dumps(peer_run(args.peer[0], int(args.peer[1]), int(args.peer[2]))))
        return
    lines = [f"Measured {datetime.date.today()} on {platform.processor() or platform.machine()} "
             f"({os.cpu_count()} cores), nlive {args.nlive}, dlogz 0.1, default settings; command: "
             f"`python scripts/bench_accuracy.py --seeds {args.seeds} --peer-seeds {args.peer_seeds}"
             + (f" --seed-start {args.seed_start}" if args.seed_start else "")
             + (f" --peer-problems {' '.join(args.peer_problems)}" if args.peer_problems else "") + "`.", "",
             "| problem | nestgrad | dynesty rslice |", "|---|---|---|"]
    dump = {}
    for name in args.problems:
        seeds = range(args.seed_start, args.seed_start + args.seeds)
        problem, rows = nestgrad_runs(name, seeds, args.nlive)
        ours = summarise(problem, rows)
        run_peer = args.peer_seeds and (args.peer_problems is None or name in args.peer_problems)
        peer_rows = peer_runs(name, range(args.peer_seeds), args.nlive) if run_peer else []
        peer = summarise(problem, peer_rows) if run_peer else {}
        dump[name] = {"truth": problem.logz, "nestgrad": rows, "dynesty_rslice": peer_rows}
        if args.json:
            with open(args.json, "w") as out:
                json.dump(dump, out, indent=1)
        line = (f"| {name} (logZ {problem.logz:.3f}) | {fmt(ours)}; first run of the process "
                f"{ours['wall_first']:.1f} s (compiles the kernel unless an earlier problem shares it) "
                f"| {fmt(peer) if run_peer else 'not run'} |")
        print(line, flush=True)
        lines.append(line)
    if args.write:
        path = os.path.join(ROOT, "docs", "benchmarks.md")
        text = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
        block = MARK_START + "\n" + "\n".join(lines) + "\n" + MARK_END
        if MARK_START in text:
            text = text[:text.index(MARK_START)] + block + text[text.index(MARK_END) + len(MARK_END):]
        else:
            text += "\n## Accuracy over seeds on hard problems\n\n" + block + "\n"
        open(path, "w").write(text)


if __name__ == "__main__":
    main()
