"""NaN likelihood values count as zero likelihood (outside every contour) and are reported: in the results, the
summary, results.json, the run plot's title and a warning when their share is not negligible."""

import json
import math
import warnings

import numpy as np
import pytest
from numba import njit
from scipy import special

from problems import Problem
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.nested_sampler import NaNLikelihoodWarning
from nestgrad.sampler.priors import Prior, Uniform


@njit
def _value(theta, data, scratch):
    if theta[1] > 0.5:
        return math.nan
    d0 = (theta[0] - 0.3) / 0.1
    d1 = (theta[1] - 0.3) / 0.1
    if d0 * d0 + d1 * d1 < data[0]:  # +inf near the peak when data[0] > 0 (never for nan_half's data[0] = 0)
        return math.inf
    return -0.5 * (d0 * d0 + d1 * d1)


@njit
def _value_and_grad(theta, data, grad_out, scratch):
    value = _value(theta, data, scratch)
    grad_out[0] = -(theta[0] - 0.3) / 0.01
    grad_out[1] = -(theta[1] - 0.3) / 0.01
    return value


def nan_half():
    """The reproducer's kernel: NaN for b > 0.5; Z = 2 pi 0.01 (Phi(7) - Phi(-3)) (Phi(2) - Phi(-3))."""
    prior = Prior({"a": Uniform(0.0, 1.0), "b": Uniform(0.0, 1.0)})
    mass = (special.ndtr(7) - special.ndtr(-3)) * (special.ndtr(2) - special.ndtr(-3))
    return Problem("nan_half", ["a", "b"], _value, _value_and_grad, (np.zeros(1),), prior,
                   logz=math.log(2 * math.pi * 0.01 * mass))


@pytest.fixture(scope="module")
def nan_run():
    problem = nan_half()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = NestedSampler(problem, problem.prior, nlive=200, seed=3).run(progress=False)
    return problem, res, caught


def test_nan_values_are_counted_and_the_evidence_is_that_of_the_finite_region(nan_run):
    problem, res, _ = nan_run
    assert res.nnan > 0
    assert int(res.diagnostics["nnan"].sum()) > 0  # chains met NaN, not only the initial draws
    assert abs(res.logz - problem.logz) < 3.5 * res.logz_err


def test_nan_share_is_reported_in_summary_json_and_a_warning(nan_run, tmp_path):
    _, res, caught = nan_run
    assert "returned NaN" in res.summary()
    assert any(issubclass(w.category, NaNLikelihoodWarning) for w in caught)
    res.save(tmp_path)
    info = json.loads((tmp_path / "results.json").read_text())
    assert info["nnan"] == res.nnan and info["nan_fraction"] == pytest.approx(res.nnan / res.nlike)
    assert "logz_err_bootstrap" in info and info["ess"] > 0


def test_run_plot_reports_the_nan_share_and_ends_at_the_final_logz(nan_run):
    from nestgrad.sampler.plots_run import run_plot
    _, res, _ = nan_run
    figure = run_plot(res)
    top, evidence_axis = figure.axes[0], figure.axes[3]
    assert "were NaN" in top.get_title()
    # The accumulated evidence includes the prior mass where the likelihood is NaN (measured at the draws).
    assert evidence_axis.lines[0].get_ydata()[-1] == pytest.approx(res.logz, abs=0.02)


def test_plus_infinity_met_by_a_chain_stops_the_run_with_a_message_naming_the_point(tmp_path):
    """An outsider's kernel returned +inf in a small disc that no initial draw met: the chains found it, sampled
    on, and the run ended in a bare ValueError (NaN weights) after writing a checkpoint it then called damaged.
    Now the iteration that meets +inf stops the run with a SamplerError naming the point; no checkpoint of that
    iteration is written."""
    from nestgrad.sampler.nested_sampler import SamplerError

    problem = nan_half()
    problem._kernels = type(problem._kernels)(_value, _value_and_grad, (np.array([0.01]),), 0, problem.dtype)
    checkpoint = tmp_path / "checkpoint.npz"
    with pytest.raises(SamplerError, match=r"returned \+inf at a = .*, b = .* \(iteration \d+, \d+ of 20 new") as info:
        NestedSampler(problem, problem.prior, nlive=200, seed=1).run(progress=False, checkpoint=str(checkpoint))
    a, b = (float(part.split(" = ")[1]) for part in str(info.value).split(" at ")[1].split(" (")[0].split(", "))
    assert ((a - 0.3) / 0.1) ** 2 + ((b - 0.3) / 0.1) ** 2 < 0.01  # the point named is in the disc
    assert not checkpoint.exists() or "is kept" in str(info.value)



def test_plus_infinity_at_an_initial_draw_names_the_draw():
    from nestgrad.sampler.nested_sampler import SamplerError

    problem = nan_half()
    problem._kernels = type(problem._kernels)(_value, _value_and_grad, (np.array([1.0]),), 0, problem.dtype)
    with pytest.raises(SamplerError, match=r"\+inf at a prior draw, theta = \[") as info:
        NestedSampler(problem, problem.prior, nlive=200, seed=1).run(progress=False)
    a, b = map(float, str(info.value).split("theta = [")[1].split("]")[0].split(", "))
    assert ((a - 0.3) / 0.1) ** 2 + ((b - 0.3) / 0.1) ** 2 < 1.0
