"""Storing loops nested in storing loops: rows of the inner loop's values per iteration of the outer loop.

The reverse sweep of such an inner loop reads its values from the row of the outer iteration, and the outer
loop's replay restores the inner loop's exit copies instead of running it (ad/nested_rows.py) -- unless the
rows would exceed the budget, decided per call: ``rows_budget_exceeded`` needs more than the default budget, so
its calls take the other path (the inner loop replayed, one row).  Every kernel is checked against finite
differences, jit float64 and float32, and PTX by the corpus tests; tests/ad/test_nested_rows.py checks which
loops get rows, the report, and both paths of every kernel (CPU and the CUDA simulator, with a zero budget for
the other path: the over-budget kernel is too long for the simulator).
"""
import math

import numpy as np

from .case import Case, rng


def rk4_rows(theta, x, steps):
    # an RK4-like integrator: the state is copied per step, the stages are rewritten in every step, and the
    # code after the step loop reads the state (its exit copy)
    y = np.zeros(2)
    k = np.zeros(2)
    y[0] = theta[0]
    y[1] = 0.5
    s = 0.0
    for i in range(x.shape[0]):
        for step in range(steps):
            k[0] = y[0] * (theta[1] - 0.3 * y[1])
            k[1] = y[1] * (0.2 * y[0] - 0.4)
            for j in range(2):
                y[j] += 0.05 * k[j]
        s += (y[0] - x[i]) ** 2 + y[1] * theta[0]
    return -s


def stored_scalar_rows(theta, x):
    # the inner loop also carries a scalar that its reverse needs (q: stored per iteration, in the rows too)
    y = np.zeros(2)
    y[0] = theta[0]
    y[1] = 0.5
    s = 0.0
    for i in range(x.shape[0]):
        c = theta[1] * x[i]
        q = 1.0
        for m in range(3):
            q = q * (1.0 + 0.1 * y[0] * c)
            y[0] = y[0] + 0.05 * math.sin(y[1] * q)
            y[1] = y[1] * 0.9 + 0.1 * c * y[0]
        s += y[0] * y[1] - x[i] * y[1]
    return s


def prefix_and_rest_write(theta, x):
    # the outer body writes an array before the inner loop and the state after it: the replay must see the
    # inner loop's exit values, and the rollback of the later writes must land on them
    y = np.zeros(2)
    w = np.zeros(2)
    y[0] = theta[0]
    y[1] = theta[1]
    s = 0.0
    for i in range(x.shape[0]):
        w[0] = theta[0] * x[i]
        for m in range(2):
            w[1] = math.tanh(y[0] + w[0])
            y[0] = y[0] * 0.8 + 0.1 * w[1] * y[1]
            y[1] = y[1] * 0.9 + 0.1 * math.cos(y[0])
        y[1] = y[1] + 0.1 * w[1] * y[0]
        s += y[0] * w[0] + y[1]
    return s


def triangular_rows(theta, x):
    # the inner trip count depends on the outer index: rows are as long as the largest one
    y = np.zeros(1)
    y[0] = theta[0]
    s = 0.0
    for i in range(x.shape[0]):
        for m in range(i % 3 + 1):
            y[0] = y[0] + 0.1 * math.sin(y[0] * theta[1] + x[i])
        s += y[0] * x[i]
    return s


def three_levels(theta, x):
    # rows for the middle loop's inner loop; the outermost loop replays the middle one (which cannot have rows
    # itself: its inner loop has them)
    y = np.zeros(2)
    y[0] = theta[0]
    y[1] = theta[1]
    s = 0.0
    for r in range(2):
        for i in range(x.shape[0]):
            for m in range(2):
                y[0] = y[0] + 0.1 * y[1] * math.cos(y[0] + x[i])
                y[1] = y[1] * 0.95 + 0.05 * y[0] * y[0]
            s += y[0] * x[i]
        s += y[1]
    return s


def scalar_after_inner(theta, x):
    # the code after the inner loop reads a scalar the inner loop computes: no rows (they would have to store it)
    y = np.zeros(1)
    y[0] = theta[0]
    s = 0.0
    for i in range(x.shape[0]):
        v = 0.0
        for m in range(3):
            y[0] = y[0] * 0.9 + 0.1 * math.sin(y[0] * theta[1] + x[i])
            v = y[0] * y[0]
        s += v * theta[1] * x[i]  # the reverse needs v (the partial for theta[1])
    return s


def rows_budget_exceeded(theta, x, steps):
    # x.shape[0] x (steps x 1 + 2) elements: above the default budget for the arguments below
    y = np.zeros(1)
    y[0] = theta[0]
    s = 0.0
    for i in range(x.shape[0]):
        for step in range(steps):
            y[0] = y[0] + 0.001 * math.sin(y[0] * theta[1] + x[i])
        s += y[0] * x[i]
    return s


def _args():
    return np.array([0.7, 0.4]), rng(91).uniform(-1.0, 1.0, 6)


def _args_steps():
    return np.array([0.7, 0.4]), rng(92).uniform(-1.0, 1.0, 5), 4


def _args_big():
    return np.array([0.7, 0.4]), rng(93).uniform(-1.0, 1.0, 30), 200


CASES = [
    Case("rk4_rows", rk4_rows, _args_steps, cuda=True, tags=("local array", "nested loops", "rows", "RK4")),
    Case("stored_scalar_rows", stored_scalar_rows, _args, cuda=True,
         tags=("local array", "nested loops", "rows", "loop-carried")),
    Case("prefix_and_rest_write", prefix_and_rest_write, _args,
         tags=("local array", "nested loops", "rows", "exit copy")),
    Case("triangular_rows", triangular_rows, _args, tags=("local array", "nested loops", "rows", "triangular")),
    Case("three_levels", three_levels, _args, tags=("local array", "nested loops", "rows", "three levels")),
    Case("scalar_after_inner", scalar_after_inner, _args, tags=("local array", "nested loops")),
    Case("rows_budget_exceeded", rows_budget_exceeded, _args_big,
         tags=("local array", "nested loops", "rows", "over budget")),
]

# which loops get rows: kernel -> {(outer loop variable, inner loop variable)}
ROWS = {"rk4_rows": {("i", "step")}, "stored_scalar_rows": {("i", "m")}, "prefix_and_rest_write": {("i", "m")},
        "triangular_rows": {("i", "m")}, "three_levels": {("i", "m")}, "rows_budget_exceeded": {("i", "step")}}
