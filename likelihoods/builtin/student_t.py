"""Student-t location, scale and degrees of freedom ν of 1-D data (ν enters through lgamma)."""

import functools
import math

import numpy as np

from ._base import Builtin
from ._options import DATA_POINTS, SEED
from ._reference import log_integral_box
from ._special import digamma

NAME = "student_t"
DESCRIPTION = "Student-t location, scale and degrees of freedom nu of 1-D data y of shape (N,)"
OPTIONS = {"n": DATA_POINTS, "seed": SEED}  # checked by builtin.get before get() runs
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


def reference_logz(y, priors=PRIORS):
    """Three-dimensional Simpson quadrature in (loc, log scale, log nu) — the coordinates in which the
    priors are flat — over the window holding the posterior mass (_reference.log_integral_box)."""
    from scipy.special import gammaln

    y = np.asarray(y, dtype=float)
    (_, loc_lo, loc_hi), (_, s_lo, s_hi), (_, nu_lo, nu_hi) = priors["loc"], priors["scale"], priors["nu"]

    def log_f(loc, log_scale, log_nu):
        scale, nu = np.exp(log_scale), np.exp(log_nu)
        total = 0.0
        for value in y:
            total = total + np.log1p(((value - loc) / scale) ** 2 / nu)
        const = gammaln(0.5 * (nu + 1.0)) - gammaln(0.5 * nu) - 0.5 * np.log(nu * math.pi) - log_scale
        return y.size * const - 0.5 * (nu + 1.0) * total

    box = ((loc_lo, loc_hi), (math.log(s_lo), math.log(s_hi)), (math.log(nu_lo), math.log(nu_hi)))
    return (log_integral_box(log_f, box, coarse=31, fine=101)  # converged to 1e-8 (checked up to 81/241)
            - sum(math.log(hi - lo) for lo, hi in box))


@functools.lru_cache(maxsize=8)
def _default_reference(n, seed):
    return reference_logz(make_data(np.random.default_rng(seed), n)["y"])


def get(n=50, seed=0):
    """``n`` draws of 1 + 0.5 t_4."""
    return Builtin(NAME, kernel, gradient, PARAMS, dict(PRIORS), make_data(np.random.default_rng(seed), n),
                   _default_reference(n, seed), "Simpson quadrature in (loc, log scale, log nu) over the "
                   "posterior window", {"loc": 1.0, "scale": 0.5, "nu": 4.0}, DESCRIPTION,
                   {"n": n, "seed": seed})
