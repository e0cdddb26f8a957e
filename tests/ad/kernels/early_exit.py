"""``break`` in bounded loops: iterative solvers that stop when converged, scans that stop at a data condition."""
import math

import numpy as np

from .case import Case


def kepler_newton(theta, t, rv, max_iter):
    # radial velocities of an eccentric orbit: Kepler's equation E - e sin E = M solved by Newton's method per
    # epoch, stopping when the step is negligible (a break under an `if` on a parameter-dependent value)
    period, e, k, m0 = theta[0], theta[1], theta[2], theta[3]
    s = 0.0
    for j in range(t.shape[0]):
        m = 2.0 * math.pi * t[j] / period + m0
        ecc = m
        for it in range(max_iter):
            step = (ecc - e * math.sin(ecc) - m) / (1.0 - e * math.cos(ecc))
            ecc = ecc - step
            if abs(step) < 1e-13:
                break
        nu = 2.0 * math.atan2(math.sqrt(1.0 + e) * math.sin(0.5 * ecc), math.sqrt(1.0 - e) * math.cos(0.5 * ecc))
        r = rv[j] - k * (math.cos(nu) + e * math.cos(0.3))
        s -= 0.5 * r * r
    return s


def _kepler_args():
    t = np.linspace(0.1, 4.0, 9)
    rv = 1.1 * np.cos(np.linspace(0.0, 9.0, 9))
    return np.array([1.7, 0.35, 1.1, 0.4]), t, rv, 50


def sum_until_negative(theta, x):
    # a scan that stops at the first negative datum: a reduction whose trip count depends on the data only
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            break
        s += theta[0] * x[i] * x[i] + math.sin(theta[1] * x[i])
    return s


def _sum_until_negative_args():
    return np.array([0.7, 0.3]), np.array([1.0, 2.0, 0.5, 1.5, -1.0, 3.0, 4.0])


def grow_to_threshold(theta, x):
    # carried non-linear state that stops growing once it passes a parameter: the number of iterations taken
    # depends on theta (piecewise smooth; the test points lie away from the switches)
    p = 1.0
    n = 0.0
    for i in range(x.shape[0]):
        p = p * (1.0 + theta[0] * x[i])
        n += 1.0
        if p > theta[1]:
            break
    return p * p + math.log(p) * theta[1] - 0.1 * n


def _grow_args():
    return np.array([0.31, 2.5]), np.array([0.9, 0.4, 1.2, 0.7, 1.1, 0.8, 1.3, 0.5])


def break_branches(theta, x):
    # a break in one arm of an if/else, statements after the if, and a reversed range
    a = theta[0]
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -1):
        if x[i] > 2.5:
            s += a * x[i]
            break
        else:
            s += math.exp(-a * x[i])
        s = s * (1.0 + 0.1 * theta[1])
    return s


def _break_branches_args():
    return np.array([0.4, 0.6]), np.array([0.5, 3.0, 1.0, 0.2, 1.5, 0.8])


def bisection_root(theta, lo0, hi0, max_iter):
    # bisection for the root of x**3 + a x - b, stopping when the bracket is narrow; the root's derivative
    # comes through the last midpoint, i.e. it is zero: the loss uses a Newton polish after the bracket
    a, b = theta[0], theta[1]
    lo = lo0
    hi = hi0
    for it in range(max_iter):
        mid = 0.5 * (lo + hi)
        f = mid * mid * mid + a * mid - b
        if f > 0.0:
            hi = mid
        else:
            lo = mid
        if hi - lo < 1e-6:
            break
    x = 0.5 * (lo + hi)
    for it in range(3):
        x = x - (x * x * x + a * x - b) / (3.0 * x * x + a)
    return x * x + a


def _bisection_args():
    return np.array([1.3, 2.2]), 0.0, 3.0, 60


CASES = [
    Case("kepler_newton", kepler_newton, _kepler_args, cuda=True,
         tags=("break", "loop-carried", "nested loops", "Newton solver", "int scalar data")),
    Case("sum_until_negative", sum_until_negative, _sum_until_negative_args, cuda=True,
         tags=("break", "data-dependent exit", "reduction")),
    Case("grow_to_threshold", grow_to_threshold, _grow_args, tags=("break", "loop-carried", "parameter exit")),
    Case("break_branches", break_branches, _break_branches_args, tags=("break", "if/else", "reversed range")),
    Case("bisection_root", bisection_root, _bisection_args, tags=("break", "loop-carried", "bisection")),
]
