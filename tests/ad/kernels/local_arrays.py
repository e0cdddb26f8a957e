"""Local arrays (``np.zeros`` / ``np.empty``) read and written by index: ODE state vectors, a Cholesky factor
written in loops, a running table, overwrites in place (ad/local_arrays.py, ad/array_adjoint.py)."""
import math

import numpy as np

from .case import Case, rng


def _lv_rhs(state, deriv, a, b, c, d):
    # Lotka-Volterra right-hand side written into `deriv` (a helper the arrays are passed to)
    u, v = state[0], state[1]
    deriv[0] = a * u - b * u * v
    deriv[1] = -c * v + d * u * v
    return 0.0


def lotka_volterra_rk4(theta, obs, dt, nsub):
    # classic RK4 with a state array and stage arrays, nsub steps between observations
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
    for step in range(obs.shape[0]):
        for sub in range(nsub):
            _lv_rhs(y, k1, a, b, c, d)
            for j in range(2):
                tmp[j] = y[j] + 0.5 * dt * k1[j]
            _lv_rhs(tmp, k2, a, b, c, d)
            for j in range(2):
                tmp[j] = y[j] + 0.5 * dt * k2[j]
            _lv_rhs(tmp, k3, a, b, c, d)
            for j in range(2):
                tmp[j] = y[j] + dt * k3[j]
            _lv_rhs(tmp, k4, a, b, c, d)
            for j in range(2):
                y[j] += dt / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
        s -= ((y[0] - obs[step, 0]) ** 2 + (y[1] - obs[step, 1]) ** 2) / (2.0 * sigma * sigma)
    return s - obs.shape[0] * 2.0 * math.log(sigma)


def lv_rk4_reference(theta, n, dt, nsub):
    """The same integration in NumPy (float64), for building data and as a plain reference."""
    a, b, c, d = theta[:4]
    f = lambda y: np.array([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])  # noqa: E731
    y, out = np.array([1.0, 0.5]), np.empty((n, 2))
    for step in range(n):
        for _ in range(nsub):
            q1 = f(y)
            q2 = f(y + 0.5 * dt * q1)
            q3 = f(y + 0.5 * dt * q2)
            q4 = f(y + dt * q3)
            y = y + dt / 6.0 * (q1 + 2 * q2 + 2 * q3 + q4)
        out[step] = y
    return out


def _lv_args():
    n, dt, nsub = 10, 0.1, 3
    obs = lv_rk4_reference([1.0, 0.6, 0.8, 0.5], n, dt, nsub) * (1.0 + 0.02 * np.cos(np.arange(n))[:, None])
    return np.array([1.03, 0.58, 0.79, 0.52, 0.05]), obs, dt, nsub


def mvn_cholesky(theta, x):
    # a d-variate normal with covariance L L^T, L lower-triangular with a positive (exp) diagonal built from
    # theta[d:], and mean theta[:d]; the kernel writes L, then its own Cholesky of Sigma = L L^T, in loops
    d = x.shape[1]
    lo = np.zeros((d, d))
    k = d
    for i in range(d):
        for j in range(i + 1):
            if i == j:
                lo[i, j] = math.exp(theta[k])
            else:
                lo[i, j] = theta[k]
            k += 1
    sigma = np.zeros((d, d))
    for i in range(d):
        for j in range(d):
            acc = 0.0
            for m in range(min(i, j) + 1):
                acc += lo[i, m] * lo[j, m]
            sigma[i, j] = acc
    chol = np.zeros((d, d))
    for j in range(d):
        s = sigma[j, j]
        for m in range(j):
            s -= chol[j, m] * chol[j, m]
        chol[j, j] = math.sqrt(s)
        for i in range(j + 1, d):
            s = sigma[i, j]
            for m in range(j):
                s -= chol[i, m] * chol[j, m]
            chol[i, j] = s / chol[j, j]
    logdet = 0.0
    for j in range(d):
        logdet += 2.0 * math.log(chol[j, j])
    z = np.zeros(d)
    total = 0.0
    for n in range(x.shape[0]):
        quad = 0.0
        for i in range(d):  # forward substitution L z = x - mu
            s = x[n, i] - theta[i]
            for m in range(i):
                s -= chol[i, m] * z[m]
            z[i] = s / chol[i, i]
            quad += z[i] * z[i]
        total -= 0.5 * quad
    return total - 0.5 * x.shape[0] * (logdet + d * math.log(2.0 * math.pi))


def _mvn_args():
    r = rng(51)
    d = 3
    cov = np.array([[1.0, 0.3, -0.2], [0.3, 0.8, 0.1], [-0.2, 0.1, 0.5]])
    x = r.multivariate_normal([0.5, -0.2, 0.1], cov, size=20)
    theta = np.concatenate([[0.45, -0.15, 0.12], [0.02, 0.3, -0.1, -0.2, 0.1, -0.3]])
    return theta, x


def running_table(theta, x):
    # a table filled by a recursion, then read at data-dependent positions; then overwritten in place
    n = len(x)
    tab = np.empty(n)
    tab[0] = theta[0]
    for i in range(1, n):
        tab[i] = tab[i - 1] * theta[1] + x[i]
    s = 0.0
    for i in range(n):
        s += tab[n - 1 - i] * x[i]
    for i in range(n):
        tab[i] = tab[i] * tab[i]
    return s + tab.sum()


def _running_table_args():
    return np.array([0.4, 0.7]), np.linspace(-0.5, 0.8, 7)


def branchy_buffer(theta, x):
    # writes in branches on parameter values, accumulate-in-place, and a reduction over the buffer
    buf = np.zeros(3)
    for i in range(x.shape[0]):
        v = theta[0] * x[i]
        if v > 0.2:
            buf[0] += v * v
        elif v > -0.1:
            buf[1] += math.sin(v + theta[1])
        else:
            buf[2] = buf[2] * 0.5 + v
    return np.dot(buf, buf) + buf[2] * theta[1]


def _branchy_args():
    return np.array([0.9, 0.3]), np.array([0.5, -0.4, 0.05, 0.3, -0.3, 0.6, 0.01, -0.05])


def newton_2d(theta, target, max_iter):
    # a 2-D Newton solve of x^2 + a y = t0, y^2 + b x = t1 with a state array and a break on convergence
    a, b = theta[0], theta[1]
    z = np.zeros(2)
    z[0] = 1.0
    z[1] = 1.0
    for it in range(max_iter):
        f0 = z[0] * z[0] + a * z[1] - target[0]
        f1 = z[1] * z[1] + b * z[0] - target[1]
        j00, j01, j10, j11 = 2.0 * z[0], a, b, 2.0 * z[1]
        det = j00 * j11 - j01 * j10
        d0 = (j11 * f0 - j01 * f1) / det
        d1 = (-j10 * f0 + j00 * f1) / det
        z[0] -= d0
        z[1] -= d1
        if abs(d0) + abs(d1) < 1e-14:
            break
    return z[0] * 2.0 + z[1] * z[1]


def _newton_args():
    return np.array([0.5, 0.3]), np.array([2.0, 1.5]), 40


CASES = [
    Case("lotka_volterra_rk4", lotka_volterra_rk4, _lv_args,
         tags=("local array", "loop-carried", "RK4", "helper writes an array", "nested loops")),
    Case("mvn_cholesky", mvn_cholesky, _mvn_args, tags=("local array", "2-D", "Cholesky", "triangular solve")),
    Case("running_table", running_table, _running_table_args,
         tags=("local array", "np.empty", "overwrite", ".sum()", "len")),
    Case("branchy_buffer", branchy_buffer, _branchy_args, cuda=True,
         tags=("local array", "if/elif", "+=", "np.dot")),
    Case("newton_2d", newton_2d, _newton_args, cuda=True, tags=("local array", "break", "Newton solver")),
]
