"""Corner plot of the weighted posterior: 1-D marginals on the diagonal, 68%/95% contours below it.

Histograms use every dead point with its posterior weight (more resolution than the equal-weight samples);
the 2-D histograms are smoothed by one bin before contouring so the contours do not follow the noise.

The panels sit at fixed margins in inches (room for the rotated tick labels and axis labels at the left and
bottom, for each diagonal panel's title above it) rather than a layout engine, which measures every label of
every panel before drawing: a third of this plot's time.
"""
from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from nestgrad.sampler.plots import (POSTERIOR_COLOR, TRUTH_COLOR, label, new_figure, posterior_range,
                                    set_margins, weighted_quantiles)

MAX_PARAMS = 10   # beyond this a corner plot is unreadable: the first MAX_PARAMS are shown
BINS_1D, BINS_2D = 30, 30
LEVELS = (0.6827, 0.9545)
SMOOTHING = 1.0   # standard deviation, in bins, of the Gaussian that smooths the 2-D histograms
# left, right, top, bottom, between columns, between rows (inches): y tick labels and labels; the last
# column's rotated tick labels; the first title (and the suptitle when parameters are left out); x labels
# under rotated tick labels; tick marks; the diagonal panels' titles
MARGINS = (0.85, 0.3, 0.45, 0.95, 0.12, 0.4)
SUPTITLE = 0.3


def corner_plot(results):
    d = min(len(results.params), MAX_PARAMS)
    size = max(2.0, min(2.4, 12.0 / d))
    left, right, top, bottom, wspace, hspace = MARGINS
    top += SUPTITLE if len(results.params) > d else 0.0
    figure = new_figure(figsize=(size * d + 0.6, size * d + 0.6 + top - MARGINS[2]))
    set_margins(figure, d, d, (left, right, top, bottom, wspace, hspace))
    grid = figure.add_gridspec(d, d)
    theta, weights = results.dead.theta, np.asarray(results.weights, dtype=float)
    ranges = [posterior_range(results, j) for j in range(d)]
    truths = results.truths or {}
    for row in range(d):
        for col in range(row + 1):  # the lower triangle only: empty panels cost layout time too
            ax = figure.add_subplot(grid[row, col])
            if row == col:
                _marginal(ax, theta[:, col], weights, ranges[col], truths.get(results.params[col]))
                _title(ax, results, col)
            else:
                _joint(ax, theta[:, col], theta[:, row], weights, ranges[col], ranges[row],
                       truths.get(results.params[col]), truths.get(results.params[row]))
            _ticks(ax, results, row, col, d)
    if len(results.params) > d:
        figure.suptitle(f"first {d} of {len(results.params)} parameters", fontsize=10)
    return figure


def _marginal(ax, x, weights, span, truth):
    hist, edges = np.histogram(x, bins=BINS_1D, range=span, weights=weights)
    ax.stairs(hist / hist.max() if hist.max() > 0 else hist, edges, color=POSTERIOR_COLOR, lw=1.4)
    ax.set_ylim(0, 1.1)
    ax.set_yticks([])
    ax.grid(False)
    if truth is not None:
        ax.axvline(truth, color=TRUTH_COLOR, lw=1.2, ls="--")


def _joint(ax, x, y, weights, xspan, yspan, xtruth, ytruth):
    hist, xedges, yedges = np.histogram2d(x, y, bins=BINS_2D, range=[xspan, yspan], weights=weights)
    hist = smooth(hist, SMOOTHING)
    levels = _credible_levels(hist, LEVELS)
    centres_x = 0.5 * (xedges[1:] + xedges[:-1])
    centres_y = 0.5 * (yedges[1:] + yedges[:-1])
    if np.all(np.diff(levels) > 0):
        ax.contourf(centres_x, centres_y, hist.T, levels=[levels[0], levels[1], hist.max() * 1.01],
                    colors=["#a6bddb", "#3f6fb5"], alpha=0.85)
        ax.contour(centres_x, centres_y, hist.T, levels=levels, colors=POSTERIOR_COLOR, linewidths=0.8)
    else:  # posterior too concentrated for two distinct contours: show the points themselves
        heavy = weights > weights.max() * 1e-3  # (in the PDF as one image, not thousands of vector markers)
        ax.scatter(x[heavy], y[heavy], s=2, color=POSTERIOR_COLOR, alpha=0.5, rasterized=True)
    ax.set_xlim(xspan)
    ax.set_ylim(yspan)
    ax.grid(False)
    if xtruth is not None:
        ax.axvline(xtruth, color=TRUTH_COLOR, lw=1.0, ls="--")
    if ytruth is not None:
        ax.axhline(ytruth, color=TRUTH_COLOR, lw=1.0, ls="--")
    if xtruth is not None and ytruth is not None:
        ax.plot(xtruth, ytruth, "s", color=TRUTH_COLOR, ms=4)


def smooth(hist, sigma):
    """``hist`` convolved with a Gaussian of ``sigma`` bins along each axis, as ``scipy.ndimage.gaussian_filter``
    does by default (kernel truncated at 4 sigma and normalised, edges reflected: ``d c b a | a b c d``), in
    numpy: importing scipy.ndimage costs more than the rest of this plot's arithmetic."""
    radius = int(4.0 * sigma + 0.5)
    offsets = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (offsets / sigma) ** 2)
    kernel /= kernel.sum()
    out = np.asarray(hist, dtype=float)
    for axis in range(out.ndim):
        n = out.shape[axis]
        padded = np.pad(out, [(radius, radius) if a == axis else (0, 0) for a in range(out.ndim)],
                        mode="symmetric")
        out = sum(w * np.take(padded, np.arange(n) + radius + k, axis=axis) for k, w in zip(offsets, kernel))
    return out


def _credible_levels(hist, masses):
    """Density thresholds enclosing the given posterior masses (highest-density regions), ascending."""
    flat = np.sort(hist.ravel())[::-1]
    cumulative = np.cumsum(flat)
    cumulative /= cumulative[-1]
    thresholds = [flat[min(np.searchsorted(cumulative, m), flat.size - 1)] for m in masses]
    return sorted(thresholds)


def _title(ax, results, j):
    x = results.dead.theta[:, j]
    lo, mid, hi = weighted_quantiles(x, results.weights, [0.15865, 0.5, 0.84135])
    ax.set_title(f"{label(results, results.params[j])} $= {_fmt(mid)}^{{+{_fmt(hi - mid)}}}"
                 f"_{{-{_fmt(mid - lo)}}}$", fontsize=9)


def _fmt(value: float) -> str:
    return f"{value:.3g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def _ticks(ax, results, row, col, d):
    ax.xaxis.set_major_locator(MaxNLocator(3, prune="both"))
    if row != col:
        ax.yaxis.set_major_locator(MaxNLocator(3, prune="both"))
    if row == d - 1:
        ax.set_xlabel(label(results, results.params[col]))
        ax.tick_params(axis="x", labelrotation=45)
    else:
        ax.set_xticklabels([])
    if col == 0 and row > 0:
        ax.set_ylabel(label(results, results.params[row]))
    elif row != col:
        ax.set_yticklabels([])
