"""Benchmark the MPI run (docs/mpi.md): ``mpiexec -n R`` with one numba thread per rank against one process with
one thread, on the 30-D Gaussian (built-in ``gaussian``, ndim 30) at nlive 2000, same seed; checks that the dead
points and logZ are the same bits and reports the speedup of the sampling time (kernel loaded from the cache in
both; one untimed run first fills it).

    python scripts/bench_mpi.py                      # R = 2, 3 repeats each, alternating
    python scripts/bench_mpi.py --ranks 2 3 --repeats 5 --nlive 2000
    python scripts/bench_mpi.py --chain-times        # per-iteration chain seconds of one rank (scaling model)

Every figure is printed with the 1-minute load average: other processes on a shared machine slow every run.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def mpiexec() -> str | None:
    """The MPI launcher: next to this Python first (the ``mpich`` wheel installs it into the venv's bin), then
    on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return here if os.path.exists(here) else shutil.which("mpiexec")


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as handle:
            return " ".join(handle.read().split()[:3])
    except OSError:
        return "n/a"


# --- child: one run ----------------------------------------------------------------------------------------------

def child(out, nlive, ndim, seed, chain_times, max_iter=None):
    from nestgrad.likelihoods import builtin
    from nestgrad.sampler import NestedSampler, Prior

    model = builtin.get("gaussian", ndim=ndim)
    sampler = NestedSampler(model.likelihood(backend="cpu"), Prior.from_spec(model.priors), nlive=nlive, seed=seed)
    sampler.compile()
    times, ends = [], []
    if chain_times:  # time every call of the local chain kernel (single process only)
        proposal = sampler._build()
        advance = proposal.advance

        def timed(*args, **options):  # options: the live set's slots (sampler.live_rows.SlotAdvance)
            start = time.perf_counter()
            advance(*args, **options)
            times.append(time.perf_counter() - start)

        sampler._proposal = proposal._replace(advance=timed)
    results = sampler.run(dlogz=0.1, progress=False, max_iter=max_iter,
                          callback=(lambda *_: ends.append(time.perf_counter())) if chain_times else None)
    if results is None or (results.mpi is not None and os.environ.get("PMI_RANK", "0") != "0"):
        return  # a worker rank: rank 0 writes
    np.savez(out, u=results.dead.u, logl=results.dead.logl, birth=results.dead.logl_birth, logz=results.logz,
             chain_times=np.asarray(times), iteration_times=np.diff(ends))
    with open(out + ".json", "w") as handle:
        json.dump({"sampling": results.timing["sampling"], "niter": results.niter, "k": sampler.k,
                   "nlike": results.nlike, "mpi": results.mpi,
                   "recluster_every": sampler.hmc.recluster_every}, handle)


# --- parent --------------------------------------------------------------------------------------------------------

def launch(ranks, out, args):
    # One thread per process in every pool: numba's chains and the BLAS under numpy (the geometry's covariances;
    # a multithreaded OpenBLAS on a busy 2-core machine made each np.cov 80x slower, 35 ms instead of 0.4 ms).
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, os.path.abspath(__file__), "--child", out, "--nlive", str(args.nlive),
               "--ndim", str(args.ndim), "--seed", str(args.seed)] + (["--chain-times"] if args.chain_times else [])
    if args.max_iter:
        command += ["--max-iter", str(args.max_iter)]
    if ranks > 1:
        command = [mpiexec(), "-n", str(ranks)] + command
    else:
        env.pop("NESTGRAD_MPI", None)
    subprocess.run(command, env=env, check=True)
    with open(out + ".json") as handle:
        info = json.load(handle)
    return info, np.load(out)


def same_bits(a, b) -> bool:
    return all(np.array_equal(a[key], b[key]) for key in ("u", "logl", "birth", "logz"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, nargs="+", default=[2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nlive", type=int, default=2000)
    parser.add_argument("--ndim", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--chain-times", action="store_true")
    parser.add_argument("--max-iter", type=int)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.nlive, args.ndim, args.seed, args.chain_times, args.max_iter)
        return
    if any(r > 1 for r in args.ranks) and mpiexec() is None:
        raise SystemExit("bench_mpi: no mpiexec next to this Python or on PATH; pip install 'nestgrad[mpi]'")
    with tempfile.TemporaryDirectory() as tmp:
        if args.chain_times:
            info, data = launch(1, os.path.join(tmp, "chains.npz"), args)
            chains, iterations = data["chain_times"][1:], data["iteration_times"]
            serial = iterations - chains  # rank 0's own work per iteration: sort, geometry, clustering, records
            recluster = (np.arange(1, serial.size + 1) % info["recluster_every"]) == 0
            print(f"{args.ndim}-D Gaussian nlive {args.nlive}, k = {info['k']}, {chains.size} iterations, one thread: "
                  f"chains {chains.mean() * 1e3:.1f} ms per iteration ({chains.mean() / info['k'] * 1e6:.0f} us "
                  f"per chain), serial {serial[~recluster].mean() * 1e3:.1f} ms per iteration plus "
                  f"{(serial[recluster].mean() - serial[~recluster].mean()) * 1e3:.0f} ms every "
                  f"{info['recluster_every']}th (clustering); sampling {info['sampling']:.1f} s "
                  f"(load {loadavg()})")
            return
        print(f"warm-up (fills the kernel cache), load {loadavg()}", flush=True)
        launch(1, os.path.join(tmp, "warm.npz"), argparse.Namespace(**{**vars(args), "nlive": 50}))
        times = {r: [] for r in [1] + args.ranks}
        reference = None
        for repeat in range(args.repeats):
            for ranks in times:
                before = loadavg()
                info, data = launch(ranks, os.path.join(tmp, f"r{ranks}_{repeat}.npz"), args)
                reference = data if reference is None else reference
                same = same_bits(reference, data)
                idle = "" if info["mpi"] is None else \
                    " idle " + " ".join(f"{x:.2f}" for x in info["mpi"]["idle_fraction"])
                print(f"R={ranks} repeat {repeat}: sampling {info['sampling']:.2f} s, {info['niter']} iterations, "
                      f"same bits as R=1: {same}{idle} (load before {before}, after {loadavg()})", flush=True)
                if not same:
                    raise SystemExit("bench_mpi: results differ from the single-process run")
                times[ranks].append(info["sampling"])
        base = statistics.median(times[1])
        for ranks in args.ranks:
            median = statistics.median(times[ranks])
            print(f"R={ranks}: median sampling {median:.2f} s vs R=1 {base:.2f} s: speedup {base / median:.2f}x "
                  f"(one numba thread per rank; load {loadavg()})")


if __name__ == "__main__":
    main()
