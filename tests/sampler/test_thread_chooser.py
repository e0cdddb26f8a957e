"""The one-thread / all-threads chooser judges each count by its time per likelihood call, so that work growing
from iteration to iteration (chains lengthen as the run goes on) does not decide the choice."""

import time

import numpy as np

from nestgrad.sampler.hmc import NSTATS, STAT_NLIKE
from nestgrad.sampler.hmc_runtime import AdaptiveThreads


class FakeKernel:
    """Takes ``seconds_per_call[threads] * work`` seconds, the work doubling at every call."""

    max_threads = 2

    def __init__(self, seconds_per_call):
        self.seconds_per_call = seconds_per_call
        self.threads = 2
        self.work = 10

    def __call__(self, stats):
        stats[:] = 0
        stats[0, STAT_NLIKE] = self.work
        deadline = time.perf_counter() + self.seconds_per_call[self.threads] * self.work
        while time.perf_counter() < deadline:
            pass
        self.work *= 2


def choose(seconds_per_call):
    kernel = FakeKernel(seconds_per_call)
    chooser = AdaptiveThreads(kernel, trials=6)
    stats = np.zeros((3, NSTATS), np.int64)
    for _ in range(6):
        chooser(stats)
    return chooser.threads


def test_faster_count_chosen_although_later_calls_do_more_work():
    # Two threads are 1.5x faster per call but always run after a one-thread call with half the work: raw times
    # would pick one thread.
    assert choose({1: 3e-5, 2: 2e-5}) == 2


def test_one_thread_chosen_when_it_is_faster_per_call():
    assert choose({1: 2e-5, 2: 3e-5}) == 1
