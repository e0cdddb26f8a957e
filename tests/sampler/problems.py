"""Hand-written numba test problems shaped like ``likelihoods.Likelihood`` (docs/internals.md §2).

Each problem has ``.params``, ``.ndim``, ``.cpu_kernels()`` (a ``CpuKernels``-shaped NamedTuple of njit
``value(theta, data, scratch)`` / ``value_and_grad(theta, data, grad_out, scratch)``), batched
``logl``/``logl_and_grad``, a default ``prior`` and, where known, the analytic ``logz``. They let the sampler be
tested without the differentiator.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import integrate, special

from nestgrad.sampler.priors import Prior, Uniform


class CpuKernels(NamedTuple):
    value: object
    value_and_grad: object
    data: tuple
    scratch_size: int
    dtype: object


class Problem:
    def __init__(self, name, params, value, value_and_grad, data, prior, logz=None, dtype=np.float64):
        self.name = name
        self.params = list(params)
        self.ndim = len(self.params)
        self.dtype = np.dtype(dtype)
        self._kernels = CpuKernels(value, value_and_grad, data, 0, self.dtype)
        self.prior = prior
        self.logz = logz

    def cpu_kernels(self):
        return self._kernels

    def logl(self, thetas):
        thetas = np.atleast_2d(np.asarray(thetas, dtype=self.dtype))
        scratch = np.empty(self._kernels.scratch_size, self.dtype)
        return np.array([self._kernels.value(t, self._kernels.data, scratch) for t in thetas])

    def logl_and_grad(self, thetas):
        thetas = np.atleast_2d(np.asarray(thetas, dtype=self.dtype))
        grads = np.empty_like(thetas)
        scratch = np.empty(self._kernels.scratch_size, self.dtype)
        vals = np.array([self._kernels.value_and_grad(t, self._kernels.data, g, scratch)
                         for t, g in zip(thetas, grads)])
        return vals, grads


# --- isotropic Gaussian N(mu, sigma^2 I) -------------------------------------------------------------------

@njit
def _gauss_value(theta, data, scratch):
    mu, sigma = data[0], data[1][0]
    q = 0.0
    for i in range(theta.shape[0]):
        r = (theta[i] - mu[i]) / sigma
        q += r * r
    return -0.5 * q - theta.shape[0] * (math.log(sigma) + 0.5 * math.log(2.0 * math.pi))


@njit
def _gauss_value_and_grad(theta, data, grad_out, scratch):
    mu, sigma = data[0], data[1][0]
    q = 0.0
    for i in range(theta.shape[0]):
        r = (theta[i] - mu[i]) / sigma
        q += r * r
        grad_out[i] = -r / sigma
    return -0.5 * q - theta.shape[0] * (math.log(sigma) + 0.5 * math.log(2.0 * math.pi))


def gaussian(ndim, sigma=0.1, center=0.5):
    """N(center, sigma^2 I) on U[0, 1]^d: logZ = d * log(Phi((1-c)/s) - Phi(-c/s)) (truncation only)."""
    mass = special.ndtr((1 - center) / sigma) - special.ndtr(-center / sigma)
    data = (np.full(ndim, center), np.array([sigma]))
    prior = Prior({f"x{i}": Uniform(0.0, 1.0) for i in range(ndim)})
    return Problem(f"gauss{ndim}d", prior.names, _gauss_value, _gauss_value_and_grad, data, prior,
                   logz=ndim * math.log(mass))


def gaussian_log_volume(logl, ndim, sigma=0.1):
    """log of the prior volume {logL > l} of :func:`gaussian` when the cube does not truncate it."""
    r2 = -2.0 * (np.asarray(logl) + ndim * (math.log(sigma) + 0.5 * math.log(2 * math.pi)))
    r = np.sqrt(np.maximum(r2, 0.0)) * sigma
    return ndim * 0.5 * math.log(math.pi) - special.gammaln(ndim / 2 + 1) + ndim * np.log(r)


# --- Gaussian shells -----------------------------------------------------------------------------------------

@njit
def _shell_terms(theta, c, r, w, sign):
    s = 0.0
    for i in range(theta.shape[0]):
        x = theta[i] - (sign * c if i == 0 else 0.0)
        s += x * x
    dist = math.sqrt(s)
    return dist, -0.5 * ((dist - r) / w) ** 2 - 0.5 * math.log(2 * math.pi * w * w)


@njit
def _shells_value(theta, data, scratch):
    c, r, w = data[0][0], data[0][1], data[0][2]
    _, a = _shell_terms(theta, c, r, w, -1.0)
    _, b = _shell_terms(theta, c, r, w, 1.0)
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@njit
def _shells_value_and_grad(theta, data, grad_out, scratch):
    c, r, w = data[0][0], data[0][1], data[0][2]
    da, a = _shell_terms(theta, c, r, w, -1.0)
    db, b = _shell_terms(theta, c, r, w, 1.0)
    m = max(a, b)
    ea, eb = math.exp(a - m), math.exp(b - m)
    pa, pb = ea / (ea + eb), eb / (ea + eb)
    for i in range(theta.shape[0]):
        xa = theta[i] + (c if i == 0 else 0.0)
        xb = theta[i] - (c if i == 0 else 0.0)
        ga = -(da - r) / (w * w) * xa / max(da, 1e-300)
        gb = -(db - r) / (w * w) * xb / max(db, 1e-300)
        grad_out[i] = pa * ga + pb * gb
    return m + math.log(ea + eb)


def shells(ndim, r=2.0, w=0.1, c=3.5):
    """Two Gaussian shells on U[-6, 6]^d (Feroz et al. 2009); logZ by 1-D quadrature of the radial profile."""
    log_sphere = math.log(2) + 0.5 * ndim * math.log(math.pi) - special.gammaln(ndim / 2)

    def integrand(rho):
        return math.exp(-0.5 * ((rho - r) / w) ** 2 + (ndim - 1) * math.log(rho / r)) / math.sqrt(2 * math.pi * w * w)

    radial, _ = integrate.quad(integrand, max(r - 12 * w, 0.0), r + 12 * w, points=[r], limit=200)
    logz = math.log(2) + log_sphere + (ndim - 1) * math.log(r) + math.log(radial) - ndim * math.log(12.0)
    prior = Prior({f"x{i}": Uniform(-6.0, 6.0) for i in range(ndim)})
    return Problem(f"shells{ndim}d", prior.names, _shells_value, _shells_value_and_grad,
                   (np.array([c, r, w]),), prior, logz=logz)


# --- eggbox ------------------------------------------------------------------------------------------------

@njit
def _egg_value(theta, data, scratch):
    return (2.0 + math.cos(0.5 * theta[0]) * math.cos(0.5 * theta[1])) ** 5


@njit
def _egg_value_and_grad(theta, data, grad_out, scratch):
    c0, c1 = math.cos(0.5 * theta[0]), math.cos(0.5 * theta[1])
    base = 2.0 + c0 * c1
    dbase = 5.0 * base ** 4
    grad_out[0] = dbase * (-0.5 * math.sin(0.5 * theta[0]) * c1)
    grad_out[1] = dbase * (-0.5 * math.sin(0.5 * theta[1]) * c0)
    return base ** 5


def eggbox():
    prior = Prior({"x": Uniform(0.0, 10 * math.pi), "y": Uniform(0.0, 10 * math.pi)})
    return Problem("eggbox", prior.names, _egg_value, _egg_value_and_grad, (np.zeros(1),), prior, logz=235.856)


# --- Rosenbrock --------------------------------------------------------------------------------------------

@njit
def _rosen_value(theta, data, scratch):
    x, y = theta[0], theta[1]
    return -0.5 * ((1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2)


@njit
def _rosen_value_and_grad(theta, data, grad_out, scratch):
    x, y = theta[0], theta[1]
    grad_out[0] = (1.0 - x) + 200.0 * (y - x * x) * x
    grad_out[1] = -100.0 * (y - x * x)
    return -0.5 * ((1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2)


def rosenbrock():
    prior = Prior({"x": Uniform(-10.0, 10.0), "y": Uniform(-10.0, 10.0)})
    return Problem("rosenbrock", prior.names, _rosen_value, _rosen_value_and_grad, (np.zeros(1),), prior,
                   logz=-6.472)


# --- the seed 4-D posterior ----------------------------------------------------------------------------------

@njit
def _seed_value(theta, data, scratch):
    x = data[0]
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    q = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        q += d1 * d1 + d2 * d2
    return -0.5 * q - n * (math.log(s1) + math.log(s2)) - n * math.log(2.0 * math.pi)


@njit
def _seed_value_and_grad(theta, data, grad_out, scratch):
    x = data[0]
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    q1 = q2 = r1 = r2 = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        q1 += d1 * d1
        q2 += d2 * d2
        r1 += d1
        r2 += d2
    grad_out[0] = r1 / s1
    grad_out[1] = r2 / s2
    grad_out[2] = q1 / s1 - n / s1
    grad_out[3] = q2 / s2 - n / s2
    return -0.5 * (q1 + q2) - n * (math.log(s1) + math.log(s2)) - n * math.log(2.0 * math.pi)


def seed4d(n=100, seed=0):
    """N points from N(0.5, 0.1^2) in each of 2 rows; mu ~ U[0,1], sigma ~ U[0.01, 0.5]."""
    x = np.random.default_rng(seed).normal(0.5, 0.1, size=(2, n))
    prior = Prior({"mu1": Uniform(0, 1), "mu2": Uniform(0, 1), "sigma1": Uniform(0.01, 0.5),
                   "sigma2": Uniform(0.01, 0.5)})
    logz = sum(_seed_row_logz(row) for row in x)
    return Problem("seed4d", prior.names, _seed_value, _seed_value_and_grad, (x,), prior, logz=logz)


def _seed_row_logz(x):
    """log of ∫∫ prod_i N(x_i; mu, s) dmu ds / (1 * 0.49) over mu in [0,1], s in [0.01, 0.5]: the mu integral is
    analytic (a Gaussian in mu times the normal CDF at the box edges), the s integral by scipy quadrature."""
    n, xbar = x.size, x.mean()
    ss = ((x - xbar) ** 2).sum()

    def log_inner(s):
        se = s / math.sqrt(n)
        mass = special.ndtr((1 - xbar) / se) - special.ndtr(-xbar / se)
        return (-ss / (2 * s * s) - n * math.log(s) - 0.5 * n * math.log(2 * math.pi)
                + math.log(math.sqrt(2 * math.pi) * se) + math.log(mass))

    grid = np.linspace(0.01, 0.5, 2001)
    peak = max(log_inner(s) for s in grid)
    val, _ = integrate.quad(lambda s: math.exp(log_inner(s) - peak), 0.01, 0.5,
                            points=[grid[np.argmax([log_inner(s) for s in grid])]], limit=400, epsabs=0, epsrel=1e-10)
    return peak + math.log(val) - math.log(0.49)
