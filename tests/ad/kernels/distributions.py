"""Likelihoods of common distributions: active shape parameters inside lgamma, log/exp by hand, erfc, kinks."""
import math

import numpy as np

from nestgrad.ad import special

from .case import Case, rng


def student_t(theta, x):
    # nu is active: its derivative goes through lgamma, hence digamma in the adjoint
    mu, sigma, nu = theta[0], theta[1], theta[2]
    n = x.shape[0]
    norm = math.lgamma(0.5 * (nu + 1.0)) - math.lgamma(0.5 * nu) - 0.5 * math.log(nu * math.pi) - math.log(sigma)
    s = 0.0
    for i in range(n):
        z = (x[i] - mu) / sigma
        s += -0.5 * (nu + 1.0) * math.log1p(z * z / nu)
    return n * norm + s


def _student_t_args():
    return np.array([0.1, 1.3, 4.5]), rng(3).standard_t(4.0, 60) * 1.2


def negative_binomial(theta, c):
    # r is active inside lgamma(c + r) - lgamma(r)
    mu, r = theta[0], theta[1]
    s = 0.0
    for i in range(c.shape[0]):
        s += (math.lgamma(c[i] + r) - math.lgamma(r) - math.lgamma(c[i] + 1.0)
              + r * math.log(r / (r + mu)) + c[i] * math.log(mu / (r + mu)))
    return s


def _negative_binomial_args():
    r = rng(4)
    c = r.negative_binomial(3.0, 3.0 / (3.0 + 5.0), 50).astype(np.float64)
    return np.array([5.2, 2.7]), c


def logistic_logexp(theta, X, y):
    # log(1 + exp(eta)) written by hand
    s = 0.0
    for i in range(X.shape[0]):
        eta = 0.0
        for j in range(X.shape[1]):
            eta += X[i, j] * theta[j]
        s += y[i] * eta - math.log(1.0 + math.exp(eta))
    return s


def logistic_log1pexp(theta, X, y):
    s = 0.0
    for i in range(X.shape[0]):
        eta = theta[0] * X[i, 0] + theta[1] * X[i, 1] + theta[2] * X[i, 2]
        s += y[i] * eta - special.log1pexp(eta)
    return s


def _logistic_args():
    r = rng(5)
    X = r.normal(0.0, 1.0, (40, 3))
    w = np.array([0.8, -1.1, 0.4])
    y = (r.uniform(size=40) < 1.0 / (1.0 + np.exp(-X @ w))).astype(np.float64)
    return np.array([0.7, -0.9, 0.3]), X, y


def mixture_maxlogexp(theta, x):
    # two-component mixture, log-sum-exp by hand with max
    w, mu1, mu2, s = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[0]
    acc = 0.0
    for i in range(n):
        a = math.log(w) - 0.5 * ((x[i] - mu1) / s) ** 2
        b = math.log(1.0 - w) - 0.5 * ((x[i] - mu2) / s) ** 2
        m = max(a, b)
        acc += m + math.log(math.exp(a - m) + math.exp(b - m))
    return acc - n * math.log(s) - 0.5 * n * math.log(2.0 * math.pi)


def _mixture_args():
    r = rng(6)
    x = np.concatenate([r.normal(-1.0, 0.7, 25), r.normal(1.5, 0.7, 35)])
    return np.array([0.4, -0.9, 1.4, 0.75]), x


def huber(theta, t, y, delta):
    # piecewise loss: the branch depends on the active residual
    s = 0.0
    for i in range(t.shape[0]):
        r = y[i] - (theta[0] + theta[1] * t[i])
        if abs(r) <= delta:
            s -= 0.5 * r * r
        else:
            s -= delta * (abs(r) - 0.5 * delta)
    return s


def _huber_args():
    # residuals at the test point are kept far from +-delta, where the loss has a kink in its 2nd derivative
    t = np.linspace(0.0, 1.0, 16)
    resid = np.array([0.3, -0.5, 2.0, -3.0, 0.2, -0.25, 2.5, -1.8] * 2)
    y = 0.5 + 1.5 * t + resid
    return np.array([0.52, 1.47]), t, y, 1.0


def probit(theta, X, y):
    # P(y=1) = Phi(eta) = erfc(-eta/sqrt(2)) / 2
    s = 0.0
    rt2 = math.sqrt(2.0)
    for i in range(y.shape[0]):
        eta = theta[0] + theta[1] * X[i, 0] + theta[2] * X[i, 1]
        if y[i] > 0.5:
            s += math.log(0.5 * math.erfc(-eta / rt2))
        else:
            s += math.log(0.5 * math.erfc(eta / rt2))
    return s


def _probit_args():
    r = rng(7)
    X = r.normal(0.0, 1.0, (30, 2))
    y = (X[:, 0] - 0.5 * X[:, 1] + r.normal(0.0, 1.0, 30) > 0.0).astype(np.float64)
    return np.array([0.1, 0.9, -0.4]), X, y


def poisson_regression(theta, t, c):
    # integer count data (int64 array), log link
    s = 0.0
    for i in range(t.shape[0]):
        log_rate = theta[0] + theta[1] * t[i]
        s += c[i] * log_rate - math.exp(log_rate) - math.lgamma(c[i] + 1.0)
    return s


def _poisson_regression_args():
    r = rng(8)
    t = np.linspace(0.0, 2.0, 30)
    c = r.poisson(np.exp(0.5 + 0.8 * t)).astype(np.int64)
    return np.array([0.45, 0.83]), t, c


CASES = [
    Case("student_t", student_t, _student_t_args, cuda=True, tags=("lgamma active", "log1p")),
    Case("negative_binomial", negative_binomial, _negative_binomial_args, tags=("lgamma active",)),
    Case("logistic_logexp", logistic_logexp, _logistic_args, tags=("nested loops", "2-D data", "exp/log")),
    Case("logistic_log1pexp", logistic_log1pexp, _logistic_args, tags=("special.log1pexp",)),
    Case("mixture_maxlogexp", mixture_maxlogexp, _mixture_args, tags=("max", "log-sum-exp", "** 2")),
    Case("huber", huber, _huber_args, cuda=True, tags=("if/else on active", "abs", "float scalar data")),
    Case("probit", probit, _probit_args, tags=("erfc", "if on data")),
    Case("poisson_regression", poisson_regression, _poisson_regression_args, tags=("int array data", "lgamma")),
]
