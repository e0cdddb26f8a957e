"""Test problems from peers' papers and suites, with evidence computed here by quadrature (no number from nestgrad).

* Neal's funnel (Neal 2003; the standard hard case of HMC and of Stan's and BlackJAX's suites): ``v ~ N(0, 3^2)``,
  ``x_i | v ~ N(0, e^v)``, its density as the likelihood on a box prior. The scale of the ``x`` changes by
  ``e^9`` along ``v``: an ill-conditioning that no single metric fixes.
* LogGamma (Beaujean & Caldwell 2013, in the UltraNest and PolyChord papers): on U(0, 1)^d, coordinate 0 is
  ``0.5 LogGamma(1, 1/3, 1/30) + 0.5 LogGamma(1, 2/3, 1/30)``, coordinate 1 ``0.5 N(1/3, 1/30) + 0.5 N(2/3,
  1/30)``, coordinates 2 .. d/2 ``LogGamma(1, 2/3, 1/30)`` and the rest ``N(2/3, 1/30)``: four modes with
  asymmetric, exponential-on-one-side tails; logZ is the product of each coordinate's mass inside [0, 1].
* The hybrid Rosenbrock distribution (Pagani, Wiegand & Nadarajah 2022, one block): ``x0 ~ N(1, 1)``,
  ``x_i | x0 ~ N(x0^2, 0.1^2)`` for ``i >= 1`` -- the 2-D Rosenbrock "banana" of dynesty's and PolyChord's examples
  with every further coordinate bent along the same parabola: curved and ill-conditioned at once (the posterior's
  local axis ratio is ~10-40 and its direction turns along the arc), so no single metric whitens it. Normalised,
  so logZ is the box's share of its mass (1-D quadrature over x0) minus the box's log-volume.
"""

import math

import numpy as np
from numba import njit
from scipy import integrate, special

from problems import Problem
from nestgrad.sampler.priors import Normal, Prior, Uniform

# --- Neal's funnel -----------------------------------------------------------------------------------------

_FUNNEL_V_SD = 3.0
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@njit
def _funnel_value(theta, data, scratch):
    v = theta[0]
    total = -0.5 * (v / _FUNNEL_V_SD) ** 2 - math.log(_FUNNEL_V_SD) - _HALF_LOG_2PI
    inv_var = math.exp(-v)
    for i in range(1, theta.shape[0]):
        total += -0.5 * theta[i] * theta[i] * inv_var - 0.5 * v - _HALF_LOG_2PI
    return total


@njit
def _funnel_value_and_grad(theta, data, grad_out, scratch):
    v = theta[0]
    inv_var = math.exp(-v)
    grad_v = -v / _FUNNEL_V_SD ** 2
    for i in range(1, theta.shape[0]):
        grad_v += 0.5 * theta[i] * theta[i] * inv_var - 0.5
        grad_out[i] = -theta[i] * inv_var
    grad_out[0] = grad_v
    return _funnel_value(theta, data, scratch)


def funnel_logz(ndim, v_half, x_half):
    """log of the funnel's mass inside the box, minus the log of the box's volume (1-D quadrature over v)."""
    def mass(v):
        density = math.exp(-0.5 * (v / _FUNNEL_V_SD) ** 2) / (_FUNNEL_V_SD * math.sqrt(2 * math.pi))
        return density * special.erf(x_half / math.sqrt(2.0 * math.exp(v))) ** (ndim - 1)

    inside, _ = integrate.quad(mass, -v_half, v_half, points=[0.0], limit=400, epsabs=0, epsrel=1e-12)
    return math.log(inside) - math.log(2 * v_half) - (ndim - 1) * math.log(2 * x_half)


def funnel_v_moments(ndim, v_half, x_half):
    """Posterior mean and standard deviation of ``v`` inside the box (the box cuts the wide end of the funnel, so
    they are not 0 and 3), by quadrature."""
    def weight(v, power):
        density = math.exp(-0.5 * (v / _FUNNEL_V_SD) ** 2)
        return v ** power * density * special.erf(x_half / math.sqrt(2.0 * math.exp(v))) ** (ndim - 1)

    m0, m1, m2 = (integrate.quad(weight, -v_half, v_half, args=(k,), limit=400, epsabs=0, epsrel=1e-12)[0]
                  for k in range(3))
    mean = m1 / m0
    return mean, math.sqrt(m2 / m0 - mean ** 2)


def funnel(ndim=5, v_half=9.0, x_half=20.0):
    """Neal's funnel in ``ndim`` dimensions (v and ndim - 1 x's) on U(-v_half, v_half) x U(-x_half, x_half)^(d-1)."""
    names = ["v"] + [f"x{i}" for i in range(1, ndim)]
    prior = Prior({"v": Uniform(-v_half, v_half), **{n: Uniform(-x_half, x_half) for n in names[1:]}})
    problem = Problem(f"funnel{ndim}d", names, _funnel_value, _funnel_value_and_grad, (np.zeros(1),), prior,
                      logz=funnel_logz(ndim, v_half, x_half))
    # The parameter whose posterior the tests check: index, mean and sd by quadrature.
    problem.watched = (0, *funnel_v_moments(ndim, v_half, x_half))
    return problem


# --- LogGamma mixture ------------------------------------------------------------------------------------------

_LG_SCALE = 1.0 / 30.0


@njit
def _log_gamma1(x, mu):
    # LogGamma(c = 1, loc mu, scale s): density exp(y - e^y) / s with y = (x - mu) / s; d/dx = (1 - e^y) / s.
    y = (x - mu) * 30.0
    return y - math.exp(y) + math.log(30.0), (1.0 - math.exp(y)) * 30.0


@njit
def _log_normal(x, mu):
    z = (x - mu) * 30.0
    return -0.5 * z * z + math.log(30.0) - 0.9189385332046727, -z * 30.0


@njit
def _mix2(a, da, b, db):
    # log(0.5 e^a + 0.5 e^b) and its derivative from the parts' values and derivatives.
    top = max(a, b)
    wa, wb = math.exp(a - top), math.exp(b - top)
    return top + math.log(0.5 * (wa + wb)), (wa * da + wb * db) / (wa + wb)


@njit
def _loggamma_terms(theta, grad_out):
    d = theta.shape[0]
    a, da = _log_gamma1(theta[0], 1.0 / 3.0)
    b, db = _log_gamma1(theta[0], 2.0 / 3.0)
    total, grad_out[0] = _mix2(a, da, b, db)
    a, da = _log_normal(theta[1], 1.0 / 3.0)
    b, db = _log_normal(theta[1], 2.0 / 3.0)
    t, grad_out[1] = _mix2(a, da, b, db)
    total += t
    for i in range(2, d):
        if i < (d + 2) // 2:
            t, g = _log_gamma1(theta[i], 2.0 / 3.0)
        else:
            t, g = _log_normal(theta[i], 2.0 / 3.0)
        total += t
        grad_out[i] = g
    return total


@njit
def _loggamma_value(theta, data, scratch):
    return _loggamma_terms(theta, np.empty(theta.shape[0]))


@njit
def _loggamma_value_and_grad(theta, data, grad_out, scratch):
    return _loggamma_terms(theta, grad_out)


def _loggamma_mass(mu):
    """Mass of LogGamma(1, mu, 1/30) inside [0, 1]: its CDF is 1 - exp(-e^y)."""
    def cdf(x):
        return -math.expm1(-math.exp((x - mu) / _LG_SCALE))
    return cdf(1.0) - cdf(0.0)


def _normal_mass(mu):
    return 0.5 * (special.erf((1.0 - mu) / (_LG_SCALE * math.sqrt(2))) - special.erf(-mu / (_LG_SCALE * math.sqrt(2))))


def loggamma_logz(ndim):
    total = math.log(0.5 * (_loggamma_mass(1 / 3) + _loggamma_mass(2 / 3)))
    total += math.log(0.5 * (_normal_mass(1 / 3) + _normal_mass(2 / 3)))
    for i in range(2, ndim):
        total += math.log(_loggamma_mass(2 / 3) if i < (ndim + 2) // 2 else _normal_mass(2 / 3))
    return total


def loggamma(ndim=4):
    """The LogGamma problem on U(0, 1)^ndim (ndim >= 2)."""
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(0.0, 1.0) for n in names})
    problem = Problem(f"loggamma{ndim}d", names, _loggamma_value, _loggamma_value_and_grad, (np.zeros(1),),
                      prior, logz=loggamma_logz(ndim))
    # Posterior mass of each of the four modes (coordinates 0 and 1 each at 1/3 or 2/3): one quarter each.
    problem.centres = np.array([[a, b] for a in (1 / 3, 2 / 3) for b in (1 / 3, 2 / 3)])
    problem.weights = np.full(4, 0.25)
    problem.mode_weights = lambda theta, w: np.array(
        [w[np.argmin(((theta[:, None, :2] - problem.centres[None]) ** 2).sum(axis=2), axis=1) == m].sum()
         for m in range(4)])
    return problem


# --- hybrid Rosenbrock ("banana") ---------------------------------------------------------------------------------

_BANANA_SD = 0.1
_BANANA_X0 = (-4.0, 6.0)      # x0's prior: +-5 of its standard deviations about its mean 1
_BANANA_XI = (-1.0, 37.0)     # the other coordinates': x0^2 reaches 36 at x0's edge


@njit
def _banana_value(theta, data, scratch):
    x0 = theta[0]
    total = -0.5 * (x0 - 1.0) ** 2 - _HALF_LOG_2PI
    x0sq = x0 * x0
    for i in range(1, theta.shape[0]):
        z = (theta[i] - x0sq) / _BANANA_SD
        total += -0.5 * z * z - math.log(_BANANA_SD) - _HALF_LOG_2PI
    return total


@njit
def _banana_value_and_grad(theta, data, grad_out, scratch):
    x0 = theta[0]
    x0sq = x0 * x0
    grad0 = -(x0 - 1.0)
    for i in range(1, theta.shape[0]):
        r = (theta[i] - x0sq) / (_BANANA_SD * _BANANA_SD)
        grad_out[i] = -r
        grad0 += 2.0 * x0 * r
    grad_out[0] = grad0
    return _banana_value(theta, data, scratch)


def banana_logz(ndim):
    """log of the banana's mass inside the box, minus the log of the box's volume (1-D quadrature over x0)."""
    lo, hi = _BANANA_XI

    def mass(x0):
        inside = special.ndtr((hi - x0 * x0) / _BANANA_SD) - special.ndtr((lo - x0 * x0) / _BANANA_SD)
        return math.exp(-0.5 * (x0 - 1.0) ** 2) / math.sqrt(2 * math.pi) * inside ** (ndim - 1)

    inside, _ = integrate.quad(mass, *_BANANA_X0, points=[1.0], limit=400, epsabs=0, epsrel=1e-12)
    return math.log(inside) - math.log(_BANANA_X0[1] - _BANANA_X0[0]) - (ndim - 1) * math.log(hi - lo)


def banana(ndim=5):
    """The hybrid Rosenbrock distribution in ``ndim`` dimensions on U(-4, 6) x U(-1, 37)^(d-1)."""
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({"x0": Uniform(*_BANANA_X0), **{n: Uniform(*_BANANA_XI) for n in names[1:]}})
    problem = Problem(f"banana{ndim}d", names, _banana_value, _banana_value_and_grad, (np.zeros(1),), prior,
                      logz=banana_logz(ndim))
    problem.watched = (0, 1.0, 1.0)  # x0's mean and sd: the box cuts its normal at +-5 sd (a 6e-7 share)
    return problem


# --- hyper-pyramid, 1/|x| spike, a likelihood far out in a normal prior's tail -------------------------------------

_PYRAMID_S = 100.0


@njit
def _pyramid_value(theta, data, scratch):
    top = 0.0
    for i in range(theta.shape[0]):
        top = max(top, abs(theta[i] - 0.5))
    return -(top ** (1.0 / _PYRAMID_S))


@njit
def _pyramid_value_and_grad(theta, data, grad_out, scratch):
    top, at = 0.0, 0
    for i in range(theta.shape[0]):
        grad_out[i] = 0.0
        if abs(theta[i] - 0.5) > top:
            top, at = abs(theta[i] - 0.5), i
    if top > 0.0:
        grad_out[at] = -(top ** (1.0 / _PYRAMID_S - 1.0)) / _PYRAMID_S * math.copysign(1.0, theta[at] - 0.5)
    return _pyramid_value(theta, data, scratch)


def pyramid_logz(ndim, s=_PYRAMID_S):
    """log Z = log(d 2^d s gamma(s d, 2^(-1/s))): the integral over the cube's half-width r = t^s of
    exp(-t) d(2r)^d; the lower incomplete gamma by its series (every term positive)."""
    a, x = s * ndim, 0.5 ** (1.0 / s)
    term = total = 1.0 / a
    k = 0
    while term > 1e-18 * total:
        k += 1
        term *= x / (a + k)
        total += term
    return math.log(ndim) + ndim * math.log(2.0) + math.log(s) + a * math.log(x) - x + math.log(total)


def pyramid(ndim=10):
    """The hyper-pyramid of Buchner (2014) and UltraNest's ``evaluate/problems.py`` with sigma 1, s = 100 on
    U(0, 1)^d: ``logL = -(max_i |x_i - 1/2|)^(1/100)``, nearly flat (H ~ 1e-5 nats), its contours cubes."""
    names = [f"x{i}" for i in range(ndim)]
    return Problem(f"pyramid{ndim}d", names, _pyramid_value, _pyramid_value_and_grad, (np.zeros(1),),
                   Prior({n: Uniform(0.0, 1.0) for n in names}), logz=pyramid_logz(ndim))


_SPIKE_FLOOR = 1e-8


@njit
def _spike_value(theta, data, scratch):
    return -math.log(max(abs(theta[0]), _SPIKE_FLOOR)) - 1e-8 * (theta[0] * theta[0] + theta[1] * theta[1])


@njit
def _spike_value_and_grad(theta, data, grad_out, scratch):
    grad_out[0] = -2e-8 * theta[0]
    if abs(theta[0]) > _SPIKE_FLOOR:
        grad_out[0] -= 1.0 / theta[0]
    grad_out[1] = -2e-8 * theta[1]
    return _spike_value(theta, data, scratch)


def spike():
    """dynesty's ``tests/test_pathology.py``: ``logL = -log max(|x0|, 1e-8) - 1e-8 |x|^2`` on U(-1, 1)^2, a spike
    over eight decades: log Z = log(1 - log 1e-8) (the quadratic term moves it by about 1e-8)."""
    return Problem("spike2d", ["x0", "x1"], _spike_value, _spike_value_and_grad, (np.zeros(1),),
                   Prior({"x0": Uniform(-1.0, 1.0), "x1": Uniform(-1.0, 1.0)}),
                   logz=math.log(1.0 - math.log(_SPIKE_FLOOR)))


@njit
def _standard_normal_value(theta, data, scratch):
    total = 0.0
    for i in range(theta.shape[0]):
        total += theta[i] * theta[i]
    return -0.5 * total - theta.shape[0] * _HALF_LOG_2PI


@njit
def _standard_normal_value_and_grad(theta, data, grad_out, scratch):
    for i in range(theta.shape[0]):
        grad_out[i] = -theta[i]
    return _standard_normal_value(theta, data, scratch)


def far_normal(ndim=4, offset=15.0):
    """jaxns's test: ``L = N(x; 0, I)`` under a normal prior ``N(offset, 1)`` per coordinate, the posterior
    ``N(offset / 2, 1/2)`` ``offset / 2`` prior sds out (u ~ 1e-14 in the unit cube at offset 15):
    log Z = log N(0; offset, 2 I) (-460.124 at d = 8)."""
    names = [f"x{i}" for i in range(ndim)]
    return Problem(f"far_normal{ndim}d", names, _standard_normal_value, _standard_normal_value_and_grad,
                   (np.zeros(1),), Prior({n: Normal(offset, 1.0) for n in names}),
                   logz=-ndim * (0.5 * math.log(4.0 * math.pi) + offset ** 2 / 4.0))


PROBLEMS = {
    "pyramid10d": pyramid,
    "spike2d": spike,
    "far_normal2d": lambda: far_normal(2),
    "far_normal4d": far_normal,
    "far_normal8d": lambda: far_normal(8),
    # Mirrored: the posterior 7.5 sds into the prior's upper tail, which float64 unit-cube values end at 8.2 sds
    # (sampler/precision.py): the posterior is cut 1.0 of its sds above its mean, and the run warns.
    "far_normal_upper2d": lambda: far_normal(2, -15.0),
    "funnel5d": funnel,
    "funnel10d": lambda: funnel(10),
    "loggamma4d": loggamma,
    "loggamma10d": lambda: loggamma(10),
    "banana3d": lambda: banana(3),
    "banana5d": banana,
    "banana10d": lambda: banana(10),
}

from peer_multimodal import PROBLEMS as _MULTIMODAL  # noqa: E402  (PolyChord's many-mode functions)

PROBLEMS.update(_MULTIMODAL)

from peer_volumes import PROBLEMS as _VOLUMES  # noqa: E402  (UltraNest's, dynesty's and PolyChord's Gaussians)

PROBLEMS.update(_VOLUMES)
