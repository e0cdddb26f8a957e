"""``np.sum``, ``.sum()``, ``np.dot``, ``np.mean``, ``.mean()``, rows and columns, ``len``: sugar lowered to the loops they stand for
(ad/sugar.py).  ``HAND_WRITTEN`` pairs each with the loop a user would write instead."""
import math

import numpy as np

from .case import Case, rng


def gauss_np_sum(theta, x, y, sigma):
    # a scalar argument (sigma) broadcast inside the reduction; len() of a data array
    a, b = theta[0], theta[1]
    chi2 = np.sum(((y - a * x - b) / sigma) ** 2)
    return -0.5 * chi2 - len(x) * math.log(sigma)


def gauss_loop(theta, x, y, sigma):
    a, b = theta[0], theta[1]
    chi2 = 0.0
    for k in range(y.shape[0]):
        chi2 += ((y[k] - a * x[k] - b) / sigma) ** 2
    return -0.5 * chi2 - x.shape[0] * math.log(sigma)


def _gauss_args():
    r = rng(41)
    x = r.uniform(-2.0, 2.0, 25)
    return np.array([1.9, 0.7]), x, 2.0 * x + 0.8 + 0.3 * r.normal(size=25), 0.3


def linear_rows(theta, X, y):
    # np.dot of a row with the parameter vector, and a method .sum() over an expression of the parameters
    s = 0.0
    for i in range(X.shape[0]):
        m = np.dot(X[i, :], theta)
        s -= 0.5 * (y[i] - m) ** 2
    return s - 0.01 * (theta ** 2).sum()


def linear_rows_loop(theta, X, y):
    s = 0.0
    for i in range(X.shape[0]):
        m = 0.0
        for k in range(X.shape[1]):
            m += X[i, k] * theta[k]
        s -= 0.5 * (y[i] - m) ** 2
    p = 0.0
    for k in range(theta.shape[0]):
        p += theta[k] ** 2
    return s - 0.01 * p


def _linear_rows_args():
    r = rng(42)
    X = r.normal(size=(12, 3))
    return np.array([0.9, -1.8, 0.4]), X, X @ np.array([1.0, -2.0, 0.5]) + 0.1 * r.normal(size=12)


def poisson_columns(theta, counts, design):
    # a column X[:, j] inside np.sum, math functions applied element-wise, np.sum of a bare data array
    return (np.sum(counts * np.log(np.exp(theta[0] + theta[1] * design[:, 1]))
                   - np.exp(theta[0] + theta[1] * design[:, 1]))
            + np.sum(design[:, 0]) * theta[2])


def poisson_columns_loop(theta, counts, design):
    s = 0.0
    for k in range(design.shape[0]):
        rate = math.exp(theta[0] + theta[1] * design[k, 1])
        s += counts[k] * math.log(rate) - rate
    c = 0.0
    for k in range(design.shape[0]):
        c += design[k, 0]
    return s + c * theta[2]


def _poisson_columns_args():
    r = rng(43)
    design = np.column_stack([r.uniform(0.0, 1.0, 15), r.uniform(-1.0, 1.0, 15)])
    return np.array([0.5, 0.8, 0.3]), r.poisson(2.0, 15).astype(float), design


def weighted_mean_helper(theta, x, w):
    # a reduction inside a helper function, and a reduction inside a reduction (a scalar there)
    return _wmean(x, w, theta[0]) * theta[1] + np.sum(w * np.sum(w)) * theta[0]


def _wmean(v, w, c):
    return np.dot((v - c) * (v - c), w) / np.sum(w)


def _weighted_args():
    r = rng(44)
    return np.array([0.3, 1.2]), r.normal(size=9), r.uniform(0.5, 1.5, 9)


def means(theta, X, y):
    # np.mean of an expression with a broadcast parameter, .mean() of a row, np.mean of a local array
    a, b = theta[0], theta[1]
    n, m = X.shape[0], X.shape[1]
    buf = np.empty(m)
    for j in range(m):
        buf[j] = math.exp(-a * j)
    s = -0.5 * np.mean((y - a - b * X[:, 0]) ** 2)
    for i in range(n):
        s += (X[i, :] * b).mean() * np.mean(buf)
    return s


def means_loop(theta, X, y):
    a, b = theta[0], theta[1]
    n, m = X.shape[0], X.shape[1]
    buf = np.empty(m)
    for j in range(m):
        buf[j] = math.exp(-a * j)
    chi2 = 0.0
    for i in range(n):
        chi2 += (y[i] - a - b * X[i, 0]) ** 2
    s = -0.5 * (chi2 / n)
    for i in range(n):
        r = 0.0
        for j in range(m):
            r += X[i, j] * b
        sb = 0.0
        for j in range(m):
            sb += buf[j]
        s += r / m * (sb / m)
    return s


def _means_args():
    r = rng(43)
    X = r.normal(size=(9, 4))
    return np.array([0.6, -1.1]), X, 0.5 - X[:, 0] + 0.2 * r.normal(size=9)


CASES = [
    Case("gauss_np_sum", gauss_np_sum, _gauss_args, cuda=True, tags=("np.sum", "len", "scalar broadcast")),
    Case("linear_rows", linear_rows, _linear_rows_args, cuda=True, tags=("np.dot", "row x[i, :]", ".sum()")),
    Case("poisson_columns", poisson_columns, _poisson_columns_args,
         tags=("column x[:, j]", "element-wise math", "np.sum")),
    Case("means", means, _means_args, cuda=True, tags=("np.mean", ".mean()", "column x[:, j]", "local array")),
    Case("weighted_mean_helper", weighted_mean_helper, _weighted_args,
         tags=("np.dot", "np.sum", "helper", "nested reduction")),
]

# (sugar kernel, the hand-written loop it stands for)
HAND_WRITTEN = [(gauss_np_sum, gauss_loop), (linear_rows, linear_rows_loop),
                (poisson_columns, poisson_columns_loop), (means, means_loop)]
