"""Heavy tails and several modes at once: a mixture of products of Cauchy distributions on a box prior, whose
evidence and mode weights are exact (arctangents). A variant for ``hard_problems.VARIANTS``; no number here comes
from running nestgrad."""

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
