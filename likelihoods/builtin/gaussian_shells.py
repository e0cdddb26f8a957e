"""Two thin Gaussian shells (Feroz et al. 2009): radius 2, width 0.1, centres ±3.5 on the first axis."""

import math

from ._base import Builtin
from ._options import ANY, DIMENSIONS, POSITIVE
from ._reference import log_integral

NAME = "gaussian_shells"
DESCRIPTION = "two Gaussian shells (radius 2, width 0.1, centres ±3.5 on axis 1) in U[-6, 6]^d"
# checked by builtin.get before get() runs
OPTIONS = {"ndim": DIMENSIONS, "centre": ANY, "radius": POSITIVE, "width": POSITIVE}


def kernel(theta, centre, radius, width):
    d = theta.shape[0]
    rest = 0.0
    for i in range(1, d):
        rest += theta[i] * theta[i]
    e1 = theta[0] + centre
    e2 = theta[0] - centre
    r1 = math.sqrt(e1 * e1 + rest)
    r2 = math.sqrt(e2 * e2 + rest)
    norm = -0.5 * math.log(2.0 * math.pi * width * width)
    z1 = (r1 - radius) / width
    z2 = (r2 - radius) / width
    a1 = norm - 0.5 * z1 * z1
    a2 = norm - 0.5 * z2 * z2
    # log(exp(a1) + exp(a2)) without overflow or underflow
    return max(a1, a2) + math.log1p(math.exp(-abs(a1 - a2)))


def gradient(theta, centre, radius, width, out):
    d = theta.shape[0]
    rest = 0.0
    for i in range(1, d):
        rest += theta[i] * theta[i]
    e1 = theta[0] + centre
    e2 = theta[0] - centre
    r1 = math.sqrt(e1 * e1 + rest)
    r2 = math.sqrt(e2 * e2 + rest)
    a1 = -0.5 * ((r1 - radius) / width) ** 2
    a2 = -0.5 * ((r2 - radius) / width) ** 2
    m = max(a1, a2)
    w1 = math.exp(a1 - m)
    w2 = math.exp(a2 - m)
    # d a_k / d theta = -(r_k - radius) / width² * (theta - c_k) / r_k, weighted by the shell's share of L
    c1 = -w1 * (r1 - radius) / (width * width * r1) / (w1 + w2)
    c2 = -w2 * (r2 - radius) / (width * width * r2) / (w1 + w2)
    out[0] = c1 * e1 + c2 * e2
    for i in range(1, d):
        out[i] = (c1 + c2) * theta[i]


def reference_logz(ndim, centre=3.5, radius=2.0, width=0.1, half_width=6.0):
    """Exact for non-overlapping shells inside the box (ns-survey.md §4.2):
    lnZ = ln 2 + ln S_{d-1} + ln ∫_0^∞ ρ^(d-1) N(ρ; r, w) dρ − d ln(2·half_width), S_{d-1} = 2π^(d/2)/Γ(d/2);
    the radial integral by quadrature."""
    from scipy.special import gammaln

    if centre + radius + 4 * width > half_width or centre < radius + 4 * width:
        return None
    log_sphere = math.log(2.0) + 0.5 * ndim * math.log(math.pi) - gammaln(0.5 * ndim)

    def log_radial(rho):
        return ((ndim - 1) * math.log(rho) - 0.5 * ((rho - radius) / width) ** 2
                - 0.5 * math.log(2.0 * math.pi * width * width))

    radial = log_integral(log_radial, max(radius - 15 * width, 1e-12), radius + 15 * width)
    return math.log(2.0) + log_sphere + radial - ndim * math.log(2.0 * half_width)


def get(ndim=2, centre=3.5, radius=2.0, width=0.1):
    """Shells in ``ndim`` dimensions with the prior U[-6, 6]^ndim."""
    params = tuple(f"x{i + 1}" for i in range(ndim))
    priors = {p: ("uniform", -6.0, 6.0) for p in params}
    data = {"centre": float(centre), "radius": float(radius), "width": float(width)}
    return Builtin(NAME, kernel, gradient, params, priors, data,
                   reference_logz(ndim, centre, radius, width),
                   "exact radial formula, 1-D quadrature (matches -1.746 / -5.674 / -14.590 for d = 2 / 5 / 10)",
                   None, DESCRIPTION, {"ndim": ndim, "centre": centre, "radius": radius, "width": width},
                   check_centre=dict.fromkeys(params, 0.0) | {"x1": float(centre) - float(radius)})  # on a shell
