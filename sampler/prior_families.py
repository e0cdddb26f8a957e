"""Numba unit-cube transforms of every prior family: ``theta = F^-1(u)`` and its derivative ``dtheta/du``.

This is the compiled half of the prior-family registry in :mod:`sampler.priors`: each registered family names
its branch of :func:`transform_one` (its ``code``, one of the constants below) and fills that branch's row of
arguments (its ``row()``). Several families may share a branch (any tabulated quantile uses ``TABLE``); a
family whose quantile no branch computes adds one branch here.

:func:`transform_one` reads a prior encoded as integer codes and a float argument table (``Prior.codes``,
``Prior.args``) so that the fused HMC kernel can map unit-cube points to physical parameters without calling
Python. The classes in :mod:`sampler.priors` use the same code path (through :func:`transform_many`), so there
is exactly one implementation of every inverse CDF.

Argument-table layout per parameter (row of ``args``): ``args[i, 0:4]`` are the family's parameters;
table-based families (Beta) store their quantile table from column ``TABLE_START`` on.
"""

import math

import numpy as np
from numba import njit, prange

# Branches of transform_one (a family's ``code``); BRANCHES counts them.
UNIFORM, LOGUNIFORM, NORMAL, TRUNCNORMAL, LOGNORMAL, HALFNORMAL, EXPONENTIAL, CAUCHY, TABLE = range(9)
BRANCHES = 9
TABLE_START = 4
# Knots of a tabulated quantile function (exact endpoints; see quantile_table for their placement).
TABLE_SIZE = 4097

_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)

# Acklam's rational approximation of the normal quantile (relative error 1.15e-9), refined below by one
# Halley step using erfc, which brings it to full double precision.
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
      1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
      6.680131188771972e01, -1.328068155288572e01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
      -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
_P_LOW = 0.02425


@njit(cache=True, error_model="numpy")
def ndtr(x):
    """Standard normal CDF."""
    return 0.5 * math.erfc(-x / _SQRT2)


@njit(cache=True, error_model="numpy")
def ndtri(p):
    """Standard normal quantile; -inf at 0, +inf at 1, NaN outside [0, 1]."""
    if not (p >= 0.0 and p <= 1.0):
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    if p < _P_LOW:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / \
            ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0)
    elif p <= 1.0 - _P_LOW:
        q = p - 0.5
        r = q * q
        x = (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q / \
            (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
    else:
        q = math.sqrt(-2.0 * math.log1p(-p))
        x = -(((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / \
            ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0)
    # Halley refinement; the error is measured on the nearer tail so that it keeps its relative precision.
    if p < 0.5:
        e = 0.5 * math.erfc(-x / _SQRT2) - p
    else:
        e = (1.0 - p) - 0.5 * math.erfc(x / _SQRT2)  # Phi(x) - p; 1 - p is exact for p >= 0.5
    if 0.5 * x * x > 700.0:  # p subnormal (below 4e-309): exp overflows; the approximation's 1e-9 stands
        return x
    u = e * _SQRT2PI * math.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)


@njit(cache=True, error_model="numpy")
def _normal_jac(z):
    # d ndtri(p) / dp = 1 / phi(z)
    return _SQRT2PI * math.exp(0.5 * z * z)


@njit(cache=True, error_model="numpy")
def transform_one(codes, args, u, theta_out, jac_out):
    """Map one unit-cube point ``u`` (d,) to ``theta_out`` (d,) and the diagonal ``dtheta/du`` to ``jac_out``."""
    for i in range(u.shape[0]):
        c = codes[i]
        x = u[i]
        a0 = args[i, 0]
        a1 = args[i, 1]
        if c == UNIFORM:  # low, high
            theta = a0 + (a1 - a0) * x
            jac = a1 - a0
        elif c == LOGUNIFORM:  # low, high (args[i, 2] = log(high / low))
            if args[i, 2] < 700.0:
                theta = a0 * math.exp(args[i, 2] * x)
            else:  # high / low above 1e304: exp(log(high / low) u) overflows before the product with low
                theta = math.exp(math.log(a0) + args[i, 2] * x)
            jac = theta * args[i, 2]
        elif c == NORMAL:  # mu, sigma
            z = ndtri(x)
            theta = a0 + a1 * z
            jac = a1 * _normal_jac(z)
        elif c == TRUNCNORMAL:  # mu, s, cdf, mass: theta = mu + s Phi^-1(cdf + mass w), w = u (s > 0) or 1 - u
            w = x if a1 > 0.0 else 1.0 - x
            z = ndtri(args[i, 2] + args[i, 3] * w)
            theta = a0 + a1 * z
            jac = abs(a1) * args[i, 3] * _normal_jac(z)
        elif c == LOGNORMAL:  # mu, sigma of log(theta)
            z = ndtri(x)
            theta = math.exp(a0 + a1 * z)
            jac = theta * a1 * _normal_jac(z)
        elif c == HALFNORMAL:  # sigma
            z = ndtri(0.5 + 0.5 * x)
            theta = a0 * z
            jac = 0.5 * a0 * _normal_jac(z)
        elif c == EXPONENTIAL:  # scale
            theta = -a0 * math.log1p(-x)
            jac = a0 / (1.0 - x)
        elif c == CAUCHY:  # loc, scale
            t = math.pi * (x - 0.5)
            theta = a0 + a1 * math.tan(t)
            ct = math.cos(t)
            jac = a1 * math.pi / (ct * ct)
        elif c == TABLE:  # quantile table on a grid uniform in s = acos(1 - 2u) / pi, linear in s
            n = TABLE_SIZE - 1
            if not (x >= 0.0 and x <= 1.0):
                theta = math.nan
                jac = math.nan
            else:
                pos = math.acos(1.0 - 2.0 * x) / math.pi * n
                k = min(int(pos), n - 1)
                lo = args[i, TABLE_START + k]
                hi = args[i, TABLE_START + k + 1]
                theta = lo + (hi - lo) * (pos - k)
                jac = (hi - lo) * n / (math.pi * math.sqrt(x * (1.0 - x)))
        else:
            theta = math.nan
            jac = math.nan
        theta_out[i] = theta
        jac_out[i] = jac


@njit(parallel=True, cache=True, error_model="numpy")
def transform_batch(codes, args, us, thetas_out, jacs_out):
    """:func:`transform_one` over the rows of ``us`` (B, d), rows spread over threads."""
    for b in prange(us.shape[0]):
        transform_one(codes, args, us[b], thetas_out[b], jacs_out[b])


@njit(cache=True, error_model="numpy")
def transform_rows(codes, args, us, thetas_out, jacs_out):
    """:func:`transform_one` over the rows of ``us`` (B, d) on the calling thread (the same numbers)."""
    for b in range(us.shape[0]):
        transform_one(codes, args, us[b], thetas_out[b], jacs_out[b])


def compiled_signatures():
    """``[(dispatcher, signature)]`` of the row transform as the sampler calls it (see
    ``sampler.clustering.compiled_signatures``)."""
    from numba import float64, int64

    return [(transform_rows, (int64[::1], float64[:, ::1], float64[:, ::1], float64[:, ::1], float64[:, ::1]))]


# Below this many rows the transform runs on the calling thread. Waking the thread pool for a few rows cost 0.8 ms
# for 24 rows and 8 ms for one (OpenMP layer, 2 cores, the other busy) against microseconds of work: the
# sampler's contour tests transform a few dozen points at a time, and spent more time there than in the chains.
PARALLEL_ROWS = 4096


def transform_many(codes, args, us, thetas_out, jacs_out):
    """:func:`transform_one` over the rows of ``us`` (B, d), on threads only where there are enough rows."""
    (transform_batch if us.shape[0] >= PARALLEL_ROWS else transform_rows)(codes, args, us, thetas_out, jacs_out)


def quantile_table(ppf) -> np.ndarray:
    """Tabulate a quantile function (scipy, outside hot loops) on ``TABLE_SIZE`` knots uniform in
    ``s = acos(1 - 2u) / pi``: the knots crowd towards u = 0 and 1 (spacing ~ sqrt(u)), where quantiles of
    densities that vanish at an end are steep, and the knot of any u is found in O(1)."""
    s = np.linspace(0.0, 1.0, TABLE_SIZE)
    grid = 0.5 * (1.0 - np.cos(np.pi * s))
    grid[0], grid[-1] = 0.0, 1.0
    table = np.asarray(ppf(grid), dtype=np.float64)
    if not np.all(np.isfinite(table)) or np.any(np.diff(table) < 0):
        raise ValueError("the quantile table is not finite and monotone on [0, 1]")
    return table
