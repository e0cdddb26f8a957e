"""Heavy tails beyond one axis-aligned Cauchy product, variants for ``hard_problems.VARIANTS``: a mixture of
products of Cauchy distributions on a box prior, whose evidence and mode weights are exact (arctangents), and a
product whose axes are rotated away from the coordinate axes (its star's arms run along no axis of the prior),
and a correlated multivariate Student-t (elliptical heavy tails), whose evidences are Monte Carlo integrals of
exact draws. No number here comes from running nestgrad."""

import functools
import math

import numpy as np
from numba import njit

from problems import Problem
from nestgrad.sampler.priors import Prior, Uniform


@njit
def _log_components(theta, data, out):
    width, centres, log_weights = data[0][0], data[1], data[2]
    best = -np.inf
    for m in range(centres.shape[0]):
        total = log_weights[m]
        for i in range(theta.shape[0]):
            d = theta[i] - centres[m, i]
            total += math.log(width / math.pi) - math.log(width * width + d * d)
        out[m] = total
        best = max(best, total)
    acc = 0.0
    for m in range(centres.shape[0]):
        acc += math.exp(out[m] - best)
    return best + math.log(acc)


@njit
def _value(theta, data, scratch):
    return _log_components(theta, data, np.empty(data[1].shape[0]))


@njit
def _value_and_grad(theta, data, grad_out, scratch):
    width, centres = data[0][0], data[1]
    parts = np.empty(centres.shape[0])
    total = _log_components(theta, data, parts)
    grad_out[:] = 0.0
    for m in range(centres.shape[0]):
        share = math.exp(parts[m] - total)
        for i in range(theta.shape[0]):
            d = theta[i] - centres[m, i]
            grad_out[i] -= share * 2.0 * d / (width * width + d * d)
    return total


class CauchyMixture(Problem):
    """sum_m w_m prod_i Cauchy(theta_i; c_mi, width) on U(-h, h)^d."""

    def __init__(self, centres, weights, width, half_width):
        centres, weights = np.asarray(centres, float), np.asarray(weights, float)
        d = centres.shape[1]
        names = [f"x{i}" for i in range(d)]
        prior = Prior({n: Uniform(-half_width, half_width) for n in names})
        # Each component's mass inside the box, per coordinate: (atan((h - c) / g) - atan((-h - c) / g)) / pi.
        inside = np.prod((np.arctan((half_width - centres) / width) - np.arctan((-half_width - centres) / width))
                         / math.pi, axis=1)
        logz = math.log(float(np.sum(weights * inside))) - d * math.log(2 * half_width)
        super().__init__(f"cauchy_mixture{d}d", names, _value, _value_and_grad,
                         (np.array([width]), centres, np.log(weights)), prior, logz=logz)
        self.centres = centres
        self.weights = weights * inside / np.sum(weights * inside)  # the posterior mass of each mode

    def mode_weights(self, theta, weights):
        """Posterior mass nearest each centre."""
        nearest = np.argmin(((theta[:, None, :] - self.centres[None]) ** 2).sum(axis=2), axis=1)
        return np.array([weights[nearest == m].sum() for m in range(len(self.centres))])


def cauchy_mixture(ndim=4, width=0.05, separation=5.0, weights=(0.7, 0.3), half_width=20.0):
    """Two Cauchy products at (-s, ..., -s) and (s, ..., s)."""
    centres = np.array([[-separation] * ndim, [separation] * ndim])
    return CauchyMixture(centres, weights, width, half_width)


@njit
def _rotated_value(theta, data, scratch):
    width, rot = data[0][0], data[1]
    total = 0.0
    for i in range(theta.shape[0]):
        y = 0.0
        for j in range(theta.shape[0]):
            y += rot[i, j] * theta[j]
        total += math.log(width / math.pi) - math.log(width * width + y * y)
    return total


@njit
def _rotated_value_and_grad(theta, data, grad_out, scratch):
    width, rot = data[0][0], data[1]
    total = 0.0
    grad_out[:] = 0.0
    for i in range(theta.shape[0]):
        y = 0.0
        for j in range(theta.shape[0]):
            y += rot[i, j] * theta[j]
        den = width * width + y * y
        total += math.log(width / math.pi) - math.log(den)
        for j in range(theta.shape[0]):
            grad_out[j] -= 2.0 * y / den * rot[i, j]
    return total


def rotation(ndim, seed):
    """A fixed random rotation (Haar, from the QR factors of a Gaussian matrix)."""
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((ndim, ndim)))
    return q * np.sign(np.diag(r))


def box_mass(draw, half_width, draws, seed=0, chunk=1_000_000):
    """P(x in U(-h, h)^d) from ``draws`` exact draws of x, ``draw(rng, n)`` giving n of them as rows, in chunks."""
    rng = np.random.default_rng(seed)
    inside = 0
    for start in range(0, draws, chunk):
        x = draw(rng, min(chunk, draws - start))
        inside += int(np.count_nonzero(np.all(np.abs(x) < half_width, axis=1)))
    return inside / draws


def box_mass_of_rotated_cauchy(rot, width, half_width, draws, seed=0):
    """P(R^T y in the box) for y a product of Cauchy(0, width) draws: the likelihood's mass inside the prior box
    (its standard error is below 3e-5 at 2e7 draws, where the mass is about 0.99)."""
    return box_mass(lambda rng, n: (width * rng.standard_cauchy((n, rot.shape[0]))) @ rot, half_width, draws, seed)


@functools.lru_cache(maxsize=8)
def _rotated_box_mass(ndim, width, half_width, seed, draws):
    return box_mass_of_rotated_cauchy(rotation(ndim, seed), width, half_width, draws)


def rotated_cauchy(ndim=6, width=0.05, half_width=20.0, seed=3, draws=20_000_000):
    """prod_i Cauchy((R theta)_i; 0, width) on U(-h, h)^d, R a fixed rotation: logZ = log P(R^T y in the box) -
    d log(2h), the mass from ``draws`` exact draws."""
    rot = rotation(ndim, seed)
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(-half_width, half_width) for n in names})
    logz = math.log(_rotated_box_mass(ndim, width, half_width, seed, draws)) - ndim * math.log(2 * half_width)
    return Problem(f"rotated_cauchy{ndim}d", names, _rotated_value, _rotated_value_and_grad,
                   (np.array([width]), rot), prior, logz=logz)


@njit
def _student(theta, data, grad_out, want_grad):
    # log density, and its gradient into grad_out when want_grad (the value alone passes theta, never written)
    nu, log_norm, mean, precision = data[0][0], data[0][1], data[1], data[2]
    d = theta.shape[0]
    m = 0.0
    for i in range(d):
        acc = 0.0
        for j in range(d):
            acc += precision[i, j] * (theta[j] - mean[j])
        if want_grad:
            grad_out[i] = acc
        m += (theta[i] - mean[i]) * acc
    if want_grad:
        factor = -(nu + d) / (nu + m)
        for i in range(d):
            grad_out[i] *= factor
    return log_norm - 0.5 * (nu + d) * math.log1p(m / nu)


@njit
def _student_value(theta, data, scratch):
    return _student(theta, data, theta, False)


@njit
def _student_value_and_grad(theta, data, grad_out, scratch):
    return _student(theta, data, grad_out, True)


def box_mass_of_student(mean, chol, nu, half_width, draws, seed=0):
    """P(x in the box) for x = mean + L z / sqrt(chi2_nu / nu), the exact multivariate Student-t draws."""
    def draw(rng, n):
        return mean + (rng.standard_normal((n, mean.size)) @ chol.T) / np.sqrt(rng.chisquare(nu, n) / nu)[:, None]

    return box_mass(draw, half_width, draws, seed)


@functools.lru_cache(maxsize=8)
def _student_problem_arrays(ndim, nu, rho, scale_min, half_width, draws):
    from hard_problems import ar1_covariance  # the correlated Gaussian's covariance, one definition

    cov = ar1_covariance(ndim, rho, scale_min, 1.0)
    chol = np.linalg.cholesky(cov)
    mean = np.linspace(-1.0, 1.0, ndim)  # off the prior's centre, so the box cuts the tails unevenly
    return mean, cov, box_mass_of_student(mean, chol, nu, half_width, draws)


def correlated_student(ndim=6, nu=1.0, rho=0.95, scale_min=0.05, half_width=20.0, draws=20_000_000):
    """A multivariate Student-t (nu = 1: the multivariate Cauchy) with the AR(1) covariance shape of the
    ill-conditioned Gaussian tests, on U(-h, h)^d: elliptical contours with heavy tails, which the box cuts.
    logZ = log P(x in the box) - d log(2h), the mass from ``draws`` exact draws."""
    mean, cov, mass = _student_problem_arrays(ndim, nu, rho, scale_min, half_width, draws)
    log_norm = (math.lgamma(0.5 * (nu + ndim)) - math.lgamma(0.5 * nu) - 0.5 * ndim * math.log(nu * math.pi)
                - 0.5 * np.linalg.slogdet(cov)[1])
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(-half_width, half_width) for n in names})
    logz = math.log(mass) - ndim * math.log(2 * half_width)
    return Problem(f"student{ndim}d_nu{nu:g}", names, _student_value, _student_value_and_grad,
                   (np.array([nu, log_norm]), mean, np.linalg.inv(cov)), prior, logz=logz)
