"""Every command and snippet in README.md is exercised: set-up commands, CLI lines, YAML, Python."""
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nestgrad.sampler.config import load

REPO = Path(__file__).resolve().parents[2]

README = (REPO / "README.md").read_text(encoding="utf-8")
# The two set-up commands are a contract with .ci/run and the task description: byte for byte.
SETUP_RUN = ("python3 -m venv .venv && .venv/bin/pip install -e . && "
             ".venv/bin/nestgrad run configs/gaussian4d.yaml")
SETUP_TEST = ('python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && '
              ".venv/bin/python -m pytest -q")


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of configs/ to run the README's commands in, so nothing is written into the checkout."""
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(REPO / "configs", folder / "configs",
                    ignore=shutil.ignore_patterns("runs", "__pycache__"))
    return folder


def test_setup_commands_are_unchanged_and_used_by_ci():
    bash = [b.strip() for b in blocks("bash")]
    assert bash[0] == SETUP_RUN and bash[1] == SETUP_TEST
    ci = (REPO / ".ci" / "run").read_text()
    assert 'pip install -q -e ".[test]"' in ci and ".venv/bin/python -m pytest -q" in ci
    assert (REPO / "configs" / "gaussian4d.yaml").is_file()


def test_setup_run_command(workdir, nestgrad_inprocess, monkeypatch):
    """The run part of the first set-up command (the install part is what CI does)."""
    monkeypatch.chdir(workdir)
    command = SETUP_RUN.split(" && ")[-1].split()
    assert command[:2] == [".venv/bin/nestgrad", "run"]
    status, out, err = nestgrad_inprocess(*command[1:])
    assert status == 0, err
    assert "reference logZ" in out
    assert (workdir / "runs" / "gaussian4d" / "plots" / "gaussian4d_corner.png").is_file()


def test_command_line_section(workdir, nestgrad_inprocess, monkeypatch):
    monkeypatch.chdir(workdir)
    lines = [line.split("#")[0].strip() for line in blocks("bash")[2].splitlines()]
    commands = [shlex.split(line) for line in lines if line]
    assert all(c[0] == "nestgrad" for c in commands) and len(commands) == 6
    logz = {}
    for command in commands:
        status, out, err = nestgrad_inprocess(*command[1:])
        assert status == 0, f"{' '.join(command)}: {err}"
        if command[1] == "run" and "--out" in command:
            from nestgrad.sampler.run_folder_read import read_results_json
            logz[" ".join(command)] = read_results_json(workdir / "runs" / "g4" / "results.json")["logz"]
    assert (workdir / "runs" / "line" / "plots" / "line_gradient.png").is_file()
    assert len(set(logz.values())) == 1, "resuming a finished run must give the same result"


def test_kernel_snippet_is_the_shipped_kernel():
    (snippet,) = [b for b in blocks("python") if "def line_with_scatter" in b]
    namespace = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    from nestgrad.likelihoods.kernel_source import from_file

    shipped = from_file(REPO / "configs/custom/kernels/model.py", "line_with_scatter").function
    data = [np.load(REPO / f"configs/custom/data/{n}.npy") for n in ("x", "y", "yerr")]
    theta = np.array([1.0, 0.5, 0.3])
    assert namespace["line_with_scatter"](theta, *data) == shipped(theta, *data)


def test_yaml_snippets_load(workdir):
    reference, builtin_example = blocks("yaml")
    path = workdir / "configs" / "custom" / "reference.yaml"
    path.write_text(reference)
    config = load(path)
    assert config.sampler.nlive == 300 and config.likelihood.gradient is not None
    assert config.output.plots == ("corner", "run", "trace", "hmc", "gradient")
    path.write_text(builtin_example)
    config = load(path)
    assert config.likelihood.builtin == "poisson_rates" and config.params[0].family == "loguniform"


def test_post_processing_snippet(workdir, nestgrad_inprocess, monkeypatch):
    import anesthetic  # noqa: F401  (test extras: the snippet needs both)
    import getdist  # noqa: F401
    monkeypatch.chdir(workdir)
    if not (workdir / "runs" / "gaussian4d" / "results.json").exists():
        assert nestgrad_inprocess("run", "configs/gaussian4d.yaml", "--quiet")[0] == 0
    (snippet,) = [b for b in blocks("python") if "read_chains" in b]
    namespace = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    assert abs(namespace["samples"].logZ() - namespace["results"].logz) < 0.05
    assert namespace["chain"].getMeans().shape[0] >= 4


def test_readme_images_exist():
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert (REPO / image).stat().st_size > 20_000, image


def test_python_api_snippet(workdir, app_env):
    """The README's one-call example, run as a user would: a script file, a fresh process, the checkout on
    PYTHONPATH; its posterior must find the line it was drawn from."""
    (snippet,) = [b for b in blocks("python") if "ng.run(" in b]
    script = workdir / "line_api.py"
    script.write_text(snippet + "\nnp.savetxt('runs/line_api/means.txt', r.samples.mean(axis=0))\n")
    ran = subprocess.run([sys.executable, str(script)], cwd=workdir, env=app_env, capture_output=True, text=True,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "logZ =" in ran.stdout
    assert (workdir / "runs" / "line_api" / "results.json").is_file()
    assert (workdir / "runs" / "line_api" / "corner.png").is_file()
    a, b = np.loadtxt(workdir / "runs" / "line_api" / "means.txt")
    assert abs(a - 0.5) < 0.15 and abs(b - 2.0) < 0.3
