"""Problems of the classes on which the sampler once gave biased evidence or posteriors (issue "proposals that
mix"), each with an analytic log-evidence and, for multimodal ones, the true mode weights.

Written after the test problems of dynesty (``tests/test_gau.py`` correlated Gaussian, ``test_egg``), UltraNest
(asymmetric Gaussian, funnel) and PolyChord's Gaussian mixtures; references are exact (closed form) — no
number here comes from running nestgrad.
"""

import math

import numpy as np
from numba import njit
from scipy import special

from problems import Problem
from sampler.priors import Normal, Prior, Uniform


# --- correlated Gaussian N(mu, C): AR(1) correlation, log-spaced scales -----------------------------------

@njit
def _mvn_value(theta, data):
    mu, prec, norm = data[0], data[1], data[2][0]
    d = theta.shape[0]
    q = 0.0
    for i in range(d):
        ri = theta[i] - mu[i]
        acc = 0.0
        for j in range(d):
            acc += prec[i, j] * (theta[j] - mu[j])
        q += ri * acc
    return -0.5 * q + norm


@njit
def _mvn_value_and_grad(theta, data, grad_out, scratch):
    mu, prec, norm = data[0], data[1], data[2][0]
    d = theta.shape[0]
    q = 0.0
    for i in range(d):
        acc = 0.0
        for j in range(d):
            acc += prec[i, j] * (theta[j] - mu[j])
        grad_out[i] = -acc
        q += (theta[i] - mu[i]) * acc
    return -0.5 * q + norm


def ar1_covariance(ndim, rho, scale_min, scale_max):
    scales = np.geomspace(scale_min, scale_max, ndim)
    lag = np.abs(np.subtract.outer(np.arange(ndim), np.arange(ndim)))
    return np.outer(scales, scales) * rho ** lag


def correlated_gaussian(ndim=20, rho=0.95, scale_min=0.05, scale_max=1.0, prior="uniform", half_width=10.0,
                        prior_sigma=3.0):
    """Normalised N(0, C) likelihood, C = AR(1)(rho) with scales from scale_min to scale_max.

    uniform prior on [-w, w]^d (the likelihood's mass lies inside): logZ = -d log(2w);
    normal prior N(0, s^2 I): logZ = log N(0; 0, C + s^2 I)."""
    cov = ar1_covariance(ndim, rho, scale_min, scale_max)
    prec = np.linalg.inv(cov)
    norm = -0.5 * (ndim * math.log(2 * math.pi) + np.linalg.slogdet(cov)[1])
    data = (np.zeros(ndim), prec, np.array([norm]))
    names = [f"x{i}" for i in range(ndim)]
    if prior == "uniform":
        pri = Prior({n: Uniform(-half_width, half_width) for n in names})
        logz = -ndim * math.log(2 * half_width)
    else:
        pri = Prior({n: Normal(0.0, prior_sigma) for n in names})
        total = cov + prior_sigma ** 2 * np.eye(ndim)
        logz = -0.5 * (ndim * math.log(2 * math.pi) + np.linalg.slogdet(total)[1])
    return Problem(f"corr{ndim}d_{prior}", names, _mvn_value, _mvn_value_and_grad, data, pri, logz=logz)


# --- Gaussian mixtures with isotropic components -----------------------------------------------------------

@njit
def _mix_terms(theta, means, sigmas, logw, k):
    d = theta.shape[0]
    q = 0.0
    for i in range(d):
        r = (theta[i] - means[k, i]) / sigmas[k]
        q += r * r
    return logw[k] - 0.5 * q - d * (math.log(sigmas[k]) + 0.5 * math.log(2.0 * math.pi))


@njit
def _mix_value(theta, data):
    means, sigmas, logw = data[0], data[1], data[2]
    top = -math.inf
    for k in range(means.shape[0]):
        top = max(top, _mix_terms(theta, means, sigmas, logw, k))
    total = 0.0
    for k in range(means.shape[0]):
        total += math.exp(_mix_terms(theta, means, sigmas, logw, k) - top)
    return top + math.log(total)


@njit
def _mix_value_and_grad(theta, data, grad_out, scratch):
    means, sigmas, logw = data[0], data[1], data[2]
    value = _mix_value(theta, data)
    for i in range(theta.shape[0]):
        grad_out[i] = 0.0
    for k in range(means.shape[0]):
        p = math.exp(_mix_terms(theta, means, sigmas, logw, k) - value)
        for i in range(theta.shape[0]):
            grad_out[i] -= p * (theta[i] - means[k, i]) / (sigmas[k] * sigmas[k])
    return value


class Mixture(Problem):
    """A normalised Gaussian mixture on a uniform box that holds all its mass: logZ = -log(box volume), and the
    posterior mass of component k is its weight."""

    def __init__(self, name, means, sigmas, weights, half_width):
        means = np.asarray(means, dtype=np.float64)
        ndim = means.shape[1]
        data = (means, np.asarray(sigmas, dtype=np.float64), np.log(np.asarray(weights, dtype=np.float64)))
        names = [f"x{i}" for i in range(ndim)]
        prior = Prior({n: Uniform(-half_width, half_width) for n in names})
        super().__init__(name, names, _mix_value, _mix_value_and_grad, data, prior,
                         logz=-ndim * math.log(2 * half_width))
        self.means, self.sigmas, self.weights = means, np.asarray(sigmas, float), np.asarray(weights, float)

    def mode_weights(self, theta, weights):
        """Posterior mass of each component's basin (nearest mean in units of its sigma)."""
        dist = np.linalg.norm(theta[:, None, :] - self.means[None], axis=2) / self.sigmas[None]
        nearest = np.argmin(dist, axis=1)
        return np.array([weights[nearest == k].sum() for k in range(len(self.weights))])


def unequal_mixture():
    """5-D, weights 0.6 / 0.3 / 0.1, different widths, well separated, prior U(-10, 10)^5."""
    means = [[-4.0, -4.0, 0.0, 0.0, 2.0], [4.0, 3.0, 1.0, -2.0, 0.0], [0.0, 4.0, -4.0, 3.0, -3.0]]
    return Mixture("mixture5d", means, [0.5, 0.8, 0.3], [0.6, 0.3, 0.1], 10.0)


# --- two equal modes on a slanted ridge ---------------------------------------------------------------------

@njit
def _ridge_terms(theta, data, k):
    # Mode k: mean m_k, correlation rho along the diagonal direction, scale s.
    cx, cy, s, rho = data[0][k, 0], data[0][k, 1], data[1][0], data[1][1]
    x = (theta[0] - cx) / s
    y = (theta[1] - cy) / s
    q = (x * x - 2 * rho * x * y + y * y) / (1 - rho * rho)
    return -0.5 * q - math.log(2 * math.pi * s * s * math.sqrt(1 - rho * rho)) + math.log(0.5)


@njit
def _ridge_value(theta, data):
    a = _ridge_terms(theta, data, 0)
    b = _ridge_terms(theta, data, 1)
    top = max(a, b)
    return top + math.log(math.exp(a - top) + math.exp(b - top))


@njit
def _ridge_value_and_grad(theta, data, grad_out, scratch):
    s, rho = data[1][0], data[1][1]
    value = _ridge_value(theta, data)
    grad_out[0] = 0.0
    grad_out[1] = 0.0
    for k in range(2):
        p = math.exp(_ridge_terms(theta, data, k) - value)
        x = (theta[0] - data[0][k, 0]) / s
        y = (theta[1] - data[0][k, 1]) / s
        grad_out[0] -= p * (x - rho * y) / ((1 - rho * rho) * s)
        grad_out[1] -= p * (y - rho * x) / ((1 - rho * rho) * s)
    return value


class Ridge(Problem):
    """Two equal, strongly correlated (rho 0.99) Gaussian modes centred on the line y = x, 5 apart along it,
    prior U(-10, 10)^2: logZ = -log 400, each mode holds half the mass."""

    def __init__(self, separation=5.0, scale=1.0, rho=0.99):
        h = separation / (2 * math.sqrt(2))
        centres = np.array([[-h, -h], [h, h]])
        data = (centres, np.array([scale, rho]))
        prior = Prior({"x": Uniform(-10.0, 10.0), "y": Uniform(-10.0, 10.0)})
        super().__init__("ridge2d", ["x", "y"], _ridge_value, _ridge_value_and_grad, data, prior,
                         logz=-math.log(400.0))
        self.weights = np.array([0.5, 0.5])

    def mode_weights(self, theta, weights):
        upper = theta[:, 0] + theta[:, 1] > 0
        return np.array([weights[~upper].sum(), weights[upper].sum()])


# --- heavy tails with a narrow core: product of Cauchy densities ---------------------------------------------

@njit
def _cauchy_value(theta, data):
    g = data[0][0]
    total = 0.0
    for i in range(theta.shape[0]):
        total += math.log(g / math.pi) - math.log(g * g + theta[i] * theta[i])
    return total


@njit
def _cauchy_value_and_grad(theta, data, grad_out, scratch):
    g = data[0][0]
    total = 0.0
    for i in range(theta.shape[0]):
        den = g * g + theta[i] * theta[i]
        total += math.log(g / math.pi) - math.log(den)
        grad_out[i] = -2.0 * theta[i] / den
    return total


def cauchy(ndim=6, width=0.05, half_width=20.0):
    """prod_i Cauchy(theta_i; 0, width) on U(-w, w)^d: logZ = d log((2/pi) atan(w / width) / (2 w))."""
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(-half_width, half_width) for n in names})
    logz = ndim * math.log((2 / math.pi) * math.atan(half_width / width) / (2 * half_width))
    return Problem(f"cauchy{ndim}d", names, _cauchy_value, _cauchy_value_and_grad, (np.array([width]),), prior,
                   logz=logz)


# --- a parameter the likelihood ignores -----------------------------------------------------------------------

@njit
def _ignored_value(theta, data):
    # Only theta[0], theta[1] enter: N(0.3, 0.05^2) each; theta[2] is free.
    a = (theta[0] - 0.3) / 0.05
    b = (theta[1] - 0.3) / 0.05
    return -0.5 * (a * a + b * b) - 2 * math.log(0.05 * math.sqrt(2 * math.pi))


@njit
def _ignored_value_and_grad(theta, data, grad_out, scratch):
    a = (theta[0] - 0.3) / 0.05
    b = (theta[1] - 0.3) / 0.05
    grad_out[0] = -a / 0.05
    grad_out[1] = -b / 0.05
    grad_out[2] = 0.0
    return -0.5 * (a * a + b * b) - 2 * math.log(0.05 * math.sqrt(2 * math.pi))


def ignored_parameter(sigma_free=5.0):
    """Two constrained parameters (uniform priors on [0, 1]) and one the likelihood ignores, prior
    N(0, sigma_free): its posterior is its prior; logZ = 2 log(Phi(14) - Phi(-6)) ~ 0."""
    prior = Prior({"a": Uniform(0.0, 1.0), "b": Uniform(0.0, 1.0), "free": Normal(0.0, sigma_free)})
    mass = special.ndtr(0.7 / 0.05) - special.ndtr(-0.3 / 0.05)
    return Problem("ignored3d", prior.names, _ignored_value, _ignored_value_and_grad, (np.zeros(1),), prior,
                   logz=2 * math.log(mass))


# --- a plateau: constant likelihood on part of the prior ------------------------------------------------------

@njit
def _plateau_value(theta, data):
    if theta[0] * theta[0] + theta[1] * theta[1] < 1.0:
        return math.log(10.0)
    return 0.0


@njit
def _plateau_value_and_grad(theta, data, grad_out, scratch):
    grad_out[0] = 0.0
    grad_out[1] = 0.0
    return _plateau_value(theta, data)


def plateau():
    """logL = log 10 inside the unit circle, 0 outside, prior U(-3, 3)^2 (dynesty tests/test_plateau.py):
    logZ = log(1 + 9 pi / 36)."""
    prior = Prior({"x": Uniform(-3.0, 3.0), "y": Uniform(-3.0, 3.0)})
    return Problem("plateau", prior.names, _plateau_value, _plateau_value_and_grad, (np.zeros(1),), prior,
                   logz=math.log(1 + 9 * math.pi / 36))


PROBLEMS = {
    "corr20d_uniform": lambda: correlated_gaussian(20, prior="uniform"),
    "corr20d_normal": lambda: correlated_gaussian(20, prior="normal"),
    "mixture5d": unequal_mixture,
    "ridge2d": Ridge,
    "cauchy6d": cauchy,
    "ignored3d": ignored_parameter,
    "plateau": plateau,
}
