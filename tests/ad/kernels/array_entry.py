"""Loops over local arrays whose iterations do, or do not, read what an earlier iteration wrote.

Where no iteration reads an element another wrote, the reverse sweep keeps one copy of the array per run of the
loop instead of one per iteration (ad/array_entry.py). The first three kernels are of that kind; an earlier loop
reads the array too, and its replay comes after the later loop's reverse sweep, so the copy must be put back
exactly. The others look alike but do read what an earlier iteration wrote, and need the copy per iteration.
Every one is checked against finite differences, jit float64 and float32, and PTX by the corpus tests;
tests/ad/test_array_entry.py checks which copy each gets."""
import math

import numpy as np

from .case import Case


def stage_buffer(theta, x):
    # w is filled element by element in every iteration before it is read (an RK4 stage, a basis row)
    w = np.zeros(3)
    w[0] = theta[0]
    w[1] = theta[1]
    w[2] = theta[0] * theta[1]
    before = 0.0
    for j in range(3):  # replayed in the reverse sweep after the loop below: it must find w as it was
        before += w[j] * math.cos(theta[1] * j)
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(3):
            w[j] = math.sin(theta[0] * x[i] + j * theta[1])
        s += w[0] * w[1] + w[2] * x[i]
    return s + before * w[1] + w[2]


def stage_constants(theta, x):
    # written at constant positions, then read, in each iteration; the array is also updated after the loop
    k = np.zeros(2)
    k[0] = theta[1]
    k[1] = theta[0]
    s = 0.0
    for i in range(2):  # replayed in the reverse sweep after the loop below: it must find k as it was
        s += k[i] * k[i] * x[i]
    for i in range(x.shape[0]):
        k[0] = theta[0] * x[i]
        k[1] = math.exp(0.3 * k[0]) * theta[1]
        s += k[0] * k[1]
    k[0] = k[0] * theta[1]
    return s + k[0] + k[1] * k[1]


def own_element_update(theta, x):
    # iteration j reads and writes element j only (y[j] += ...), inside a loop that carries y
    y = np.zeros(3)
    y[0] = theta[0]
    y[1] = theta[1]
    y[2] = 0.5
    for i in range(x.shape[0]):
        for j in range(3):
            y[j] += 0.1 * math.sin(y[j] * theta[1] + x[i])
    return y[0] * y[1] + y[2]


def neighbour_read(theta, x):
    # iteration j reads element 0, which iteration 0 wrote: a copy per iteration is needed
    y = np.zeros(3)
    y[0] = theta[0]
    y[1] = theta[1]
    y[2] = theta[0] - theta[1]
    for i in range(x.shape[0]):
        for j in range(3):
            y[j] = y[j] * 0.9 + 0.1 * math.cos(y[0] + x[i] * theta[1])
    return y[0] + y[1] * y[2]


def conditional_write(theta, x):
    # buf[0] is written only when x[i] > 0, so an iteration may read what an earlier one wrote
    buf = np.zeros(1)
    buf[0] = theta[0]
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            buf[0] = theta[0] * x[i] + buf[0] * theta[1]
        s += buf[0] * theta[1]
    return s


def accumulate_in_place(theta, x):
    # acc[0] += ... reads what the previous iteration wrote
    acc = np.zeros(2)
    for i in range(x.shape[0]):
        acc[0] += theta[0] * x[i]
        acc[1] = acc[0] * theta[1]
    return acc[0] * acc[1]


def _args():
    return np.array([0.7, -0.4]), np.array([0.3, -0.8, 0.5, 1.1, -0.2])


CASES = [
    Case("stage_buffer", stage_buffer, _args, cuda=True,
         tags=("local array", "rewritten each iteration", "nested loops", "read before and after")),
    Case("stage_constants", stage_constants, _args, tags=("local array", "rewritten each iteration")),
    Case("own_element_update", own_element_update, _args, cuda=True,
         tags=("local array", "own element", "nested loops", "+=")),
    Case("neighbour_read", neighbour_read, _args, tags=("local array", "reads another iteration's write")),
    Case("conditional_write", conditional_write, _args, tags=("local array", "write under if")),
    Case("accumulate_in_place", accumulate_in_place, _args, tags=("local array", "+=", "carried element")),
]

# which arrays each kernel's loops copy once per run (ENTRY) and which per iteration (PER_ITERATION)
ENTRY = {"stage_buffer": {"w"}, "stage_constants": {"k"}, "own_element_update": {"y"}}
PER_ITERATION = {"own_element_update": {"y"}, "neighbour_read": {"y"}, "conditional_write": {"buf"},
                 "accumulate_in_place": {"acc"}}
