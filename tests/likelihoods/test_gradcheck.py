"""check_gradient passes on every built-in and fails on planted wrong gradients.

Prior draws come from the sampler's registry of prior families (``likelihoods`` keeps none): a Likelihood
takes them as ``draws=``.
"""

import numpy as np
import pytest

from nestgrad.likelihoods import Likelihood, LikelihoodError, builtin
from nestgrad.likelihoods.derivatives import AnalyticDerivative
from nestgrad.likelihoods.gradcheck import GradientReport
from nestgrad.likelihoods.builtin import gaussian4d
from nestgrad.sampler.priors import Prior


def _prior_draws(priors):
    return Prior.from_spec(priors).draw


@pytest.mark.parametrize("points", ["near the truths", "prior draws"])
@pytest.mark.parametrize("name", builtin.names())
def test_every_builtin_passes(name, points):
    """By default a built-in's check looks near its truths (``Builtin.draw``); the config passes prior draws."""
    b = builtin.get(name)
    draws = _prior_draws(b.priors) if points == "prior draws" else None
    report = b.likelihood(backend="python", draws=draws).check_gradient(n=8)
    assert report.ok, report.table()
    assert report.skipped == 0 and report.ad_vs_analytic is not None
    assert "OK" in str(report) and all(p in str(report) for p in report.params)


def _wrong_sigma2(theta, x, out):
    gaussian4d.gradient(theta, x, out)
    out[3] *= 1.01  # one percent off in one component


def test_planted_wrong_analytic_gradient_fails():
    b = builtin.get("gaussian4d")
    L = Likelihood(b.kernel, b.params, b.data, backend="python", gradient=_wrong_sigma2,
                   draws=_prior_draws(b.priors))
    report = L.check_gradient(n=4)
    assert not report.ok
    assert report.analytic_vs_fd[3] > 1e-3 and report.ad_vs_analytic[3] > 1e-3
    assert np.all(report.ad_vs_fd < 1e-6)  # the AD gradient itself is fine
    assert "FAILED" in report.table() and "!" in report.table().splitlines()[4]


def _raising_gradient(theta, x, out):
    raise ValueError("not written yet")


@pytest.mark.parametrize("as_derivative", [False, True])
def test_a_gradient_that_raises_is_named_at_its_line(as_derivative):
    """An outsider's hand-written gradient raising ValueError was reported as 'every point skipped (logL or
    differences not finite)': the math errors the check forgives at the edge of a kernel's domain hid it."""
    b = builtin.get("gaussian4d")
    if as_derivative:
        L = Likelihood.from_derivative(AnalyticDerivative(b.kernel, _raising_gradient), b.kernel, b.params, b.data,
                                       backend="python", draws=_prior_draws(b.priors))
    else:
        L = Likelihood(b.kernel, b.params, b.data, backend="python", gradient=_raising_gradient,
                       draws=_prior_draws(b.priors))
    with pytest.raises(LikelihoodError) as raised:
        L.check_gradient(n=3)
    line = _raising_gradient.__code__.co_firstlineno + 1
    assert f"{__file__}:{line}:5: the gradient '_raising_gradient' raised ValueError: not written yet" in str(
        raised.value)


def test_planted_wrong_ad_gradient_fails():
    """A derivative provider whose gradient is wrong is caught by the finite differences."""
    b = builtin.get("gaussian4d")
    L = Likelihood.from_derivative(AnalyticDerivative(b.kernel, _wrong_sigma2), b.kernel, b.params, b.data,
                                   backend="python", draws=_prior_draws(b.priors))
    report = L.check_gradient(n=4)
    assert not report.ok and report.ad_vs_fd[3] > 1e-3 and report.analytic is None


def test_points_can_be_given_or_drawn_by_a_callable():
    b = builtin.get("rosenbrock")
    L = Likelihood(b.kernel, b.params, b.data, backend="python")  # no draws
    with pytest.raises(LikelihoodError, match="pass thetas"):
        L.check_gradient()
    assert L.check_gradient(np.array([[0.3, -1.0], [2.0, 4.0]])).ok
    report = L.check_gradient(lambda rng, n: rng.uniform(-2, 2, (n, 2)), n=5)
    assert report.ok and report.thetas.shape == (5, 2)


def test_report_without_finite_points_is_not_ok():
    params = ("a",)
    nan = np.full((2, 1), np.nan)
    report = GradientReport.build(params, np.zeros((2, 1)), np.array([np.nan, np.inf]), nan, nan)
    assert not report.ok and report.skipped == 2


def test_kernel_and_gradient_from_a_file(tmp_path):
    path = tmp_path / "quad.py"
    path.write_text("import math\n\n\ndef f(theta, c):\n    return -c * theta[0] * theta[0] + math.sin(theta[1])\n\n\n"
                    "def f_grad(theta, c, out):\n    out[0] = -2.0 * c * theta[0]\n    out[1] = math.cos(theta[1])\n")
    L = Likelihood(f"{path}:f", ["a", "b"], {"c": 3.0}, backend="python", gradient=f"{path}:f_grad",
                   draws=_prior_draws({"a": ("normal", 0.0, 1.0), "b": ("uniform", -3.0, 3.0)}))
    report = L.check_gradient(n=6)
    assert report.ok and np.all(report.ad_vs_analytic < 1e-12)


def test_fast_oscillating_kernel_passes_with_the_adaptive_step(tmp_path):
    """A phase over a long baseline: the five-point stencil with a 1e-4 relative step failed on this (the
    Keplerian case of the issue); ad.check's adaptive step, which Likelihood.check_gradient uses, does not."""
    path = tmp_path / "wave.py"
    path.write_text("import math\n\n\ndef wave(theta, t):\n    total = 0.0\n    for i in range(t.shape[0]):\n"
                    "        total += math.cos(2.0 * math.pi * t[i] / theta[0] + theta[1])\n    return total\n")
    t = np.linspace(2900.0, 3000.0, 5)  # ~800 cycles of P = 3.7: the old stencil was off by 2e-3 in P
    L = Likelihood(f"{path}:wave", ["P", "phi"], {"t": t}, backend="python")
    report = L.check_gradient(np.array([[3.7, 0.3], [12.1, 2.0]]))
    assert report.ok, report.table()
    assert np.all(report.ad_vs_fd < 1e-8) and np.all(np.abs(report.ad[:, 0]) > 300.0)
