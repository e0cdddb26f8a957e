"""Where along a run does the live set's volume estimate drift? The heavy-tailed mixture against its exact volumes.

For ``cauchy_mixture4d`` (two 4-D Cauchy products, weights 0.7 / 0.3, tests/sampler/heavy_tailed_modes.py) the
prior volume X(L) of every contour is computed once by importance sampling from a defensive mixture (half
uniform on the box, half the likelihood itself as a density; relative error ~1e-3 at 40M draws). Each seed's run
then gives, at a grid of true depths log X, the error of its own estimate ``-sum 1/n_live`` there; averaged over
seeds that is zero for a sampler whose new points are uniform in their contours, and its growth with depth says
where the live set falls behind. Settings as in ``seed_pulls.py``:

    python scripts/mixture_volume_check.py --seeds 7000:7060
    python scripts/mixture_volume_check.py --seeds 7000:7060 --set hmc.clustering=false
"""

import argparse
import math
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "sampler"), os.path.join(ROOT, "scripts")]

DEPTHS = np.array([-1, -2, -4, -6, -8, -10, -12, -14, -16, -18, -20, -22, -24])


def log_likelihoods(problem, theta):
    """The mixture's logL of the rows of ``theta``, vectorised (the problem's own kernel goes one row at a time,
    too slow for the tens of millions of draws of the volume table)."""
    width, centres, log_weights = problem.cpu_kernels().data
    parts = [lw + np.sum(np.log(width[0] / math.pi) - np.log(width[0] ** 2 + (theta - c) ** 2), axis=1)
             for c, lw in zip(centres, log_weights)]
    return np.logaddexp.reduce(parts, axis=0)


def volume_table(problem, draws, seed=0, chunk=2_000_000):
    """``(L, log X(L))``, L ascending: the exact volume of each contour, from ``draws`` weighted draws."""
    width, centres, log_weights = problem.cpu_kernels().data
    g, weights = width[0], np.exp(log_weights)
    half = float(problem.prior.distributions[problem.params[0]].high)
    d = centres.shape[1]
    inside = np.prod((np.arctan((half - centres) / g) - np.arctan((-half - centres) / g)) / math.pi, axis=1)
    z_box, volume = float(np.sum(weights * inside)), (2 * half) ** d
    rng = np.random.default_rng(seed)
    levels, ratios = [], []
    for _ in range(max(1, draws // chunk)):
        theta = rng.uniform(-half, half, (chunk, d))
        from_density = rng.random(chunk) < 0.5
        m = int(from_density.sum())
        comp = (rng.random(m) < weights[1] * inside[1] / z_box).astype(int)
        lo, hi = np.arctan((-half - centres[comp]) / g), np.arctan((half - centres[comp]) / g)
        theta[from_density] = centres[comp] + g * np.tan(lo + (hi - lo) * rng.random((m, d)))
        logl = log_likelihoods(problem, theta)
        levels.append(logl)
        ratios.append(1.0 / (0.5 * volume * np.exp(logl) / z_box + 0.5))  # (1 / volume) / proposal density
    logl, ratio = np.concatenate(levels), np.concatenate(ratios)
    order = np.argsort(logl)[::-1]
    log_x = np.log(np.cumsum(ratio[order]) / logl.size)
    return logl[order][::-1].copy(), log_x[::-1].copy()


def one_seed(job):
    seed, nlive, options, table = job
    from seed_pulls import make_problem
    from nestgrad.sampler import NestedSampler
    from nestgrad.sampler.evidence import live_counts, sort_dead

    problem = make_problem("cauchy_mixture4d")
    res = NestedSampler(problem, problem.prior, nlive=nlive, seed=seed, **options).run(progress=False)
    order = sort_dead(res.dead.logl, res.dead.logl_birth)
    logl, birth = res.dead.logl[order], res.dead.logl_birth[order]
    estimate = -np.cumsum(1.0 / live_counts(logl, birth))
    truth = np.interp(logl, *table)
    at = np.minimum(np.searchsorted(-truth, -DEPTHS), truth.size - 1)
    return (res.logz - problem.logz) / res.logz_err, estimate[at] - truth[at]


def main():
    from seed_pulls import make_problem, settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="7000:7060", help="first:end (end excluded)")
    parser.add_argument("--nlive", type=int, default=500)
    parser.add_argument("--draws", type=int, default=40_000_000, help="draws for the volume table")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    opts = parser.parse_args()
    first, _, end = opts.seeds.partition(":")
    table = volume_table(make_problem("cauchy_mixture4d"), opts.draws)
    os.environ["NUMBA_NUM_THREADS"] = "1"
    jobs = [(s, opts.nlive, settings(opts.set), table) for s in range(int(first), int(end))]
    with ProcessPoolExecutor(opts.processes) as pool:
        rows = list(pool.map(one_seed, jobs))
    pull = np.array([r[0] for r in rows])
    errors = np.array([r[1] for r in rows])
    n = len(rows)
    print(f"cauchy_mixture4d nlive {opts.nlive} {settings(opts.set) or 'defaults'}, seeds {opts.seeds}: "
          f"mean pull {pull.mean():+.3f} ± {pull.std(ddof=1) / math.sqrt(n):.3f}")
    for depth, column in zip(DEPTHS, errors.T):
        print(f"  log X {depth:4d}: estimate - exact {column.mean():+.4f} ± {column.std(ddof=1) / math.sqrt(n):.4f}")


if __name__ == "__main__":
    main()
