"""Peers' volume-calibrated problems not covered elsewhere, with evidence in closed form or by 1-D quadrature.

* UltraNest's ``evaluate/problems.py`` (Buchner's shrinkage tests of step samplers): ``asymgauss`` (an axis-aligned
  Gaussian whose widths fall as 0.1 / (1 + 4 i): ill-conditioned by a factor 4d - 3), ``multigauss`` (two
  unnormalised peaks of width 0.01 at 0.4 and 0.6 in every coordinate: separated by 20 sqrt(d) widths) and the
  tilted ``shell`` (``-(|x - 1/2|^2 - 0.16)^2 / (2 0.004^2)``: a thin shell of radius 0.4 whose thickness in radius
  is about 0.005), all on U(0, 1)^d.
* dynesty's ``tests/test_highdim.py``: a Gaussian rotated by a random orthogonal matrix with axis scales from 1e-3
  to 1 (conditioning 1e6 in covariance), mean linspace(-1, 1, d), on U(-1000, 1000)^d: logZ = -d log 2000.
* PolyChord's ``twin_gaussian``: two equal Gaussians of width 0.1 at (-0.5, -0.5, 0, ...) and (0.5, 0.5, 0, ...) on
  U(-1, 1)^d: logZ = log of the box's share of their mass - d log 2 (about -d log 2).
"""

import math

import numpy as np
from numba import njit
from scipy import integrate, special

from hard_problems import GaussianMixture
from problems import Problem
from nestgrad.sampler.priors import Prior, Uniform


def _unit_box(ndim):
    return Prior({f"x{i}": Uniform(0.0, 1.0) for i in range(ndim)})


def asymgauss(ndim=10):
    """N(1/2, diag(sigma_i^2)), sigma_i = 0.1 / (1 + 4 i), normalised, on U(0, 1)^d: logZ = the box's share."""
    sigma = 0.1 / (1.0 + 4.0 * np.arange(ndim))
    logz = float(np.sum(np.log(special.erf(0.5 / (sigma * math.sqrt(2.0))))))
    return GaussianMixture(f"asymgauss{ndim}d", [np.full(ndim, 0.5)], [np.diag(sigma ** 2)], [1.0], _unit_box(ndim),
                           logz)


def multigauss(ndim=4, width=0.01):
    """UltraNest's two-peaked problem: two Gaussians (width 0.01) at 0.4 and 0.6 in every coordinate, equal
    weights, on U(0, 1)^d. The peer's function is the unnormalised ``logaddexp`` of the two; here they are
    normalised (the same posterior), so logZ = 0 (the box cuts 40 widths out)."""
    cov = width ** 2 * np.eye(ndim)
    return GaussianMixture(f"multigauss{ndim}d", [np.full(ndim, 0.4), np.full(ndim, 0.6)], [cov, cov], [0.5, 0.5],
                           _unit_box(ndim), 0.0)


@njit
def _shell_value(theta, data, scratch):
    r2 = 0.0
    for i in range(theta.shape[0]):
        r2 += (theta[i] - 0.5) * (theta[i] - 0.5)
    z = (r2 - data[0][0]) / data[0][1]
    return -0.5 * z * z


@njit
def _shell_value_and_grad(theta, data, grad_out, scratch):
    r2 = 0.0
    for i in range(theta.shape[0]):
        r2 += (theta[i] - 0.5) * (theta[i] - 0.5)
    z = (r2 - data[0][0]) / data[0][1]
    for i in range(theta.shape[0]):
        grad_out[i] = -z / data[0][1] * 2.0 * (theta[i] - 0.5)
    return -0.5 * z * z


def shell_logz(ndim, radius=0.4, thickness=0.004):
    """log of the integral of the shell over R^d by quadrature over the radius (the cube cuts off
    ``exp(-0.5 ((0.25 - 0.16) / 0.004)^2) ~ e^-253`` of it)."""
    log_area = math.log(2.0) + 0.5 * ndim * math.log(math.pi) - special.gammaln(0.5 * ndim)
    peak = radius
    half = 12.0 * thickness / (2.0 * radius)  # the shell's half-width in radius, 12 of its own widths

    def integrand(rho):
        z = (rho * rho - radius * radius) / thickness
        return math.exp((ndim - 1) * math.log(rho / peak) - 0.5 * z * z)

    value, _ = integrate.quad(integrand, peak - half, peak + half, epsabs=0.0, epsrel=1e-12, limit=200)
    return log_area + (ndim - 1) * math.log(peak) + math.log(value)


def shell(ndim=5):
    """UltraNest's tilted shell: ``-0.5 ((|x - 1/2|^2 - 0.16) / 0.004)^2`` on U(0, 1)^d."""
    return Problem(f"ushell{ndim}d", [f"x{i}" for i in range(ndim)], _shell_value, _shell_value_and_grad,
                   (np.array([0.16, 0.004]),), _unit_box(ndim), logz=shell_logz(ndim))


def highdim(ndim=8, seed=0):
    """dynesty's ``test_highdim``: mean linspace(-1, 1, d), covariance ``M diag(lambda^2) M^T`` with lambda =
    10^linspace(-3, 0, d) and M a random orthogonal matrix (QR of a normal matrix, ``seed``), on
    U(-1000, 1000)^d: logZ = -d log 2000 (the box holds all of its mass)."""
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((ndim, ndim)))
    m = q * np.sign(np.diag(r))
    scales = 10.0 ** np.linspace(-3.0, 0.0, ndim)
    cov = m @ np.diag(scales ** 2) @ m.T
    cov = 0.5 * (cov + cov.T)
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(-1000.0, 1000.0) for n in names})
    return GaussianMixture(f"highdim{ndim}d", [np.linspace(-1.0, 1.0, ndim)], [cov], [1.0], prior,
                           -ndim * math.log(2000.0))


def twin_gaussian(ndim=20, width=0.1):
    """PolyChord's twin Gaussian: 0.5 N((-1/2, -1/2, 0, ...), width^2 I) + 0.5 N((1/2, 1/2, 0, ...), width^2 I) on
    U(-1, 1)^d: logZ = log(box's share of each component's mass) - d log 2 (the two shares are equal)."""
    m1, m2 = np.zeros(ndim), np.zeros(ndim)
    m1[:2], m2[:2] = -0.5, 0.5
    share = np.sum(np.log(special.ndtr((1.0 - m1) / width) - special.ndtr((-1.0 - m1) / width)))
    cov = width ** 2 * np.eye(ndim)
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(-1.0, 1.0) for n in names})
    return GaussianMixture(f"twin{ndim}d", [m1, m2], [cov, cov], [0.5, 0.5], prior, float(share) - ndim * math.log(2))


PROBLEMS = {
    "asymgauss10d": asymgauss,
    "asymgauss30d": lambda: asymgauss(30),
    "multigauss4d": multigauss,
    "multigauss10d": lambda: multigauss(10),
    "ushell5d": shell,
    "ushell10d": lambda: shell(10),
    "highdim8d": highdim,
    "highdim16d": lambda: highdim(16),
    "twin20d": twin_gaussian,
}
