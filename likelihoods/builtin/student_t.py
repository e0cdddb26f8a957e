"""Student-t location, scale and degrees of freedom ν of 1-D data (ν enters through lgamma)."""

import math

import numpy as np

from ._base import Builtin
from ._special import digamma

NAME = "student_t"
DESCRIPTION = "Student-t location, scale and degrees of freedom nu of 1-D data y of shape (N,)"
PARAMS = ("loc", "scale", "nu")
PRIORS = {"loc": ("uniform", -5.0, 5.0), "scale": ("loguniform", 0.01, 10.0), "nu": ("loguniform", 0.5, 100.0)}


def kernel(theta, y):
    loc, scale, nu = theta[0], theta[1], theta[2]
    n = y.shape[0]
    total = 0.0
    for i in range(n):
        z = (y[i] - loc) / scale
        total += math.log1p(z * z / nu)
    const = (math.lgamma(0.5 * (nu + 1.0)) - math.lgamma(0.5 * nu)
             - 0.5 * math.log(nu * math.pi) - math.log(scale))
    return n * const - 0.5 * (nu + 1.0) * total


def gradient(theta, y, out):
    loc, scale, nu = theta[0], theta[1], theta[2]
    n = y.shape[0]
    g_loc = g_scale = g_nu = 0.0
    for i in range(n):
        z = (y[i] - loc) / scale
        w = (nu + 1.0) * z / (nu + z * z)
        g_loc += w / scale
        g_scale += w * z / scale
        g_nu += -0.5 * math.log1p(z * z / nu) + 0.5 * (nu + 1.0) * z * z / (nu * (nu + z * z))
    out[0] = g_loc
    out[1] = g_scale - n / scale
    out[2] = g_nu + n * (0.5 * digamma(0.5 * (nu + 1.0)) - 0.5 * digamma(0.5 * nu) - 0.5 / nu)


def make_data(rng, n=50, loc=1.0, scale=0.5, nu=4.0):
    return {"y": loc + scale * rng.standard_t(nu, size=n)}


def get(n=50, seed=0):
    """``n`` draws of 1 + 0.5 t_4."""
    return Builtin(NAME, kernel, gradient, PARAMS, dict(PRIORS), make_data(np.random.default_rng(seed), n),
                   None, "none known (a 3-D integral; not computed)",
                   {"loc": 1.0, "scale": 0.5, "nu": 4.0}, DESCRIPTION, {"n": n, "seed": seed})
