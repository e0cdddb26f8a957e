"""Kernels calling functions with an adjoint-form ``@ad.rule``: plain Python ones with array arguments, and numba
functions compiled elsewhere whose source does not exist (built from a string, so ``inspect.getsource`` fails:
the differentiator must call them without reading them).  Not part of the corpus ``CASES``; see
tests/ad/test_array_rules.py.
"""
import math

import numba
import numpy as np

from nestgrad import ad

from .case import rng


# ---- plain Python, array arguments, the default `writes` (every local array passed may be written) ----------

def weighted_sq(model, y, w, scale):
    """scale * sum_i w_i (model_i - y_i)^2"""
    s = 0.0
    for i in range(model.shape[0]):
        r = model[i] - y[i]
        s += w[i] * r * r
    return scale * s


@ad.rule(weighted_sq)
def weighted_sq_adjoint(model, y, w, scale, g, model_b, y_b, w_b):
    s = 0.0
    for i in range(model.shape[0]):
        r = model[i] - y[i]
        s += w[i] * r * r
        if model_b is not None:
            model_b[i] += 2.0 * g * scale * w[i] * r
        if y_b is not None:
            y_b[i] -= 2.0 * g * scale * w[i] * r
        if w_b is not None:
            w_b[i] += g * scale * r * r
    return (g * s,)


def line_fit(theta, x, y, w):
    # a straight line's predictions in a local array, scored by a rule-carrying function; the weights are data
    n = x.shape[0]
    model = np.empty(n)
    for i in range(n):
        model[i] = theta[0] + theta[1] * x[i]
    return -weighted_sq(model, y, w, 0.5 / (theta[2] * theta[2])) - n * math.log(theta[2])


def line_fit_args():
    r = rng(3)
    x = np.linspace(-1.0, 2.0, 9)
    return np.array([0.3, 1.2, 0.4]), x, 0.3 + 1.1 * x + 0.2 * r.normal(size=9), r.uniform(0.5, 1.5, 9)


# ---- compiled elsewhere: numba functions from a string (no source file to read) ----------------------------

_COMPILED_SOURCE = '''
def scale_into(v, s, out):
    total = 0.0
    for i in range(v.shape[0]):
        out[i] = s * v[i]
        total += out[i]
    return total


def scale_into_adjoint(v, s, out, g, v_b, out_b):
    # out_i = s v_i, result = sum_i out_i: every out_i gets g, plus its own adjoint (consumed: it was written)
    s_b = 0.0
    for i in range(v.shape[0]):
        ob = g
        if out_b is not None:
            ob += out_b[i]
            out_b[i] = 0.0
        if v_b is not None:
            v_b[i] += s * ob
        s_b += v[i] * ob
    return (s_b,)


def softplus_sum(theta, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.log1p(math.exp(theta[0] * x[i] + theta[1]))
    return s


def softplus_sum_adjoint(theta, x, g, theta_b, x_b):
    for i in range(x.shape[0]):
        e = 1.0 / (1.0 + math.exp(-(theta[0] * x[i] + theta[1])))
        theta_b[0] += g * e * x[i]
        theta_b[1] += g * e


def gauss_cdf(x, mu):
    return 0.5 * math.erfc(-(x - mu) / math.sqrt(2.0))
'''
_namespace = {"math": math}
exec(compile(_COMPILED_SOURCE, "<compiled elsewhere>", "exec"), _namespace)  # noqa: S102
scale_into = numba.njit(_namespace["scale_into"])
scale_into_adjoint = numba.njit(_namespace["scale_into_adjoint"])
softplus_sum = numba.njit(_namespace["softplus_sum"])
softplus_sum_adjoint = numba.njit(_namespace["softplus_sum_adjoint"])
gauss_cdf = numba.njit(_namespace["gauss_cdf"])

ad.rule(scale_into, writes=("out",))(scale_into_adjoint)
ad.rule(softplus_sum, writes=())(softplus_sum_adjoint)


@ad.rule(gauss_cdf)
def gauss_cdf_partials(x, mu):
    # partials form for a compiled primal: inlined, so plain kernel-subset Python
    p = math.exp(-0.5 * (x - mu) * (x - mu)) / math.sqrt(2.0 * math.pi)
    return p, -p


def stepped_state(theta, x):
    # the compiled call inside a loop writes `tmp`, which the loop then reads: the call's copy of what it
    # overwrites and the loop's per-iteration copies are both needed in the reverse sweep
    n = x.shape[0]
    state = np.zeros(n)
    tmp = np.zeros(n)
    for i in range(n):
        state[i] = x[i]
    total = 0.0
    for step in range(3):
        total += scale_into(state, theta[0], tmp)
        for i in range(n):
            state[i] = math.sin(tmp[i]) + theta[1] * state[i]
    return total + np.sum(state)


def overwrite_after_reads(theta, x):
    # `buf` is read by a loop, then overwritten by the call: its old contents must come back for the replay
    n = x.shape[0]
    buf = np.zeros(n)
    for i in range(n):
        buf[i] = theta[0] * x[i]
    a = 0.0
    for i in range(n):
        a += buf[i] * buf[i] * x[i]
    total = scale_into(x, theta[1], buf)
    return a * total + buf[0] * theta[0]


def parameter_array(theta, x):
    # theta itself goes to the compiled function: its adjoint is the gradient array
    return softplus_sum(theta, x) * theta[2] + gauss_cdf(theta[2], 0.5 * theta[0])


def stepped_args():
    return np.array([0.7, 0.4, 1.3]), np.linspace(-0.5, 0.9, 5)
