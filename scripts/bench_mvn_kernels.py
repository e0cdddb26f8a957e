"""The multivariate-normal benchmark of scripts/bench_ad.py (issue 9): the kernels given to the differentiator,
and the hand-written numba value + gradient they are held against.

Model: n points x_i in d dimensions, x_i ~ N(mean, L L^T); theta = (mean, the lower triangle of L row by row
with the log of its diagonal), d + d(d+1)/2 parameters.  The hand-written code is what a careful person writes
knowing the trick ad.linalg.mvn_logpdf_rows uses: one pass over the data for the residuals' scatter matrix
R = sum r_i r_i^T and their sum s, then O(d^3) work for the value (tr(L^-1 R L^-T)) and the whole gradient
(Lbar = tril(L^-T M) - n diag(1/L), meanbar = Sigma^-1 s).  It shares no code with ``ad``.
"""
import math

import numba
import numpy as np

from nestgrad.ad import linalg

FASTMATH = {"reassoc", "contract", "arcp", "nsz", "afn"}


def mvn_chol_params(theta, x):
    """The kernel: L from theta in a local array, then ad.linalg.mvn_logpdf_rows."""
    d = x.shape[1]
    mean = np.empty(d)
    chol = np.zeros((d, d))
    work = np.empty((d, d))
    k = d
    for i in range(d):
        mean[i] = theta[i]
        for j in range(i + 1):
            if i == j:
                chol[i, j] = math.exp(theta[k])
            else:
                chol[i, j] = theta[k]
            k += 1
    return linalg.mvn_logpdf_rows(x, mean, chol, work)


def mvn_cov_params(theta, x):
    """The same model and parameters, through the covariance: Sigma = L L^T is formed in loops and factored again
    by ad.linalg.cholesky (what a kernel with any parameterised covariance does)."""
    d = x.shape[1]
    mean = np.empty(d)
    lo = np.zeros((d, d))
    sigma = np.empty((d, d))
    chol = np.zeros((d, d))
    work = np.empty((d, d))
    k = d
    for i in range(d):
        mean[i] = theta[i]
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


def mvn_problem(d=10, n=1000, seed=3):
    r = np.random.default_rng(seed)
    a = r.normal(size=(d, d)) * 0.3
    cov = a @ a.T + 0.5 * np.eye(d)
    x = r.multivariate_normal(r.normal(size=d), cov, size=n)
    lo = np.linalg.cholesky(cov)
    theta = np.concatenate([x.mean(axis=0) + 0.05,
                            [math.log(lo[i, j]) if i == j else lo[i, j] for i in range(d) for j in range(i + 1)]])
    return theta, x


def work_size(d):
    return 2 * d * d + d


@numba.njit(fastmath=FASTMATH)
def mvn_value_and_grad(theta, x, grad, work):
    """Value and gradient of ``mvn_chol_params``; ``work`` has ``work_size(d)`` elements."""
    n, d = x.shape
    lo = work[:d * d].reshape((d, d))
    m = work[d * d:2 * d * d].reshape((d, d))
    s = work[2 * d * d:2 * d * d + d]
    k = d
    for i in range(d):
        for j in range(d):
            lo[i, j] = 0.0
            m[i, j] = 0.0
        for j in range(i + 1):
            lo[i, j] = math.exp(theta[k]) if i == j else theta[k]
            k += 1
        s[i] = 0.0
    for p in range(n):  # the one pass over the data: R (lower) and s
        for j in range(d):
            rj = x[p, j] - theta[j]
            s[j] += rj
            for c in range(j + 1):
                m[j, c] += rj * (x[p, c] - theta[c])
    for j in range(d):
        for c in range(j + 1, d):
            m[j, c] = m[c, j]
    for c in range(d):  # M = L^-1 R L^-T: columns, then rows
        for i in range(d):
            t = m[i, c]
            for q in range(i):
                t -= lo[i, q] * m[q, c]
            m[i, c] = t / lo[i, i]
    trace, logdet = 0.0, 0.0
    for r in range(d):
        for i in range(d):
            t = m[r, i]
            for q in range(i):
                t -= lo[i, q] * m[r, q]
            m[r, i] = t / lo[i, i]
        trace += m[r, r]
        logdet += math.log(lo[r, r])
    value = -0.5 * trace - n * (logdet + 0.5 * d * math.log(2.0 * math.pi))
    for c in range(d):  # L^-T M, in place
        for i in range(d - 1, -1, -1):
            t = m[i, c]
            for q in range(i + 1, d):
                t -= lo[q, i] * m[q, c]
            m[i, c] = t / lo[i, i]
    for i in range(d):  # Sigma^-1 s, in place
        t = s[i]
        for q in range(i):
            t -= lo[i, q] * s[q]
        s[i] = t / lo[i, i]
    for i in range(d - 1, -1, -1):
        t = s[i]
        for q in range(i + 1, d):
            t -= lo[q, i] * s[q]
        s[i] = t / lo[i, i]
    k = d
    for i in range(d):
        grad[i] = s[i]
        for j in range(i + 1):
            gl = m[i, j]
            if i == j:
                grad[k] = (gl - n / lo[i, i]) * lo[i, i]  # d/dtheta of exp(theta) is L_ii
            else:
                grad[k] = gl
            k += 1
    return value
