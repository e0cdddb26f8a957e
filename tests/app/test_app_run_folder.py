"""The run folder round-trips through our reader and is read unchanged by anesthetic and getdist."""
import json
import re

import numpy as np
import pytest

from app_synthetic import gaussian_run
from nestgrad.sampler.run_folder import write_run_folder
from nestgrad.sampler.run_folder_read import read_paramnames, read_run_folder


@pytest.fixture(scope="module")
def run():
    return gaussian_run(d=3, nlive=60, seed=3, name="gauss3")


@pytest.fixture(scope="module")
def folder(run, tmp_path_factory):
    return write_run_folder(run, tmp_path_factory.mktemp("runs") / "gauss3")


def test_files_of_the_contract_exist(folder):
    for name in ("gauss3.txt", "gauss3_dead-birth.txt", "gauss3_equal_weights.txt", "gauss3.paramnames",
                 "gauss3.ranges", "results.json", "diagnostics.npz"):
        assert (folder / name).stat().st_size > 0, name
    assert not list(folder.glob("*.tmp*")), "temporary files must be renamed into place"


def test_round_trip_is_exact(run, folder):
    back = read_run_folder(folder)
    for field in ("name", "params", "latex", "logz", "logz_err", "information", "niter", "nlike", "ngrad",
                  "wall_time", "truths", "reference_logz", "settings"):
        assert getattr(back, field) == getattr(run, field), field
    for field in ("u", "theta", "logl", "logl_birth"):
        np.testing.assert_array_equal(getattr(back.dead, field), getattr(run.dead, field))
    np.testing.assert_array_equal(back.weights, run.weights)
    np.testing.assert_array_equal(back.samples, run.samples)
    assert set(back.diagnostics) == set(run.diagnostics)
    for key, value in run.diagnostics.items():
        np.testing.assert_array_equal(back.diagnostics[key], value)
        assert back.diagnostics[key].dtype == np.asarray(value).dtype


def test_text_columns_match_polychord_layout(run, folder):
    chain = np.loadtxt(folder / "gauss3.txt")
    assert chain[:, 0].max() == pytest.approx(1.0)
    np.testing.assert_allclose(chain[:, 0] / chain[:, 0].sum(), run.weights, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(chain[:, 1], -2 * run.dead.logl)
    dead = np.loadtxt(folder / "gauss3_dead-birth.txt")
    assert np.isneginf(dead[:, -1]).sum() == 60, "initial prior draws are born at -inf"
    assert np.all(dead[:, -2] > dead[:, -1]), "every point lies above its birth contour"
    equal = np.loadtxt(folder / "gauss3_equal_weights.txt")
    assert np.all(equal[:, 0] == 1.0) and np.all(np.isfinite(equal[:, 1]))
    names, latex = read_paramnames(folder / "gauss3.paramnames")
    assert names == run.params and latex == run.latex
    info = json.loads((folder / "results.json").read_text())
    assert {"numpy", "python"} <= set(info["versions"])


def test_text_only_folder_still_reads(run, folder, tmp_path):
    """Without diagnostics.npz (e.g. a folder trimmed for sharing) the weights and samples come from text."""
    for name in ("gauss3.txt", "gauss3_dead-birth.txt", "gauss3_equal_weights.txt", "gauss3.paramnames",
                 "results.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    back = read_run_folder(tmp_path)
    np.testing.assert_allclose(back.weights, run.weights, rtol=1e-12, atol=1e-300)
    np.testing.assert_array_equal(back.samples, run.samples)
    assert back.diagnostics == {}


def test_anesthetic_reads_the_folder(run, folder):
    import anesthetic
    samples = anesthetic.read_chains(str(folder / "gauss3"))
    assert list(samples.columns.get_level_values(0)[:3]) == run.params
    assert len(samples) == len(run.dead.logl)
    np.testing.assert_array_equal(np.sort(samples.logL.to_numpy()), run.dead.logl)
    # anesthetic recomputes logZ from (logL, logL_birth) alone: it must agree with the analytic value
    logz = samples.logZ(200)
    assert abs(logz.mean() - run.reference_logz) < 4 * logz.std()
    assert abs(samples.logZ() - run.logz) < 0.05
    means = np.average(run.dead.theta, axis=0, weights=run.weights)
    # anesthetic weights with E[t] = n/(n+1) rather than exp(-1/n): means agree to O(1/n^2) per step
    np.testing.assert_allclose(samples[run.params].mean().to_numpy(), means, rtol=2e-3)


def test_getdist_reads_the_folder(run, folder):
    import getdist
    samples = getdist.loadMCSamples(str(folder / "gauss3"), settings={"ignore_rows": 0})
    assert [p.name for p in samples.paramNames.names] == run.params
    assert [p.label for p in samples.paramNames.names] == [run.latex[p] for p in run.params]
    means = np.average(run.dead.theta, axis=0, weights=run.weights)
    np.testing.assert_allclose(samples.getMeans()[:3], means, rtol=1e-6)
    # the prior bounds from the settings reach getdist through <name>.ranges
    assert samples.ranges.getLower("x0") == -1.0 and samples.ranges.getUpper("x2") == 3.0
    np.testing.assert_allclose(samples.getMeans()[:3], 1.0, atol=0.05)  # truth: theta centre = -1 + 4 * 0.5


def test_equal_weight_samples_find_their_dead_points_logl(monkeypatch):
    """Each equal-weight sample's logL is its dead point's, found by the row's bits: a row that is no dead point
    gets NaN, rows differing in one bit are told apart, and when every hash collides the rows are still matched
    exactly (the lookup compares the rows, not only their hashes)."""
    from nestgrad.sampler import run_folder

    rng = np.random.default_rng(4)
    theta = rng.random((500, 3))
    theta[1] = np.nextafter(theta[0], 2.0)  # one bit apart from row 0
    logl = rng.normal(size=500)
    chosen = rng.integers(0, 500, 2000)
    chosen[:2] = [0, 1]
    samples = theta[chosen].copy()
    samples[-1] = [2.0, 2.0, 2.0]
    expected = logl[chosen]
    expected[-1] = np.nan
    np.testing.assert_array_equal(run_folder._logl_of_samples(samples, theta, logl), expected)
    monkeypatch.setattr(run_folder, "_row_hashes", lambda rows: np.zeros(len(rows), dtype=np.uint64))
    np.testing.assert_array_equal(run_folder._logl_of_samples(samples[:50], theta, logl), expected[:50])


@pytest.mark.parametrize("text, needle", [
    ('{"name": "gauss3", ', "not valid JSON"),
    ("{}", "field 'name' is missing"),
    ("[1, 2]", "expected a JSON object of results, found a list"),
    ('{"name": "gauss3"}', "field 'params' is missing"),
    ('{"name": "gauss3", "params": [1, 2], "logz": 0, "logz_err": 0, "information": 0, "niter": 1, "nlike": 1, '
     '"ngrad": 0, "wall_time": 0}', "field 'params' must list parameter names"),
    ('{"name": "gauss3", "params": ["a"], "logz": "x", "logz_err": 0}', "field 'logz' holds 'x', not a number"),
])
def test_a_damaged_results_json_is_named_not_a_traceback(folder, tmp_path, text, needle):
    """`nestgrad plot` of a folder whose results.json was truncated or emptied ended in a JSONDecodeError,
    KeyError or TypeError traceback (exit 1)."""
    import shutil

    from nestgrad.sampler.cli import main
    from nestgrad.sampler.run_folder import RunFolderError

    damaged = tmp_path / "damaged"
    shutil.copytree(folder, damaged)
    (damaged / "results.json").write_text(text)
    with pytest.raises(RunFolderError, match=re.escape(needle)):
        read_run_folder(damaged)
    assert main(["plot", str(damaged)]) == 2


def _truncated(path, fraction=0.5):
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * fraction)] + (b"0.12" if path.suffix == ".txt" else b""))


def _line_dropped(path):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]))


@pytest.mark.parametrize("file, damage, needle", [
    ("gauss3_dead-birth.txt", _truncated, "not a table of 5 numbers per line"),
    ("gauss3_dead-birth.txt", lambda p: p.write_text(p.read_text() + "abc def ghi jkl mno\n"),
     "not a table of 5 numbers per line (could not convert"),
    ("gauss3_dead-birth.txt", _line_dropped, "rows, but results.json says ndead = "),
    ("gauss3_dead-birth.txt", lambda p: p.unlink(), "not found; the run folder is incomplete"),
    ("gauss3_dead-birth.txt", lambda p: (p.unlink(), p.mkdir()), "cannot read (Is a directory)"),
    ("diagnostics.npz", _truncated, "not a readable .npz archive"),
    ("diagnostics.npz", lambda p: p.write_bytes(b"garbage, not an archive"), "not an .npz (zip) archive"),
    ("diagnostics.npz", lambda p: p.write_bytes(b""), "the file is empty"),
    ("results.json", lambda p: (p.unlink(), p.mkdir()), "cannot read (Is a directory)"),
])
def test_a_damaged_run_folder_file_is_named_not_a_traceback(folder, tmp_path, file, damage, needle, capsys):
    """A truncated table ended `Results.load` and `nestgrad plot` in numpy's ValueError ("use `usecols`..."), a
    damaged diagnostics.npz in zipfile.BadZipFile or numpy's advice to unpickle it, exit 1 with a traceback."""
    import shutil

    from nestgrad.sampler.cli import main
    from nestgrad.sampler.results import Results
    from nestgrad.sampler.run_folder import RunFolderError

    damaged = tmp_path / "damaged"
    shutil.copytree(folder, damaged)
    damage(damaged / file)
    with pytest.raises(RunFolderError, match=re.escape(f"{damaged / file}: ")) as error:
        Results.load(damaged)
    assert needle in str(error.value) and "usecols" not in str(error.value) and "pickle=" not in str(error.value)
    assert main(["plot", str(damaged)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"nestgrad: error: {damaged / file}: ") and "Traceback" not in err, err


def test_a_folder_holding_another_runs_tables_is_a_warning(run, tmp_path):
    """A second config run into the same folder left the first one's tables beside its results.json, silently."""
    from nestgrad.sampler.run_folder import MixedRunFolderWarning
    write_run_folder(run, tmp_path)
    run.name = "second"
    try:
        with pytest.warns(MixedRunFolderWarning, match=r"also holds the tables of another run \(gauss3: gauss3\.txt"):
            write_run_folder(run, tmp_path)
    finally:
        run.name = "gauss3"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_run_folder(run, tmp_path / "alone")  # a folder of one run: no warning
