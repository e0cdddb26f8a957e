"""Results from a real run through the run folder (sampler.run_folder) and back, and anesthetic's independent
evidence computation from our ``_dead-birth.txt`` agreeing with ours."""

import os

import numpy as np
import pytest

import problems
from nestgrad.sampler import NestedSampler, Results


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    prob = problems.gaussian(3)
    res = NestedSampler(prob, prob.prior, nlive=100, seed=1).run(dlogz=0.1, progress=False)
    outdir = tmp_path_factory.mktemp("run")
    res.save(outdir)
    return res, outdir


def test_save_load_round_trip(saved):
    res, outdir = saved
    back = Results.load(outdir)
    assert (back.logz, back.logz_err, back.niter, back.nlike, back.ngrad, back.ess, back.ess_params) == \
        (res.logz, res.logz_err, res.niter, res.nlike, res.ngrad, res.ess, res.ess_params)
    assert set(back.ess_params) == set(res.params) and "(ESS " in back.summary()
    np.testing.assert_array_equal(back.dead.u, res.dead.u)
    np.testing.assert_allclose(back.dead.logl, res.dead.logl, rtol=1e-12)
    for key, value in res.diagnostics.items():
        np.testing.assert_array_equal(back.diagnostics[key], value, err_msg=key)


def test_anesthetic_reads_the_run_and_agrees_on_logz(saved):
    import anesthetic
    res, outdir = saved
    chains = anesthetic.read_chains(os.path.join(outdir, res.name))
    assert len(chains) == res.dead.logl.size
    assert abs(float(chains.logZ()) - res.logz) < 0.02  # same E[log X] from the same (logl, logl_birth)


def test_equal_weight_samples_carry_the_logl_of_the_dead_points_they_are(saved):
    from nestgrad.sampler import run_folder

    res, outdir = saved
    assert res.sample_logl is not None and len(res.sample_logl) == len(res.samples)
    looked_up = run_folder._logl_of_samples(res.samples, res.dead.theta, res.dead.logl)  # by each row's bits
    np.testing.assert_array_equal(res.sample_logl, looked_up)
    table = np.loadtxt(os.path.join(outdir, f"{res.name}_equal_weights.txt"), ndmin=2)
    np.testing.assert_allclose(-0.5 * table[:, 1], res.sample_logl, rtol=1e-15)
    np.testing.assert_array_equal(Results.load(outdir).sample_logl, res.sample_logl)


def test_a_huge_log_evidence_is_printed_in_exponent_form():
    """A logL near 1e300 printed logZ as a 300-digit number in the summary."""
    from nestgrad.sampler.results import _log_text
    assert _log_text(1e300) == "1.000000e+300" and _log_text(-2.5e12) == "-2.500000e+12"
    assert _log_text(-12.34567) == "-12.346" and _log_text(float("-inf")) == "-inf"


def test_save_load_and_plot_name_a_bad_path_before_any_work(saved, tmp_path):
    """Python's 'expected str, bytes or os.PathLike object', mkdir's 'File exists' and matplotlib's errors after
    the figure was drawn were what these said."""
    from nestgrad.sampler.run_folder import RunFolderError
    res, outdir = saved
    with pytest.raises(TypeError, match=r"Results\.save: outdir: expected a folder path .*got nothing"):
        res.save(None)
    with pytest.raises(TypeError, match=r"Results\.load: outdir: expected the run folder's path .*got int 5"):
        Results.load(5)
    (tmp_path / "afile").write_text("")
    with pytest.raises(RunFolderError, match="it is a file, not a folder"):
        res.save(tmp_path / "afile")
    with pytest.raises(ValueError, match=r"path: the folder '.*nodir' does not exist"):
        res.plot("corner", path=tmp_path / "nodir" / "x.png")
    with pytest.raises(ValueError, match=r"path: '.*x\.jpgg' ends in \.jpgg; the file types: .*\.png"):
        res.plot("corner", path=tmp_path / "x.jpgg")
    assert not list(tmp_path.glob("x.*")) and not (tmp_path / "nodir").exists()
