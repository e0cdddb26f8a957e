"""The host's work per nested-sampling iteration, apart from the chains: what a GPU run pays on the CPU every
iteration (selection, live-set arrays, clustering, geometry, adaptation) at large nlive.

Runs ``--iterations`` iterations of a built-in problem on the CPU backend, or with ``--backend gpu`` the GPU's
chain kernel (kernel compiled first, not timed), and splits each ``nested.step`` into the chain kernel's call and the rest. Run it at two commits (e.g. from two
worktrees) in one shell to compare them side by side; the figures are per iteration, medians over the iterations.

    python scripts/bench_host_step.py --problem gaussian --ndim 30 --nlive 100000 --iterations 12

``--host-live-set`` keeps the live set in plain host arrays instead of slots (``sampler/live_rows.py``; on a GPU,
with ``--backend gpu``, instead of device memory, ``sampler/live_device.py``): run with and without it side by side
to compare; ``--profile 25`` shows where the host's time goes.
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
    parser.add_argument("--delete-fraction", type=float, default=None,
                        help="the share of the live set replaced an iteration (default: the sampler's)")
    parser.add_argument("--prior-draws", type=float, default=None,
                        help="hmc.prior_draws (default: the sampler's); 0 runs chains from the first iteration")
    parser.add_argument("--host-live-set", action="store_true",
                        help="keep the live set in plain host arrays instead of slots (sampler/live_rows.py on the "
                             "cpu, sampler/live_device.py on the gpu), to compare")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="also print the N functions of the host's part that took longest (cProfile)")
    opts = parser.parse_args()
    import cProfile
    import pstats

    from nestgrad.sampler import live_rows

    live_rows.ENABLED = not opts.host_live_set
    if opts.backend == "gpu":
        from nestgrad.sampler import live_device

        live_device.ENABLED = not opts.host_live_set
    profile = cProfile.Profile() if opts.profile else None

    from nestgrad.likelihoods import builtin
    from nestgrad.sampler import NestedSampler, nested, nested_sampler
    from nestgrad.sampler.priors import Prior

    options = {"ndim": opts.ndim} if opts.problem in ("gaussian", "gaussian_shells") else {}
    b = builtin.get(opts.problem, **options)
    fraction = {} if opts.delete_fraction is None else {"delete_fraction": opts.delete_fraction}
    hmc = None if opts.prior_draws is None else {"prior_draws": opts.prior_draws}
    sampler = NestedSampler(b.likelihood(backend=opts.backend), Prior.from_spec(b.priors), nlive=opts.nlive,
                            seed=opts.seed, hmc=hmc, **fraction)
    sampler.compile()
    steps, chains, drawn = [], [], []

    def timed_step(state, generator, proposal, settings, prior_acceptance=0.0):
        inner = proposal.advance
        chains.append(0.0)  # stays 0 for an iteration of prior draws (no chains)

        def advance(*args, **options):
            if profile:
                profile.disable()
            start = time.perf_counter()
            inner(*args, **options)
            chains[-1] += time.perf_counter() - start
            if profile:
                profile.enable()

        if profile:
            profile.enable()
        start = time.perf_counter()
        out = nested.step(state, generator, proposal._replace(advance=advance), settings, prior_acceptance)
        steps.append(time.perf_counter() - start)
        drawn.append(prior_acceptance > 0)
        if profile:
            profile.disable()
        return out

    nested_sampler.step = timed_step
    start = time.perf_counter()
    result = sampler.run(dlogz=0.1, progress=False, max_iter=opts.iterations)
    total = time.perf_counter() - start
    host = np.array(steps) - np.array(chains)
    drawn = np.array(drawn, dtype=bool)
    print(f"{opts.backend} backend: {opts.problem} ndim {len(b.params)} nlive {opts.nlive} k {sampler.k}, "
          f"{result.niter} iterations, run {total:.2f} s" + (", live set on the host" if opts.host_live_set else ""))
    if (~drawn).any():
        print(f"  {np.count_nonzero(~drawn)} iterations of chains: host {np.median(host[~drawn]) * 1e3:.1f} ms "
              f"(mean {host[~drawn].mean() * 1e3:.1f}), chains {np.median(np.array(chains)[~drawn]) * 1e3:.1f} ms")
    if drawn.any():
        print(f"  {np.count_nonzero(drawn)} iterations of prior draws (hmc.prior_draws): "
              f"{np.median(host[drawn]) * 1e3:.1f} ms each (mean {host[drawn].mean() * 1e3:.1f}), draws included")
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(opts.profile)


if __name__ == "__main__":
    main()
