"""The 2-D Rosenbrock banana, lnL = -[(1 - x)² + 100 (y - x²)²] / 2, prior U[-10, 10]² (dynesty's test)."""

import math

from ._base import Builtin
from ._options import POSITIVE
from ._reference import log_integral, normal_mass

NAME = "rosenbrock"
DESCRIPTION = "2-D Rosenbrock banana -[(1-x)² + 100(y-x²)²]/2 in U[-10, 10]²"
OPTIONS = {"half_width": POSITIVE}  # checked by builtin.get before get() runs
PARAMS = ("x", "y")


def kernel(theta):
    a = 1.0 - theta[0]
    b = theta[1] - theta[0] * theta[0]
    return -0.5 * (a * a + 100.0 * b * b)


def gradient(theta, out):
    a = 1.0 - theta[0]
    b = theta[1] - theta[0] * theta[0]
    out[0] = a + 200.0 * b * theta[0]
    out[1] = -100.0 * b


def reference_logz(half_width=10.0):
    """The y integral is a Gaussian (width 0.1) cut by the box, done with the normal CDF; x by quadrature.
    Untruncated: ln(π/5) − ln 400 = −6.456; the box removes the banana's tips (−6.472)."""
    h = half_width

    def log_slice(x):
        inside = normal_mass(10.0 * (-h - x * x), 10.0 * (h - x * x))
        if inside <= 0.0:
            return -math.inf
        return -0.5 * (1.0 - x) ** 2 + 0.5 * math.log(2.0 * math.pi / 100.0) + math.log(inside)

    return log_integral(log_slice, -h, h) - 2.0 * math.log(2.0 * h)


def get(half_width=10.0):
    priors = {p: ("uniform", -float(half_width), float(half_width)) for p in PARAMS}
    return Builtin(NAME, kernel, gradient, PARAMS, priors, {}, reference_logz(half_width),
                   "normal CDF in y, Gauss-Legendre quadrature in x", {"x": 1.0, "y": 1.0}, DESCRIPTION,
                   {"half_width": half_width})
