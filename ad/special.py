"""Special functions for likelihood kernels, written in the kernel subset of Python.

Why this module exists: ``math`` has ``lgamma`` but neither numba (CPU) nor libdevice (CUDA) has a digamma,
trigamma or polygamma, and ``scipy.special`` cannot be called from numba-compiled or CUDA code. Yet the
derivative of ``lgamma(nu)`` with respect to an active ``nu`` (Student-t, negative binomial) is ``digamma(nu)``,
and the derivative of that is ``trigamma``. The remaining functions are the numerically stable forms kernels
need all the time (log-sum-exp of two terms, softplus, logistic, ``x*log(y)`` with ``0*log(0) = 0``, log-Beta).

Every function here is plain Python in the kernel subset: scalar float arguments, local variables, fixed-count
``for ... in range`` loops, ``if/elif/else``, ``math.*`` calls and one ``return`` at the end. That is what lets
the same text be compiled by ``numba.njit``, by ``numba.cuda.jit(device=True)`` (each function is
self-contained: no calls to other functions, so ``numba.cuda.compile_ptx`` works without a GPU) and inlined by
the differentiator into generated kernels. Derivative rules live in ``ad.rules``.

Functions
---------
digamma(x)     psi(x) = d lgamma(x)/dx. NaN at negative integers, -inf at 0 (as scipy.special.digamma at +0).
trigamma(x)    psi'(x) = polygamma(1, x). +inf at non-positive integers (a double pole).
tetragamma(x)  psi''(x) = polygamma(2, x), the derivative of trigamma. -inf at 0, NaN at negative integers.
logaddexp(a, b)  log(exp(a) + exp(b)) without overflow; logaddexp(-inf, -inf) = -inf.
log1pexp(x)    log(1 + exp(x)) (softplus) for any x without overflow or loss of small values.
expit(x)       1 / (1 + exp(-x)), the logistic sigmoid and derivative of log1pexp.
xlogy(x, y)    x * log(y), defined as 0 when x == 0 (unless y is NaN), as scipy.special.xlogy.
lbeta(a, b)    log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b), with a Stirling form for large arguments.

Method for the polygamma family: for x < 0 the reflection formulas move the argument to 1 - x > 1 (the
trigonometric term uses the argument reduced to [-1/2, 1/2), which keeps it exact for large |x|); the
recurrence psi(x) = psi(x + 1) - 1/x moves it to >= 10, where the asymptotic (Bernoulli) series with eight
terms is accurate to ~1e-17. Near the positive root of digamma (x0 = 1.4616...) that sum cancels, so there a
Taylor series in (x - x0) keeps the relative error at rounding level. Relative error vs scipy.special is
below 1e-12 on [1e-3, 1e4]; for x < 0 the error is relative to the size of the reflected terms (near the
negative roots of digamma and tetragamma the function itself is ill-conditioned).
"""
import math


def digamma(x):
    result = math.nan
    if x == 0.0:
        result = -math.inf
    elif x < 0.0 and (x < -4.5e15 or x == math.floor(x)):
        # every float below -2**52 is an integer; math.floor of -inf would raise in plain Python
        result = math.nan
    elif x == x:
        y = x
        reflection = 0.0
        if x < 0.0:
            # psi(x) = psi(1 - x) - pi cos(pi x) / sin(pi x); period 1, so reduce the argument exactly first
            r = x - math.floor(x + 0.5)
            # cos(pi r) as sin(pi (1/2 - |r|)): exactly 0 at half-integers, where cos(pi/2) is not
            reflection = math.pi * math.sin(math.pi * (0.5 - math.fabs(r))) / math.sin(math.pi * r)
            y = 1.0 - x
        d = y - 1.4616321449683622
        if math.fabs(d) < 0.1:
            # Taylor series around the positive root: coefficients (-1)**(n+1) * zeta(n + 1, x0)
            psi = -9.2412655217294275e-17 + d * (
                0.9676722454476214 + d * (-0.44276316898359214 + d * (0.2584997609556512 + d * (
                    -0.16394270544240658 + d * (0.10782405069126239 + d * (-0.07219956125645476 + d * (
                        0.048804288164143145 + d * (-0.033161126474847376 + d * (0.022597648232218125 + d * (
                            -0.015424765904948968 + d * (0.010538791616612182 + d * (-0.007204534386356875 + d * (
                                0.004926781395729858 + d * (-0.0033698016554393317 + d * (
                                    0.00230512632673493 + d * (-0.0015769367714301987))))))))))))))))
        else:
            shift = 0.0
            for i in range(10):
                if y < 10.0:
                    shift += 1.0 / y
                    y += 1.0
            z = 1.0 / (y * y)
            # sum_k B_2k / (2k y^2k), k = 1..8
            tail = z * (1.0 / 12.0 + z * (-1.0 / 120.0 + z * (1.0 / 252.0 + z * (-1.0 / 240.0 + z * (
                1.0 / 132.0 + z * (-691.0 / 32760.0 + z * (1.0 / 12.0 + z * (-3617.0 / 8160.0))))))))
            psi = math.log(y) - 0.5 / y - tail - shift
        result = psi - reflection
    return result


def trigamma(x):
    result = math.nan
    if x <= 0.0 and (x < -4.5e15 or x == math.floor(x)):
        # double pole at 0 and at every negative integer: +inf from both sides
        result = math.inf
    elif x == x:
        y = x
        reflection = 0.0
        sign = 1.0
        if x < 0.0:
            # psi1(x) = pi^2 / sin^2(pi x) - psi1(1 - x)
            r = x - math.floor(x + 0.5)
            s = math.sin(math.pi * r)
            reflection = math.pi * math.pi / (s * s)
            sign = -1.0
            y = 1.0 - x
        shift = 0.0
        for i in range(10):
            if y < 10.0:
                shift += 1.0 / (y * y)
                y += 1.0
        w = 1.0 / y
        z = w * w
        # 1/y + 1/(2 y^2) + sum_k B_2k / y^(2k+1), k = 1..8
        tail = w * z * (1.0 / 6.0 + z * (-1.0 / 30.0 + z * (1.0 / 42.0 + z * (-1.0 / 30.0 + z * (
            5.0 / 66.0 + z * (-691.0 / 2730.0 + z * (7.0 / 6.0 + z * (-3617.0 / 510.0))))))))
        psi1 = w + 0.5 * z + tail + shift
        result = reflection + sign * psi1
    return result


def tetragamma(x):
    # the pole test and the argument reduction repeat digamma's on purpose: a call to a shared function would
    # make numba.cuda.compile_ptx of this device function need a GPU driver (see the module docstring)
    result = math.nan
    if x == 0.0:
        result = -math.inf
    elif x < 0.0 and (x < -4.5e15 or x == math.floor(x)):
        # odd-order pole: the sign differs on the two sides, so there is no limit
        result = math.nan
    elif x == x:
        y = x
        reflection = 0.0
        if x < 0.0:
            # psi2(x) = psi2(1 - x) - 2 pi^3 cos(pi x) / sin^3(pi x)
            r = x - math.floor(x + 0.5)
            s = math.sin(math.pi * r)
            c = math.sin(math.pi * (0.5 - math.fabs(r)))  # cos(pi r), exactly 0 at half-integers
            reflection = 2.0 * math.pi * math.pi * math.pi * c / (s * s * s)
            y = 1.0 - x
        shift = 0.0
        for i in range(10):
            if y < 10.0:
                shift += 2.0 / (y * y * y)
                y += 1.0
        w = 1.0 / y
        z = w * w
        # -1/y^2 - 1/y^3 - sum_k (2k+1) B_2k / y^(2k+2), k = 1..8
        tail = z * z * (0.5 + z * (-1.0 / 6.0 + z * (1.0 / 6.0 + z * (-0.3 + z * (
            5.0 / 6.0 + z * (-691.0 / 210.0 + z * (17.5 + z * (-3617.0 / 30.0))))))))
        psi2 = -z - z * w - tail - shift
        result = psi2 - reflection
    return result


def logaddexp(a, b):
    result = a + b
    if a == b:
        # covers -inf, -inf (and +inf, +inf), where a - b would be NaN
        result = a + 0.6931471805599453
    elif a > b:
        result = a + math.log1p(math.exp(b - a))
    elif b > a:
        result = b + math.log1p(math.exp(a - b))
    return result


def log1pexp(x):
    result = x
    if x <= -37.0:
        # log1p(e) == e to double precision here
        result = math.exp(x)
    elif x <= 18.0:
        result = math.log1p(math.exp(x))
    elif x <= 33.3:
        result = x + math.exp(-x)
    return result


def expit(x):
    result = 0.0
    if x >= 0.0:
        result = 1.0 / (1.0 + math.exp(-x))
    else:
        # exp(x) cannot overflow for x < 0, and e / (1 + e) keeps tiny values
        e = math.exp(x)
        result = e / (1.0 + e)
    return result


def xlogy(x, y):
    result = x * y
    if x == 0.0 and y == y:
        result = 0.0
    elif y == 0.0:
        # log(0) raises in plain Python; the limit is -inf (times the sign of x)
        result = x * -math.inf
    else:
        result = x * math.log(y)
    return result


def lbeta(a, b):
    big = a
    small = b
    if b > a:
        big = b
        small = a
    result = 0.0
    if big >= 10.0 and small > 0.0:
        # lgamma(big) - lgamma(big + small) by Stirling's series, written so that the two large
        # (big - 0.5) log(big) terms cancel analytically instead of numerically; eight terms of the
        # remainder omega(z) = sum_k B_2k / (2k (2k - 1) z^(2k - 1)) leave an error below 1e-18 for z >= 10
        t = big + small
        wb = 1.0 / big
        wt = 1.0 / t
        zb = wb * wb
        zt = wt * wt
        omega_b = wb * (1.0 / 12.0 + zb * (-1.0 / 360.0 + zb * (1.0 / 1260.0 + zb * (-1.0 / 1680.0 + zb * (
            1.0 / 1188.0 + zb * (-691.0 / 360360.0 + zb * (1.0 / 156.0 + zb * (-3617.0 / 122400.0))))))))
        omega_t = wt * (1.0 / 12.0 + zt * (-1.0 / 360.0 + zt * (1.0 / 1260.0 + zt * (-1.0 / 1680.0 + zt * (
            1.0 / 1188.0 + zt * (-691.0 / 360360.0 + zt * (1.0 / 156.0 + zt * (-3617.0 / 122400.0))))))))
        ratio = -(big - 0.5) * math.log1p(small / big) - small * math.log(t) + small + (omega_b - omega_t)
        result = math.lgamma(small) + ratio
    else:
        result = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    return result

