"""The host's work per nested-sampling iteration, apart from the chains: what a GPU run pays on the CPU every
iteration (selection, live-set arrays, clustering, geometry, adaptation) at large nlive.

Runs ``--iterations`` iterations of a built-in problem on the CPU backend, or with ``--backend gpu`` the GPU's
chain kernel (kernel compiled first, not timed), and splits each ``nested.step`` into the chain kernel's call and the rest. Run it at two commits (e.g. from two
worktrees) in one shell to compare them side by side; the figures are per iteration, medians over the iterations.

    python scripts/bench_host_step.py --problem gaussian --ndim 30 --nlive 100000 --iterations 12
"""

import argparse
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="gaussian", help="built-in likelihood name (default gaussian)")
    parser.add_argument("--ndim", type=int, default=30, help="its ndim option, where it has one (default 30)")
    parser.add_argument("--nlive", type=int, default=100_000)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backend", choices=("cpu", "gpu"), default="cpu", help="where the chains run")
    opts = parser.parse_args()

    from nestgrad.likelihoods import builtin
    from nestgrad.sampler import NestedSampler, nested, nested_sampler
    from nestgrad.sampler.priors import Prior

    options = {"ndim": opts.ndim} if opts.problem in ("gaussian", "gaussian_shells") else {}
    b = builtin.get(opts.problem, **options)
    sampler = NestedSampler(b.likelihood(backend=opts.backend), Prior.from_spec(b.priors), nlive=opts.nlive, seed=opts.seed)
    sampler.compile()
    steps, chains = [], []

    def timed_step(state, generator, proposal, settings):
        inner = proposal.advance

        def advance(*args, **options):
            start = time.perf_counter()
            inner(*args, **options)
            chains.append(time.perf_counter() - start)

        start = time.perf_counter()
        out = nested.step(state, generator, proposal._replace(advance=advance), settings)
        steps.append(time.perf_counter() - start)
        return out

    nested_sampler.step = timed_step
    start = time.perf_counter()
    result = sampler.run(dlogz=0.1, progress=False, max_iter=opts.iterations)
    total = time.perf_counter() - start
    host = np.array(steps) - np.array(chains)
    print(f"{opts.backend} backend: {opts.problem} ndim {len(b.params)} nlive {opts.nlive}, {result.niter} iterations, run {total:.2f} s: "
          f"per iteration host {np.median(host) * 1e3:.1f} ms (mean {host.mean() * 1e3:.1f}), chains "
          f"{np.median(chains) * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
