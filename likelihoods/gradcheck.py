"""Cross-check of a likelihood's gradients at many points: AD vs finite differences vs an analytic gradient.

Every point is checked by ``ad.check.check_gradient`` (the one checker: adaptive-step Ridders differences on the
user's own plain-Python kernel in float64, independent of numba); this module gathers the points into a
:class:`GradientReport` with the worst error per parameter and the tolerances below.
"""

import inspect
import math
import traceback
from dataclasses import dataclass
from typing import Optional

import numpy as np

from nestgrad.ad import check

from .errors import KernelRaisedError

FD_TOLERANCE = 2e-5        # adaptive differences agree to ~1e-9 on smooth kernels; room for long sums
ANALYTIC_TOLERANCE = 1e-7  # AD and a hand-derived formula differ only by summation order
_MATH_ERRORS = (ValueError, OverflowError, ZeroDivisionError)


def check_points(fn, derivative, params, thetas, data, analytic=None):
    """:class:`GradientReport` of ``derivative`` (pure-Python ``value_and_grad``) against finite differences of
    ``fn(theta, *data)`` and ``analytic(theta, *data, out)`` at each row of ``thetas``. A point where the
    value or the differences are not finite (the edge of the kernel's domain) is skipped."""
    thetas = np.asarray(thetas, dtype=np.float64)
    n, d = thetas.shape
    values, ad, fd, atol = np.full(n, np.nan), np.full((n, d), np.nan), np.full((n, d), np.nan), np.ones((n, d))
    exact = None if analytic is None else np.full((n, d), np.nan)
    wrt = next(iter(inspect.signature(fn).parameters))
    row = np.empty(d)
    with np.errstate(all="ignore"):
        for i, theta in enumerate(thetas):
            try:
                values[i] = derivative.value_and_grad(theta, *data, row)
            except _MATH_ERRORS as raised:
                if _finite_value(fn, theta, data):  # not the domain's edge: the derivative's own fault
                    _name_the_failure(getattr(derivative, "gradient", None) or fn, raised, theta, params)
                values[i] = np.nan
            ad[i] = row
            if not np.isfinite(values[i]):
                continue
            if analytic is not None:
                try:
                    analytic(theta.copy(), *data, np.empty(d))
                except Exception as raised:  # noqa: BLE001 - whatever the user's code raises is the report
                    _name_the_failure(analytic, raised, theta, params)
            try:
                result = check.check_gradient(fn, theta, *data, analytic=analytic, wrt=wrt, rtol=FD_TOLERANCE,
                                              derivative=derivative, names=params)
            except _MATH_ERRORS:
                continue  # no finite differences here: counted as skipped
            fd[i], atol[i] = result.fd, result.atol_scale
            if exact is not None:
                exact[i] = result.analytic
    return GradientReport.build(params, thetas, values, ad, fd, exact, atol=atol)


def _finite_value(fn, theta, data) -> bool:
    try:
        return bool(np.isfinite(fn(theta.copy(), *data)))
    except Exception:  # noqa: BLE001 - the kernel itself fails here: the edge of its domain
        return False


def _name_the_failure(function, raised, theta, params):
    """Raise :class:`KernelRaisedError` at the line of ``function`` (a hand-written gradient) that raised where
    the kernel's value is finite. The loop above counts math errors as the edge of the kernel's domain; without
    this, a gradient that always raises was reported as every point skipped."""
    frames = traceback.extract_tb(raised.__traceback__)
    source = getattr(getattr(function, "__code__", None), "co_filename", None)
    frame = ([f for f in frames if f.filename == source] or frames[-1:])[-1]
    at = ", ".join(f"{p} = {v:.6g}" for p, v in zip(params, theta))
    name = getattr(function, "__name__", "gradient")
    raise KernelRaisedError(frame.filename, frame.lineno, (frame.colno or 0) + 1,
                            f"the gradient {name!r} raised {type(raised).__name__}: {raised} at {at}, where the "
                            f"kernel's value is finite: `{(frame.line or '').strip()}`") from None


def relative_error(a, b, atol=None):
    """Per-component ``|a - b| / max(|a|, |b|, atol)`` (ad/check.py's metric), rows = points, NaN -> inf.
    ``atol`` None: 1e-3 of the row's largest ``|b|`` (at least 1e-8), the zero scale without a noise estimate."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if atol is None:
        atol = np.maximum(1e-3 * np.max(np.abs(b), axis=1, keepdims=True), 1e-8)
    err = check.relative_error(a, b, atol)
    return np.where(np.isnan(err), np.inf, err)


@dataclass
class GradientReport:
    """Result of :meth:`Likelihood.check_gradient`.

    params, thetas (n, ndim) the points checked, values (n,) logL there; ad, fd, analytic (n, ndim) gradients
    (analytic None when no analytic gradient was given); ad_vs_fd, analytic_vs_fd, ad_vs_analytic (ndim,)
    worst relative error per parameter over the points (None when not applicable); skipped: points with a
    non-finite logL or finite differences (nothing to check); ok: every comparison within its tolerance.
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
    def build(cls, params, thetas, values, ad, fd, analytic=None, atol=None):
        """``atol`` (n, ndim): ad.check's zero scale per point and parameter (None: see relative_error)."""
        finite = np.isfinite(values) & np.all(np.isfinite(fd), axis=1)
        report = cls(tuple(params), thetas, values, ad, fd, analytic, skipped=int((~finite).sum()))
        if not finite.any():
            return report  # nothing could be checked: not ok
        scale = None if atol is None else np.asarray(atol)[finite]
        report.ad_vs_fd = relative_error(ad[finite], fd[finite], scale).max(axis=0)
        checks = [np.all(report.ad_vs_fd <= FD_TOLERANCE)]
        if analytic is not None:
            report.analytic_vs_fd = relative_error(analytic[finite], fd[finite], scale).max(axis=0)
            report.ad_vs_analytic = relative_error(ad[finite], analytic[finite]).max(axis=0)
            checks += [np.all(report.analytic_vs_fd <= FD_TOLERANCE),
                       np.all(report.ad_vs_analytic <= ANALYTIC_TOLERANCE)]
        report.ok = bool(all(checks))
        return report

    @property
    def ad_ok(self) -> bool:
        """Whether nestgrad's gradient (the one the sampler uses) agrees with finite differences: when it does and
        the report is not ok, only the hand-written analytic gradient is off."""
        return self.ad_vs_fd is not None and bool(np.all(self.ad_vs_fd <= FD_TOLERANCE))

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
                     + (f", {self.skipped} skipped (logL or differences not finite)" if self.skipped else "")
                     + f"; tolerances FD {FD_TOLERANCE:g}, analytic {ANALYTIC_TOLERANCE:g}; '!' marks a failure")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def _fmt(value):
    return "inf" if math.isinf(value) else f"{value:.2e}"
