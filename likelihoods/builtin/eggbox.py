"""The eggbox, lnL = (2 + cos(x/2) cos(y/2))^5 on U[0, 10π]² (dynesty / UltraNest test; 18 sharp modes)."""

import functools
import math

from ._base import Builtin

NAME = "eggbox"
DESCRIPTION = "eggbox (2 + cos(x/2) cos(y/2))^5 in U[0, 10π]², 18 modes"
OPTIONS = {}  # checked by builtin.get before get() runs
PARAMS = ("x", "y")
PEAK = 243.0  # (2 + 1)^5, the value at every mode: factored out of the quadrature


def kernel(theta):
    t = 2.0 + math.cos(0.5 * theta[0]) * math.cos(0.5 * theta[1])
    return t * t * t * t * t


def gradient(theta, out):
    cx, cy = math.cos(0.5 * theta[0]), math.cos(0.5 * theta[1])
    t = 2.0 + cx * cy
    scale = 5.0 * t * t * t * t * 0.5
    out[0] = -scale * math.sin(0.5 * theta[0]) * cy
    out[1] = -scale * cx * math.sin(0.5 * theta[1])


@functools.lru_cache(maxsize=1)
def reference_logz():
    """With u = x/2, the box [0, 10π] is five half-periods of cos u, each mapping onto [-1, 1] once, so
    Z = (1/π²) ∫_0^π ∫_0^π exp((2 + cos u cos v)^5) du dv  (nested adaptive quadrature, peak factored out).
    Literature value: 235.856."""
    from scipy import integrate  # here: importing scipy.integrate costs every run of every built-in 0.5 s

    def inner(u):
        cu = math.cos(u)
        value, _ = integrate.quad(lambda v: math.exp((2.0 + cu * math.cos(v)) ** 5 - PEAK), 0.0, math.pi,
                                  epsabs=0.0, epsrel=1e-10, limit=400)
        return value

    outer, _ = integrate.quad(inner, 0.0, math.pi, epsabs=0.0, epsrel=1e-10, limit=400)
    return math.log(outer) + PEAK - 2.0 * math.log(math.pi)


def get():
    priors = {p: ("uniform", 0.0, 10.0 * math.pi) for p in PARAMS}
    # no truths (18 equal modes); checks look around a point on the slope between modes
    return Builtin(NAME, kernel, gradient, PARAMS, priors, {}, reference_logz(),
                   "nested scipy quad over one period cell (literature 235.856)", None, DESCRIPTION, {},
                   check_centre={"x": 5.0, "y": 7.0})
