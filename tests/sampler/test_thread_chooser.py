"""The one-thread / all-threads chooser judges each count by its time per likelihood call, so that work growing
from iteration to iteration (chains lengthen as the run goes on) does not decide the choice.

The kernel's time is simulated by a fake clock it advances, so the test decides the chooser's logic, never the
machine's load (a busy-waiting version of it failed once in CI with another test running on the other core)."""

import types

import numpy as np
import pytest

from nestgrad.sampler import hmc_runtime
from nestgrad.sampler.hmc import NSTATS, STAT_NLIKE
from nestgrad.sampler.hmc_runtime import AdaptiveThreads


class FakeKernel:
    """Takes ``seconds_per_call[threads] * work`` seconds of the fake clock, the work doubling at every call."""

    max_threads = 2

    def __init__(self, seconds_per_call, clock):
        self.seconds_per_call = seconds_per_call
        self.clock = clock
        self.threads = 2
        self.work = 10

    def __call__(self, stats):
        stats[:] = 0
        stats[0, STAT_NLIKE] = self.work
        self.clock.now += self.seconds_per_call[self.threads] * self.work
        self.work *= 2


@pytest.fixture
def choose(monkeypatch):
    clock = types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(hmc_runtime, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))

    def run(seconds_per_call):
        chooser = AdaptiveThreads(FakeKernel(seconds_per_call, clock), trials=6)
        stats = np.zeros((3, NSTATS), np.int64)
        for _ in range(6):
            chooser(stats)
        return chooser.threads
    return run


def test_faster_count_chosen_although_later_calls_do_more_work(choose):
    # Two threads are 1.5x faster per call but always run after a one-thread call with half the work: raw times
    # would pick one thread.
    assert choose({1: 3e-5, 2: 2e-5}) == 2


def test_one_thread_chosen_when_it_is_faster_per_call(choose):
    assert choose({1: 2e-5, 2: 3e-5}) == 1



def test_raw_times_would_choose_the_count_tried_first(choose, monkeypatch):
    """What the per-call division is for: timing calls without dividing by their work picks one thread, tried
    first at every step, although two threads are faster per call."""
    monkeypatch.setattr(hmc_runtime, "_likelihood_calls", lambda stats: 1)
    assert choose({1: 3e-5, 2: 2e-5}) == 1
