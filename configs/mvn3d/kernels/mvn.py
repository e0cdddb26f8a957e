"""A 3-D normal with unknown covariance Sigma = L L^T, L lower-triangular with a positive (exp) diagonal: the six
entries of L are the parameters. The kernel builds L in a local array and evaluates the log-density of every
data point by forward substitution (L z = x), in loops."""
import math

import numpy as np


def mvn_cholesky(theta, x):
    d = x.shape[1]
    lo = np.zeros((d, d))
    k = 0
    for i in range(d):
        for j in range(i + 1):
            if i == j:
                lo[i, j] = math.exp(theta[k])
            else:
                lo[i, j] = theta[k]
            k += 1
    logdet = 0.0
    for i in range(d):
        logdet += 2.0 * math.log(lo[i, i])
    z = np.zeros(d)
    total = 0.0
    for n in range(x.shape[0]):
        for i in range(d):
            s = x[n, i]
            for m in range(i):
                s -= lo[i, m] * z[m]
            z[i] = s / lo[i, i]
            total -= 0.5 * z[i] * z[i]
    return total - 0.5 * x.shape[0] * (logdet + d * math.log(2.0 * math.pi))
