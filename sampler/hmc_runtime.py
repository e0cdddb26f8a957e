"""Host-side pieces of the chain kernel: per-chain work arrays and the thread-count chooser."""

import math
import time

import numpy as np

from .hmc import NSTATS

class AdaptiveThreads:
    """Calls the parallel chain kernel with either all numba threads or one, whichever was faster when last
    measured. With little work per iteration (few chains, cheap likelihood) a parallel region costs more than
    it saves, and far more when other processes keep the cores busy: measured on the busy 2-core development
    machine, the seed 4-D posterior (nlive 500) took 0.05 s on one thread and 0.98 s on two, while the 30-D
    Gaussian took 1.17 s on one and 0.61 s on two. Results do not depend on the thread count (each chain owns
    its RNG row and work arrays), so this choice changes timings only, never the computation.
    The first ``trials`` calls of every ``retune_every`` alternate one thread / all threads and time them.
    """

    def __init__(self, advance, retune_every=200, trials=6):
        import numba
        self._numba = numba
        self.advance = advance
        self.retune_every, self.trials = retune_every, trials
        self.max_threads = numba.get_num_threads()
        self.calls = 0
        self.threads = self.max_threads
        self._times = {}

    def __call__(self, *args):
        if self.max_threads == 1:
            return self.advance(*args)
        phase = self.calls % self.retune_every
        trial = phase < self.trials
        n = (1 if phase % 2 == 0 else self.max_threads) if trial else self.threads
        previous = self._numba.get_num_threads()
        self._numba.set_num_threads(n)
        try:
            start = time.perf_counter()
            self.advance(*args)
            elapsed = time.perf_counter() - start
        finally:
            self._numba.set_num_threads(previous)
        if trial:
            self._times[n] = min(self._times.get(n, math.inf), elapsed)
            if phase == self.trials - 1:
                self.threads = min(self._times, key=self._times.get)
                self._times = {}
        self.calls += 1


class ChainWorkspace:
    """Per-chain work arrays, allocated once per run (the fused kernel allocates nothing)."""

    def __init__(self, nchains: int, ndim: int, dtype, scratch_size: int):
        f8 = np.float64
        self.u, self.v, self.y, self.w, self.z, self.t = (np.empty((nchains, ndim), f8) for _ in range(6))
        self.theta = np.empty((nchains, ndim), dtype)
        self.jac = np.empty((nchains, ndim), f8)
        self.grad = np.empty((nchains, ndim), dtype)
        self.scratch = np.empty((nchains, max(int(scratch_size), 0)), dtype)
        self.out_u = np.empty((nchains, ndim), f8)
        self.out_theta = np.empty((nchains, ndim), f8)
        self.out_logl = np.empty(nchains, f8)
        self.out_cluster = np.zeros(nchains, np.int64)
        self.stats = np.zeros((nchains, NSTATS), np.int64)

    def arrays(self):
        return (self.u, self.v, self.y, self.w, self.z, self.t, self.theta, self.jac, self.grad, self.scratch,
                self.out_u, self.out_theta, self.out_logl, self.out_cluster, self.stats)
