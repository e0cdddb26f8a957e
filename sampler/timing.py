"""Wall time of a run split by stage, for the summary and ``results.json`` (``Results.timing``).

Stages, in seconds: ``startup`` (process start to the command starting: interpreter and imports), ``setup``
(config, likelihood, gradient check; compiles the likelihood's own functions on a cold cache), ``compile``
(waiting for the sampler's chain kernel: loaded from the cache, or compiled; ``kernel`` says which, and
``compile_child`` is the wall time of the child process that compiled it, which starts during ``setup``, so it
overlaps that stage), ``sampling``, ``evidence``
(evidence, errors and samples from the dead points), ``output`` (the run folder's files), ``plots``; ``total`` is
process start to the last stage's end, so it includes what falls between the stages.
"""

import os
import time

STAGES = ("startup", "setup", "compile", "sampling", "evidence", "output", "plots")
KERNEL_ORIGINS = {"cache": "loaded from the cache", "compiled": "compiled, now cached",
                  "in-process": "compiled in this process, not cacheable",
                  "gpu": "GPU kernel compiled",  # numba-cuda's disk cache not in use (the CUDA simulator)
                  "gpu cache": "GPU kernel loaded from the cache", "gpu compiled": "GPU kernel compiled, now cached"}


def process_elapsed() -> float | None:
    """Seconds since this process started (Linux: from /proc), or None where that is unknown."""
    try:
        with open("/proc/self/stat", encoding="ascii") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        with open("/proc/uptime", encoding="ascii") as handle:
            uptime = float(handle.read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


class StageClock:
    """Times consecutive stages: ``clock.stage("setup")`` ends the current stage and starts the next."""

    def __init__(self):
        started = process_elapsed()
        self.timing = {} if started is None else {"startup": started}
        self._origin = time.perf_counter() - (started or 0.0)
        self._mark = time.perf_counter()

    def add(self, name, seconds):
        self.timing[name] = self.timing.get(name, 0.0) + float(seconds)

    def lap(self, name):
        """Charge the time since the last lap to ``name``."""
        now = time.perf_counter()
        self.add(name, now - self._mark)
        self._mark = now

    def skip(self):
        """Start the next lap now (time already charged elsewhere)."""
        self._mark = time.perf_counter()

    def merged(self, measured: dict) -> dict:
        """These stages, the ``measured`` ones (the sampler's) and ``total`` (process start to now), in
        :data:`STAGES` order."""
        timing = {**self.timing, **measured, "total": time.perf_counter() - self._origin}
        order = [*STAGES[:3], "kernel", "compile_child", *STAGES[3:], "total"]
        return {key: timing[key] for key in sorted(timing, key=lambda k: order.index(k) if k in order else 99)}


def describe(timing: dict) -> str:
    """One line: ``wall time 1.31 s: startup 0.55, setup 0.21, ...`` (stages present only)."""
    parts = []
    for stage in STAGES:
        if stage in timing:
            text = f"{stage} {timing[stage]:.2f}"
            if stage == "compile" and timing.get("kernel") in KERNEL_ORIGINS:
                child = timing.get("compile_child")
                text += (f" ({KERNEL_ORIGINS[timing['kernel']]}"
                         + (f"; the compiling process ran {child:.2f} s from before setup ended" if child else "")
                         + ")")
            parts.append(text)
    total = timing.get("total")
    head = f"wall time {total:.2f} s" if total is not None else "wall time (s)"
    return f"{head}: {', '.join(parts)}"
