"""The run plot (live points, logL, posterior weight and evidence against -log X) and the trace plot.

Both use E[-log X] of each dead point, computed from (logL, logL_birth) alone (sampler.evidence), so they
describe the run folder on disk, whatever the sampler's internal state was. The evidence band comes from
simulated shrinkage: log t_i = log(U_i) / n_i, the same model that gives logz_err.
"""
from __future__ import annotations

import matplotlib
import numpy as np

from nestgrad.sampler.plots import (POSTERIOR_COLOR, REFERENCE_COLOR, TRUTH_COLOR, label, minus_log_x,
                                    posterior_range, subplots)

NDRAWS = 100   # simulated shrinkage sequences for the evidence band
TRACE_LEVELS = 8  # colour bands of posterior weight in the trace plot


def run_plot(results, seed: int = 0):
    from nestgrad.sampler.evidence import live_counts

    logl = results.dead.logl
    counts = live_counts(logl, results.dead.logl_birth)
    x = np.cumsum(1.0 / counts)
    weights = np.asarray(results.weights, dtype=float)
    figure, axes = subplots(4, 1, figsize=(7.0, 8.5), sharex=True, margins=(1.0, 0.2, 0.4, 0.55, 0.0, 0.12))

    axes[0].plot(x, counts, color="0.3", lw=0.8)
    axes[0].set_ylabel("live points")
    axes[0].set_ylim(0, counts.max() * 1.1)
    nnan = int(getattr(results, "nnan", 0) or 0)
    if nnan:
        share = 100.0 * nnan / max(int(results.nlike), 1)
        axes[0].set_title(f"{nnan} likelihood values were NaN ({share:.2g}% of {results.nlike}), "
                          f"counted as zero likelihood", fontsize=9, color="firebrick")

    axes[1].plot(x, logl, color=POSTERIOR_COLOR, lw=1.2)
    axes[1].set_ylabel(r"$\log\mathcal{L}$")
    bottom = _interesting_floor(logl, weights)
    axes[1].set_ylim(bottom, logl.max() + 0.05 * (logl.max() - bottom) + 1e-9)

    # Posterior mass per unit -log X (weight / spacing, the spacing being 1/n_i): unlike the raw per-point
    # weights it does not jump where the live count changes (batch deletions, the final live points).
    density = weights * counts
    axes[2].fill_between(x, density / density.max(), color=POSTERIOR_COLOR, alpha=0.35, lw=0)
    axes[2].plot(x, density / density.max(), color=POSTERIOR_COLOR, lw=1.0)
    axes[2].set_ylabel("posterior mass\nper unit $-\\log X$")
    axes[2].set_ylim(0, 1.1)

    median, bands = _evidence_bands(logl, counts, seed)
    # Prior mass where the likelihood is NaN/-inf was measured at the initial draws and is part of logZ.
    offset = float((results.settings or {}).get("log_volume_offset", 0.0) or 0.0)
    median, bands = median + offset, bands + offset
    axes[3].fill_between(x, bands[0], bands[3], color=POSTERIOR_COLOR, alpha=0.15, lw=0, label="95% band")
    axes[3].fill_between(x, bands[1], bands[2], color=POSTERIOR_COLOR, alpha=0.35, lw=0, label="68% band")
    axes[3].plot(x, median, color=POSTERIOR_COLOR, lw=1.2, label=r"accumulated $\log Z$")
    axes[3].axhline(results.logz, color="0.2", lw=0.8, ls=":",
                    label=rf"final $\log Z = {results.logz:.3f} \pm {results.logz_err:.3f}$")
    if results.reference_logz is not None:
        axes[3].axhline(results.reference_logz, color=REFERENCE_COLOR, lw=1.2, ls="--",
                        label=rf"reference $\log Z = {results.reference_logz:.3f}$")
    span = max(5.0, 10.0 * results.logz_err)
    axes[3].set_ylim(results.logz - span, results.logz + 0.3 * span)
    axes[3].set_ylabel(r"$\log Z$")
    axes[3].legend(loc="lower right")
    axes[3].set_xlabel(r"$-\log X$ (enclosed prior volume)")
    axes[3].set_xlim(0, x.max())
    figure.suptitle(f"{results.name}: {results.niter} iterations, {results.nlike:,} likelihood / "
                    f"{results.ngrad:,} gradient evaluations", fontsize=10)
    return figure


def _interesting_floor(logl, weights):
    """Lower logL limit: where the posterior weight first reaches 1e-6 of its maximum, with a margin."""
    first = int(np.argmax(weights > weights.max() * 1e-6))
    floor = logl[first]
    return floor - 0.1 * max(logl.max() - floor, 1.0)


def _evidence_bands(logl, counts, seed):
    """Median and 2.5/16/84/97.5% quantiles of the accumulated logZ over simulated shrinkage sequences."""
    from nestgrad.sampler.evidence import volume_log_weights

    rng = np.random.default_rng(seed)
    log_t = np.log(rng.random((NDRAWS, logl.size))) / counts
    log_w = volume_log_weights(logl, np.cumsum(log_t, axis=1))
    accumulated = np.logaddexp.accumulate(log_w, axis=1)
    quantiles = np.percentile(accumulated, [50, 2.5, 16, 84, 97.5], axis=0)
    return quantiles[0], quantiles[1:]


def trace_plot(results, max_params: int = 16):
    d = min(len(results.params), max_params)
    ncols = 1 if d <= 4 else 2
    nrows = int(np.ceil(d / ncols))
    figure, axes = subplots(nrows, ncols, figsize=(7.0 if ncols == 1 else 10.0, 1.9 * nrows + 0.8),
                            sharex=True, squeeze=False, margins=(0.85, 0.1, 0.4, 0.55, 0.9, 0.12))
    x = minus_log_x(results)
    weights = np.asarray(results.weights, dtype=float)
    # Points coloured by posterior weight in TRACE_LEVELS bands, one marker line per band, heavy bands drawn
    # last (on top): a single-colour marker line is drawn (and written to the PDF) many times faster than a
    # scatter with a colour per point. The PDF holds each panel's points as one image (rasterized at the PNG's
    # resolution) instead of thousands of vector markers: 40% of the file, half its writing time (0.35 -> 0.2 s
    # for the seed config); axes, lines and text stay vector.
    cmap = matplotlib.colormaps["viridis"]
    band = np.minimum((weights / weights.max() * TRACE_LEVELS).astype(int), TRACE_LEVELS - 1)
    members = [np.flatnonzero(band == b) for b in range(TRACE_LEVELS)]
    truths = results.truths or {}
    for j in range(nrows * ncols):
        ax = axes[j // ncols, j % ncols]
        if j >= d:
            ax.set_visible(False)
            continue
        name = results.params[j]
        for b, index in enumerate(members):
            if index.size:
                ax.plot(x[index], results.dead.theta[index, j], ls="", marker="o", ms=1.7, mew=0,
                        color=cmap((b + 0.5) / TRACE_LEVELS), rasterized=True)
        if name in truths:
            ax.axhline(truths[name], color=TRUTH_COLOR, lw=1.0, ls="--")
        lo, hi = results.dead.theta[:, j].min(), results.dead.theta[:, j].max()
        inner = posterior_range(results, j)
        ax.set_ylim(min(lo, inner[0]), max(hi, inner[1]))
        ax.set_ylabel(label(results, name))
        if j // ncols == nrows - 1 or j + ncols >= d:
            ax.set_xlabel(r"$-\log X$")
    levels = np.linspace(0.0, 1.0, TRACE_LEVELS + 1)
    scale = matplotlib.cm.ScalarMappable(matplotlib.colors.BoundaryNorm(levels, cmap.N), cmap)
    figure.colorbar(scale, ax=axes, label="posterior weight (scaled to max 1)", shrink=0.8)
    title = f"{results.name}: dead points against enclosed prior volume"
    if len(results.params) > d:
        title += f" (first {d} of {len(results.params)} parameters)"
    figure.suptitle(title, fontsize=10)
    return figure
