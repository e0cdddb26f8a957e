"""Cross-check of gradients: AD vs central finite differences vs an analytic gradient, in float64.

Finite differences use the five-point stencil on the user's own plain-Python kernel, so they depend neither
on ``ad`` nor on numba; a wrong AD gradient or a wrong analytic gradient both show up as a large relative
error against them.
"""

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

FD_TOLERANCE = 2e-5        # five-point differences in float64 agree to ~1e-9 on smooth kernels
ANALYTIC_TOLERANCE = 1e-7  # AD and a hand-derived formula differ only by summation order


def finite_difference(fn, theta, consts, rel_step=1e-4):
    """Five-point central differences of ``fn(theta, *consts)`` in float64, step ``rel_step·max(|θ_j|, 0.01)``."""
    theta = np.array(theta, dtype=np.float64)
    grad = np.empty_like(theta)
    for j in range(theta.size):
        h = rel_step * max(abs(theta[j]), 1e-2)
        values = []
        for shift in (-2.0, -1.0, 1.0, 2.0):
            moved = theta.copy()
            moved[j] += shift * h
            values.append(float(fn(moved, *consts)))
        grad[j] = (values[0] - 8.0 * values[1] + 8.0 * values[2] - values[3]) / (12.0 * h)
    return grad


def relative_error(a, b):
    """Per-component ``|a - b| / max(|a|, |b|, floor)``, rows = points; the floor (1e-3 of the row's largest
    component, at least 1e-8) stops components that are zero up to rounding from dominating."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    floor = np.maximum(1e-3 * np.max(np.abs(b), axis=1, keepdims=True), 1e-8)
    err = np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), floor)
    return np.where(np.isnan(err), np.inf, err)


@dataclass
class GradientReport:
    """Result of :meth:`Likelihood.check_gradient`.

    params, thetas (n, ndim) the points checked, values (n,) logL there; ad, fd, analytic (n, ndim) gradients
    (analytic None when no analytic gradient was given); ad_vs_fd, analytic_vs_fd, ad_vs_analytic (ndim,)
    worst relative error per parameter over the points (None when not applicable); skipped: points with a
    non-finite logL (no gradient to check); ok: every comparison within its tolerance.
    """

    params: tuple
    thetas: np.ndarray
    values: np.ndarray
    ad: np.ndarray
    fd: np.ndarray
    analytic: Optional[np.ndarray]
    skipped: int = 0
    ad_vs_fd: Optional[np.ndarray] = None
    analytic_vs_fd: Optional[np.ndarray] = None
    ad_vs_analytic: Optional[np.ndarray] = None
    ok: bool = False

    @classmethod
    def build(cls, params, thetas, values, ad, fd, analytic=None):
        finite = np.isfinite(values)
        report = cls(tuple(params), thetas, values, ad, fd, analytic, skipped=int((~finite).sum()))
        if not finite.any():
            return report  # nothing could be checked: not ok
        report.ad_vs_fd = relative_error(ad[finite], fd[finite]).max(axis=0)
        checks = [np.all(report.ad_vs_fd <= FD_TOLERANCE)]
        if analytic is not None:
            report.analytic_vs_fd = relative_error(analytic[finite], fd[finite]).max(axis=0)
            report.ad_vs_analytic = relative_error(ad[finite], analytic[finite]).max(axis=0)
            checks += [np.all(report.analytic_vs_fd <= FD_TOLERANCE),
                       np.all(report.ad_vs_analytic <= ANALYTIC_TOLERANCE)]
        report.ok = bool(all(checks))
        return report

    def table(self):
        columns = [("AD vs FD", self.ad_vs_fd, FD_TOLERANCE)]
        if self.analytic is not None:
            columns += [("analytic vs FD", self.analytic_vs_fd, FD_TOLERANCE),
                        ("AD vs analytic", self.ad_vs_analytic, ANALYTIC_TOLERANCE)]
        width = max([9] + [len(p) for p in self.params])
        lines = [f"{'parameter':<{width}}" + "".join(f"  {name:>16}" for name, _, _ in columns)]
        for j, param in enumerate(self.params):
            cells = []
            for _, errors, tol in columns:
                if errors is None:
                    cells.append(f"  {'-':>16}")
                else:
                    flag = " " if errors[j] <= tol else "!"
                    cells.append(f"  {_fmt(errors[j]):>15}{flag}")
            lines.append(f"{param:<{width}}" + "".join(cells))
        checked = len(self.values) - self.skipped
        verdict = "OK" if self.ok else "FAILED"
        lines.append(f"{verdict}: worst relative error per parameter over {checked} point(s)"
                     + (f", {self.skipped} skipped (logL not finite)" if self.skipped else "")
                     + f"; tolerances FD {FD_TOLERANCE:g}, analytic {ANALYTIC_TOLERANCE:g}; '!' marks a failure")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def _fmt(value):
    return "inf" if math.isinf(value) else f"{value:.2e}"
