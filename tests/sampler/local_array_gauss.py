"""A Gaussian likelihood written with a local array, so its per-sample functions need scratch (gpu_sim_check.py)."""
import math

import numpy as np


def shifted_gauss(theta, mu, sigma):
    d = theta.shape[0]
    r = np.zeros(d)
    for i in range(d):
        r[i] = (theta[i] - mu[i]) / sigma
    q = 0.0
    for i in range(d):
        q += r[i] * r[i]
    return -0.5 * q - d * (math.log(sigma) + 0.5 * math.log(2.0 * math.pi))
