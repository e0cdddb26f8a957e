"""Does the reported effective sample size tell the truth? Per parameter, the seed-to-seed scatter of the
weighted posterior mean over the standard error its ESS implies (sqrt of the median over seeds of posterior
variance / ESS): 1 is honest, above 1 the ESS overstates the precision, below 1 it is conservative. The same
ratio with Kish's ESS of the weights is printed beside it. With 30 seeds the ratio itself scatters about ±13%.
Problems are those of ``scripts/seed_pulls.py``.

    python scripts/ess_honesty.py funnel5d --seeds 100:130
    python scripts/ess_honesty.py mixture5d --seeds 200:230 --nlive 500
"""

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_pulls import make_problem  # noqa: E402  (also puts the checkout and the test problems on the path)


def one_seed(job):
    name, nlive, seed = job
    from nestgrad.sampler import NestedSampler
    from nestgrad.sampler.genealogy import kish_ess
    problem = make_problem(name)
    r = NestedSampler(problem, problem.prior, nlive=nlive, seed=seed).run(progress=False)
    theta, w = r.dead.theta, r.weights
    mean = w @ theta
    variance = w @ (theta - mean) ** 2
    return mean, variance, np.array([r.ess_params[p] for p in r.params]), kish_ess(w), r.ess, list(r.params)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("--nlive", type=int, default=500)
    parser.add_argument("--seeds", default="0:30", help="first:end (end excluded), default 0:30")
    parser.add_argument("--processes", type=int, default=2, help="worker processes, one numba thread each")
    opts = parser.parse_args()
    first, _, end = opts.seeds.partition(":")
    make_problem(opts.problem)  # an unknown name fails here, before the workers start
    os.environ["NUMBA_NUM_THREADS"] = "1"
    jobs = [(opts.problem, opts.nlive, s) for s in range(int(first), int(end))]
    with ProcessPoolExecutor(opts.processes) as pool:
        rows = list(pool.map(one_seed, jobs))
    means = np.array([r[0] for r in rows])
    variances = np.array([r[1] for r in rows])
    ess = np.array([r[2] for r in rows])
    kish = np.array([r[3] for r in rows])
    scatter = means.std(axis=0, ddof=1)
    ratio = scatter / np.sqrt(np.median(variances / ess, axis=0))
    ratio_kish = scatter / np.sqrt(np.median(variances / kish[:, None], axis=0))
    print(f"{opts.problem} nlive {opts.nlive}, seeds {opts.seeds} ({len(rows)}); run ESS median "
          f"{np.median([r[4] for r in rows]):.0f}, Kish's {np.median(kish):.0f}")
    print(f"  {'parameter':<12} {'scatter':>9} {'ESS median':>10} {'ratio':>6} {'ratio (Kish)':>12}")
    for i, name in enumerate(rows[0][5]):
        print(f"  {name:<12} {scatter[i]:9.4g} {np.median(ess[:, i]):10.0f} {ratio[i]:6.2f} {ratio_kish[i]:12.2f}")


if __name__ == "__main__":
    main()
