"""Plots are produced from a run folder, as PNG (and PDF on request), and are not blank."""
import re

import matplotlib.image
import numpy as np
import pytest

from app_synthetic import gaussian_run
from nestgrad.sampler.cli import main
from nestgrad.sampler.plots import make_plots
from nestgrad.sampler.plots_gradient import write_gradient_check
from nestgrad.sampler.run_folder import write_run_folder
from nestgrad.sampler.run_folder_read import read_run_folder


def assert_real_image(png, min_kb=20, pdf=False):
    assert png.stat().st_size > min_kb * 1024, f"{png} is suspiciously small"
    if pdf:
        assert png.with_suffix(".pdf").stat().st_size > 5 * 1024
    else:
        assert not png.with_suffix(".pdf").exists()  # PNG alone unless PDFs are asked for
    pixels = matplotlib.image.imread(png)[..., :3]
    ink = np.mean(np.any(pixels < 0.9, axis=-1))
    assert 0.02 < ink < 0.9, f"{png}: {ink:.1%} of the pixels are drawn on"
    assert pixels.std() > 0.05


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    run = gaussian_run(d=5, nlive=60, seed=5, name="plotme")  # 5 > 4: two-column trace plot
    folder = write_run_folder(run, tmp_path_factory.mktemp("plots") / "run")
    return folder


def test_every_plot_kind(folder):
    from nestgrad.likelihoods.gradcheck import GradientReport

    rng = np.random.default_rng(0)
    params = [f"x{j}" for j in range(5)]
    fd = rng.normal(size=(6, 5))
    report = GradientReport.build(params, rng.uniform(size=(6, 5)), np.zeros(6),
                                  fd * (1 + 1e-11), fd * (1 + 1e-9 * rng.normal(size=(6, 5))), fd.copy())
    write_gradient_check(report, params, folder)
    written = make_plots(read_run_folder(folder), folder, formats=("png", "pdf"))
    assert sorted(p.name for p in written) == sorted(f"plotme_{k}.png"
                                                     for k in ("corner", "run", "trace", "hmc", "gradient"))
    for png in written:
        assert_real_image(png, pdf=True)


def test_plot_command_remakes_plots(folder, capsys):
    for png in (folder / "plots").glob("*"):
        png.unlink()
    assert main(["plot", str(folder), "--kinds", "corner", "run"]) == 0
    out = capsys.readouterr().out
    assert "plotme_corner.png" in out and "plotme_run.png" in out
    assert_real_image(folder / "plots" / "plotme_corner.png")
    assert not (folder / "plots" / "plotme_trace.png").exists()
    assert main(["plot", str(folder), "--kinds", "trace", "--formats", "pdf"]) == 0
    assert capsys.readouterr().out.split() == [str(folder / "plots" / "plotme_trace.pdf")]
    assert (folder / "plots" / "plotme_trace.pdf").stat().st_size > 5 * 1024
    assert not (folder / "plots" / "plotme_trace.png").exists()


def test_plot_command_errors(tmp_path, capsys):
    assert main(["plot", str(tmp_path)]) == 2
    assert "results.json: not found" in capsys.readouterr().err
    assert main(["plot", str(tmp_path), "--kinds", "cornr"]) == 2
    assert "unknown plot 'cornr'" in capsys.readouterr().err
    (tmp_path / "checkpoint.npz").write_bytes(b"")  # an interrupted run's folder: say so, and how to finish it
    assert main(["plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "the run in this folder has not finished" in err and "--resume" in err, err


def test_corner_smoothing_is_scipys_gaussian_filter():
    """The corner plot smooths its 2-D histograms in numpy (no scipy.ndimage import): same numbers."""
    from scipy.ndimage import gaussian_filter

    from nestgrad.sampler.plots_corner import smooth

    rng = np.random.default_rng(1)
    for shape in [(30, 30), (7, 4), (2, 3)]:
        hist = rng.random(shape)
        for sigma in (1.0, 0.6):
            assert np.allclose(smooth(hist, sigma), gaussian_filter(hist, sigma), rtol=1e-13, atol=1e-15)


def test_results_plot_says_which_plots_it_can_draw(folder, tmp_path, capsys):
    """`Results.plot('gradient')` said "unknown plot kind 'gradient'" (the command line draws it), and the hmc plot
    of a run in which no chains ran was a figure of empty axes."""
    import shutil

    from nestgrad.sampler.results import Results

    results = read_run_folder(folder)  # test_every_plot_kind stored a gradient check here
    assert results.plot("gradient") is not None and results.plot("hmc") is not None
    with pytest.raises(ValueError, match="unknown plot kind 'cornr'; the kinds: corner, run, trace, hmc, gradient"):
        results.plot("cornr")
    built = gaussian_run(d=2, nlive=30, seed=1, name="fresh")  # not read from a folder: no gradient check
    with pytest.raises(ValueError, match=r"'gradient' plot is unavailable: .*gradient_check.json.*Results.load"
                                         r".*available for these results: corner, run, trace, hmc$"):
        built.plot("gradient")

    text_only = tmp_path / "text_only"
    shutil.copytree(folder, text_only)
    (text_only / "diagnostics.npz").unlink()
    (text_only / "gradient_check.json").write_text('{"params": ["x0"')
    loaded = Results.load(text_only)
    with pytest.raises(ValueError, match=r"'hmc' plot is unavailable: the results hold no per-iteration diagnostics"
                                         r".*available for these results: corner, run, trace$"):
        loaded.plot("hmc")
    with pytest.raises(ValueError, match=re.escape(f"{text_only / 'gradient_check.json'}: not valid JSON")):
        loaded.plot("gradient")
    assert main(["plot", str(text_only), "--kinds", "hmc", "gradient", "corner"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == [str(text_only / "plots" / "plotme_corner.png")]
    assert "nestgrad: note: no hmc plot: the results hold no per-iteration diagnostics" in err, err
    assert f"nestgrad: note: no gradient plot: {text_only / 'gradient_check.json'}: not valid JSON" in err, err

    no_chains = read_run_folder(folder)  # the run ended while its iterations still drew from the prior
    no_chains.diagnostics = dict(no_chains.diagnostics, ngrad=np.zeros(no_chains.niter),
                                 acceptance=np.full(no_chains.niter, np.nan))
    with pytest.raises(ValueError, match=f"no HMC chains ran in this run: its {no_chains.niter} iteration"):
        no_chains.plot("hmc")
    assert make_plots(no_chains, tmp_path / "nc", kinds=["hmc", "run"])[0].name == "plotme_run.png"


def test_an_unknown_mplbackend_is_one_message(folder, app_env):
    """MPLBACKEND=nosuch: matplotlib's import raised, a traceback after the run (its plots never drawn)."""
    import subprocess
    import sys
    env = dict(app_env, MPLBACKEND="nosuch")
    out = subprocess.run([sys.executable, "-m", "nestgrad", "plot", str(folder)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 2, out.stderr
    assert "MPLBACKEND='nosuch': matplotlib has no such backend" in out.stderr and "Traceback" not in out.stderr
