"""HMC diagnostics per iteration: step size, outside fraction, reflections per chain, evaluations.

What to look for: the step size should shrink smoothly as the contour tightens; the outside fraction should
settle near the tuning target; chains that make no reflections are not exploring the contour; evaluations
per iteration grow when trajectories get longer. The first iterations, shaded, made their points by prior draws
(``sampler.prior_draws``): no chains ran, and the settings shown there are the ones the chains start from.
"""
from __future__ import annotations

import numpy as np

from nestgrad.sampler.plots import POSTERIOR_COLOR, TRUTH_COLOR, subplots


def hmc_plot(results):
    diag = results.diagnostics
    niter = _niter(diag)
    it = np.arange(1, niter + 1)
    figure, axes = subplots(3, 2, figsize=(10.0, 9.5), sharex=True, margins=(0.85, 0.75, 0.4, 0.55, 1.05, 0.15))
    drawn = _prior_draw_iterations(diag, niter)
    if drawn:
        for i, ax in enumerate(axes.flat):
            ax.axvspan(0.5, drawn + 0.5, color="0.9", lw=0, zorder=0,
                       label="prior draws, no chains" if i == 1 else None)

    ax = axes[0, 0]
    _series(ax, it, diag, "step_size", POSTERIOR_COLOR, "step size")
    _log_axis(ax)
    ax.set_ylabel("step size (whitened units)")

    ax = axes[0, 1]
    _series(ax, it, diag, "outside_fraction", TRUTH_COLOR, "outside fraction")
    _series(ax, it, diag, "acceptance", POSTERIOR_COLOR, "moves accepted")
    target = (results.settings or {}).get("hmc", {})
    target = target.get("target_outside") if isinstance(target, dict) else None
    if target is not None:
        ax.axhline(float(target), color="0.3", lw=0.8, ls="--", label="tuning target")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("fraction per iteration")
    _legend(ax, "best")

    ax = axes[1, 0]
    per_chain = np.asarray(diag.get("reflections_per_chain", []), dtype=float)
    if per_chain.ndim == 2 and per_chain.shape[0] == niter and per_chain.shape[1] > 1:
        lo, mid, hi = (running_median(q) for q in np.percentile(per_chain, [10, 50, 90], axis=1))
        ax.fill_between(it, lo, hi, color=POSTERIOR_COLOR, alpha=0.3, lw=0, label="10-90% of chains")
        ax.plot(it, mid, color=POSTERIOR_COLOR, lw=1.5, label="median chain")
        ax.plot(it, running_median(per_chain.min(axis=1)), color="0.4", lw=0.8, ls=":",
                label="least reflecting chain")
    else:
        _series(ax, it, diag, "reflections", POSTERIOR_COLOR, "mean per chain")
    ax.set_ylabel("reflections per chain")
    _legend(ax, "best")

    ax = axes[1, 1]
    _series(ax, it, diag, "nlike", POSTERIOR_COLOR, "likelihood values")
    _series(ax, it, diag, "ngrad", TRUTH_COLOR, "gradients")
    ax.set_ylabel("evaluations per iteration")
    counts = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]
    if counts and min(c.min() for c in counts) > 0 and max(c.max() for c in counts) > 20 * min(c.min() for c in counts):
        _log_axis(ax)  # only when the counts span more than a decade and a bit
    ax.set_ylim(bottom=0 if ax.get_yscale() == "linear" else None)
    _legend(ax, "best")

    hmc = (results.settings or {}).get("hmc", {})
    hmc = hmc if isinstance(hmc, dict) else {}
    ax = axes[2, 0]
    _series(ax, it, diag, "rho_coord", POSTERIOR_COLOR, "coordinates")
    _series(ax, it, diag, "rho_logl", TRUTH_COLOR, "logL ranks")
    if hmc.get("target_correlation") is not None:
        ax.axhline(float(hmc["target_correlation"]), color="0.3", lw=0.8, ls="--", label="lengthen above")
    ax.set_ylabel("start-end correlation of chains")
    ax.set_xlabel("iteration")
    _legend(ax, "best")

    ax = axes[2, 1]
    _series(ax, it, diag, "n_steps", POSTERIOR_COLOR, "steps per trajectory")
    tried = np.asarray(diag.get("jumps_tried", []), dtype=float)
    if tried.size == niter and tried.size and tried.sum() > 0:
        accepted = np.asarray(diag["jumps_accepted"], dtype=float) / np.maximum(tried, 1.0)
        twin = ax.twinx()
        twin.plot(it, running_median(accepted), color=TRUTH_COLOR, lw=1.5, label="jump acceptance")
        twin.set_ylim(0, 1)
        twin.set_ylabel("jump acceptance", color=TRUTH_COLOR)
    ax.set_ylabel("steps per trajectory")
    ax.set_xlabel("iteration")
    _legend(ax, "upper left")

    settings = results.settings or {}
    k = _chains(settings)
    figure.suptitle(f"{results.name}: constrained HMC, nlive = {settings.get('nlive', '?')}"
                    + (f", {k} chain{'s' if k > 1 else ''} per iteration" if k else "")
                    + " (solid: running median)", fontsize=10)
    return figure


def _series(ax, it, diag, key, color, text):
    """The raw per-iteration values (faint) and their running median (solid), which shows the trend."""
    values = np.asarray(diag.get(key, []), dtype=float)
    if values.ndim == 1 and values.size == it.size and values.size:
        ax.plot(it, values, color=color, lw=0.6, alpha=0.3)
        ax.plot(it, running_median(values), color=color, lw=1.5, label=text)


def _log_axis(ax):
    """Log scale with plain-number tick labels (0.4, 1000): matplotlib's default 10^k labels are typeset by
    mathtext, one parse per label and output format."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    low, high = ax.get_ylim()
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain if high < 10 * low else NullFormatter())  # minor labels within a decade


def _niter(diag) -> int:
    return len(np.asarray(diag.get("logl_star", diag.get("step_size", []))))


def chain_iterations(diag) -> tuple[int, int]:
    """``(iterations, those whose points came from HMC chains)`` of the per-iteration diagnostics ``diag``."""
    niter = _niter(diag)
    return niter, niter - _prior_draw_iterations(diag, niter)


def _prior_draw_iterations(diag, niter) -> int:
    """How many first iterations drew their points from the prior: no gradients and no chain statistics (NaN)."""
    ngrad = np.asarray(diag.get("ngrad", []), dtype=float)
    acceptance = np.asarray(diag.get("acceptance", []), dtype=float)
    if ngrad.size != niter or acceptance.size != niter:
        return 0
    chains = np.flatnonzero((ngrad > 0) | np.isfinite(acceptance))
    return int(chains[0]) if chains.size else niter


def running_median(values, window=None):
    """The median of a sliding window; NaN (iterations without chains) left out, and NaN where a window holds
    nothing else."""
    window = window or max(1, values.size // 50)
    if window == 1:
        return values
    padded = np.pad(values, (window // 2, window - 1 - window // 2), mode="edge")
    windows = np.lib.stride_tricks.sliding_window_view(padded, window)
    out = np.full(values.size, np.nan)
    some = ~np.all(np.isnan(windows), axis=1)
    out[some] = np.nanmedian(windows[some], axis=1)
    return out


def _chains(settings) -> int | None:
    nlive, fraction = settings.get("nlive"), settings.get("delete_fraction")
    if nlive and fraction:
        return max(1, int(round(nlive * fraction)))
    return None


def _legend(ax, loc):
    # a run folder read from text may lack some series: no legend rather than an empty one and a warning
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc=loc)
