"""Many-mode test functions of PolyChord's example likelihoods, with evidence by quadrature here (no nestgrad number).

* Rastrigin: ``logL = -sum_i (x_i^2 - A cos(2 pi x_i) + A)``, A = 10, on U(-5.12, 5.12)^d. A narrow mode (sd
  about 0.036) at every integer point, of weight ~exp(-|n|^2): per coordinate 56% of the mass at 0, 21% at each
  of +-1 and 1% at each of +-2, so 25 modes carry the posterior in 2-D and about 100 in 3-D, each holding a
  1e-4-1e-6 share of the prior. Separable: logZ is d times a 1-D quadrature.
* Himmelblau: ``logL = -((x^2 + y - 11)^2 + (x + y^2 - 7)^2)`` on U(-5, 5)^2: four modes of the same height and
  different curvatures, so of unequal mass (from 2-D quadrature on a grid fine enough to resolve them).
"""

import functools
import math

import numpy as np
from numba import njit
from scipy import integrate

from problems import Problem
from nestgrad.sampler.priors import Prior, Uniform

_RASTRIGIN_A, _RASTRIGIN_HALF = 10.0, 5.12
_TWO_PI = 2.0 * math.pi


@njit
def _rastrigin_value(theta, data, scratch):
    total = 0.0
    for i in range(theta.shape[0]):
        x = theta[i]
        total += x * x - _RASTRIGIN_A * math.cos(_TWO_PI * x) + _RASTRIGIN_A
    return -total


@njit
def _rastrigin_value_and_grad(theta, data, grad_out, scratch):
    for i in range(theta.shape[0]):
        x = theta[i]
        grad_out[i] = -(2.0 * x + _RASTRIGIN_A * _TWO_PI * math.sin(_TWO_PI * x))
    return _rastrigin_value(theta, data, scratch)


def _rastrigin_1d(x):
    return math.exp(-(x * x - _RASTRIGIN_A * math.cos(_TWO_PI * x) + _RASTRIGIN_A))


def rastrigin_logz(ndim):
    """d x log of the 1-D mass, integrated mode by mode (breaks at the half-integers), over the prior's width."""
    edges = np.concatenate([[-_RASTRIGIN_HALF], np.arange(-5.5, 5.6, 1.0), [_RASTRIGIN_HALF]])
    edges = np.unique(np.clip(edges, -_RASTRIGIN_HALF, _RASTRIGIN_HALF))
    mass = sum(integrate.quad(_rastrigin_1d, a, b, epsabs=0.0, epsrel=1e-13, limit=200)[0]
               for a, b in zip(edges[:-1], edges[1:]))
    return ndim * math.log(mass / (2.0 * _RASTRIGIN_HALF))


def rastrigin(ndim=2):
    names = [f"x{i}" for i in range(ndim)]
    return Problem(f"rastrigin{ndim}d", names, _rastrigin_value, _rastrigin_value_and_grad, (np.zeros(1),),
                   Prior({n: Uniform(-_RASTRIGIN_HALF, _RASTRIGIN_HALF) for n in names}),
                   logz=rastrigin_logz(ndim))


@njit
def _himmelblau_value(theta, data, scratch):
    x, y = theta[0], theta[1]
    a = x * x + y - 11.0
    b = x + y * y - 7.0
    return -(a * a + b * b)


@njit
def _himmelblau_value_and_grad(theta, data, grad_out, scratch):
    x, y = theta[0], theta[1]
    a = x * x + y - 11.0
    b = x + y * y - 7.0
    grad_out[0] = -(4.0 * x * a + 2.0 * b)
    grad_out[1] = -(2.0 * a + 4.0 * y * b)
    return -(a * a + b * b)


# The four minima of Himmelblau's function (all f = 0); the modes are told apart by the nearest of them.
HIMMELBLAU_MINIMA = np.array([[3.0, 2.0], [-2.805118, 3.131312], [-3.779310, -3.283186], [3.584428, -1.848127]])


def _himmelblau_grid(n=2001):
    """The density on an n x n grid over the prior and its Simpson weights (step 0.005 at n = 2001: the modes'
    sds are 0.05-0.1, so 10-20 steps each; halving the step changes logZ by < 1e-12)."""
    x = np.linspace(-5.0, 5.0, n)
    w1 = np.ones(n)
    w1[1:-1:2], w1[2:-1:2] = 4.0, 2.0
    w1 *= (x[1] - x[0]) / 3.0
    X, Y = np.meshgrid(x, x, indexing="ij")
    a, b = X * X + Y - 11.0, X + Y * Y - 7.0
    return X, Y, np.exp(-(a * a + b * b)) * np.outer(w1, w1)


def _nearest_minimum(points):
    d2 = ((points[:, None, :] - HIMMELBLAU_MINIMA[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d2, axis=1)


@functools.lru_cache(maxsize=1)
def himmelblau_reference():
    """(logZ, the four modes' masses) by quadrature (a few seconds: computed once per process)."""
    X, Y, mass = _himmelblau_grid()
    total = mass.sum()
    nearest = _nearest_minimum(np.column_stack([X.ravel(), Y.ravel()]))
    return math.log(total / 100.0), np.bincount(nearest, weights=mass.ravel(), minlength=4) / total


def himmelblau():
    logz, weights = himmelblau_reference()
    problem = Problem("himmelblau2d", ["x", "y"], _himmelblau_value, _himmelblau_value_and_grad, (np.zeros(1),),
                      Prior({"x": Uniform(-5.0, 5.0), "y": Uniform(-5.0, 5.0)}), logz=logz)
    problem.weights = weights.copy()
    problem.mode_weights = lambda theta, w: np.bincount(_nearest_minimum(theta), weights=w, minlength=4) / np.sum(w)
    return problem


PROBLEMS = {"rastrigin2d": rastrigin, "rastrigin3d": lambda: rastrigin(3), "rastrigin4d": lambda: rastrigin(4),
            "himmelblau2d": himmelblau}
