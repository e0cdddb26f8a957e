"""Where a run's evidence goes wrong on Rastrigin's function: each dead point's assigned E[log X] against the true
log X of its contour, by band of true log X, averaged over seeds.

Rastrigin's ``logL = -sum_i f(x_i)``, ``f(x) = x^2 - 10 cos(2 pi x) + 10``, on U(-5.12, 5.12)^d has contours
``sum_i f(x_i) < c`` whose prior volume is the distribution function of a sum of d independent terms: the 1-D law
of f under the uniform prior (a fine grid of x, sorted) convolved d times by FFT (2e-4 bins; it gives logZ to
1e-4). Perfect nested sampling's difference averages 0 in every band; a positive one is a volume overestimated
there, and raises logZ by about as much where the posterior lies (log X -9 to -14 in 3-D).

    python scripts/rastrigin_volume_check.py --dim 3 --seeds 200 260
    python scripts/rastrigin_volume_check.py --dim 3 --seeds 200 230 --hmc '{"min_jump_acceptance_modes": 0.02}'
"""

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests", "sampler")]
HALF, WIDTH, TOP = 5.12, 2e-4, 200.0


def volume_table(dim):
    """``(c, X(c))`` on the bins' grid: P(sum of the d terms < c)."""
    x = np.linspace(-HALF, HALF, 20_000_001)
    values = np.sort(x * x - 10.0 * np.cos(2.0 * np.pi * x) + 10.0)
    edges = np.arange(0.0, TOP + WIDTH, WIDTH)
    mass = np.diff(np.searchsorted(values, edges) / values.size)
    size = 1 << int(np.ceil(np.log2(dim * mass.size)))
    summed = np.maximum(np.fft.irfft(np.fft.rfft(mass, size) ** dim, size)[:mass.size], 0.0)
    return edges[1:] + (dim - 1) * WIDTH / 2, np.cumsum(summed)  # the sum of d bin centres' offsets


def one_seed(job):
    dim, nlive, hmc, seed, table = job
    from peer_multimodal import rastrigin
    from nestgrad.sampler import NestedSampler, evidence
    problem = rastrigin(dim)
    run = NestedSampler(problem, problem.prior, nlive=nlive, seed=seed, hmc=hmc).run(dlogz=0.1, progress=False)
    order = evidence.sort_dead(run.dead.logl, run.dead.logl_birth)
    logl = run.dead.logl[order]
    assigned = evidence.compute(logl, run.dead.logl_birth[order]).log_x
    true = np.log(np.interp(-logl, *table))
    return run.logz - problem.logz, true, assigned - true


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=3)
    parser.add_argument("--nlive", type=int, default=500)
    parser.add_argument("--seeds", type=int, nargs=2, default=[200, 230], metavar=("FIRST", "END"))
    parser.add_argument("--hmc", type=json.loads, default=None, help="HMC settings as JSON")
    parser.add_argument("--processes", type=int, default=2)
    opts = parser.parse_args()
    os.environ["NUMBA_NUM_THREADS"] = "1"
    table = volume_table(opts.dim)
    jobs = [(opts.dim, opts.nlive, opts.hmc, s, table) for s in range(*opts.seeds)]
    with ProcessPoolExecutor(opts.processes) as pool:
        rows = list(pool.map(one_seed, jobs))
    diff = np.array([r[0] for r in rows])
    print(f"rastrigin{opts.dim}d nlive {opts.nlive} hmc {opts.hmc or 'defaults'} seeds {opts.seeds[0]}:{opts.seeds[1]}: "
          f"logZ - truth {diff.mean():+.4f} ± {diff.std(ddof=1) / np.sqrt(diff.size):.4f}")
    true = np.concatenate([r[1] for r in rows])
    error = np.concatenate([r[2] for r in rows])
    for low in np.arange(np.floor(true.min()), 0.0):
        band = (true >= low) & (true < low + 1)
        if band.any():
            print(f"  true log X in [{low:+.0f}, {low + 1:+.0f}): assigned - true log X {error[band].mean():+.4f} "
                  f"({band.sum()} dead points)")


if __name__ == "__main__":
    main()
