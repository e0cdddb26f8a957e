"""Kernels whose loop variable reuses a name (an argument, a local, an enclosing loop's variable) or is
reassigned inside its loop: Python's meaning, which the differentiator follows (tests/ad/test_loop_shadowing.py)."""

N_TERMS = 10        # module constants that a kernel's own names shadow
SCALE = 2.0


def loop_variable_named_like_data(theta, x, n):
    s = 0.0
    for x in range(n):          # `x` the data array is not read again: inside, `x` is the index
        s += theta[0] * x
    return s


def loop_variable_is_its_own_bound(theta, x, k):
    s = 0.0
    for k in range(k):          # the bound is read once, before `k` becomes the index
        s += theta[0] * x[k] + theta[1] * k
    return s


def loop_variable_reassigned(theta, x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s += theta[0] * x[i] ** 2
        i = i + 1               # lasts until the next iteration, which starts from its own index again
        s += theta[1] * x[i]
    return s


def loop_variable_reset(theta, x):
    s = 0.0
    for i in range(3):
        s += theta[0] * x[i]
        i = 0
        s += theta[1] * x[i]
    return s


def loop_variable_made_a_float(theta, x):
    s = 0.0
    for i in range(3):
        i = theta[0] * x[i] + theta[1]
        s += i * i
    return s


def inner_loop_reuses_outer_variable(theta, x):
    s = 0.0
    for i in range(3):
        for i in range(2):
            s += theta[0] * x[i] * theta[1]
    return s


def scalar_data_reassigned_in_loop(theta, x, mu):
    s = mu * theta[1]
    for i in range(3):
        mu = theta[0] + x[i]
        s += mu * mu
    return s


# read after the loop that reused the name: refused, naming the name, what it shadowed and the loop


def data_read_after_shadowing_loop(theta, x, n):
    s = 0.0
    for n in range(3):  # <- loop_data
        s += theta[0] * x[n]
    return s * n  # <- read_data


def theta_read_after_shadowing_loop(theta, x):
    s = theta[0] * x[0]
    for theta in range(3):  # <- loop_theta
        s += x[theta]
    return s + theta[0]  # <- read_theta


def local_read_after_shadowing_loop(theta, x):
    i = theta[0] * 2.0
    s = i * i
    for i in range(x.shape[0]):  # <- loop_local
        s += theta[1] * x[i]
    return s + i  # <- read_local


def outer_index_read_after_inner_loop(theta, x):
    s = 0.0
    for i in range(3):
        for i in range(2):  # <- loop_inner
            s += theta[0] * x[i]
        s += theta[1] * x[i]  # <- read_outer
    return s


def loop_variable_read_after_its_loop(theta, x):
    s = 0.0
    for i in range(x.shape[0]):  # <- loop_plain
        s += theta[0] * x[i]
    return s * i  # <- read_plain


def module_constant_read_after_shadowing_loop(theta, x):
    s = 0.0
    for N_TERMS in range(3):  # <- loop_module
        s += theta[0] * x[N_TERMS]
    return s * N_TERMS  # <- read_module


def module_constant_read_before_local_assignment(theta, x):
    s = theta[0] * SCALE  # <- read_before_local
    SCALE = 3.0
    return s * SCALE * x[0]
