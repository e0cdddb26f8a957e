"""Loop-carried state: the reverse sweep needs every iteration's value (stored in scratch or recomputed)."""
import math

import numpy as np

from .case import Case


def euler_decay(theta, obs, dt):
    # y' = -k y integrated with explicit Euler, compared with observations at every step
    k, y0, sigma = theta[0], theta[1], theta[2]
    y = y0
    s = 0.0
    for step in range(obs.shape[0]):
        y = y - dt * k * y
        s -= 0.5 * ((y - obs[step]) / sigma) ** 2
    return s - obs.shape[0] * math.log(sigma)


def _euler_args():
    t = 0.05 * np.arange(1, 41)
    obs = 2.0 * np.exp(-0.7 * t) + 0.02 * np.sin(7.0 * t)
    return np.array([0.68, 1.97, 0.05]), obs, 0.05


def logistic_growth(theta, obs, dt):
    # non-linear recursion y <- y + dt r y (1 - y / K)
    r, K = theta[0], theta[1]
    y = 0.1
    s = 0.0
    for step in range(obs.shape[0]):
        y = y + dt * r * y * (1.0 - y / K)
        d = y - obs[step]
        s -= d * d
    return s


def _logistic_growth_args():
    n, dt = 30, 0.2
    y, obs = 0.1, np.empty(n)
    for step in range(n):
        y = y + dt * 1.1 * y * (1.0 - y / 2.0)
        obs[step] = y * (1.0 + 0.03 * math.cos(step))
    return np.array([1.05, 2.1]), obs, dt


def lotka_volterra(theta, obs, dt, nsub):
    # two coupled carried states updated together by tuple assignment, nsub Euler sub-steps per observation
    a, b, c, d = theta[0], theta[1], theta[2], theta[3]
    u = 1.0
    v = 0.5
    s = 0.0
    for step in range(obs.shape[0]):
        for sub in range(nsub):
            u, v = u + dt * (a * u - b * u * v), v + dt * (-c * v + d * u * v)
        s -= (u - obs[step, 0]) ** 2 + (v - obs[step, 1]) ** 2
    return s


def _lotka_volterra_args():
    n, dt, nsub = 12, 0.05, 4
    u, v, obs = 1.0, 0.5, np.empty((n, 2))
    for step in range(n):
        for sub in range(nsub):
            u, v = u + dt * (1.0 * u - 0.6 * u * v), v + dt * (-0.8 * v + 0.5 * u * v)
        obs[step] = u + 0.01, v - 0.01
    return np.array([1.02, 0.58, 0.79, 0.52]), obs, dt, nsub


def horner_reversed(theta, coef):
    # polynomial by Horner's scheme over a reversed range: p is carried and multiplied by the active t
    t = theta[0]
    p = 0.0
    for i in range(coef.shape[0] - 1, -1, -1):
        p = p * t + coef[i] * theta[1]
    return p


def _horner_args():
    return np.array([0.7, 1.3]), np.array([1.0, -2.0, 0.5, 3.0, -1.0, 0.25])


def exp_smoothing(theta, x):
    # level carried through a non-linear (in the parameter) update; one-step prediction errors are scored
    alpha = theta[0]
    level = x[0]
    s = 0.0
    for i in range(1, x.shape[0]):
        err = x[i] - level
        s -= err * err / theta[1]
        level = alpha * x[i] + (1.0 - alpha) * level
    return s - 0.5 * (x.shape[0] - 1) * math.log(theta[1])


def _exp_smoothing_args():
    return np.array([0.35, 0.4]), np.cumsum(np.sin(np.arange(20) * 0.7)) * 0.3


CASES = [
    Case("euler_decay", euler_decay, _euler_args, cuda=True, tags=("loop-carried", "ODE", "float scalar data")),
    Case("logistic_growth", logistic_growth, _logistic_growth_args, tags=("loop-carried", "non-linear")),
    Case("lotka_volterra", lotka_volterra, _lotka_volterra_args, cuda=True,
         tags=("loop-carried", "two states", "tuple assignment", "nested loops", "int scalar data")),
    Case("horner_reversed", horner_reversed, _horner_args, tags=("loop-carried", "reversed range")),
    Case("exp_smoothing", exp_smoothing, _exp_smoothing_args, tags=("loop-carried", "range(1, n)")),
]
