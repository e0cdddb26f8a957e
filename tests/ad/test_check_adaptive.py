"""ad.check's adaptive step (Ridders' ladder): a Keplerian radial-velocity kernel whose gradient in the period is
large and fast-varying passes with the default step, fails with a fixed 1e-3 step, and a planted error fails."""
import math

import numpy as np
import pytest

from nestgrad import ad
from nestgrad.ad.check import check_gradient, finite_difference_gradient


def kepler_rv(theta, t, v, verr):
    """Gaussian log-likelihood of radial velocities for one Keplerian orbit (P, K, e, omega, t0)."""
    period, amplitude, e, omega, t0 = theta[0], theta[1], theta[2], theta[3], theta[4]
    total = 0.0
    for i in range(t.shape[0]):
        mean_anomaly = 2.0 * math.pi * (t[i] - t0) / period
        ecc = mean_anomaly + e * math.sin(mean_anomaly)
        for k in range(8):  # Newton's method for Kepler's equation E - e sin E = M
            ecc = ecc - (ecc - e * math.sin(ecc) - mean_anomaly) / (1.0 - e * math.cos(ecc))
        nu = 2.0 * math.atan2(math.sqrt(1.0 + e) * math.sin(0.5 * ecc), math.sqrt(1.0 - e) * math.cos(0.5 * ecc))
        r = (v[i] - amplitude * (math.cos(nu + omega) + e * math.cos(omega))) / verr[i]
        total += -0.5 * r * r
    return total


@pytest.fixture(scope="module")
def rv_data():
    """50 times over a 3000-day baseline (~250 orbits of a 12-day period): d logL / dP is large."""
    rng = np.random.default_rng(1)
    t = np.sort(rng.uniform(0.0, 3000.0, 50))
    verr = np.full(50, 1.5)
    truth = np.array([12.0, 10.0, 0.3, 1.0, 3.0])
    v = np.array([math.sqrt(-2.0 * kepler_rv(truth, t[i:i + 1], np.zeros(1), np.ones(1))) for i in range(50)])
    return t, v + verr * rng.normal(size=50), verr


@pytest.fixture(scope="module")
def rv_derivative():
    return ad.differentiate(kepler_rv)


POINTS = [np.array([12.3, 12.0, 0.5, 2.0, 3.0]), np.array([45.1, 5.0, 0.1, 0.5, 5.0]),
          np.array([12.0, 10.0, 0.3, 1.0, 3.0])]


@pytest.mark.parametrize("theta", POINTS, ids=["P12", "P45", "truth"])
def test_keplerian_gradient_passes_with_the_adaptive_step(rv_data, rv_derivative, theta):
    check = check_gradient(kepler_rv, theta, *rv_data, derivative=rv_derivative)
    assert check.ok, str(check)
    assert abs(check.ad[0]) > 10.0  # the period component is the large, hard one
    assert check.rel_err_fd[0] < 1e-7


def test_a_fixed_large_step_gets_the_period_wrong(rv_data, rv_derivative):
    """What the adaptive ladder fixes: one fixed relative step of 1e-3 shifts ~250 orbits by a visible phase."""
    check = check_gradient(kepler_rv, POINTS[0], *rv_data, derivative=rv_derivative, step=1e-3)
    assert not check.ok and check.rel_err_fd[0] > 1e-3
    assert all(check.rel_err_fd[i] < 1e-6 for i in range(1, 5))


@pytest.mark.parametrize("index, factor", [(0, 1.0 + 1e-5), (2, 1.0 - 1e-4), (4, -1.0)])
def test_a_planted_wrong_gradient_fails(rv_data, rv_derivative, index, factor):
    class Wrong:
        arg_names = rv_derivative.arg_names

        @staticmethod
        def value_and_grad(theta, *rest):
            value = rv_derivative.value_and_grad(theta, *rest)
            rest[-1][index] *= factor
            return value

    check = check_gradient(kepler_rv, POINTS[0], *rv_data, derivative=Wrong())
    assert not check.ok and check.rel_err_fd[index] > check.rtol, str(check)
    assert [i for i in range(5) if check.rel_err_fd[i] > check.rtol] == [index]


def test_steps_that_leave_the_domain_are_skipped():
    """Large steps of the ladder fail (sqrt of a negative number) near the edge; smaller ones are used."""
    def edge(theta):
        return math.sqrt(1.0 - theta[0]) + math.log(theta[1])

    fd = finite_difference_gradient(edge, np.array([0.9995, 1e-3]))
    assert fd == pytest.approx([-0.5 / math.sqrt(0.0005), 1e3], rel=1e-8)


def test_zero_gradient_is_found_without_a_scale():
    def flat_then_steep(theta):
        return math.cos(theta[0]) + 1e6 * theta[1] * theta[1]

    fd = finite_difference_gradient(flat_then_steep, np.array([0.0, 0.0]))
    assert abs(fd[0]) < 1e-8 and abs(fd[1]) < 1e-2
