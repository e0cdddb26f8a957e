"""The exit hook that spares the interpreter a collection over every live object (``sampler.exit_gc``)."""

import subprocess
import sys

import problems
from nestgrad.sampler import NestedSampler, nested_sampler

# Registered first, so it runs last (atexit is last in, first out): it sees whether anything froze the heap.
SCRIPT = """
import atexit, gc
atexit.register(lambda: print("frozen" if gc.get_freeze_count() > 0 else "not frozen", flush=True))
from nestgrad.sampler import exit_gc
garbage = [[i] for i in range(1000)]
{call}
"""


def _exit_report(call):
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(call=call)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_hook_freezes_the_heap_at_exit_once_registered():
    assert _exit_report("exit_gc.freeze_at_exit(); exit_gc.freeze_at_exit()") == "frozen"
    assert _exit_report("pass") == "not frozen"


def test_a_run_registers_the_hook(monkeypatch):
    calls = []
    monkeypatch.setattr(nested_sampler, "freeze_at_exit", lambda: calls.append(1))
    prob = problems.gaussian(2)
    NestedSampler(prob, prob.prior, nlive=30, seed=1).run(dlogz=0.5, progress=False, max_iter=2)
    assert calls == [1]
