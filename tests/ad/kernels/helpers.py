"""Module-level helper functions (their own math, helpers calling helpers, array arguments) and ad.rule."""
import math

import numpy as np

from nestgrad import ad

from .case import Case, rng


def _logistic(z):
    return 1.0 / (1.0 + math.exp(-z))


def helper_call(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.log(_logistic(theta[0] * x[i] + theta[1]))
    return s


def _square(z):
    return z * z


def _gauss_term(x, mu, sigma):
    # helper calling another helper
    return -0.5 * _square((x - mu) / sigma) - math.log(sigma)


def helper_chain(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += _gauss_term(x[i], theta[0], theta[1])
    return s


def _gauss_args():
    return np.array([0.3, 0.8]), rng(13).normal(0.2, 0.9, 20)


def _quadratic(coef, t):
    # a helper that reads an active array argument
    return coef[0] + coef[1] * t + coef[2] * t * t


def _ramp(z, c):
    # a helper with its own early return
    if z > c:
        return z - 0.5 * c
    return 0.5 * z * z / c


def helper_array_and_branch(theta, t, y):
    s = 0.0
    for i in range(t.shape[0]):
        r = y[i] - _quadratic(theta, t[i])
        s -= _ramp(r * r, 0.25)
    return s


def _helper_array_args():
    t = np.linspace(-1.0, 1.0, 11)
    y = 0.2 - 0.5 * t + 0.9 * t * t + np.array([0.1, -0.9, 0.05, 0.6, -0.2, 0.02, 0.7, -0.3, 0.15, -0.8, 0.3])
    return np.array([0.25, -0.45, 0.85]), t, y


def softclip(x, c):
    return c * math.tanh(x / c)


@ad.rule(softclip)
def _softclip_partials(x, c):
    t = math.tanh(x / c)
    return (1.0 - t * t, t - (x / c) * (1.0 - t * t))


def rule_registered(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += softclip(theta[0] * x[i], theta[1]) ** 2
    return s


def _rule_args():
    return np.array([1.4, 2.2]), np.linspace(-1.5, 2.0, 9)


CASES = [
    Case("helper_call", helper_call, _gauss_args, cuda=True, tags=("helper",)),
    Case("helper_chain", helper_chain, _gauss_args, tags=("helper calling helper",)),
    Case("helper_array_and_branch", helper_array_and_branch, _helper_array_args,
         tags=("helper with active array arg", "helper early return")),
    Case("rule_registered", rule_registered, _rule_args, cuda=True, tags=("ad.rule",)),
]
