"""`nestgrad` end to end: run, check, list; SIGKILL mid-run then --resume equals the uninterrupted run."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from nestgrad.sampler.cli import main
import nestgrad as ng
from nestgrad.sampler.run_folder import RunFolderError, unfinished_checkpoint
from nestgrad.sampler.run_folder_read import read_run_folder

REPO = Path(__file__).resolve().parents[2]

SMALL = """\
name: small
likelihood:
  builtin: gaussian4d
sampler:
  nlive: 2000              # long enough (a few seconds of sampling) that the kill and the Ctrl-C land mid-run
  dlogz: 0.01
  seed: 11
  checkpoint_every: 0.05
backend: cpu
output:
  dir: {out}
  plots: [corner]
"""


@pytest.fixture(scope="module")
def reference(tmp_path_factory, nestgrad_inprocess):
    """One uninterrupted run (in this process, to compile the kernel once for the session): the end-to-end
    checks and the reference for the resume test, whose runs are real subprocesses."""
    folder = tmp_path_factory.mktemp("cli")
    config = folder / "small.yaml"
    config.write_text(SMALL.format(out="runs/reference"))
    status, out, err = nestgrad_inprocess("run", config)
    assert status == 0, err
    return config, folder / "runs" / "reference", (out, err)


def test_run_writes_a_correct_run_folder(reference):
    config, out, (stdout, stderr) = reference
    assert "Traceback" not in stderr
    assert "logZ" in stdout and str(out) in stdout, stdout
    results = read_run_folder(out)
    assert results.name == "small" and results.params == ["mu1", "mu2", "sigma1", "sigma2"]
    assert results.latex["sigma1"] == r"\sigma_{1}"
    # the built-in's quadrature evidence must lie within the run's own error bar (4 sigma)
    assert abs(results.logz - results.reference_logz) < 4 * results.logz_err
    assert np.all(results.dead.logl > results.dead.logl_birth)
    assert json.loads((out / "gradient_check.json").read_text())["ok"] is True
    assert (out / "checkpoint.npz").is_file()
    png = out / "plots" / "small_corner.png"
    assert png.stat().st_size > 20_000 and not png.with_suffix(".pdf").exists()  # PNG unless PDFs are asked for
    assert not (out / "plots" / "small_trace.png").exists()  # only the plots the config asks for


def test_anesthetic_reads_a_real_run(reference):
    import anesthetic
    _, out, _ = reference
    results = read_run_folder(out)
    samples = anesthetic.read_chains(str(out / "small"))
    assert abs(samples.logZ() - results.logz) < 0.05  # same dead points, anesthetic's own evidence code


def _wait_for(predicate, proc, timeout=240):
    start = time.time()
    while not predicate():
        assert proc.poll() is None, f"the run ended before the test could interrupt it:\n{proc.stderr.read()}"
        assert time.time() - start < timeout, "no checkpoint appeared"
        time.sleep(0.002)


def test_sigkill_then_resume_equals_uninterrupted_run(reference, app_env, tmp_path):
    config, ref_out, _ = reference
    out = tmp_path / "killed"
    checkpoint = out / "checkpoint.npz"
    command = [sys.executable, "-m", "nestgrad", "run", str(config), "--out", str(out), "--quiet"]

    # 1. SIGKILL as soon as the first checkpoint exists: nothing gets a chance to clean up
    proc = subprocess.Popen(command, cwd=REPO, env=app_env, stderr=subprocess.PIPE, text=True)
    _wait_for(checkpoint.is_file, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "results.json").exists(), "the run finished before it was killed (machine too busy?)"

    # 2. resume, and Ctrl-C it once it has written a newer checkpoint: exit 130 and the resume command
    def stamp():  # checkpoints are replaced atomically: a new one is a new inode (mtime may be coarse)
        info = checkpoint.stat()
        return info.st_ino, info.st_mtime_ns

    first = stamp()
    proc = subprocess.Popen(command + ["--resume"], cwd=REPO, env=app_env, stderr=subprocess.PIPE, text=True)
    _wait_for(lambda: stamp() != first, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, f"SIGINT did not interrupt the resumed run: {err}"
    assert "resume with: nestgrad run" in err and "--resume" in err and "Traceback" not in err, err

    # 3. resume to the end: exactly the uninterrupted run
    done = subprocess.run(command + ["--resume"], cwd=REPO, env=app_env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got, want = read_run_folder(out), read_run_folder(ref_out)
    for field in ("logz", "logz_err", "information", "niter", "nlike", "ngrad"):
        assert getattr(got, field) == getattr(want, field), field
    for field in ("u", "theta", "logl", "logl_birth"):
        np.testing.assert_array_equal(getattr(got.dead, field), getattr(want.dead, field))
    np.testing.assert_array_equal(got.samples, want.samples)


def test_resume_with_other_settings_is_a_clear_error(reference, nestgrad_inprocess, tmp_path):
    config, ref_out, _ = reference
    shutil.copy(ref_out / "checkpoint.npz", tmp_path / "checkpoint.npz")
    status, _, err = nestgrad_inprocess("run", config, "--out", tmp_path, "--seed", "12", "--resume")
    assert status == 2, err
    assert "checkpoint.npz: checkpoint was written with seed = 11" in err and "Traceback" not in err


def test_run_config_api(reference, tmp_path, monkeypatch, app_env):
    """`sampler.run_config(config)`: the CLI's run as a function returning Results (same seed, same numbers)."""
    import dataclasses

    from nestgrad import sampler
    from nestgrad.sampler.config import load

    monkeypatch.setenv("NESTGRAD_CACHE_DIR", app_env["NESTGRAD_CACHE_DIR"])
    config, ref_out, _ = reference
    config = load(config)
    config = dataclasses.replace(config, output=dataclasses.replace(config.output, dir=tmp_path / "api",
                                                                    plot_formats=("png", "pdf")))
    results = sampler.run_config(config)
    assert results.logz == read_run_folder(ref_out).logz
    assert results.name == "small" and results.reference_logz is not None
    assert (tmp_path / "api" / "plots" / "small_corner.png").is_file()
    assert (tmp_path / "api" / "plots" / "small_corner.pdf").is_file()


def test_resume_without_checkpoint_is_a_clear_error(tmp_path, capsys):
    config = tmp_path / "small.yaml"
    config.write_text(SMALL.format(out="runs/none"))
    assert main(["run", str(config), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "no checkpoint at" in err and "Traceback" not in err


CUSTOM = REPO / "configs" / "custom"


def test_check_command_on_the_custom_example(nestgrad_inprocess):
    status, out, err = nestgrad_inprocess("check", CUSTOM / "custom.yaml", "-n", "6")
    assert status == 0, err
    assert "AD vs FD" in out and "AD vs analytic" in out and "OK" in out


COUNTED_KERNEL = """\
import os

with open(os.environ["NESTGRAD_TEST_COUNTER"], "a") as counter:  # a line each time this module runs
    counter.write("ran\\n")


def model(theta, x):
    total = 0.0
    for i in range(x.shape[0]):
        d = x[i] - theta[0]
        total += -0.5 * d * d
    return total


def model_grad(theta, x, out):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] - theta[0]
    out[0] = total
"""


def test_check_runs_the_users_kernel_file_once(app_env, tmp_path):
    """`nestgrad check` loads the config (kernel and gradient from one file), differentiates, builds the
    Likelihood and cross-checks: the file's module-level code runs once in that process."""
    (tmp_path / "kernel.py").write_text(COUNTED_KERNEL)
    (tmp_path / "config.yaml").write_text("likelihood:\n  kernel: kernel.py:model\n  gradient: kernel.py:model_grad\n"
                                          "  data:\n    x: [0.1, 0.2, 0.4]\nparams:\n"
                                          "  mu: {prior: uniform, low: -1.0, high: 1.0}\nbackend: cpu\n")
    counter = tmp_path / "counter.txt"
    proc = subprocess.run([sys.executable, "-m", "nestgrad", "check", str(tmp_path / "config.yaml"), "-n", "2"],
                          cwd=REPO, env=dict(app_env, NESTGRAD_TEST_COUNTER=str(counter)), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "gradient check of kernel.py:model: OK" in proc.stdout, proc.stdout
    assert counter.read_text() == "ran\n"


def test_run_refuses_a_wrong_gradient(nestgrad_inprocess, tmp_path):
    """A planted sign error in the analytic gradient: `run` prints the table and exits 3 before sampling."""
    (tmp_path / "kernels").mkdir()
    source = (CUSTOM / "kernels" / "model.py").read_text()
    (tmp_path / "kernels" / "model.py").write_text(source.replace("out[1] = gb", "out[1] = -gb"))
    (tmp_path / "data").symlink_to(CUSTOM / "data")
    text = (CUSTOM / "custom.yaml").read_text().replace("../../runs/line", "runs/line")
    (tmp_path / "custom.yaml").write_text(text)
    status, _, err = nestgrad_inprocess("run", tmp_path / "custom.yaml", "--quiet")
    assert status == 3, err
    assert "analytic vs FD" in err and "!" in err and "--no-check" in err
    # nestgrad's own gradient agrees: the message names the hand-written one, not the kernel
    assert "the hand-written gradient model.py:line_with_scatter_grad (likelihood.gradient) disagrees" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "runs" / "line" / "results.json").exists()


def test_list_shows_every_builtin(capsys):
    from nestgrad.likelihoods import builtin

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in builtin.names():
        assert f"{name}:" in out
    assert "sigma1     uniform(low=0.01, high=0.5)" in out


def test_run_without_config_uses_the_embedded_default(nestgrad_inprocess, tmp_path):
    status, out, err = nestgrad_inprocess("run", "--out", tmp_path / "default", "--no-check")
    assert status == 0, err
    results = read_run_folder(tmp_path / "default")
    assert results.name == "gaussian4d" and results.settings["nlive"] == 200
    assert abs(results.logz - results.reference_logz) < 4 * results.logz_err
    assert not (tmp_path / "default" / "gradient_check.json").exists()  # --no-check: no check was made
    assert "reference logZ" in out


def test_sigterm_writes_a_checkpoint_and_exits_143(reference, app_env, tmp_path):
    config, _, _ = reference
    out = tmp_path / "terminated"
    checkpoint = out / "checkpoint.npz"
    command = [sys.executable, "-m", "nestgrad", "run", str(config), "--out", str(out), "--quiet"]
    proc = subprocess.Popen(command, cwd=REPO, env=app_env, stderr=subprocess.PIPE, text=True)
    _wait_for(checkpoint.is_file, proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "--resume" in err and "Traceback" not in err, err
    assert checkpoint.is_file() and not (out / "results.json").exists()


def _custom_copy(folder):
    """The custom example copied into ``folder`` (kernel and data files of its own), writing to runs/line."""
    shutil.copytree(CUSTOM / "kernels", folder / "kernels")
    shutil.copytree(CUSTOM / "data", folder / "data")
    text = (CUSTOM / "custom.yaml").read_text().replace("../../runs/line", "runs/line")
    text = text.replace("nlive: 300", "nlive: 60").replace("[corner, run, trace, hmc, gradient]", "[]")
    (folder / "custom.yaml").write_text(text)
    return folder / "custom.yaml"


def test_resume_after_the_data_or_kernel_changed_is_refused(nestgrad_inprocess, tmp_path):
    """An outsider edited a data file (then the kernel) and resumed: the finished run's stored results came back
    (exit 0, the old posterior), and an unfinished run mixed two likelihoods. The run records a digest of the
    kernel's source and the data (settings.likelihood) and a resume compares it."""
    config = _custom_copy(tmp_path)
    status, _, err = nestgrad_inprocess("run", config, "--quiet", "--no-check")
    assert status == 0, err
    status, out, err = nestgrad_inprocess("run", config, "--resume", "--no-check")
    assert status == 0 and "nothing was recomputed" in out, err  # unchanged: the stored results
    y = np.load(tmp_path / "data" / "y.npy")
    np.save(tmp_path / "data" / "y.npy", y + 1.0)
    status, out, err = nestgrad_inprocess("run", config, "--resume", "--no-check")
    assert status == 2 and "checkpoint was written with another likelihood" in err, (out, err)
    assert "settings.likelihood" in err and "Traceback" not in err
    np.save(tmp_path / "data" / "y.npy", y)
    kernel = tmp_path / "kernels" / "model.py"
    kernel.write_text(kernel.read_text().replace("s * s", "1.01 * s * s"))
    status, _, err = nestgrad_inprocess("run", config, "--resume", "--no-check")
    assert status == 2 and "another likelihood" in err, err


def test_resume_after_a_module_constant_changed_is_refused_and_a_moved_folder_resumes(nestgrad_inprocess,
                                                                                      tmp_path):
    """An outsider's kernel read ``SCALE = 2.0`` defined beside it; set to 50, ``--resume`` reprinted the old
    run (and an unfinished one mixed the two likelihoods): the digest held the kernel's text, not the constants it
    reads. It holds the generated code now (constants inlined), without the files' paths: a moved folder resumes."""
    config = _custom_copy(tmp_path / "first")
    kernel = tmp_path / "first" / "kernels" / "model.py"
    kernel.write_text(kernel.read_text().replace("import math\n", "import math\n\nSCALE = 1.0\n", 1)
                      .replace("var = yerr[i] * yerr[i] + s * s", "var = SCALE * yerr[i] * yerr[i] + s * s", 1))
    status, _, err = nestgrad_inprocess("run", config, "--quiet", "--no-check")
    assert status == 0, err
    shutil.copytree(tmp_path / "first", tmp_path / "moved")
    status, out, err = nestgrad_inprocess("run", tmp_path / "moved" / "custom.yaml", "--resume", "--no-check")
    assert status == 0 and "another likelihood" not in err, err
    kernel.write_text(kernel.read_text().replace("SCALE = 1.0", "SCALE = 1.5"))
    status, _, err = nestgrad_inprocess("run", config, "--resume", "--no-check")
    assert status == 2 and "another likelihood" in err, err


def test_a_fresh_run_does_not_overwrite_an_unfinished_checkpoint(reference, nestgrad_inprocess, tmp_path):
    """Without --resume, a run into a folder whose checkpoint no results follow (an interrupted run) is refused:
    starting afresh silently overwrote 169 iterations of an outsider's run."""
    config, ref_out, _ = reference
    shutil.copy(ref_out / "checkpoint.npz", tmp_path / "checkpoint.npz")
    before = (tmp_path / "checkpoint.npz").read_bytes()
    status, _, err = nestgrad_inprocess("run", config, "--out", tmp_path, "--quiet")
    assert status == 2 and "holds an unfinished run" in err and "--resume" in err, err
    assert (tmp_path / "checkpoint.npz").read_bytes() == before and "Traceback" not in err
    # a finished run's folder (results written after its checkpoint) may be run again from the start
    shutil.copytree(ref_out, tmp_path / "finished")  # copy2: the files keep their times
    status, _, err = nestgrad_inprocess("run", config, "--out", tmp_path / "finished", "--quiet", "--no-check")
    assert status == 0, err
    # ... also when copied without the files' times (the iterations recorded in both tell a finished run)
    shutil.copytree(ref_out, tmp_path / "copied", copy_function=shutil.copyfile)
    results_time = (tmp_path / "copied" / "results.json").stat().st_mtime
    os.utime(tmp_path / "copied" / "checkpoint.npz", (results_time + 60, results_time + 60))
    assert not unfinished_checkpoint(tmp_path / "copied")
    # the Python API refuses too, before compiling anything, and says how to continue
    with pytest.raises(RunFolderError, match="unfinished run.*resume=True"):
        ng.run_config(config, out=tmp_path)
    with pytest.raises(RunFolderError, match="unfinished run.*resume=True"):
        ng.run(offset_kernel, {"a": {"prior": "uniform", "low": 0, "high": 1}}, {"x": 0.5}, out=tmp_path)
    assert (tmp_path / "checkpoint.npz").read_bytes() == before


def offset_kernel(theta, x):
    return -0.5 * (theta[0] - x) ** 2


RULE_KERNEL = '''import math

import numba
import numpy as np

from nestgrad import ad
from nestgrad.ad import linalg


@numba.njit
def chi2(model, y, sigma):
    s = 0.0
    for i in range(model.shape[0]):
        r = (model[i] - y[i]) / sigma
        s += r * r
    return s


@ad.rule(chi2, writes=())
@numba.njit
def chi2_adjoint(model, y, sigma, g, model_b, y_b):
    sigma_b = 0.0
    for i in range(model.shape[0]):
        r = (model[i] - y[i]) / sigma
        if model_b is not None:
            model_b[i] += 2.0 * g * r / sigma
        sigma_b -= 2.0 * g * r * r / sigma
    return (sigma_b,)


def line(theta, x, y, X):
    model = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        model[i] = theta[0] + theta[1] * x[i]
    mean = np.empty(1)
    lo = np.empty((1, 1))
    work = np.empty((1, 1))
    mean[0], lo[0, 0] = theta[0], 1.0
    return -0.5 * chi2(model, y, theta[2]) - x.shape[0] * math.log(theta[2]) + linalg.mvn_logpdf_rows(X, mean, lo,
                                                                                                    work)
'''


def test_kernels_calling_adjoint_rules_are_cached_like_any_other(nestgrad_inprocess, tmp_path):
    """The README's own @ad.rule and linalg.mvn_logpdf_rows examples were compiled again by every run (15-20 s):
    the process compiling the chain kernel for the cache had not registered the functions the generated code
    calls, so it failed and the kernel was built in-process, uncached."""
    rng = np.random.default_rng(0)
    x = np.linspace(0.0, 1.0, 20)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", 0.5 + 2.0 * x + 0.1 * rng.normal(size=x.size))
    np.save(tmp_path / "X.npy", 0.5 + rng.normal(size=(5, 1)))
    (tmp_path / "rule_kernel.py").write_text(RULE_KERNEL)
    (tmp_path / "rule.yaml").write_text(
        "likelihood:\n  kernel: rule_kernel.py:line\n  data: {x: x.npy, y: y.npy, X: X.npy}\nparams:\n"
        "  a: {prior: uniform, low: -2, high: 2}\n  b: {prior: uniform, low: 0, high: 4}\n"
        "  s: {prior: loguniform, low: 0.01, high: 1}\nsampler: {nlive: 50, seed: 3}\noutput: {plots: []}\n")
    status, out, err = nestgrad_inprocess("run", tmp_path / "rule.yaml", "--no-check")
    assert status == 0 and "could not be cached" not in err, err
    assert "compiled, now cached" in out or "loaded from the cache" in out, out


def test_the_resume_hint_pastes_back_as_the_same_arguments():
    """An outsider's run with `--out "runs/sp ace ü"` was told to resume with the path unquoted, which the
    shell splits in two."""
    import argparse
    import shlex

    from nestgrad.sampler.cli import _resume_command

    args = argparse.Namespace(config="my config.yaml", out="runs/sp ace ü", backend=None, seed=3)
    hint = _resume_command(args, None)
    assert shlex.split(hint) == ["nestgrad", "run", "my config.yaml", "--out", "runs/sp ace ü", "--seed", "3",
                                 "--resume"]
