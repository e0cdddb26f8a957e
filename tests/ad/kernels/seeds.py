"""The two seed kernels of issue 2 with hand-written gradients (the corpus' anchor against analytic truth)."""
import math

import numpy as np

from .case import Case, rng


def gauss4d(theta, x):
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    quad = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        quad += d1 * d1 + d2 * d2
    return -0.5 * quad - n * (math.log(s1) + math.log(s2)) - n * math.log(2.0 * math.pi)


def gauss4d_analytic(theta, x):
    mu1, mu2, s1, s2 = theta
    r1, r2 = x[0] - mu1, x[1] - mu2
    n = x.shape[1]
    return (np.array([
        np.sum(r1) / s1**2,
        np.sum(r2) / s2**2,
        np.sum(r1**2) / s1**3 - n / s1,
        np.sum(r2**2) / s2**3 - n / s2,
    ]),)


def _gauss4d_args():
    r = rng(1)
    x = np.empty((2, 50))
    x[0] = r.normal(0.4, 0.1, 50)
    x[1] = r.normal(0.6, 0.15, 50)
    return np.array([0.42, 0.57, 0.11, 0.14]), x


def poisson(theta, c):
    lam = theta[0]
    s = 0.0
    for i in range(c.shape[0]):
        s += c[i] * math.log(lam) - lam - math.lgamma(c[i] + 1.0)
    return s


def poisson_analytic(theta, c):
    return (np.array([np.sum(c) / theta[0] - c.shape[0]]),)


def _poisson_args():
    c = rng(2).poisson(4.0, 40).astype(np.float64)
    return np.array([3.6]), c


CASES = [
    Case("gauss4d", gauss4d, _gauss4d_args, analytic=gauss4d_analytic, cuda=True,
         tags=("seed", "2-D data", "reduction", "shape")),
    Case("poisson", poisson, _poisson_args, analytic=poisson_analytic, cuda=True,
         tags=("seed", "lgamma", "reduction")),
]
