"""Is one iteration's move invariant on the heavy-tailed mixture, when its live set is exact?

At a few contours of ``cauchy_mixture4d`` taken from a reference run (fractions of its iterations), draws exact
uniform live sets (rejection from the box or from the likelihood as a density), builds the sampler's own
clusters and geometry from them, and runs its chains from survivors chosen as ``nested.step`` does, with the
step size, trajectory length and jumps the reference run used there. An invariant move from exact start points
gives exact end points: their logL ranks against an independent exact sample of the contour are U(0, 1), mean
0.5. A bias that builds up only across iterations (from a live set that is no longer exact) does not show here;
one in the move itself does.

    python scripts/frozen_contour_check.py --fractions 0.03 0.2 0.45 --live-sets 60
"""

import argparse
import json
import math
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "sampler"), os.path.join(ROOT, "scripts")]


def exact_draws(problem, n, logl_star, rng, logl):
    """``n`` points uniform in ``{logL > logl_star}`` (physical coordinates)."""
    width, centres, log_weights = problem.cpu_kernels().data
    g, weights, half, d = width[0], np.exp(log_weights), 20.0, centres.shape[1]
    out, got = [], 0
    while got < n:
        m = 200_000
        if logl_star < -14.0:  # wide contours: uniform proposals accept often enough
            theta = rng.uniform(-half, half, (m, d))
            keep = logl(theta) > logl_star
        else:  # the likelihood as the proposal density, accepted with probability exp(L* - L)
            comp = (rng.random(m) < weights[1]).astype(int)
            theta = centres[comp] + g * np.tan(math.pi * (rng.random((m, d)) - 0.5))
            theta = theta[np.all(np.abs(theta) < half, axis=1)]
            values = logl(theta)
            keep = (values > logl_star) & (rng.random(theta.shape[0]) < np.exp(np.minimum(logl_star - values, 0)))
        out.append(theta[keep])
        got += int(keep.sum())
    return np.concatenate(out)[:n]


def main():
    from mixture_volume_check import log_likelihoods
    from seed_pulls import make_problem
    from nestgrad.sampler import NestedSampler, nested
    from nestgrad.sampler import geometry as geo
    from nestgrad.sampler.connectivity import Segments
    from nestgrad.sampler.hmc import (CTRL_DENSE, CTRL_JUMPS, CTRL_N_STEPS, CTRL_PAIR_SLICES, CTRL_RADIAL_SLICES,
                                      CTRL_REFRESH, CTRL_SLICES, NCTRL)

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fractions", type=float, nargs="+", default=[0.03, 0.1, 0.2, 0.45])
    parser.add_argument("--live-sets", type=int, default=8, help="exact live sets per contour")
    parser.add_argument("--calls", type=int, default=25, help="chain batches per live set")
    parser.add_argument("--reference", type=int, default=2_000_000, help="exact draws ranking the end points")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()

    problem = make_problem("cauchy_mixture4d")
    logl = lambda theta: log_likelihoods(problem, theta)  # noqa: E731
    used = []
    NestedSampler(problem, problem.prior, nlive=500, seed=opts.seed).run(
        progress=False, callback=lambda it, st, info: used.append((info.logl_star, info.step_size, info.n_steps,
                                                                  st.jumps)))
    sampler = NestedSampler(problem, problem.prior, nlive=500, seed=opts.seed, delete_fraction=0.9)
    proposal, settings = sampler._build(), sampler.hmc
    ws, k = proposal.workspace, proposal.k
    rng = np.random.default_rng(opts.seed + 12345)
    for fraction in opts.fractions:
        logl_star, step, n_steps, jumps = used[int(fraction * len(used))]
        reference = np.sort(logl(exact_draws(problem, opts.reference, logl_star, rng, logl)))
        ranks = []
        for _ in range(opts.live_sets):
            u = (exact_draws(problem, 500, logl_star, rng, logl) + 20.0) / 40.0
            live_logl = logl(u * 40.0 - 20.0)
            labels = nested.cluster_labels(u, Segments(proposal.logl_at, logl_star, u), proposal.neighbours)
            cov = geo.covariance(u)
            dense = proposal.dense and geo.correlated(u, cov)
            geometry = geo.build(u, labels, dense, cov)
            ctrl = np.zeros(NCTRL, np.int64)
            ctrl[CTRL_N_STEPS], ctrl[CTRL_REFRESH], ctrl[CTRL_JUMPS] = n_steps, settings.refresh_every, jumps
            ctrl[CTRL_DENSE], ctrl[CTRL_SLICES] = int(dense), settings.axis_slices
            ctrl[CTRL_PAIR_SLICES] = settings.pair_slices
            ctrl[CTRL_RADIAL_SLICES] = settings.radial_slices
            for _ in range(opts.calls):
                starts = rng.integers(0, u.shape[0], k)
                steps = step * np.exp(settings.step_jitter * rng.standard_normal(k))
                chain_rng = rng.integers(1, 2 ** 63, (k, 2), dtype=np.int64).astype(np.uint64)
                proposal.advance(np.ascontiguousarray(u[starts]), live_logl[starts], logl_star, steps, ctrl, chain_rng,
                                 proposal.data, proposal.codes, proposal.args, *geometry.kernel_arrays(), *ws.arrays())
                ranks.append((np.searchsorted(reference, ws.out_logl) + rng.random(k)) / (reference.size + 1))
        ranks = np.concatenate(ranks)
        print(json.dumps({"fraction": fraction, "logl_star": round(logl_star, 3), "chains": int(ranks.size),
                          "rank_mean": round(float(ranks.mean()), 4),
                          "se": round(float(ranks.std() / math.sqrt(ranks.size)), 4)}), flush=True)


if __name__ == "__main__":
    main()
