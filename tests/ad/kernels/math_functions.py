"""Every math.* function with a rule, powers with integer/float/active exponents, abs/min/max, constants."""
import math

import numpy as np

from .case import Case, rng


def trig_basic(theta, x):
    a, b, c = theta[0], theta[1], theta[2]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(a * x[i]) * math.cos(b) + math.tan(0.3 * c) * x[i] - math.cos(b * x[i] + c)
    return s


def trig_inverse(theta, x):
    a, b, c = theta[0], theta[1], theta[2]
    s = 0.0
    for i in range(x.shape[0]):
        s += math.atan(a * x[i]) + math.atan2(b, c + x[i]) + math.hypot(a, x[i]) + math.tanh(c * x[i] - b)
    return s


def _trig_args():
    return np.array([0.7, -0.4, 1.3]), np.linspace(0.1, 1.9, 12)


def active_exponent(theta, x):
    # exponent is active, base is data (positive)
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] ** theta[0]
    return s


def _active_exponent_args():
    return np.array([1.7]), np.linspace(0.5, 2.5, 10)


def active_base_and_exponent(theta):
    # both base and exponent active
    return theta[0] ** theta[1] + theta[1] ** (0.5 * theta[0])


def _active_base_and_exponent_args():
    return (np.array([1.8, 2.3]),)


def math_pow(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.pow(x[i], theta[1]) * math.pow(theta[0], 2.5) - math.pow(theta[0] + x[i], theta[1])
    return s


def _math_pow_args():
    return np.array([1.3, 0.6]), np.linspace(0.2, 1.6, 8)


def int_float_exponents(theta, x):
    a, b, c = theta[0], theta[1], theta[2]
    s = a ** 2 + b ** 3 + c ** -1 + c ** 0.5 + a ** 1.5 - b ** -2 + a ** 0 + c ** 1
    for i in range(x.shape[0]):
        s -= (x[i] - a) ** 2 / c ** 2 + (x[i] * b) ** 4
    return s


def _int_float_exponents_args():
    return np.array([1.2, 0.8, 2.1]), np.linspace(-0.5, 0.9, 9)


def abs_min_max(theta, x):
    # data placed so that no abs/min/max switches within a finite-difference step of the test point
    s = 0.0
    for i in range(x.shape[0]):
        s += abs(x[i] - theta[0]) + min(theta[1] * x[i], 1.0) - max(theta[0], x[i] * x[i])
    return s + abs(theta[1]) * max(theta[0], theta[1]) + min(-theta[0], theta[1])


def _abs_min_max_args():
    return np.array([0.55, 1.7]), np.array([0.1, 0.3, 0.9, 1.2, -0.4, 0.35, 1.6, 0.0])


def constants(theta, x):
    s = math.pi * theta[0] + math.e ** theta[1]
    for i in range(x.shape[0]):
        s += math.sin(2.0 * math.pi * theta[0] * x[i]) / math.e
    return s


def _constants_args():
    return np.array([0.33, 0.7]), np.linspace(0.0, 1.0, 7)


def exp_log_family(theta, x):
    a, b = theta[0], theta[1]
    s = 0.0
    for i in range(x.shape[0]):
        s += (math.exp(-a * x[i]) + math.log(b + x[i]) + math.log1p(a * x[i]) + math.expm1(-b * x[i])
              + math.sqrt(a + x[i] * x[i]) + math.fabs(a - 2.0 * x[i]) + math.erf(b * x[i] - a))
    return s


def _exp_log_family_args():
    return np.array([0.8, 1.4]), np.array([0.1, 0.25, 0.7, 1.1, 1.6, 2.2])


def hyperbolic_inverse_gamma(theta, x):
    a, b = theta[0], theta[1]
    s = 0.0
    for i in range(x.shape[0]):
        s += (math.asinh(a * x[i] - b) + math.acosh(1.0 + a * a + x[i]) + math.atanh(0.5 * b * x[i])
              + math.gamma(a + x[i]) + math.log(b + x[i], 10.0) + math.log(a * x[i] + 1.0, b + 2.0))
    return s


def _hyperbolic_inverse_gamma_args():
    return np.array([0.8, 0.9]), np.linspace(0.1, 1.5, 7)


def numpy_on_numbers(theta, x):
    # numpy functions applied to numbers mean their math/builtin/ad.special counterparts
    a, b = theta[0], theta[1]
    s = 0.0
    for i in range(x.shape[0]):
        s += (np.square(a - x[i]) + np.maximum(a * x[i], b) + np.minimum(b, x[i]) + np.logaddexp(a, b * x[i])
              + np.arcsinh(a * x[i]) + np.arccosh(1.0 + b * b) + np.arctanh(0.4 * a) + np.exp(-b) * np.sqrt(a)
              + np.where(a > x[i], a * x[i], b * b) + np.clip(a * x[i], 0.2, 0.6))
    return s


def _numpy_on_numbers_args():
    return np.array([0.7, 0.47]), np.linspace(0.05, 1.25, 7)  # no ties of the max and min terms


CASES = [
    Case("trig_basic", trig_basic, _trig_args, tags=("sin", "cos", "tan")),
    Case("trig_inverse", trig_inverse, _trig_args, cuda=True, tags=("atan", "atan2", "hypot", "tanh")),
    Case("active_exponent", active_exponent, _active_exponent_args, tags=("x ** theta",)),
    Case("active_base_and_exponent", active_base_and_exponent, _active_base_and_exponent_args,
         tags=("theta ** theta", "no data")),
    Case("math_pow", math_pow, _math_pow_args, tags=("math.pow",)),
    Case("int_float_exponents", int_float_exponents, _int_float_exponents_args, tags=("** int", "** float")),
    Case("abs_min_max", abs_min_max, _abs_min_max_args, tags=("abs", "min", "max")),
    Case("constants", constants, _constants_args, tags=("math.pi", "math.e")),
    Case("exp_log_family", exp_log_family, _exp_log_family_args,
         tags=("exp", "log", "log1p", "expm1", "sqrt", "fabs", "erf")),
    Case("hyperbolic_inverse_gamma", hyperbolic_inverse_gamma, _hyperbolic_inverse_gamma_args, cuda=True,
         tags=("asinh", "acosh", "atanh", "gamma", "math.log(x, base)")),
    Case("numpy_on_numbers", numpy_on_numbers, _numpy_on_numbers_args, cuda=True,
         tags=("np.square", "np.maximum", "np.minimum", "np.logaddexp", "np.arcsinh", "np.arccosh", "np.arctanh",
               "np.where", "np.clip")),
]
