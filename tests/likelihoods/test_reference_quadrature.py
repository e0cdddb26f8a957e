"""The numpy quadrature behind the built-ins' reference log-evidences (likelihoods/builtin/_reference.py) against
closed forms and against scipy's adaptive quadrature (scipy only here, in the test: a run does not import it)."""
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.special import ndtr

from nestgrad.likelihoods.builtin import _reference, gaussian4d, gaussian_shells, linear_regression, rosenbrock

CLOSED_FORMS = [
    # (log f, low, high, log of the integral)
    (lambda x: -0.5 * ((x - 0.3) / 1e-3) ** 2, -5.0, 5.0, math.log(math.sqrt(2 * math.pi) * 1e-3)),
    (lambda x: -x, 0.0, 50.0, math.log(-math.expm1(-50.0))),
    (lambda x: -0.5 * (x / 0.1) ** 2, 0.0, 1.0, math.log(0.5 * math.sqrt(2 * math.pi) * 0.1)),  # peak on the edge
    (lambda x: 3 * math.log(x) if x > 0 else -math.inf, -1.0, 2.0, math.log(4.0)),  # zero on part of the range
    (lambda x: 700.0 - 0.5 * ((x - 7.0) / 0.05) ** 2, 0.0, 10.0, 700.0 + math.log(math.sqrt(2 * math.pi) * 0.05)),
    (lambda x: -math.log1p(x * x), -30.0, 30.0, math.log(2 * math.atan(30.0))),  # heavy tails fill the range
]


@pytest.mark.parametrize("case", range(len(CLOSED_FORMS)))
def test_log_integral_matches_closed_forms(case):
    log_f, low, high, expected = CLOSED_FORMS[case]
    assert abs(_reference.log_integral(log_f, low, high) - expected) < 1e-10 * max(1.0, abs(expected))


def test_normal_mass_keeps_digits_in_both_tails():
    for a, b in [(-40.0, 40.0), (-1.0, 2.0), (8.0, 9.0), (-9.0, -8.0), (0.0, 0.5), (-0.5, 0.0), (20.0, 21.0)]:
        got = _reference.normal_mass(a, b)
        tail = ndtr(-a) - ndtr(-b) if a >= 0 else ndtr(b) - ndtr(a)  # the same tail, from scipy
        assert got == pytest.approx(tail, rel=1e-13, abs=0.0), (a, b)
        assert got > 0.0


def _scipy_log_integral(log_f, low, high):
    """An independent reference: the peak found on a grid, then scipy's adaptive quadrature around it."""
    t = np.linspace(low, high, 4001)
    values = np.array([log_f(v) for v in t])
    shift = float(np.max(values[np.isfinite(values)]))
    peak = t[int(np.argmax(np.where(np.isfinite(values), values, -np.inf)))]
    f = lambda v: math.exp(log_f(v) - shift) if math.isfinite(log_f(v)) else 0.0  # noqa: E731
    value, _ = integrate.quad(f, low, high, points=[peak], epsabs=0.0, epsrel=1e-12, limit=1000)
    return math.log(value) + shift


@pytest.mark.parametrize("make", [lambda: gaussian4d.get(), lambda: rosenbrock.get(),
                                  lambda: linear_regression.get(), lambda: gaussian_shells.get(ndim=2),
                                  lambda: gaussian_shells.get(ndim=5)],
                         ids=["gaussian4d", "rosenbrock", "linear_regression", "shells2", "shells5"])
def test_builtin_reference_evidences_agree_with_scipy_quadrature(make, monkeypatch):
    ours = make().reference_logz
    gaussian4d._default_reference.cache_clear()
    for module in (gaussian4d, rosenbrock, linear_regression, gaussian_shells):
        monkeypatch.setattr(module, "log_integral", _scipy_log_integral)
    theirs = make().reference_logz
    gaussian4d._default_reference.cache_clear()
    assert abs(ours - theirs) < 1e-9 * max(1.0, abs(theirs))
