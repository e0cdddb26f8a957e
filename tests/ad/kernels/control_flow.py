"""Loops (nested, triangular, strided, reversed), branches on active values, early return, boolean logic."""
import math

import numpy as np

from .case import Case, rng


def nested_loops(theta, X, w):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            d = X[i, j] - theta[j]
            s -= w[j] * d * d
    return s


def _nested_loops_args():
    r = rng(11)
    return np.array([0.2, -0.3, 0.5]), r.normal(0.0, 1.0, (12, 3)), np.array([0.5, 1.0, 2.0])


def triangular_pairs(theta, x):
    # inner bound depends on the outer index
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i):
            dx = x[i] - x[j]
            s += math.exp(-theta[0] * dx * dx) * theta[1]
    return s


def _triangular_pairs_args():
    return np.array([0.8, 1.3]), np.linspace(0.0, 2.0, 9)


def strided_range(theta, x):
    # pairs (x[2k], x[2k+1]) with a stride-2 range
    s = 0.0
    for i in range(0, x.shape[0] - 1, 2):
        s += math.log(1.0 + (x[i] * theta[0] - x[i + 1] * theta[1]) ** 2)
    for i in range(1, x.shape[0], 3):
        s -= theta[0] * theta[1] * x[i]
    return s


def _strided_args():
    return np.array([0.9, 1.4]), rng(12).normal(0.0, 1.0, 14)


def reversed_range(theta, x):
    # reverse iteration with weights that depend on the index
    n = x.shape[0]
    s = 0.0
    for i in range(n - 1, -1, -1):
        s += (n - i) * math.sin(theta[0] * x[i]) + math.cos(theta[1]) * i
    return s


def _reversed_args():
    return np.array([0.6, 0.4]), np.linspace(-1.0, 1.0, 10)


def early_return(theta, x):
    # guard on the parameter, then a guard on a computed active quantity
    if theta[1] <= 0.0:
        return -math.inf
    s = 0.0
    for i in range(x.shape[0]):
        s += theta[1] - (x[i] - theta[0]) ** 2
    if s <= 0:
        return -math.inf
    return math.log(s)


def _early_return_args():
    return np.array([0.3, 1.5]), np.linspace(-0.5, 1.0, 8)


def conditional_expression(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        w = x[i] * theta[1] if x[i] > theta[0] else theta[0] * theta[0]
        s += w + (theta[1] if x[i] < 0.0 else -theta[0]) * x[i]
    return s


def _conditional_expression_args():
    return np.array([0.25, 0.8]), np.array([-0.7, -0.1, 0.05, 0.5, 0.9, 1.3, 2.0])


def boolean_conditions(theta, x, flags):
    s = 0.0
    for i in range(x.shape[0]):
        inside = x[i] > -1.0 and not x[i] > 1.0
        if inside or flags[i] > 0:
            s += theta[0] * x[i] * x[i]
        elif not (theta[1] < 0.0) and x[i] > 0.0:
            s += math.sqrt(theta[1]) * x[i]
        else:
            s -= theta[0] * theta[1]
    return s


def _boolean_conditions_args():
    x = np.array([-2.0, -1.5, -0.5, 0.0, 0.5, 1.5, 2.5, -3.0, 3.0])
    flags = np.array([0, 1, 0, 0, 1, 0, 0, 0, 1], dtype=np.int64)
    return np.array([0.7, 2.2]), x, flags


def if_elif_else_active(theta, x):
    # branch chosen by the active value theta[0] * x[i]; the adjoint must follow the branch taken
    s = 0.0
    for i in range(x.shape[0]):
        z = theta[0] * x[i] + theta[1]
        if z < -1.0:
            s += -z - 0.5
        elif z < 1.0:
            s += 0.5 * z * z
        else:
            pass
            s += z * z * z / 3.0 + 1.0 / 6.0 - z + z
    return s


def _if_elif_else_args():
    return np.array([1.1, 0.2]), np.array([-3.0, -2.0, -0.5, 0.1, 0.4, 2.0, 3.1])


CASES = [
    Case("nested_loops", nested_loops, _nested_loops_args, tags=("nested loops", "2-D data")),
    Case("triangular_pairs", triangular_pairs, _triangular_pairs_args, tags=("range(i)", "nested loops")),
    Case("strided_range", strided_range, _strided_args, tags=("range(0, n, 2)", "range(1, n, 3)")),
    Case("reversed_range", reversed_range, _reversed_args, tags=("range(n-1, -1, -1)", "int*float")),
    Case("early_return", early_return, _early_return_args, cuda=True, tags=("early return", "-math.inf")),
    Case("conditional_expression", conditional_expression, _conditional_expression_args,
         tags=("conditional expression", "active condition")),
    Case("boolean_conditions", boolean_conditions, _boolean_conditions_args,
         tags=("and", "or", "not", "elif", "int array data")),
    Case("if_elif_else_active", if_elif_else_active, _if_elif_else_args, tags=("if on active", "elif", "pass")),
]
