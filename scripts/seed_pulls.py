"""The distribution of logZ pulls of one test problem over many seeds, with settings given on the command line.

A bias of a fraction of the error bar needs hundreds of seeds to show (the standard error of a mean pull is
1/sqrt(seeds)), and settings compared on the same seeds start from the same prior draws, so their pulls are not
independent: compare settings on disjoint seed ranges. Problems are those of ``tests/sampler/problems.py``
(``shells5``, ``gauss10``, ``seed4d``, ...), ``tests/sampler/hard_problems.py`` (``mixture5d``, ``cauchy6d``, ...)
and ``tests/sampler/peer_problems.py`` (``funnel5d``, ``loggamma4d``, ...), or a built-in likelihood under its
default priors, ``builtin:NAME`` (``builtin:gaussian4d``, ``builtin:gaussian:ndim=30``), whose precision ``--dtype``
and ``--sum-dtype`` set (e.g. float32 with float64 sums, the GPU's default).

    python scripts/seed_pulls.py shells5 --nlive 400 --seeds 0:800 --processes 2
    python scripts/seed_pulls.py shells5 --nlive 400 --seeds 800:1000 --set delete_fraction=0.5
    python scripts/seed_pulls.py gauss10 --seeds 0:100 --set hmc.target_correlation=0.1
    python scripts/seed_pulls.py builtin:gaussian4d --seeds 0:100 --dtype float32 --sum-dtype float64
"""

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "sampler")]


def builtin_problem(name, dtype=None, sum_dtype=None):
    """``(likelihood, prior, reference logZ)`` of ``builtin:NAME[:option=value,...]`` on the CPU backend."""
    from nestgrad.likelihoods import builtin
    from nestgrad.sampler.priors import Prior

    _, _, rest = name.partition(":")
    key, _, options = rest.partition(":")
    kwargs = dict((k, json.loads(v)) for k, _, v in (o.partition("=") for o in options.split(",") if o))
    try:
        b = builtin.get(key, **kwargs)
    except (KeyError, TypeError, ValueError) as error:
        raise SystemExit(f"seed_pulls: {name}: {error}") from None
    if b.reference_logz is None:
        raise SystemExit(f"seed_pulls: {name} has no reference logZ to pull against")
    return b.likelihood(backend="cpu", dtype=dtype, sum_dtype=sum_dtype), Prior.from_spec(b.priors), b.reference_logz


def make_problem(name, dtype=None, sum_dtype=None):
    """``(likelihood, prior, true logZ)`` of a problem name (module docstring)."""
    if name.startswith("builtin:"):
        return builtin_problem(name, dtype, sum_dtype)
    if dtype is not None or sum_dtype is not None:
        raise SystemExit("seed_pulls: --dtype and --sum-dtype apply to builtin:NAME problems (the others are "
                         "hand-written float64 kernels)")
    problem = suite_problem(name)
    return problem, problem.prior, problem.logz


def suite_problem(name):
    import hard_problems
    import peer_problems
    import problems
    for table in (hard_problems.PROBLEMS, peer_problems.PROBLEMS):
        if name in table:
            return table[name]()
    for family in ("shells", "gauss"):
        if name.startswith(family) and name[len(family):].isdigit():
            return (problems.shells if family == "shells" else problems.gaussian)(int(name[len(family):]))
    if hasattr(problems, name):
        return getattr(problems, name)()
    raise SystemExit(f"seed_pulls: unknown problem {name!r} (shellsN, gaussN, a function of problems.py, or one of "
                     f"{', '.join(sorted(hard_problems.PROBLEMS) + sorted(peer_problems.PROBLEMS))})")


def settings(pairs):
    """``key=value`` pairs (value parsed as JSON where it can be) into NestedSampler options; ``hmc.x`` nests."""
    out = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            raise SystemExit(f"seed_pulls: --set {pair!r}: expected key=value")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        if key.startswith("hmc."):
            out.setdefault("hmc", {})[key[4:]] = value
        else:
            out[key] = value
    return out


def one_seed(job):
    name, precision, nlive, dlogz, options, running_from, seed = job
    from nestgrad.sampler import NestedSampler, live_moments
    if running_from is not None:
        live_moments.RUNNING_FROM = running_from
    likelihood, prior, logz = make_problem(name, *precision)
    r = NestedSampler(likelihood, prior, nlive=nlive, seed=seed, **options).run(dlogz=dlogz, progress=False)
    ranks = r.insertion or {"ks_p": np.nan, "worst_window_p": np.nan}
    return (r.logz - logz, r.logz_err, r.nlike, float(np.nanmean(r.diagnostics["rho_logl"])),
            min(ranks["ks_p"], ranks["worst_window_p"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--nlive", type=int, default=400)
    parser.add_argument("--dlogz", type=float, default=0.1)
    parser.add_argument("--seeds", default="0:100", help="first:end (end excluded), default 0:100")
    parser.add_argument("--processes", type=int, default=2, help="worker processes, one numba thread each")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a sampler setting (delete_fraction=0.5, hmc.target_correlation=0.1); repeatable")
    parser.add_argument("--running-moments-from", type=int, metavar="N",
                        help="carry the live set's moments from N survivors (sampler.live_moments; default its own)")
    parser.add_argument("--dtype", choices=("float64", "float32"), help="a builtin:NAME likelihood's precision")
    parser.add_argument("--sum-dtype", choices=("float64",), help="with --dtype float32: its loop sums in float64")
    parser.add_argument("--per-seed", action="store_true", help="also print each seed's logZ - truth, error, pull")
    opts = parser.parse_args()
    first, _, end = opts.seeds.partition(":")
    seeds = range(int(first), int(end))
    if len(seeds) < 2:  # before any run: one seed has no scatter, and no distribution of pulls
        raise SystemExit(f"seed_pulls: --seeds {opts.seeds} gives {len(seeds)} seed(s); a distribution needs two or more")
    options = settings(opts.set)
    precision = (opts.dtype, opts.sum_dtype)
    make_problem(opts.problem, *precision)  # an unknown name fails here, before the workers start
    os.environ["NUMBA_NUM_THREADS"] = "1"  # inherited by the workers: one core each
    jobs = [(opts.problem, precision, opts.nlive, opts.dlogz, options, opts.running_moments_from, s) for s in seeds]
    with ProcessPoolExecutor(opts.processes) as pool:
        rows = np.array(list(pool.map(one_seed, jobs)))
    diff, err, nlike, rho, rank_p = rows.T
    pull, n = diff / err, len(seeds)
    se = 1.0 / np.sqrt(n)
    moments = "" if opts.running_moments_from is None else f", running moments from {opts.running_moments_from}"
    kind = "" if opts.dtype is None else f" {opts.dtype}" + (f" ({opts.sum_dtype} sums)" if opts.sum_dtype else "")
    print(f"{opts.problem}{kind} nlive {opts.nlive} {options or 'defaults'}{moments}, seeds {opts.seeds} ({n}):")
    print(f"  mean pull {pull.mean():+.3f} ± {pull.std(ddof=1) * se:.3f}, rms pull {np.sqrt(np.mean(pull ** 2)):.2f}")
    print(f"  logZ - truth {diff.mean():+.4f} ± {diff.std(ddof=1) * se:.4f} nats; mean error {err.mean():.3f}, "
          f"seed scatter {diff.std(ddof=1):.3f}")
    print(f"  likelihood calls {nlike.mean():.0f} a run; start-end rank correlation of logL {rho.mean():+.3f}")
    print(f"  insertion-rank test (smaller of the whole-run and worst-window p): below 1e-3 in "
          f"{np.mean(rank_p < 1e-3):.0%} of runs, below 0.05 in {np.mean(rank_p < 0.05):.0%}, median {np.nanmedian(rank_p):.2g}")
    if opts.per_seed:
        for seed, d, e, p, q in zip(seeds, diff, err, pull, rank_p):
            print(f"  seed {seed}: logZ - truth {d:+.4f}, error {e:.4f}, pull {p:+.2f}, insertion p {q:.2g}")


if __name__ == "__main__":
    main()
