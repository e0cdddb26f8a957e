"""Shared set-up for the application tests: one numba / nestgrad cache per test session, so the subprocesses
of the CLI tests compile each kernel once and nothing is written to the user's ~/.cache."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def app_env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("app_cache")
    env = dict(os.environ)
    env.update(NUMBA_CACHE_DIR=str(cache / "numba"), NESTGRAD_CACHE_DIR=str(cache / "nestgrad"),
               PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    return env


@pytest.fixture(scope="session")
def nestgrad(app_env):
    """Run `nestgrad ARGS...` (as `python -m nestgrad`) in a subprocess; returns the CompletedProcess."""
    def run(*args, timeout=300, cwd=REPO):
        return subprocess.run([sys.executable, "-m", "nestgrad", *map(str, args)], cwd=cwd, env=app_env,
                              capture_output=True, text=True, timeout=timeout)
    return run


@pytest.fixture(scope="session")
def nestgrad_inprocess(app_env):
    """Run `nestgrad ARGS...` in this process (kernels compiled once per session); returns (status, out, err).

    Faster than a subprocess when several commands use the same kernel; the generated modules still go to
    the session cache rather than ~/.cache."""
    import contextlib
    import io

    from nestgrad.sampler.cli import main

    def run(*args):
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("NESTGRAD_CACHE_DIR", app_env["NESTGRAD_CACHE_DIR"])
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main([str(a) for a in args])
        return status, out.getvalue(), err.getvalue()
    return run
