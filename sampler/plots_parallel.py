"""Plots drawn side by side in processes forked from the command line's own (Linux).

matplotlib spends nearly all of a plot's time in Python (ticks, text layout, and everything twice: once for
the PNG, once for the PDF), on one core. `nestgrad run` and `nestgrad plot` therefore share the requested plots
among processes: this one draws the first share, children forked from it draw the others. They inherit the
imported matplotlib and the run's results, so a child costs a fork, not an import. Only cores that are idle
are worth a child. On the 2-core development machine the plots stage of `nestgrad run` on the seed config
(four plots, matplotlib's import included) took 2.5 s in one process and 1.8 s in two while the second core was
free, but 3.8 s in two against 3.35 s in one while another user kept both cores busy (medians of 5). So
`processes_for` counts the cores of this process's affinity mask that stayed idle (/proc/stat) while
matplotlib was being imported, just before the plots are drawn, and forks one child per idle core.

Why fork is safe here: a child runs matplotlib and numpy only (no numba: GNU OpenMP refuses to run in a forked
child), starts no thread, writes nothing to stdout or stderr (a lock another thread of the parent held at the
fork would stay locked in the child); it reports through a pipe (the files written, the warnings raised, or its
error: an OSError keeps its errno and file name, so a full disk reads as it does in one process) and leaves
with ``os._exit`` (no atexit handlers, no second flush of the parent's buffers). A child that dies or is
interrupted is reported as such; when this process fails or is interrupted first, its children are killed.
"""
from __future__ import annotations

import builtins
import json
import os
import signal
import sys
import traceback
import warnings
from pathlib import Path

MAX_PROCESSES = 4


class PlotProcessError(RuntimeError):
    """A forked plotting process failed (its traceback is in the message) or died without a report."""


def usable_cpus() -> int:
    """Cores this process may run on (its affinity mask where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def cpu_snapshot():
    """(idle, all) time so far of the cores this process may run on, in clock ticks, from /proc/stat; None
    where that is unknown."""
    try:
        cores = {f"cpu{i}" for i in os.sched_getaffinity(0)}
        idle = total = 0
        with open("/proc/stat", encoding="ascii") as handle:
            for line in handle:
                name, *fields = line.split()
                if name in cores:
                    values = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
                    idle += values[3] + values[4]
                    total += sum(values)
    except (AttributeError, OSError, ValueError, IndexError):
        return None
    return (idle, total) if total else None


def processes_for(wanted: int, since) -> int:
    """How many processes to draw in: this one plus one child per core that was idle on average since the
    snapshot ``since`` (rounded to the nearest core), at most ``wanted`` and the usable cores. With no usable measure (not Linux, a
    window under 0.05 s), the 1-minute load average stands in for what the others use."""
    usable = usable_cpus()
    now = cpu_snapshot()
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    if since is not None and now is not None and now[1] - since[1] >= 0.05 * ticks * usable:
        idle = (now[0] - since[0]) / (now[1] - since[1]) * usable  # this process kept about one core busy
    else:
        idle = usable - os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    return max(1, min(int(wanted), usable, 1 + int(idle + 0.5)))


def shares(kinds, processes: int, cost) -> list[list[str]]:
    """``kinds`` split into at most ``processes`` shares of about equal ``cost(kind)`` (the costliest plot
    first, each to the share with the least so far); each share keeps the requested order."""
    count = max(1, min(int(processes), MAX_PROCESSES, len(kinds)))
    groups, totals = [[] for _ in range(count)], [0.0] * count
    for kind in sorted(kinds, key=cost, reverse=True):
        least = totals.index(min(totals))
        groups[least].append(kind)
        totals[least] += cost(kind)
    return [[kind for kind in kinds if kind in group] for group in groups if group]


def draw_shared(draw, groups) -> list:
    """``[draw(group) for group in groups]``, the first here and the others in forked children; ``draw``
    returns the paths it wrote. Raises the first failure after every child has ended."""
    children = []
    try:
        for group in groups[1:]:
            children.append(_fork(draw, group))
        own = draw(groups[0])
    except BaseException:
        for child in children:
            child.kill()
        raise
    results, failure = [own], None
    for child in children:
        try:
            results.append(child.result())
        except BaseException as error:  # reap the other children before raising
            failure = failure or error
            results.append(None)
    if failure is not None:
        raise failure
    return results


class _Child:
    def __init__(self, pid, fd, group):
        self.pid, self.fd, self.group = pid, fd, group

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self._reap()

    def _reap(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.pid is not None:
            _, status = os.waitpid(self.pid, 0)
            self.pid = None
            return status
        return None

    def result(self) -> list[Path]:
        try:
            chunks = []
            while chunk := os.read(self.fd, 1 << 16):
                chunks.append(chunk)
            status = self._reap()
        except BaseException:
            self.kill()
            raise
        what = ", ".join(self.group)
        if not chunks:
            ended = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                     else f"exit status {os.WEXITSTATUS(status)}")
            raise PlotProcessError(f"the process drawing the {what} plot(s) ended without a report ({ended})")
        message = json.loads(b"".join(chunks))
        if "oserror" in message:
            number, text, filename = message["oserror"]
            raise OSError(number, text, filename) if number is not None else OSError(text)
        if "interrupted" in message:
            raise KeyboardInterrupt
        if "error" in message:
            raise PlotProcessError(f"drawing the {what} plot(s) failed in a forked process:\n{message['error']}")
        for name, text in message["warnings"]:
            category = getattr(builtins, name, None)
            warnings.warn(text, category if isinstance(category, type) and issubclass(category, Warning)
                          else UserWarning, stacklevel=2)
        return [Path(path) for path in message["written"]]


def _fork(draw, group) -> _Child:
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    with warnings.catch_warnings():
        # Python 3.12+ warns of forking a process with threads (numba's, BLAS's, the chain threads): they hold
        # nothing the child uses (module docstring)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        _child(draw, group, write_fd)
    os.close(write_fd)
    return _Child(pid, read_fd, group)


def _child(draw, group, fd):
    status = 1
    try:
        try:
            with warnings.catch_warnings(record=True) as caught:
                written = draw(group)
            message = {"written": [str(path) for path in written],
                       "warnings": [[w.category.__name__, str(w.message)] for w in caught]}
        except OSError as error:
            filename = None if error.filename is None else os.fsdecode(error.filename)
            message = {"oserror": [error.errno, error.strerror or str(error), filename]}
        except KeyboardInterrupt:
            message = {"interrupted": True}
        except BaseException as error:  # noqa: BLE001 (reported to the parent, which raises it)
            message = {"error": "".join(traceback.format_exception(type(error), error, error.__traceback__))}
        data = json.dumps(message).encode()
        while data:
            data = data[os.write(fd, data):]
        status = 0
    finally:
        os._exit(status)
