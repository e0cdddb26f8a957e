"""``sum_dtype="float64"`` on a float32 likelihood: the kernel's loop sums in float64 through the batched CPU
backend, the config key and a whole run; refusals name what is wrong."""
import json

import numpy as np
import pytest

from nestgrad.likelihoods import builtin
from nestgrad.likelihoods.derivatives import AnalyticDerivative, with_sum_dtype
from nestgrad.likelihoods.errors import LikelihoodError
from nestgrad.likelihoods.likelihood import default_precision
from nestgrad.sampler.cli import main


def test_float64_sums_bring_a_float32_likelihood_to_the_float64_values():
    # 2e6 points: float32 sums then lose precision however the compiler splits them over SIMD lanes (with fast-math
    # reassociation; at 2e5 points, 16-lane partial sums on an AVX-512 machine came within 4x of float64 sums).
    n = 2_000_000
    b = builtin.get("gaussian4d", n=n)
    thetas = np.array([[0.51, 0.49, 0.11, 0.09], [0.5, 0.5, 0.1, 0.1]], np.float32).astype(np.float64)
    ref, ref_grad = (a.copy() for a in b.likelihood(backend="cpu", dtype="float64").logl_and_grad(thetas))
    # A gradient's error against the size of its sums (n / sigma of the row), not against the gradient itself,
    # which nearly vanishes at the truth (the second theta).
    scale = n / thetas[:, [2, 3, 2, 3]]
    errors = {}
    for sums in (None, "float64"):
        values, grads = b.likelihood(backend="cpu", dtype="float32", sum_dtype=sums).logl_and_grad(thetas)
        errors[sums] = (np.max(np.abs(values - ref) / np.abs(ref)), np.max(np.abs(grads - ref_grad) / scale))
    eps32 = np.finfo(np.float32).eps
    # float64 sums: what is left is float32 rounding of single terms (the per-sample reciprocals), ~eps32
    assert errors["float64"][0] < eps32 and errors["float64"][1] < eps32, errors
    assert errors[None][0] > 5 * errors["float64"][0] and errors[None][1] > 5 * errors["float64"][1], errors


def test_sum_dtype_refusals():
    b = builtin.get("gaussian4d", n=10)
    with pytest.raises(LikelihoodError, match="wider"):
        b.likelihood(backend="cpu", dtype="float64", sum_dtype="float32")
    with pytest.raises(LikelihoodError, match="sum_dtype must be"):
        b.likelihood(backend="cpu", dtype="float32", sum_dtype="float16")
    with pytest.raises(LikelihoodError, match="differentiated by nestgrad"):
        with_sum_dtype(AnalyticDerivative(b.kernel, b.gradient), "float64")
    assert b.likelihood(backend="cpu", dtype="float64", sum_dtype="float64").sum_dtype is None  # nothing to widen


def test_a_config_with_float64_sums_runs_and_records_them(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("name: sums\nlikelihood: {builtin: gaussian4d}\nsampler: {nlive: 60, seed: 2, dlogz: 0.5}\n"
                      f"backend: cpu\ndtype: float32\nsum_dtype: float64\noutput: {{dir: {tmp_path / 'run'}, plots: []}}\n")
    assert main(["run", str(config), "--quiet"]) == 0
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["settings"]["sum_dtype"] == "float64" and results["settings"]["dtype"] == "float32"
    assert abs(results["logz"] - results["reference_logz"]) < 4 * results["logz_err"]


def test_the_default_precision_is_float64_off_the_gpu_and_float32_with_float64_sums_on_it():
    assert default_precision("cpu", None, None, True) == ("float64", None)
    assert default_precision("python", None, None, True) == ("float64", None)
    assert default_precision("gpu", None, None, True) == ("float32", "float64")
    assert default_precision("gpu", None, None, False) == ("float32", None)  # a hand-written derivative: no wider sums
    assert default_precision("gpu", "float64", None, True) == ("float64", None)  # what is asked for is what you get
    assert default_precision("gpu", "float32", None, True) == ("float32", None)
    assert default_precision("cpu", "float32", "float64", True) == ("float32", "float64")
    b = builtin.get("gaussian4d", n=10)
    cpu = b.likelihood(backend="cpu")
    assert cpu.dtype == np.float64 and cpu.sum_dtype is None


@pytest.mark.parametrize("precision, expected", [("", ("float64", None)), ("dtype: float32\n", ("float32", None)),
                                                 ("dtype: float32\nsum_dtype: float32\n", ("float32", None))])
def test_a_config_records_the_precision_its_likelihood_was_built_with(tmp_path, precision, expected):
    config = tmp_path / "c.yaml"
    config.write_text("name: p\nlikelihood: {builtin: gaussian4d, options: {n: 10}}\nsampler: {nlive: 30, seed: 2, "
                      f"dlogz: 2.0}}\nbackend: cpu\n{precision}output: {{dir: {tmp_path / 'run'}, plots: []}}\n")
    assert main(["run", str(config), "--quiet", "--no-check"]) == 0
    settings = json.loads((tmp_path / "run" / "results.json").read_text())["settings"]
    assert (settings["dtype"], settings["sum_dtype"]) == expected
