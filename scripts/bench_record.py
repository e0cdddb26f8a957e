"""A large run's dead-point bookkeeping alone: ``RunRecord.add`` for every iteration and ``write_checkpoint`` of
the record at four points of the run, with synthetic dead points of the 30-D Gaussian at nlive 1e5's size (383
iterations of 10,000 deaths). Run it from two checkouts (``PYTHONPATH=<checkout>``) to compare them.

    python scripts/bench_record.py [--iterations 383] [--k 10000] [--ndim 30] [--out /tmp/bench_record.npz]
"""

import argparse
import os
import time
from types import SimpleNamespace

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=383)
    parser.add_argument("--k", type=int, default=10_000, help="deaths per iteration")
    parser.add_argument("--ndim", type=int, default=30)
    parser.add_argument("--out", default="bench_record.npz", help="the checkpoint file (removed at the end)")
    opts = parser.parse_args()

    from nestgrad.sampler.checkpoint import write_checkpoint
    from nestgrad.sampler.run_state import RunRecord

    rng = np.random.default_rng(0)
    k, d = opts.k, opts.ndim
    record = RunRecord(d, k)
    saves = {round(opts.iterations * q) - 1 for q in (0.25, 0.5, 0.75, 1.0)}
    adding = saving = 0.0
    for iteration in range(opts.iterations):
        info = SimpleNamespace(
            dead_u=rng.random((k, d)), dead_theta=rng.random((k, d)), dead_logl=rng.random(k),
            dead_birth=rng.random(k), dead_thread=np.arange(k), dead_uid=np.arange(k), dead_parent=np.arange(k),
            dead_label=np.zeros(k, np.int64), nlike=1, ngrad=1, logl_star=0.0, step_size=1.0, n_steps=1,
            outside_fraction=0.0, reflections=np.zeros(k, np.int64), acceptance=1.0, rho_coord=0.0, rho_logl=0.0,
            jumps_tried=0, jumps_accepted=0, nclusters=1, nnan=0, nlive_before=k)
        start = time.perf_counter()
        record.add(info, 0.0, 1.0)
        adding += time.perf_counter() - start
        if iteration in saves:
            start = time.perf_counter()
            write_checkpoint(opts.out, record.arrays(), {})
            saving += time.perf_counter() - start
    os.unlink(opts.out)
    print(f"{opts.iterations * k} dead points in {d}-D: appends {adding:.2f} s, {len(saves)} checkpoints {saving:.2f} s")


if __name__ == "__main__":
    main()
