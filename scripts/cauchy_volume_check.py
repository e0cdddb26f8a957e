"""Check a run's new points against the exact prior volume of the Cauchy-product contours.

For prod_i Cauchy(x_i; 0, w) on U(-h, h)^d every contour is ``sum_i log(1 + (x_i/w)^2) < C`` and its prior volume
X(C) is the distribution function of a sum of d independent terms, computed here by direct convolution on a grid
(bounds from putting each grid cell's mass at its left or right edge; their midpoint is used). A new point born
above contour C* should be uniform in it, so ``log X(C_new) - log X(C*)`` should average -1; the script prints
that average + 1 per band of log X (negative: new points land too deep) and the run's log-volume estimate minus
the truth at a few depths, for each seed:

    python scripts/cauchy_volume_check.py --dim 10 --width 0.05 --seeds 0 20
    python scripts/cauchy_volume_check.py --dim 10 --hmc '{"axis_slices": 0}'   # without the axis slice moves
"""

import argparse
import json
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "sampler")]


def log_volume_table(dim, width, half, step=0.005):
    """``(C grid, log X at each grid point, slack)``: log P(sum of the terms < C) with the cells' masses at their
    left edges; the truth lies between the table at C - slack and at C."""
    cmax = dim * math.log1p((half / width) ** 2) + 0.1
    n = int(cmax / step) + 1
    edges = np.arange(n + 1) * step
    mass = np.diff(np.minimum(1.0, width * np.sqrt(np.expm1(edges)) / half))
    total = mass.copy()
    for _ in range(dim - 1):
        total = np.convolve(total, mass)[:n]
    with np.errstate(divide="ignore"):
        return edges[1:], np.log(np.cumsum(total)), dim * step


def log_volume(c, table):
    grid, logx, slack = table
    return 0.5 * (np.interp(c, grid, logx) + np.interp(c - slack, grid, logx))


def check(seed, dim, width, half, nlive, hmc, table):
    from hard_problems import cauchy
    from nestgrad.sampler import NestedSampler
    from nestgrad.sampler.evidence import live_counts, sort_dead

    problem = cauchy(dim, width=width, half_width=half)
    res = NestedSampler(problem, problem.prior, nlive=nlive, seed=seed, hmc=hmc).run(progress=False)
    order = sort_dead(res.dead.logl, res.dead.logl_birth)
    logl, birth = res.dead.logl[order], res.dead.logl_birth[order]
    top = -dim * math.log(math.pi * width)  # logl at the centre: logl = top - C
    lx = log_volume(top - logl, table)
    born = np.isfinite(birth)
    lx_birth = np.where(born, log_volume(top - np.where(born, birth, top), table), 0.0)
    excess = lx - lx_birth + 1.0
    estimate = -np.cumsum(1.0 / live_counts(logl, birth))
    out = {"seed": seed, "pull": round((res.logz - problem.logz) / res.logz_err, 3)}
    for top_band in range(0, -70, -10):
        band = born & (lx_birth <= top_band) & (lx_birth > top_band - 10)
        if band.sum() > 100:
            out[f"mean log-fraction + 1, log X in ({top_band - 10}, {top_band}]"] = round(float(excess[band].mean()), 4)
    for depth in (-20, -30, -40, -50):
        i = int(np.searchsorted(-lx, -depth))
        if i < lx.size:
            out[f"estimate - truth at log X {depth}"] = round(float(estimate[i] - lx[i]), 3)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--width", type=float, default=0.05)
    parser.add_argument("--half-width", type=float, default=20.0)
    parser.add_argument("--nlive", type=int, default=500)
    parser.add_argument("--seeds", type=int, nargs=2, default=(0, 10), metavar=("FIRST", "END"))
    parser.add_argument("--hmc", type=json.loads, default=None,
                        help="HMC settings as JSON, e.g. '{\"axis_slices\": 0}'")
    args = parser.parse_args()
    table = log_volume_table(args.dim, args.width, args.half_width)
    rows = []
    for seed in range(*args.seeds):
        rows.append(check(seed, args.dim, args.width, args.half_width, args.nlive, args.hmc, table))
        print(json.dumps(rows[-1]), flush=True)
    pulls = np.array([r["pull"] for r in rows])
    print(f"{len(pulls)} seeds: mean pull {pulls.mean():+.2f}, rms {math.sqrt(np.mean(pulls ** 2)):.2f}")


if __name__ == "__main__":
    main()
