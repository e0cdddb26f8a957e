"""Linear algebra for kernels, on local arrays: Cholesky factor, triangular solves, log-determinant, and the
multivariate normal log-density built on them.

Each function is plain loops (no numpy.linalg, no allocation), so it runs as Python, under ``numba.njit`` and as
a CUDA device function, and each carries an adjoint rule (``@rule`` below): the differentiator calls the function
and, in the reverse sweep, its adjoint -- it never reads or differentiates these bodies.  That costs a d x d
Cholesky O(d^2) scratch per sample (a copy of what it overwrites) instead of the O(d^3) a kernel writing its own
Cholesky in loops stores.  Arrays that receive results (``out``, ``z``, ``work``) must be local arrays
(``np.zeros``/``np.empty`` in the kernel); the others may be local arrays or data.  Matrices are (d, d), vectors
(d,); a triangular factor ``l`` is read in its lower triangle only.

Adjoints follow docs/api.md ("Rules for functions with array arguments"): they see the arrays as they were right
after the call, add into the adjoints of what the function read, and consume (zero) the adjoints of what it
wrote; they may use the arrays the function wrote as workspace (the differentiator restores those afterwards).
The Cholesky adjoint is the symbolic one of Murray (2016), "Differentiation of the Cholesky decomposition":
Abar = Phi-sym(L^-T Phi(L^T Lbar) L^-1), computed in place in Lbar.

Non-finite results instead of exceptions: a matrix that is not positive definite gives NaN (the sampler treats
NaN as outside), also in plain Python where ``math.sqrt(-1.0)`` would raise.  Constants are made in the arrays'
own float type (``x.dtype.type(0.5)``): numba types a bare ``0.5`` as float64, which would turn a float32 build's
arithmetic into float64 on the GPU.
"""
import math

from .rules import rule

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def cholesky(a, out):
    """``out`` = the lower Cholesky factor L of the symmetric matrix ``a`` (its lower triangle is read), with
    zeros above the diagonal; NaN where ``a`` is not positive definite."""
    n = a.shape[0]
    for j in range(n):
        s = a[j, j]
        for k in range(j):
            s -= out[j, k] * out[j, k]
        if not s > 0.0:
            s = out.dtype.type(math.nan)
        d = math.sqrt(s)
        out[j, j] = d
        for i in range(j + 1, n):
            s = a[i, j]
            for k in range(j):
                s -= out[i, k] * out[j, k]
            out[i, j] = s / d
            out[j, i] = 0.0


@rule(cholesky, writes=("out",))
def cholesky_adjoint(a, out, g, a_b, out_b):
    n = out.shape[0]
    # P = Phi(L^T Lbar) into Lbar's lower triangle (Phi: lower triangle, diagonal halved).  Row i reads rows >= i
    # of Lbar, so rows can be overwritten in increasing order; Lbar's upper part is the adjoint of the zeros
    # written there, which carry nothing, so it is never read.
    zero, half = out.dtype.type(0.0), out.dtype.type(0.5)
    for i in range(n):
        for j in range(i + 1):
            s = zero
            for k in range(i, n):
                s += out[k, i] * out_b[k, j]
            out_b[i, j] = s
        out_b[i, i] *= half
    # Y = P L^-1 (lower), row by row: Y[i, :] L = P[i, :]
    for i in range(n):
        for j in range(i, -1, -1):
            s = out_b[i, j]
            for k in range(j + 1, i + 1):
                s -= out_b[i, k] * out[k, j]
            out_b[i, j] = s / out[j, j]
    # S = L^-T Y (a full matrix: its upper part goes where the zeros' adjoints were), column by column
    for j in range(n):
        for i in range(n - 1, -1, -1):
            s = out_b[i, j] if i >= j else zero
            for k in range(i + 1, n):
                s -= out[k, i] * out_b[k, j]
            out_b[i, j] = s / out[i, i]
    # a's lower triangle stands for the symmetric matrix: an off-diagonal entry moves both S_ij and S_ji
    if a_b is not None:
        for i in range(n):
            for j in range(i):
                a_b[i, j] += out_b[i, j] + out_b[j, i]
            a_b[i, i] += out_b[i, i]
    for i in range(n):
        for j in range(n):
            out_b[i, j] = 0.0


def solve_lower(l, b, out):
    """``out`` = L^-1 b (forward substitution) for the lower-triangular ``l``."""
    n = l.shape[0]
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= l[i, k] * out[k]
        out[i] = s / l[i, i]


@rule(solve_lower, writes=("out",))
def solve_lower_adjoint(l, b, out, g, l_b, b_b, out_b):
    # w = L^-T outbar, in place in outbar; then bbar += w and Lbar -= w out^T (lower)
    n = l.shape[0]
    for i in range(n - 1, -1, -1):
        s = out_b[i]
        for k in range(i + 1, n):
            s -= l[k, i] * out_b[k]
        out_b[i] = s / l[i, i]
    if b_b is not None:
        for i in range(n):
            b_b[i] += out_b[i]
    if l_b is not None:
        for i in range(n):
            for k in range(i + 1):
                l_b[i, k] -= out_b[i] * out[k]
    for i in range(n):
        out_b[i] = 0.0


def solve_lower_t(l, b, out):
    """``out`` = L^-T b (back substitution with the transpose of the lower-triangular ``l``): with
    ``solve_lower``, Sigma^-1 b for Sigma = L L^T."""
    n = l.shape[0]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= l[k, i] * out[k]
        out[i] = s / l[i, i]


@rule(solve_lower_t, writes=("out",))
def solve_lower_t_adjoint(l, b, out, g, l_b, b_b, out_b):
    # w = L^-1 outbar, in place; then bbar += w and Lbar -= out w^T (lower)
    n = l.shape[0]
    for i in range(n):
        s = out_b[i]
        for k in range(i):
            s -= l[i, k] * out_b[k]
        out_b[i] = s / l[i, i]
    if b_b is not None:
        for i in range(n):
            b_b[i] += out_b[i]
    if l_b is not None:
        for i in range(n):
            for k in range(i + 1):
                l_b[i, k] -= out[i] * out_b[k]
    for i in range(n):
        out_b[i] = 0.0


def logdet_chol(l):
    """log det(L L^T) = 2 sum log|L_ii| for a triangular factor ``l`` (-inf when one is zero)."""
    s = l.dtype.type(0.0)
    for i in range(l.shape[0]):
        d = abs(l[i, i])
        s += math.log(d) if d > 0.0 else l.dtype.type(-math.inf)
    return l.dtype.type(2.0) * s


@rule(logdet_chol, writes=())
def logdet_chol_adjoint(l, g, l_b):
    if l_b is not None:
        for i in range(l.shape[0]):
            l_b[i, i] += l.dtype.type(2.0) * g / l[i, i]


def mvn_logpdf(x, mean, l, z):
    """log N(x | mean, L L^T) for one point ``x`` (d,), ``l`` the lower Cholesky factor of the covariance (a
    Gaussian-process likelihood: ``x`` the data, ``mean`` the model).  ``z`` (a local (d,) array) receives the
    whitened residual L^-1 (x - mean)."""
    n = l.shape[0]
    quad = l.dtype.type(0.0)
    logdet = l.dtype.type(0.0)
    for i in range(n):
        s = x[i] - mean[i]
        for k in range(i):
            s -= l[i, k] * z[k]
        zi = s / l[i, i]
        z[i] = zi
        quad += zi * zi
        logdet += math.log(abs(l[i, i]))
    return l.dtype.type(-0.5) * quad - logdet - l.dtype.type(n * _HALF_LOG_2PI)


@rule(mvn_logpdf, writes=("z",))
def mvn_logpdf_adjoint(x, mean, l, z, g, x_b, mean_b, l_b, z_b):
    # The total adjoint of z is zeta = zbar - g z; with v = L^-T zeta: rbar = v (r = x - mean) and
    # Lbar -= v z^T (lower), plus -g / L_jj from the log-determinant.  v is found from its last entry back;
    # the outer product's row j needs z_0..z_j, still in place then, and v_j replaces z_j after it.
    n = l.shape[0]
    for j in range(n - 1, -1, -1):
        zeta = -g * z[j]
        if z_b is not None:
            zeta += z_b[j]
        for m in range(j + 1, n):
            zeta -= l[m, j] * z[m]
        vj = zeta / l[j, j]
        if l_b is not None:
            for k in range(j + 1):
                l_b[j, k] -= vj * z[k]
            l_b[j, j] -= g / l[j, j]
        z[j] = vj
    for i in range(n):
        if x_b is not None:
            x_b[i] += z[i]
        if mean_b is not None:
            mean_b[i] -= z[i]
        if z_b is not None:
            z_b[i] = 0.0


def mvn_logpdf_rows(x, mean, l, work):
    """sum over the rows of ``x`` (n, d) of log N(x_i | mean, L L^T).  ``work`` is a local (d, d) array for the
    function's own use: reading it after the call is not supported (the gradient would be NaN).

    Through the residuals' scatter matrix R = sum_i r_i r_i^T (r_i = x_i - mean): the value needs
    tr(L^-1 R L^-T), so one pass over the data, and the adjoint reads M = L^-1 R L^-T (left in ``work``) and
    the residuals' sum: its cost hardly depends on n."""
    n, d = x.shape[0], l.shape[0]
    if work.itemsize < 8:
        # a float32 build: each entry's sum over the rows in a float64 number (one pass per entry). Summed in the
        # float32 work array, 1e5 rows put the value 1 nat off and the L-gradient, a difference of two terms of
        # order n, 3% off
        for j in range(d):
            for k in range(j + 1):
                total = 0.0
                for i in range(n):
                    total += (x[i, j] - mean[j]) * (x[i, k] - mean[k])
                work[j, k] = total
    else:
        for j in range(d):
            for k in range(d):
                work[j, k] = 0.0
        for i in range(n):
            for j in range(d):
                rj = x[i, j] - mean[j]
                for k in range(j + 1):
                    work[j, k] += rj * (x[i, k] - mean[k])
    for j in range(d):
        for k in range(j + 1, d):
            work[j, k] = work[k, j]
    # M = L^-1 R L^-T in place: columns of L^-1 R, then rows of (L^-1 R) L^-T
    for c in range(d):
        for i in range(d):
            s = work[i, c]
            for k in range(i):
                s -= l[i, k] * work[k, c]
            work[i, c] = s / l[i, i]
    trace, logdet = l.dtype.type(0.0), l.dtype.type(0.0)
    for r in range(d):
        for i in range(d):
            s = work[r, i]
            for k in range(i):
                s -= l[i, k] * work[r, k]
            work[r, i] = s / l[i, i]
        trace += work[r, r]
        logdet += math.log(abs(l[r, r]))
    return l.dtype.type(-0.5) * trace - l.dtype.type(n) * (logdet + l.dtype.type(d * _HALF_LOG_2PI))


@rule(mvn_logpdf_rows, writes=("work",))
def mvn_logpdf_rows_adjoint(x, mean, l, work, g, x_b, mean_b, l_b, work_b):
    n, d = x.shape[0], l.shape[0]
    poison = l.dtype.type(0.0)  # work's contents after the call are not differentiated: using them gives NaN
    if work_b is not None:
        for j in range(d):
            for k in range(d):
                if work_b[j, k] != 0.0:
                    poison = l.dtype.type(math.nan)
                work_b[j, k] = 0.0
    # Lbar += g tril(L^-T M) - g n diag(1/L_jj): L^-T M column by column, in place (M is symmetric)
    for c in range(d):
        for i in range(d - 1, -1, -1):
            s = work[i, c]
            for k in range(i + 1, d):
                s -= l[k, i] * work[k, c]
            work[i, c] = s / l[i, i]
    if l_b is not None:
        for j in range(d):
            for k in range(j + 1):
                l_b[j, k] += g * work[j, k] + poison
            l_b[j, j] -= g * l.dtype.type(n) / l[j, j]
    # meanbar = g Sigma^-1 sum_i r_i (t = 0) and xbar_i = -g Sigma^-1 r_i (t = i + 1): row 0 of work holds each
    # vector in turn (one loop, written out: a compiled function cannot call a plain Python helper)
    for t in range(0 if mean_b is not None else 1, n + 1 if x_b is not None else 1):
        for j in range(d):  # the residuals' sum (t = 0) in a float64 number, as the scatter above
            total = 0.0
            for i in range(0 if t == 0 else t - 1, n if t == 0 else t):
                total += x[i, j] - mean[j]
            work[0, j] = total
        for i in range(d):
            s = work[0, i]
            for k in range(i):
                s -= l[i, k] * work[0, k]
            work[0, i] = s / l[i, i]
        for i in range(d - 1, -1, -1):
            s = work[0, i]
            for k in range(i + 1, d):
                s -= l[k, i] * work[0, k]
            work[0, i] = s / l[i, i]
        for j in range(d):  # (`is not None` tests, which numba decides while compiling, guard every use)
            if t == 0:
                if mean_b is not None:
                    mean_b[j] += g * work[0, j] + poison
            elif x_b is not None:
                x_b[t - 1, j] -= g * work[0, j] - poison
