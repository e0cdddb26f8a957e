"""Lotka-Volterra predator-prey fit: the ODE integrated by classic RK4 on a state array, inside the kernel
(`steps` RK4 steps of `dt` between observations).

The state, the four RK4 stages and a temporary are local arrays (np.zeros): they live in the per-sample scratch
buffer; `ad.differentiate(lotka_volterra).report()` lists what the reverse sweep stores for each.
"""
import math

import numpy as np


def rhs(state, out, a, b, c, d):
    """dy/dt of the prey (state[0]) and predators (state[1]), written into `out`."""
    out[0] = a * state[0] - b * state[0] * state[1]
    out[1] = -c * state[1] + d * state[0] * state[1]
    return 0.0


def lotka_volterra(theta, t_obs, prey, predators, dt, steps):
    a, b, c, d, sigma = theta[0], theta[1], theta[2], theta[3], theta[4]
    y = np.zeros(2)
    k1 = np.zeros(2)
    k2 = np.zeros(2)
    k3 = np.zeros(2)
    k4 = np.zeros(2)
    tmp = np.zeros(2)
    y[0] = 1.0
    y[1] = 0.5
    s = 0.0
    for n in range(t_obs.shape[0]):
        for step in range(steps):
            rhs(y, k1, a, b, c, d)
            for j in range(2):
                tmp[j] = y[j] + 0.5 * dt * k1[j]
            rhs(tmp, k2, a, b, c, d)
            for j in range(2):
                tmp[j] = y[j] + 0.5 * dt * k2[j]
            rhs(tmp, k3, a, b, c, d)
            for j in range(2):
                tmp[j] = y[j] + dt * k3[j]
            rhs(tmp, k4, a, b, c, d)
            for j in range(2):
                y[j] += dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
        s -= ((y[0] - prey[n]) ** 2 + (y[1] - predators[n]) ** 2) / (2.0 * sigma * sigma)
    return s - t_obs.shape[0] * 2.0 * math.log(sigma) - t_obs.shape[0] * math.log(2.0 * math.pi)
