"""Kernels the differentiator must reject, each with a marker comment ``# <- name`` on the offending line.

tests/ad/test_unsupported.py finds the expected line by searching this file for the marker, so lines can move.
Not part of the corpus (no CASES): each function is differentiated only to observe the error.
"""
import math
import random

import numpy as np

WEIGHTS = [0.5, 1.5]
STATE = {"scale": 2.0}
COEFFICIENTS = np.array([0.5, 1.5, -0.25])


def write_into_data(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        x[i] = x[i] * theta[0]  # <- data_write
        s += x[i]
    return s


def augmented_write_into_data(theta, x):
    x[0] += theta[0]  # <- data_augwrite
    return x[0] * theta[1]


def write_into_active(theta, x):
    theta[0] = 2.0 * theta[1]  # <- active_write
    return theta[0] * x[0]


def no_rule_numpy_ufunc(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.cbrt(theta[0] * x[i])  # <- ufunc_call
    return s


def no_rule_c_function(theta, x):
    return math.copysign(theta[0], x[0]) + x[0]  # <- c_call


def numpy_random(theta, x):
    s = theta[0] * x[0]
    noise = np.random.rand()  # <- np_random
    return s + noise


def stdlib_random(theta, x):
    return theta[0] * random.random()  # <- random


def string_constant(theta, x):
    mode = "fast"  # <- string
    return theta[0] * x[0]


def recursion(theta, x):
    if theta[0] > 10.0:
        return theta[0]
    return recursion(theta, x) * x[0]  # <- recursion


def _recursive_helper(z, depth):
    if depth <= 0:
        return z
    return _recursive_helper(z * 0.5, depth - 1)  # <- helper_recursion


def recursion_through_helper(theta, x):
    return _recursive_helper(theta[0], 3) + x[0]


def while_loop(theta, x):
    s = 0.0
    i = 0
    while i < x.shape[0]:  # <- while
        s += theta[0] * x[i]
        i += 1
    return s


def continue_in_loop(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue  # <- continue
        s += theta[0] * x[i]
    return s


def return_in_loop(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += theta[0] * x[i]
        if s > 100.0:
            return s  # <- loop_return
    return s


def lambda_expression(theta, x):
    square = (
        lambda t: t * t  # <- lambda
    )
    return square(theta[0]) + x[0]


_double = lambda t: 2.0 * t  # noqa: E731 - a module-level lambda used as a helper


def lambda_helper(theta, x):
    return _double(theta[0]) + x[0]  # <- lambda_helper


def list_comprehension(theta, x):
    terms = (
        [theta[0] * x[i] for i in range(x.shape[0])]  # <- comprehension
    )
    return terms[0]


def generator_expression(theta, x):
    total = (
        sum(theta[0] * x[i] for i in range(x.shape[0]))  # <- generator
    )
    return total


def attribute_assignment(theta, x):
    x.flags = None  # <- attribute_assign
    return theta[0] * x[0]


def global_list(theta, x):
    return theta[0] * x[0] + WEIGHTS[1]  # <- global_list


def global_array(theta, x):
    return theta[0] * COEFFICIENTS[1] + x[0]  # <- global_array


def global_dict(theta, x):
    return theta[0] * STATE["scale"] + x[0]  # <- global_dict


def nested_function(theta, x):
    def inner(t):  # <- nested_def
        return t * t
    return inner(theta[0]) * x[0]


def try_except(theta, x):
    s = 0.0
    try:  # <- try
        s = math.log(theta[0])
    except ValueError:
        s = -math.inf
    return s + x[0]


def iterate_over_array(theta, x):
    s = 0.0
    for v in x:  # <- iterate_array
        s += theta[0] * v
    return s


def enumerate_over_array(theta, x, y):
    s = 0.0
    for i, xi in enumerate(x):  # <- enumerate_array
        s += xi * theta[0] + y[i]
    return s


def zip_over_arrays(theta, x, y):
    s = 0.0
    for xi, yi in zip(x, y):  # <- zip_arrays
        s += (yi - theta[0] * xi) ** 2
    return s


def enumerate_zip_nested_target(theta, x, y):
    s = 0.0
    for i, (xi, yi) in enumerate(zip(x, y)):  # <- nested_loop_target
        s += (yi - theta[0] * xi) ** 2
    return s


def array_slice(theta, x):
    return theta[0] * x[1:3][0]  # <- slice


def keyword_argument(theta, x):
    return math.log(theta[0], base=x[0])  # <- keyword_call


def global_statement(theta, x):
    global WEIGHTS  # <- global_stmt
    return theta[0] * x[0]


def f_string(theta, x):
    label = f"{theta[0]}"  # <- fstring
    return theta[0] * x[0]


def discarded_call(theta, x):
    math.exp(theta[0])  # <- discarded_call
    return theta[0] * x[0]


def sum_with_axis(theta, x):
    return theta[0] * np.sum(x, 0)  # <- sum_axis


def row_outside_reduction(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        r = x[i, :]  # <- row_alone
        s += theta[0] * x[i, 0]
    return s


def reduction_of_scalars(theta, x):
    return np.sum(theta[0] * x[0])  # <- sum_scalar


def sliced_range_in_reduction(theta, x):
    return theta[0] * np.sum(x[1:3])  # <- sum_slice
