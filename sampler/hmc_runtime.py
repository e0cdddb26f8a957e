"""Host-side pieces of the chain kernel: per-chain work arrays, the host threads that run the chains and the
thread-count chooser."""

import math
import time

import numpy as np

from .hmc import NCTRL, NSTATS, STAT_NLIKE


def default_threads() -> int:
    """numba's thread count setting (NUMBA_NUM_THREADS, default: the usable cores), read without starting
    numba's threading layer."""
    import numba

    return max(1, int(numba.config.NUMBA_NUM_THREADS))


def check_ctrl(ctrl) -> None:
    """The kernels read ``NCTRL`` controls without bounds checks: a shorter array would be read past its end."""
    if np.shape(ctrl) != (NCTRL,):
        raise ValueError(f"ctrl has shape {np.shape(ctrl)}; the chain kernel reads {NCTRL} controls "
                         "(sampler.hmc.CTRL_*)")


class ChainThreads:
    """``advance(u_start, ..., stats)`` over all chains: the compiled ``advance_range(start, stride, ...)``
    (nogil) called on ``threads`` host threads, thread ``i`` running chains ``i, i + threads, ...``. Each chain
    owns its RNG row and work arrays, so the results do not depend on the number of threads."""

    def __init__(self, advance_range, threads=None):
        self.advance_range = advance_range
        self.max_threads = default_threads() if threads is None else max(1, int(threads))
        self.threads = self.max_threads
        self._pool = None

    def __call__(self, u_start, *rest):
        check_ctrl(rest[3])
        n = min(self.threads, u_start.shape[0])
        if n <= 1:
            self.advance_range(0, 1, u_start, *rest)
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.max_threads - 1, thread_name_prefix="nestgrad-chains")
        others = [self._pool.submit(self.advance_range, i, n, u_start, *rest) for i in range(1, n)]
        self.advance_range(0, n, u_start, *rest)
        for future in others:
            future.result()


class AdaptiveThreads:
    """Calls the chain kernel with either all threads or one, whichever was faster when last measured. With
    little work per iteration (few chains, cheap likelihood) a parallel call costs more than it saves, and far
    more when other processes keep the cores busy: measured on the busy 2-core development machine, the seed
    4-D posterior (nlive 500) took 0.05 s on one thread and 0.98 s on two, while the 30-D Gaussian took 1.17 s
    on one and 0.61 s on two. Results do not depend on the thread count (each chain owns its RNG row and work
    arrays), so this choice changes timings only, never the computation.
    ``advance`` is a :class:`ChainThreads`, or any callable with a ``threads`` attribute or none (always used
    as it is). The first ``trials`` calls of every ``retune_every`` alternate one thread / all threads and time
    them per likelihood call made (the last argument, the chains' statistics, counts them): the work per
    iteration grows as the chains lengthen, so raw times would favour whichever count ran first. The first two
    calls only warm up (the thread pool starts, caches fill) and are not counted.
    """

    WARM_UP = 2

    def __init__(self, advance, retune_every=200, trials=8):
        self.advance = advance
        self.retune_every, self.trials = retune_every, trials
        self.max_threads = getattr(advance, "max_threads", 1)
        self.calls = 0
        self.threads = self.max_threads
        self._times = {}

    def __call__(self, *args):
        if self.max_threads == 1:
            return self.advance(*args)
        phase = self.calls % self.retune_every
        trial = phase < self.trials
        n = (1 if phase % 2 == 0 else self.max_threads) if trial else self.threads
        self.advance.threads = n
        start = time.perf_counter()
        self.advance(*args)
        elapsed = time.perf_counter() - start
        if trial and phase >= self.WARM_UP:
            per_call = elapsed / max(_likelihood_calls(args[-1]), 1)
            self._times[n] = min(self._times.get(n, math.inf), per_call)
            if phase == self.trials - 1:
                self.threads = min(self._times, key=self._times.get)
                self._times = {}
        self.calls += 1


def _likelihood_calls(stats) -> int:
    """Likelihood evaluations the chains just made, from their statistics rows (1 for anything else)."""
    if isinstance(stats, np.ndarray) and stats.ndim == 2 and stats.shape[1] == NSTATS:
        return int(stats[:, STAT_NLIKE].sum())
    return 1


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
