"""One small run for tests/sampler/test_mpi.py, started as ``python mpi_child.py OUT [options]`` alone or under
``mpiexec -n R``: the built-in 4-D Gaussian (nlive 100), its dead points written by rank 0 to OUT (.npz) with
the run's ``mpi`` statistics and whether mpi4py was imported (OUT.json).

--plateau: a likelihood clipped to a floor, whose live set widens before the floor dies (``sampler.nested``).
--modes: a three-mode mixture at nlive 600, whose clustering splits its kNN rows over the ranks; OUT.json counts
the splits (``split_neighbours``).
--fail-at N: rank 1 raises in its Nth block (a Python error in a worker); --kill-at N: rank 1 kills itself with
SIGKILL at its Nth block (a dead rank); --term-at N: rank 0 sends itself SIGTERM after iteration N (a
scheduler's time limit). All three are test-only faults injected from here, not sampler options.
"""

import argparse
import json
import os
import signal
import sys

import numpy as np

from nestgrad.likelihoods import builtin
from nestgrad.sampler import NestedSampler, Prior, mpi_pool


def inject(fail_at, kill_at):
    calls = [0]
    original = mpi_pool.WorkerPool._run

    def run(self, work):
        calls[0] += 1
        if calls[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if calls[0] == fail_at:
            def work():
                raise RuntimeError("fault injected by the test")
        return original(self, work)

    mpi_pool.WorkerPool._run = run


def count_splits():
    """Counts rank 0's kNN computations that went over the ranks (more than one block of rows)."""
    from nestgrad.sampler.clustering import BLOCK_ROWS

    count = [0]
    original = mpi_pool.RootPool.neighbours

    def neighbours(self, distances, k):
        count[0] += distances.white.shape[0] > BLOCK_ROWS
        return original(self, distances, k)

    mpi_pool.RootPool.neighbours = neighbours
    return count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--checkpoint")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--max-iter", type=int)
    parser.add_argument("--fail-at", type=int)
    parser.add_argument("--kill-at", type=int)
    parser.add_argument("--term-at", type=int)
    parser.add_argument("--plateau", action="store_true", help="the floor-clipped likelihood: the live set widens")
    parser.add_argument("--modes", action="store_true", help="a mixture whose kNN rows are split over the ranks")
    args = parser.parse_args()
    inject(args.fail_at, args.kill_at)
    splits = count_splits()
    if args.modes:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from hard_problems import unequal_mixture

        problem = unequal_mixture()
        sampler = NestedSampler(problem, problem.prior, nlive=600, seed=2)
    elif args.plateau:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from hard_problems import floor_peak

        problem = floor_peak()
        sampler = NestedSampler(problem, problem.prior, nlive=200, seed=3)
    else:
        model = builtin.get("gaussian4d")
        sampler = NestedSampler(model.likelihood(backend="cpu"), Prior.from_spec(model.priors), nlive=100, seed=5)
    def terminate(niter, state, info):
        if niter == args.term_at:
            os.kill(os.getpid(), signal.SIGTERM)

    try:
        results = sampler.run(dlogz=0.5, progress=False, checkpoint=args.checkpoint, resume=args.resume,
                              checkpoint_every=0.0, max_iter=args.max_iter, callback=terminate)
    except mpi_pool.RankError as error:
        print(f"nestgrad: error: {error}", file=sys.stderr)
        return 4
    pool = mpi_pool.world()
    if pool is not None and pool.rank != 0:
        return 0
    np.savez(args.out, u=results.dead.u, theta=results.dead.theta, logl=results.dead.logl,
             birth=results.dead.logl_birth, logz=results.logz)
    with open(args.out + ".json", "w") as handle:
        chain_iterations = int(np.count_nonzero(results.diagnostics["ngrad"] > 0))  # not prior draws
        json.dump({"mpi": results.mpi, "niter": results.niter, "k": sampler.k, "chain_iterations": chain_iterations,
                   "mpi4py_imported": "mpi4py" in sys.modules, "split_neighbours": splits[0]}, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
