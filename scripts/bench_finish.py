"""The end of a large run, from its checkpoint: the results (evidence, errors, weights, ESS, samples, modes,
insertion test) and the run folder, timed stage by stage without sampling again.

A large run's time outside its chains is what a GPU run pays on the host; this replays the part after the last
iteration from the final checkpoint of any finished run (``<out>/checkpoint.npz``), so two commits can be compared
side by side on the same dead points:

    nestgrad run CONFIG --out runs/big            # once, with a large nlive
    python scripts/bench_finish.py CONFIG runs/big/checkpoint.npz [--out DIR] [--profile N]
"""

import argparse
import cProfile
import pstats
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="the run's config (the same settings as the checkpoint's)")
    parser.add_argument("checkpoint", help="the run's final checkpoint.npz")
    parser.add_argument("--out", help="write the run folder here (default: a temporary folder, removed)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N costliest functions")
    opts = parser.parse_args()

    from nestgrad.sampler import config as cfg
    from nestgrad.sampler.run_folder import write_run_folder
    from nestgrad.sampler.run_results import make_results

    config = cfg.load(opts.config)
    problem = cfg.build(config)
    sampler = cfg.make_sampler(config, problem)
    _, run = cfg.sampler_arguments(config)
    settings = sampler.settings(run.get("dlogz", 0.1))
    profile = cProfile.Profile() if opts.profile else None
    start = time.perf_counter()
    state, _, record = sampler._load(opts.checkpoint, settings)
    loaded = time.perf_counter()
    if profile:
        profile.enable()
    results = make_results(sampler, state, record, settings)
    cfg.finish_results(results, config, problem)
    made = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        write_run_folder(results, opts.out or scratch)
        written = time.perf_counter()
    if profile:
        profile.disable()
    print(f"{results.dead.logl.size} dead points, {len(results.params)} parameters: load {loaded - start:.2f} s, "
          f"results {made - loaded:.2f} s, run folder {written - made:.2f} s; logZ {results.logz:.3f} +- "
          f"{results.logz_err:.3f}, ESS {results.ess:.6g}")
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(opts.profile)


if __name__ == "__main__":
    main()
