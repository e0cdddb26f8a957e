"""Straight-line fit y = slope x + intercept with unknown Gaussian noise sigma."""

import math

import numpy as np

from ._base import Builtin
from ._options import DATA_POINTS, SEED
from ._reference import log_integral

NAME = "linear_regression"
DESCRIPTION = "straight line (slope, intercept) with unknown Gaussian noise sigma, data x, y of shape (N,)"
OPTIONS = {"n": DATA_POINTS, "seed": SEED}  # checked by builtin.get before get() runs
PARAMS = ("slope", "intercept", "sigma")
PRIORS = {"slope": ("uniform", -5.0, 5.0), "intercept": ("uniform", -5.0, 5.0),
          "sigma": ("loguniform", 0.01, 10.0)}


def kernel(theta, x, y):
    slope, intercept, sigma = theta[0], theta[1], theta[2]
    n = x.shape[0]
    quad = 0.0
    for i in range(n):
        r = (y[i] - slope * x[i] - intercept) / sigma
        quad += r * r
    return -0.5 * quad - n * math.log(sigma) - 0.5 * n * math.log(2.0 * math.pi)


def gradient(theta, x, y, out):
    slope, intercept, sigma = theta[0], theta[1], theta[2]
    n = x.shape[0]
    gs = gi = quad = 0.0
    for i in range(n):
        r = (y[i] - slope * x[i] - intercept) / sigma
        gs += r * x[i]
        gi += r
        quad += r * r
    out[0] = gs / sigma
    out[1] = gi / sigma
    out[2] = (quad - n) / sigma


def make_data(rng, n=50, slope=1.5, intercept=0.5, sigma=0.3):
    x = np.sort(rng.uniform(0.0, 10.0, n))
    return {"x": x, "y": slope * x + intercept + sigma * rng.normal(size=n)}


def reference_logz(x, y, priors=PRIORS):
    """Exact Gaussian integral over (slope, intercept) — untruncated, so valid while the posterior sits far
    inside the prior box (true for the default data: posterior widths ~0.01–0.1 against a box of ±5) —
    then quadrature over log sigma with the loguniform prior."""
    design = np.stack([x, np.ones_like(x)], axis=1)
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    rss = float(((y - design @ coef) ** 2).sum())
    _, logdet = np.linalg.slogdet(design.T @ design)
    n = x.size
    box = math.log(priors["slope"][2] - priors["slope"][1]) + math.log(
        priors["intercept"][2] - priors["intercept"][1])
    _, s_lo, s_hi = priors["sigma"]

    def log_f(log_s):  # integrand in t = log sigma, where the loguniform prior is flat
        s2 = math.exp(2.0 * log_s)
        return -0.5 * (n - 2) * math.log(2.0 * math.pi * s2) - 0.5 * rss / s2 - 0.5 * logdet

    log_lo, log_hi = math.log(s_lo), math.log(s_hi)
    return log_integral(log_f, log_lo, log_hi) - math.log(log_hi - log_lo) - box


def get(n=50, seed=0):
    """``n`` points with x ~ U[0, 10], y = 1.5 x + 0.5 + N(0, 0.3²)."""
    data = make_data(np.random.default_rng(seed), n)
    return Builtin(NAME, kernel, gradient, PARAMS, dict(PRIORS), data, reference_logz(data["x"], data["y"]),
                   "exact in slope/intercept (box truncation negligible), Gauss-Legendre quadrature in log sigma",
                   {"slope": 1.5, "intercept": 0.5, "sigma": 0.3}, DESCRIPTION, {"n": n, "seed": seed})
