"""Assignment forms, accumulators, shapes and scalar data arguments, 3-D data."""
import math

import numpy as np

from .case import Case, rng


def tuple_unpacking(theta, x):
    a, b, c = theta[0], theta[1], theta[2]
    a, b = b, a  # swap: the right-hand side is read before either name is written
    s = 0.0
    for i in range(x.shape[0]):
        u, v = a * x[i], b + c * x[i]
        s += u * v - math.exp(0.1 * u)
    return s


def _tuple_args():
    return np.array([0.5, 1.2, -0.7]), np.linspace(-1.0, 1.0, 8)


def accumulators(theta, x):
    # all four augmented assignments on scalar accumulators
    s = 0.0
    q = 1.0
    for i in range(x.shape[0]):
        s += theta[0] * x[i]
        s -= theta[1] * x[i] * x[i]
        q *= 1.0 + theta[0] * x[i] * x[i]
        q /= 1.0 + theta[1] * x[i] * x[i]
    t = theta[0]
    t *= theta[1]
    t /= 1.0 + theta[0]
    t += 2.0
    t -= theta[1]
    return s + q + t


def _accumulators_args():
    return np.array([0.4, 0.7]), np.linspace(0.1, 1.0, 7)


def product_reduction(theta, x):
    # likelihood written as a product of per-point probabilities, logged at the end
    p = 1.0
    for i in range(x.shape[0]):
        p *= theta[0] * math.exp(-theta[0] * x[i])
    return math.log(p)


def _product_reduction_args():
    return np.array([1.3]), np.linspace(0.1, 1.2, 10)


def len_and_shape(theta, y):
    # len(y) and y.shape[k] as loop bounds and as numbers in the arithmetic
    n = len(y)
    m = y.shape[1]
    s = 0.0
    for i in range(n):
        for j in range(m):
            s += (y[i, j] - theta[j]) ** 2
    return -s / (n * m) - m * math.log(theta[m - 1] * theta[m - 1] + n)


def _len_and_shape_args():
    return np.array([0.1, 0.2, 0.3, 0.4]), rng(14).normal(0.2, 0.5, (6, 4))


def scalar_args(theta, x, n_used, scale):
    # an int scalar (loop bound) and a float scalar (multiplier) as data arguments
    s = 0.0
    for i in range(n_used):
        s += scale * math.log(theta[0] + x[i] * x[i]) - theta[1] * x[i]
    return s * scale


def _scalar_args_args():
    return np.array([0.6, 0.9]), np.linspace(-1.0, 1.5, 10), 7, 1.25


def data_3d(theta, cube):
    s = 0.0
    for i in range(cube.shape[0]):
        for j in range(cube.shape[1]):
            for k in range(cube.shape[2]):
                s += math.cos(theta[k] * cube[i, j, k]) * (j + 1.0)
    return s


def _data_3d_args():
    return np.array([0.5, 1.1]), rng(15).normal(0.0, 1.0, (3, 4, 2))


def data_first(x, theta):
    # the active argument is not the first one
    s = 0.0
    for i in range(x.shape[0]):
        s += math.exp(-theta[0] * x[i]) * theta[1]
    return s


def _data_first_args():
    return np.linspace(0.0, 2.0, 6), np.array([0.7, 1.9])


def shape_only_data(theta, x, y):
    # x is read only through its shape (a trip count); y is not read at all
    n = x.shape[0]
    s = 0.0
    for i in range(n):
        s += math.log(theta[0] + i) * theta[1]
    return s - n * theta[1] * theta[1]


def _shape_only_data_args():
    return np.array([0.8, 1.6]), np.zeros(6), np.ones((2, 2))


def two_active(a, b, x):
    # two active arguments: gradients come back per argument, in wrt order
    s = 0.0
    for i in range(x.shape[0]):
        s += (x[i] - a[0] - a[1] * x[i]) ** 2 * b[0] + math.log(b[1] + x[i] * x[i]) * a[0]
    return -s


def _two_active_args():
    return np.array([0.2, 0.4]), np.array([1.3, 0.5]), np.linspace(-1.0, 1.0, 7)


def two_active_partial(theta, w, x):
    # theta and w active, listed in wrt in reverse kernel order
    s = 0.0
    for i in range(x.shape[0]):
        s += w[i] * math.sin(theta[0] * x[i]) + theta[1] * w[i] * w[i]
    return s


def _two_active_partial_args():
    return np.array([0.9, -0.3]), np.linspace(0.5, 1.5, 5), np.linspace(-1.0, 1.0, 5)


CASES = [
    Case("tuple_unpacking", tuple_unpacking, _tuple_args, tags=("tuple unpacking", "swap")),
    Case("accumulators", accumulators, _accumulators_args, tags=("+=", "-=", "*=", "/=")),
    Case("product_reduction", product_reduction, _product_reduction_args, tags=("*= product reduction",)),
    Case("len_and_shape", len_and_shape, _len_and_shape_args, tags=("len", "shape", "theta[m - 1]")),
    Case("scalar_args", scalar_args, _scalar_args_args, tags=("int scalar data", "float scalar data")),
    Case("data_3d", data_3d, _data_3d_args, tags=("3-D data", "theta[k]")),
    Case("data_first", data_first, _data_first_args, tags=("active argument not first",)),
    Case("shape_only_data", shape_only_data, _shape_only_data_args, tags=("data used only via shape",
                                                                          "unused data argument")),
    Case("two_active", two_active, _two_active_args, wrt=("a", "b"), cuda=True, tags=("wrt two arguments",)),
    Case("two_active_partial", two_active_partial, _two_active_partial_args, wrt=("w", "theta"),
         tags=("wrt order differs from argument order",)),
]
