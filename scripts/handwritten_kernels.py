"""Hand-written numba kernels: the yardstick the benchmark scripts hold generated gradients against.

Each is what a careful person would write by hand for value + gradient in one pass: shared subexpressions
computed once, reductions fused, nothing allocated. They are deliberately independent of ``ad`` (and of
``likelihoods``) so a bug there cannot flatter the comparison. Kernels are built per dtype by factories so that
float32 code stays in float32: numba types a Python float literal as float64, but a closure constant of type
``np.float32`` as float32.
"""
import math

import numba
import numpy as np

# What DESIGN.md recommends for likelihood kernels: vectorised reductions, but NaN/inf checks kept (no nnan/ninf)
FASTMATH = {"reassoc", "contract", "arcp", "nsz", "afn"}


def poisson_logpmf(theta, c):
    """The Poisson seed kernel of the AD corpus, in plain Python: log-pmf of counts ``c`` at rate ``theta[0]``."""
    lam = theta[0]
    s = 0.0
    for i in range(c.shape[0]):
        s += c[i] * math.log(lam) - lam - math.lgamma(c[i] + 1.0)
    return s


def gauss4d(theta, x):
    """DESIGN.md's 4-parameter Gaussian over 2-D data, in plain Python (the input to the differentiator)."""
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    quad = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        quad += d1 * d1 + d2 * d2
    return -0.5 * quad - n * (math.log(s1) + math.log(s2)) - n * math.log(2.0 * math.pi)


def make_poisson_value_and_grad(fastmath=False):
    """njit ``value_and_grad(theta, c, grad_out) -> float`` for ``poisson_logpmf``.

    By hand: log(lam) once, the count sum fused into the value loop, d/dlam = sum(c) / lam - n.
    """
    @numba.njit(fastmath=fastmath)
    def poisson_value_and_grad(theta, c, grad_out):
        lam = theta[0]
        log_lam = math.log(lam)
        total = 0.0
        count_sum = 0.0
        n = c.shape[0]
        for i in range(n):
            total += c[i] * log_lam - math.lgamma(c[i] + 1.0)
            count_sum += c[i]
        grad_out[0] = count_sum / lam - n
        return total - n * lam

    return poisson_value_and_grad


def make_gauss4d_kernels(dtype, fastmath=None):
    """Per-sample ``value_and_grad(theta, x, grad_out)`` and batched ``(thetas, x, out, grad_out)``, all in ``dtype``.

    By hand: one pass over the data accumulating sum(d), sum(d^2) per dimension, divisions replaced by a
    multiplication with the reciprocal.
    """
    fastmath = set(FASTMATH) if fastmath is None else fastmath  # numba wants a set (not frozenset) or a bool
    dtype = np.dtype(dtype).type
    zero, half, one = dtype(0.0), dtype(0.5), dtype(1.0)
    log_two_pi = dtype(math.log(2.0 * math.pi))

    @numba.njit(fastmath=fastmath)
    def value_and_grad(theta, x, grad_out):
        mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
        inv1 = one / s1
        inv2 = one / s2
        n = x.shape[1]
        sum1 = zero
        sum2 = zero
        sq1 = zero
        sq2 = zero
        for i in range(n):
            d1 = (x[0, i] - mu1) * inv1
            d2 = (x[1, i] - mu2) * inv2
            sum1 += d1
            sum2 += d2
            sq1 += d1 * d1
            sq2 += d2 * d2
        nf = dtype(n)
        grad_out[0] = sum1 * inv1
        grad_out[1] = sum2 * inv2
        grad_out[2] = (sq1 - nf) * inv1
        grad_out[3] = (sq2 - nf) * inv2
        return -half * (sq1 + sq2) - nf * (math.log(s1) + math.log(s2)) - nf * log_two_pi

    @numba.njit(fastmath=fastmath, parallel=True)
    def batch_value_and_grad(thetas, x, out, grad_out):
        for b in numba.prange(thetas.shape[0]):
            out[b] = value_and_grad(thetas[b], x, grad_out[b])

    return value_and_grad, batch_value_and_grad
