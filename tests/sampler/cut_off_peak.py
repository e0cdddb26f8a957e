"""A plateau on half of the prior and a peak on the other half, cut off from it: the problem on which chains alone
lost the peak (``tests/sampler/test_prior_draws.py``). Its logZ is in closed form."""

import math

import numpy as np
from numba import njit
from scipy import special

from problems import Problem
from nestgrad.sampler.priors import Prior, Uniform


@njit
def _cut_off_value(theta, data, scratch):
    sigma, log_height, centre = data[0][0], data[0][1], data[0][2]
    if theta[0] < 0.0:
        return 0.0
    q = (theta[0] - centre) ** 2
    for i in range(1, theta.shape[0]):
        q += theta[i] * theta[i]
    return log_height - 0.5 * q / sigma ** 2 - theta.shape[0] * (math.log(sigma) + 0.5 * math.log(2 * math.pi))


@njit
def _cut_off_value_and_grad(theta, data, grad_out, scratch):
    sigma, centre = data[0][0], data[0][2]
    on_plateau = theta[0] < 0.0
    for i in range(theta.shape[0]):
        grad_out[i] = 0.0 if on_plateau else -(theta[i] - (centre if i == 0 else 0.0)) / sigma ** 2
    return _cut_off_value(theta, data, scratch)


def cut_off_peak(ndim=3, sigma=0.05, centre=0.5):
    """Prior U(-1, 1)^d (volume V = 2^d); L = 1 on x0 < 0; on x0 >= 0, L = (V / 2) N(x; (centre, 0, ...), sigma^2):
    Z = 1/2 + (1/2) P(peak inside its half-box), closed form; the posterior mass on x0 < 0 is Z's first term's."""
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(-1.0, 1.0) for n in names})
    inside = ((special.ndtr((1 - centre) / sigma) - special.ndtr(-centre / sigma))
              * (special.ndtr(1 / sigma) - special.ndtr(-1 / sigma)) ** (ndim - 1))
    return Problem(f"cut_off_peak{ndim}d", names, _cut_off_value, _cut_off_value_and_grad,
                   (np.array([sigma, math.log(2.0 ** ndim / 2), centre]),), prior, logz=math.log(0.5 + 0.5 * inside))
