"""Corner cases of reverse mode that a plausible implementation gets wrong: zero factors in products, values
read after or inside the loop that writes them, integer index arithmetic, rounded indices, chained comparisons,
reused names."""
import math

import numpy as np

from .case import Case


def product_with_zero_factor(theta, x):
    # theta[0] equals x[2] exactly: p is 0 but dp/dtheta0 = prod_{i != 2} (theta0 - x[i]) is not;
    # an adjoint that divides p by the factor gives 0/0
    p = 1.0
    for i in range(x.shape[0]):
        p *= theta[0] - x[i]
    return p + theta[1] * p


def _product_with_zero_factor_args():
    x = np.array([0.25, 1.5, 0.75, -1.0, 2.0])
    return np.array([0.75, 0.5]), x


def last_iteration_value(theta, x):
    # t is overwritten every iteration; only the last iteration's t reaches the return
    t = 0.0
    s = 0.0
    for i in range(x.shape[0]):
        t = math.sin(theta[0] * x[i])
        s += t * t
    return s + 3.0 * t


def prefix_sum_read(theta, x):
    # the accumulator s is read inside the loop that accumulates it (a running sum), non-linearly
    s = 0.0
    r = 0.0
    for i in range(x.shape[0]):
        s += theta[0] * x[i]
        r += s * s * theta[1]
    return r


def accumulator_in_condition(theta, x):
    # the branch taken depends on the running sum
    s = 0.0
    r = 0.0
    for i in range(x.shape[0]):
        s += theta[0] * x[i]
        if s > 1.0:
            r += s * theta[1]
        else:
            r -= theta[1] * theta[1]
    return r + s


def _running_args():
    return np.array([0.9, 1.3]), np.array([0.3, 0.5, -0.2, 0.9, 0.4, -0.6, 0.8])


def integer_index_arithmetic(theta, x):
    # i // 2 and i % 3 in indices and conditions; ints mixed with floats
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        j = i // 2
        if i % 3 == 0:
            s += theta[0] * x[j] * (i + 1)
        else:
            s -= theta[1] * x[n - 1 - j] / (i % 3)
    return s * s


def _integer_index_args():
    return np.array([0.6, 1.1]), np.linspace(-1.0, 1.0, 9)


def rounded_indices(theta, x):
    # floor, ceil and trunc as indices: ints in Python and numba's CPU target; numba-cuda's math.floor returns a
    # float, which cannot index an array (an outsider's kernel compiled everywhere but for the GPU)
    k = math.floor(theta[0] * 3.0)
    j = math.ceil(x[0] * 2.0)
    m = math.trunc(theta[1] * 2.0 + 0.3)
    return x[k] * theta[1] + theta[0] * x[j] + x[m + 1] * theta[0] * theta[0] + math.floor(theta[1] * 4.0) * 0.5


def _rounded_indices_args():
    return np.array([0.9, 1.1]), np.array([1.2, -0.4, 0.7, 1.9, -1.3, 0.6])  # k = 2, j = 3, m = 2


def chained_comparison(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        if -0.5 < x[i] <= 0.5:
            s += math.exp(theta[0] * x[i])
        elif 0.5 < x[i] < theta[1]:
            s += theta[1] * x[i]
    return s


def _chained_comparison_args():
    return np.array([1.2, 2.0]), np.array([-1.0, -0.4, 0.0, 0.3, 0.7, 1.2, 2.5])


def reused_names(theta, x):
    # the same local names in two loops and after them, with different meanings
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - theta[0]
        s += d * d
    d = theta[1] * 2.0
    for i in range(x.shape[0] - 1, -1, -1):
        e = d * x[i]
        s += math.tanh(e)
    e = s * d
    return e


def _reused_names_args():
    return np.array([0.1, 0.7]), np.linspace(-1.0, 1.0, 6)


CASES = [
    Case("product_with_zero_factor", product_with_zero_factor, _product_with_zero_factor_args,
         tags=("*= with a zero factor",)),
    Case("last_iteration_value", last_iteration_value, _running_args, tags=("value read after the loop",)),
    Case("prefix_sum_read", prefix_sum_read, _running_args, tags=("accumulator read in loop",)),
    Case("accumulator_in_condition", accumulator_in_condition, _running_args,
         tags=("accumulator read in condition",)),
    Case("integer_index_arithmetic", integer_index_arithmetic, _integer_index_args, tags=("//", "%")),
    Case("rounded_indices", rounded_indices, _rounded_indices_args, cuda=True,
         tags=("math.floor/ceil/trunc as indices",)),
    Case("chained_comparison", chained_comparison, _chained_comparison_args, tags=("a < b <= c",)),
    Case("reused_names", reused_names, _reused_names_args, tags=("names reused across loops",)),
]
