"""Plots shared among forked processes (`sampler.plots_parallel`): the same files as in one process, and a
child's failure, warning or death reaches the caller as it would from one process."""
import errno
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from app_synthetic import gaussian_run
from nestgrad.sampler import plots, plots_corner, plots_hmc, plots_run
from nestgrad.sampler.plots import make_plots
from nestgrad.sampler.plots_parallel import (PlotProcessError, can_fork, cpu_snapshot, processes_for, shares,
                                             usable_cpus)
from nestgrad.sampler.run_folder import write_run_folder
from nestgrad.sampler.run_folder_read import read_run_folder

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not can_fork(), reason="plots are drawn in forked processes on Linux only")
KINDS = ["corner", "run", "trace", "hmc"]
MAKERS = {"corner": (plots_corner, "corner_plot"), "run": (plots_run, "run_plot"),
          "trace": (plots_run, "trace_plot"), "hmc": (plots_hmc, "hmc_plot")}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    run = gaussian_run(d=3, nlive=50, seed=2, name="fork")
    return write_run_folder(run, tmp_path_factory.mktemp("fork") / "run")


def in_child(results, kinds=KINDS):
    """A kind that `make_plots(..., processes=2)` draws in the forked child (not in this process)."""
    return shares(kinds, 2, lambda kind: plots._cost(kind, results))[1][0]


def test_shares_balance_and_keep_the_order():
    cost = {"corner": 0.55, "run": 0.5, "trace": 0.45, "hmc": 0.7}.get
    assert shares(KINDS, 2, cost) == [["trace", "hmc"], ["corner", "run"]]
    assert shares(KINDS, 1, cost) == [KINDS]
    assert shares(["run"], 4, cost) == [["run"]]
    assert sorted(map(tuple, shares(KINDS, 9, cost))) == [("corner",), ("hmc",), ("run",), ("trace",)]


def test_one_child_per_idle_core():
    """`processes_for` from the idle share of this process's cores since a snapshot (here a made-up one, an
    hour of ticks before now, so that the few ticks between it and the call do not matter)."""
    idle_now, total_now = cpu_snapshot()
    hour = 3600 * os.sysconf("SC_CLK_TCK") * usable_cpus()

    def since(idle_fraction):
        return idle_now - int(idle_fraction * hour), total_now - hour

    assert processes_for(4, since(0.0)) == 1  # every core busy: no child
    if usable_cpus() >= 2:
        assert processes_for(4, since(1.0 / usable_cpus())) == 2  # one core idle besides this process's
        assert processes_for(1, since(1.0)) == 1  # never more than asked for
    assert processes_for(4, since(1.0)) == min(4, usable_cpus())
    assert 1 <= processes_for(4, None) <= 4  # no snapshot: the load average decides


def test_two_processes_write_what_one_does(folder):
    results = read_run_folder(folder)
    serial = make_plots(results, folder, kinds=KINDS)
    files = {path: path.read_bytes() for path in (folder / "plots").iterdir()}
    for path in (folder / "plots").iterdir():
        path.unlink()
    forked = make_plots(results, folder, kinds=KINDS, processes=2)
    assert forked == serial  # same paths, in the order asked for
    assert sorted(files) == sorted((folder / "plots").iterdir())  # every PNG and PDF, nothing else
    for path in forked:  # the same pixels (PNG: same figure, same renderer; PDFs carry a creation date)
        assert path.read_bytes() == files[path]


def _patch_child_maker(monkeypatch, results, replacement):
    kind = in_child(results)
    module, name = MAKERS[kind]
    original = getattr(module, name)
    monkeypatch.setattr(module, name, lambda res: replacement(original, res))
    return kind


def test_a_full_disk_in_the_child_is_the_same_oserror(folder, monkeypatch):
    results = read_run_folder(folder)

    def full(original, res):
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "plots" / "x.png"))

    _patch_child_maker(monkeypatch, results, full)
    with pytest.raises(OSError) as caught:
        make_plots(results, folder, kinds=KINDS, processes=2)
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(folder / "plots" / "x.png")


def test_a_bug_in_the_child_raises_with_its_traceback(folder, monkeypatch):
    results = read_run_folder(folder)

    def bug(original, res):
        raise ValueError("a plotting bug")

    kind = _patch_child_maker(monkeypatch, results, bug)
    with pytest.raises(PlotProcessError, match=rf"(?s)drawing the .*{kind}.*ValueError: a plotting bug"):
        make_plots(results, folder, kinds=KINDS, processes=2)


def test_a_warning_in_the_child_reaches_the_caller(folder, monkeypatch):
    results = read_run_folder(folder)

    def odd(original, res):
        warnings.warn("an odd axis range", UserWarning)
        return original(res)

    _patch_child_maker(monkeypatch, results, odd)
    with pytest.warns(UserWarning, match="an odd axis range"):
        written = make_plots(results, folder, kinds=KINDS, processes=2)
    assert len(written) == len(KINDS)


def test_a_child_that_dies_is_reported(folder, monkeypatch):
    results = read_run_folder(folder)

    def die(original, res):
        os.kill(os.getpid(), signal.SIGKILL)

    _patch_child_maker(monkeypatch, results, die)
    with pytest.raises(PlotProcessError, match="killed by signal 9"):
        make_plots(results, folder, kinds=KINDS, processes=2)


def test_the_plot_command_in_its_own_process(folder, app_env):
    """`nestgrad plot` as typed (its own process, so the plots are shared among processes): every kind's
    PNG printed in the requested order."""
    for path in (folder / "plots").iterdir():
        path.unlink()
    done = subprocess.run([sys.executable, "-m", "nestgrad", "plot", str(folder), "--kinds", *KINDS,
                           "--formats", "png", "pdf"], cwd=REPO,
                          env=app_env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(folder / "plots" / f"fork_{kind}.png") for kind in KINDS]
    assert sorted(p.name for p in (folder / "plots").iterdir()) == sorted(
        f"fork_{kind}.{ext}" for kind in KINDS for ext in ("png", "pdf"))
