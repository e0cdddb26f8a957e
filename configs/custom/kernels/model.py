"""A straight line with unknown intrinsic scatter: copy this file and edit the kernel for your own model.

The kernel is written for ONE parameter vector `theta`; nestgrad evaluates it for many at once (CPU threads or
GPU threads) and differentiates it itself. Data arguments (`x`, `y`, `yerr`) are named in the config's
`likelihood.data`. Only the subset of Python the differentiator accepts may be used: numbers, `math.*`,
`for i in range(...)`, `if`/`else`, local variables, indexing arrays — see README.md "Writing a kernel".
"""
import math


def line_with_scatter(theta, x, y, yerr):
    """log N(y_i | a + b x_i, yerr_i^2 + s^2), summed over the data points."""
    a, b, s = theta[0], theta[1], theta[2]
    total = 0.0
    for i in range(x.shape[0]):
        var = yerr[i] * yerr[i] + s * s
        r = y[i] - a - b * x[i]
        total += -0.5 * r * r / var - 0.5 * math.log(2.0 * math.pi * var)
    return total


def line_with_scatter_grad(theta, x, y, yerr, out):
    """The same derivative by hand (optional): `nestgrad check` compares it with the automatic one."""
    a, b, s = theta[0], theta[1], theta[2]
    ga = gb = gs = 0.0
    for i in range(x.shape[0]):
        var = yerr[i] * yerr[i] + s * s
        r = y[i] - a - b * x[i]
        ga += r / var
        gb += r * x[i] / var
        gs += (r * r / (var * var) - 1.0 / var) * s
    out[0] = ga
    out[1] = gb
    out[2] = gs
