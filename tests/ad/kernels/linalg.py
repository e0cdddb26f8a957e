"""Kernels calling ``ad.linalg`` (Cholesky, triangular solves, log-determinant, normal log-densities).

Not part of the corpus ``CASES`` (``__init__.THEMES``): their CUDA code calls device functions, which
``compile_ptx`` can only type-check with the stand-in device of tests/ad/test_linalg.py.  test_linalg.py checks
them against finite differences, JAX and the kernel that writes its own Cholesky in loops
(``local_arrays.mvn_cholesky``, the same model and parameters as ``mvn_linalg``).
"""
import math

import numpy as np

from nestgrad.ad import linalg

from .case import rng


def mvn_linalg(theta, x):
    # mean theta[:d]; L from theta[d:] (exp diagonal); Sigma = L L^T, factored again by ad.linalg.cholesky
    d = x.shape[1]
    mean = np.empty(d)
    lo = np.zeros((d, d))
    sigma = np.empty((d, d))
    chol = np.zeros((d, d))
    work = np.empty((d, d))
    for i in range(d):
        mean[i] = theta[i]
    k = d
    for i in range(d):
        for j in range(i + 1):
            if i == j:
                lo[i, j] = math.exp(theta[k])
            else:
                lo[i, j] = theta[k]
            k += 1
    for i in range(d):
        for j in range(d):
            acc = 0.0
            for m in range(min(i, j) + 1):
                acc += lo[i, m] * lo[j, m]
            sigma[i, j] = acc
    linalg.cholesky(sigma, chol)
    return linalg.mvn_logpdf_rows(x, mean, chol, work)


def mvn_args(d=3, n=20, seed=51):
    """Data and a well-conditioned parameter point for ``mvn_linalg`` and ``local_arrays.mvn_cholesky``."""
    r = rng(seed)
    a = r.normal(size=(d, d)) * 0.3
    cov = a @ a.T + np.eye(d) * 0.5
    x = r.multivariate_normal(r.normal(size=d) * 0.3, cov, size=n)
    chol = np.linalg.cholesky(cov)
    params = [np.log(chol[i, j]) if i == j else chol[i, j] for i in range(d) for j in range(i + 1)]
    return np.concatenate([x.mean(axis=0), params]), x


def gp_marginal(theta, t, y):
    # a Gaussian process: K_ij = amp^2 exp(-(t_i - t_j)^2 / (2 ell^2)) + noise^2 delta_ij, constant mean c;
    # log N(y | c, K) through the Cholesky factor, plus a term reading the whitened residual z afterwards
    amp, ell, noise, c = math.exp(theta[0]), math.exp(theta[1]), math.exp(theta[2]), theta[3]
    n = t.shape[0]
    cov = np.empty((n, n))
    chol = np.zeros((n, n))
    mean = np.empty(n)
    z = np.empty(n)
    for i in range(n):
        mean[i] = c
        for j in range(n):
            dt = (t[i] - t[j]) / ell
            cov[i, j] = amp * amp * math.exp(-0.5 * dt * dt)
        cov[i, i] += noise * noise
    linalg.cholesky(cov, chol)
    value = linalg.mvn_logpdf(y, mean, chol, z)
    return value + 0.1 * z[n - 1] + 0.05 * chol[n - 1, 0]


def gp_args(n=8, seed=5):
    r = rng(seed)
    t = np.sort(r.uniform(0.0, 4.0, n))
    y = np.sin(t) + 0.1 * r.normal(size=n)
    return np.array([0.1, -0.2, -1.5, 0.05]), t, y


def triangular(theta, b, c):
    # L from theta (positive diagonal), u = L^-1 b, w = L^-T u (so w = Sigma^-1 b), then c . w + log det
    n = b.shape[0]
    lo = np.zeros((n, n))
    u = np.empty(n)
    w = np.empty(n)
    k = 0
    for i in range(n):
        for j in range(i + 1):
            lo[i, j] = theta[k] if i != j else 1.0 + theta[k] * theta[k]
            k += 1
    linalg.solve_lower(lo, b, u)
    linalg.solve_lower_t(lo, u, w)
    s = linalg.logdet_chol(lo)
    for i in range(n):
        s += c[i] * w[i] + 0.3 * u[i] * u[i]
    return s


def triangular_args(n=4, seed=9):
    r = rng(seed)
    return r.normal(size=n * (n + 1) // 2) * 0.5, r.normal(size=n), r.normal(size=n)


def model_rows(theta, x, cov_diag):
    # mvn_logpdf_rows with an active first argument: the rows are a model's predictions, the mean is fixed
    n, d = x.shape[0], x.shape[1]
    pred = np.empty((n, d))
    mean = np.zeros(d)
    chol = np.zeros((d, d))
    work = np.empty((d, d))
    for i in range(n):
        for j in range(d):
            pred[i, j] = x[i, j] * theta[0] + theta[1] * j
    for j in range(d):
        chol[j, j] = cov_diag[j]
        for m in range(j):
            chol[j, m] = 0.1 * theta[2]
    return linalg.mvn_logpdf_rows(pred, mean, chol, work)


def model_rows_args():
    r = rng(12)
    return np.array([0.9, 0.2, 0.5]), r.normal(size=(6, 3)), np.array([1.1, 0.8, 1.3])
