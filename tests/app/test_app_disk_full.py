"""A full disk or a file-size limit while writing a checkpoint or the outputs: ONE message naming the file,
exit status 2, no partial or temporary file left, and the last good checkpoint still resumes to the very
result of an uninterrupted run."""
import errno
import os
import subprocess
import sys

import matplotlib.figure
import numpy as np
import pytest

from nestgrad.sampler.checkpoint import read_checkpoint, remove_stale_temporaries, write_checkpoint
from nestgrad.sampler import checkpoint as checkpoint_module
from nestgrad.sampler import text_tables
from nestgrad.sampler.run_folder_read import read_run_folder

CONFIG = """\
name: small
likelihood:
  builtin: gaussian4d      # the likelihood of the other CLI tests: compiled once per test session
sampler:
  nlive: 40
  dlogz: 0.5
  seed: 5
  checkpoint_every: 1.0e-9   # a checkpoint after every iteration
backend: cpu
output:
  dir: {out}
  plots: []
"""
NO_SPACE = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.fixture(scope="module")
def reference(tmp_path_factory, nestgrad_inprocess):
    folder = tmp_path_factory.mktemp("full")
    (folder / "small.yaml").write_text(CONFIG.format(out="reference"))
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--quiet", "--no-check")
    assert status == 0, err
    return folder, read_run_folder(folder / "reference")


def temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def assert_same_run(out, want):
    got = read_run_folder(out)
    assert (got.logz, got.logz_err, got.niter, got.nlike) == (want.logz, want.logz_err, want.niter, want.nlike)
    for field in ("u", "theta", "logl", "logl_birth"):
        np.testing.assert_array_equal(getattr(got.dead, field), getattr(want.dead, field))


def test_disk_full_mid_run_keeps_the_last_checkpoint(reference, tmp_path, monkeypatch, nestgrad_inprocess):
    folder, want = reference
    out = tmp_path / "out"
    checkpoint = out / "checkpoint.npz"
    real_write, writes, last_good = checkpoint_module._write_npz, [], []

    def fills_the_disk(handle, arrays):  # the 6th checkpoint write runs out of space half way
        writes.append(1)
        if len(writes) < 6:
            return real_write(handle, arrays)
        last_good.append(checkpoint.read_bytes())
        handle.write(b"PK\x03\x04 half a checkpoint")
        raise NO_SPACE

    monkeypatch.setattr(checkpoint_module, "_write_npz", fills_the_disk)
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--out", out, "--quiet", "--no-check")
    assert status == 2, err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err, err
    assert f"{checkpoint}: cannot write the checkpoint (No space left on device); the previous checkpoint is " \
           f"unchanged" in err, err
    assert "free some space, then resume with: nestgrad run" in err and "--resume" in err, err
    assert checkpoint.read_bytes() == last_good[0] and temporaries(out) == []
    assert read_checkpoint(checkpoint)[1]["record"]["niter"] == 5

    monkeypatch.undo()  # space freed: resuming finishes the run exactly as if nothing had happened
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--out", out, "--quiet", "--no-check",
                                        "--resume")
    assert status == 0, err
    assert_same_run(out, want)


@pytest.mark.parametrize("forked", [False, True])
def test_disk_full_writing_the_run_folder(reference, tmp_path, monkeypatch, nestgrad_inprocess, forked):
    """Serially, and with the tables written by forked children (what large runs do on Linux)."""
    if forked and sys.platform != "linux":
        pytest.skip("the tables are written by forked children on Linux only")
    folder, want = reference
    out = tmp_path / "out"
    real_write_rows = text_tables.write_rows

    def fills_on_dead_birth(handle, table):
        if handle.name.endswith("_dead-birth.txt.tmp"):
            handle.write(b"1.0 2.0 3")
            raise NO_SPACE
        return real_write_rows(handle, table)

    monkeypatch.setattr(text_tables, "write_rows", fills_on_dead_birth)
    if forked:
        monkeypatch.setattr(text_tables, "PARALLEL_NUMBERS", 0)
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--out", out, "--quiet", "--no-check")
    assert status == 2, err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err, err
    assert f"{out / 'small_dead-birth.txt'}: cannot write (No space left on device)" in err, err
    assert f"the finished run is saved in {out / 'checkpoint.npz'}" in err and "--resume" in err, err
    assert temporaries(out) == [] and not (out / "small_dead-birth.txt").exists()

    monkeypatch.undo()
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--out", out, "--quiet", "--no-check",
                                        "--resume")
    assert status == 0, err
    assert_same_run(out, want)


@pytest.mark.parametrize("forked", [False, True])
def test_a_folder_in_the_way_of_an_output_file_is_named(reference, tmp_path, monkeypatch, nestgrad_inprocess,
                                                        forked):
    """The advice matches the cause: it said "free some space" of a folder standing where small.txt goes."""
    if forked and sys.platform != "linux":
        pytest.skip("the tables are written by forked children on Linux only")
    folder, want = reference
    out = tmp_path / "out"
    (out / "small.txt" / "inside").mkdir(parents=True)
    if forked:  # the writer's error then comes back as text, without its errno
        monkeypatch.setattr(text_tables, "PARALLEL_NUMBERS", 0)
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--out", out, "--quiet", "--no-check")
    assert status == 2, err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err, err
    assert f"{out / 'small.txt'}: cannot write (Is a directory)" in err, err
    assert f"remove or rename the folder {out / 'small.txt'}, which is in the way" in err, err
    assert "free some space" not in err and "--resume" in err, err

    (out / "small.txt" / "inside").rmdir()
    (out / "small.txt").rmdir()
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--out", out, "--quiet", "--no-check",
                                        "--resume")
    assert status == 0, err
    assert_same_run(out, want)


def test_a_file_in_the_way_of_the_plots_folder_is_named(reference, tmp_path, nestgrad_inprocess):
    """A file named `plots` in the output folder ended a finished run in a FileExistsError traceback (exit 1), and
    `--resume` after removing it printed the stored results without drawing the plots."""
    folder, want = reference
    config = tmp_path / "plotted.yaml"
    config.write_text(CONFIG.format(out=tmp_path / "out").replace("plots: []", "plots: [corner]"))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "plots").write_text("not a folder")
    status, _, err = nestgrad_inprocess("run", config, "--quiet", "--no-check")
    assert status == 2, err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err, err
    plots = tmp_path / "out" / "plots"
    assert f"{plots} is a file, not a folder" in err and f"a file is in the way of a folder on the path {plots}" \
        in err and "--resume" in err, err
    assert_same_run(tmp_path / "out", want)  # nothing computed is lost: the run folder is written
    status, _, err = nestgrad_inprocess("plot", tmp_path / "out")
    assert status == 2 and f"{plots} is a file, not a folder" in err and "Traceback" not in err, err

    plots.unlink()
    status, _, err = nestgrad_inprocess("run", config, "--quiet", "--no-check", "--resume")
    assert status == 0, err
    assert (plots / "small_corner.png").is_file()


@pytest.mark.parametrize("code, expected", [
    (errno.ENOSPC, "free some space"), (errno.EDQUOT, "free some space"),
    (errno.EACCES, "make {folder} writable"), (errno.EROFS, "make {folder} writable"),
    (errno.EISDIR, "remove or rename the folder {path}"),
])
def test_the_advice_after_a_failed_write_names_its_cause(tmp_path, code, expected):
    from nestgrad.sampler.write_errors import remedy

    path = tmp_path / "run.txt"
    assert expected.format(folder=tmp_path, path=path) in remedy(code, path)


def test_disk_full_writing_plots(reference, monkeypatch, nestgrad_inprocess):
    folder, _ = reference

    def no_space(self, *args, **kwargs):
        raise NO_SPACE

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", no_space)
    status, out, err = nestgrad_inprocess("plot", folder / "reference", "--kinds", "corner")
    assert status == 2, err
    assert f"nestgrad: error: {folder / 'reference' / 'plots'}: cannot write the plots (No space left on " \
           f"device)" in err and "Traceback" not in err, err


SIZE_LIMITED = r"""
import resource, signal, sys
import numpy as np
from nestgrad.sampler.checkpoint import CheckpointWriteError, write_checkpoint

path = sys.argv[1]
write_checkpoint(path, {"x": np.zeros(10)}, {"run": 1})
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # as `nestgrad` does: EFBIG instead of being killed
hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
resource.setrlimit(resource.RLIMIT_FSIZE, (20000, hard))
try:
    write_checkpoint(path, {"x": np.random.default_rng(0).random(100000)}, {"run": 2})
except CheckpointWriteError as error:
    print(error)
"""


def test_checkpoint_over_a_file_size_limit(tmp_path, app_env):
    """A real RLIMIT_FSIZE in a subprocess: the write fails with EFBIG; the old checkpoint is kept."""
    path = tmp_path / "checkpoint.npz"
    proc = subprocess.run([sys.executable, "-c", SIZE_LIMITED, str(path)], env=app_env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{path}: cannot write the checkpoint (File too large); the previous " \
                                  f"checkpoint is unchanged"
    assert read_checkpoint(path)[1]["run"] == 1 and temporaries(tmp_path) == []


def test_temporaries_of_interrupted_writes_are_removed(tmp_path, monkeypatch):
    path = tmp_path / "checkpoint.npz"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    killed = tmp_path / f".checkpoint.npz.{dead.pid}.x1y2.tmp"       # a writer killed mid-write (kill -9)
    running = tmp_path / f".checkpoint.npz.{os.getppid()}.a1b2.tmp"  # a writer still running
    for stale in (killed, running):
        stale.write_bytes(b"PK partial")
    write_checkpoint(path, {"x": np.arange(3)}, {"run": 1})
    assert temporaries(tmp_path) == [running.name]
    killed.write_bytes(b"PK partial")
    remove_stale_temporaries(path)  # reading (resume) cleans up as well
    assert temporaries(tmp_path) == [running.name]

    def interrupted(handle, arrays):  # Ctrl-C in the middle of a write: its temporary file goes too
        handle.write(b"PK partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_module, "_write_npz", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_checkpoint(path, {"x": np.arange(4)}, {"run": 2})
    assert temporaries(tmp_path) == [running.name] and read_checkpoint(path)[1]["run"] == 1
