"""Diagnostic plots of a run, written as PNG (and PDF on request) into `<outdir>/plots/`.

    make_plots(results, outdir, kinds=("corner", "run", "trace", "hmc", "gradient"), formats=("png", "pdf"))

Each kind lives in its own module (`plots_corner`, `plots_run`, `plots_hmc`, `plots_gradient`); this module
holds what they share: the matplotlib style, LaTeX labels, the -log X axis of the dead points, and saving.
Figures are plain `matplotlib.figure.Figure`s on an Agg canvas, drawn by the Agg (PNG) and PDF backends when
saved: no pyplot (its import and its global figure list cost time), no window, plotting works on headless
machines. matplotlib is imported only when a plot is made. Panels sit at fixed margins rather than under a
layout engine, dense point clouds are rasterized in the PDFs, and the command line shares the plots among
processes forked from its own (`plots_parallel`).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np


class PlotBackendError(ValueError):
    """matplotlib cannot start with the backend the environment names (``MPLBACKEND``)."""


try:
    import matplotlib
except ValueError as _error:  # an MPLBACKEND matplotlib does not know: raised while matplotlib imports
    if "backend" not in str(_error):
        raise
    raise PlotBackendError(f"MPLBACKEND={os.environ.get('MPLBACKEND', '')!r}: matplotlib has no such backend; unset "
                           f"MPLBACKEND, or set it to agg to write plot files") from None

from nestgrad.sampler.config_schema import PLOTS as PLOT_KINDS  # the one list of plot kinds
from nestgrad.sampler.priors import bounds_of

STYLE = {
    "font.size": 10, "axes.labelsize": 11, "axes.titlesize": 10, "legend.fontsize": 9,
    "xtick.labelsize": 9, "ytick.labelsize": 9, "figure.dpi": 100, "savefig.dpi": 150,
    "axes.grid": True, "grid.alpha": 0.25, "axes.spines.top": False, "axes.spines.right": False,
}
POSTERIOR_COLOR, TRUTH_COLOR, REFERENCE_COLOR = "#1f4e99", "#d95f02", "#1b9e77"


def make_plots(results, outdir, kinds=PLOT_KINDS, *, processes: int | str = 1, formats=("png",),
               on_skip=None) -> list[Path]:
    """Make the requested plots, one file per format in ``formats`` (png, pdf); returns the path of each plot's
    first format, in the order of ``kinds``. ``processes``: an int > 1 shares the plots among up to that many processes forked from this
    one, where the platform allows; ``"auto"``: one more per core found idle (`plots_parallel`; the command
    line's choice in its own process). A kind these results cannot draw (:func:`unavailable`) is skipped, and
    ``on_skip(kind, why)`` called when given. A file in the way of the ``plots`` folder is a
    :class:`~sampler.run_folder.RunFolderError` naming it (the run folder's other files are already written)."""
    from nestgrad.sampler import plots_parallel

    folder = plots_folder(outdir)
    todo = []
    for kind in kinds:
        why = unavailable(results, kind, outdir)
        if kind not in PLOT_KINDS:  # a caller's mistake, not a property of these results
            raise ValueError(why)
        if why is None:
            todo.append(kind)
        elif on_skip is not None:
            on_skip(kind, why)

    def draw(share):
        written = []
        for kind in share:
            with matplotlib.rc_context(STYLE):
                figure = _makers(results, outdir)[kind]()
                written.append(save_figure(figure, folder / f"{results.name}_{kind}", formats))
        return written

    auto = processes == "auto"
    wanted = plots_parallel.usable_cpus() if auto else int(processes)
    if wanted < 2 or len(todo) < 2 or not plots_parallel.can_fork():
        return draw(todo)
    since = plots_parallel.cpu_snapshot()
    # imported once, here, for every process (the PDF backend's import, in each process at its first PDF, is
    # the one that runs side by side); meanwhile, the idle cores are counted
    from matplotlib import figure  # noqa: F401
    from matplotlib.backends import backend_agg  # noqa: F401

    processes = plots_parallel.processes_for(wanted, since) if auto else wanted
    if processes < 2:
        return draw(todo)
    groups = plots_parallel.shares(todo, processes, lambda kind: _cost(kind, results))
    drawn = plots_parallel.draw_shared(draw, groups)
    by_kind = {kind: path for group, paths in zip(groups, drawn) for kind, path in zip(group, paths)}
    return [by_kind[kind] for kind in todo]


def _cost(kind, results) -> float:
    """Rough drawing time of a plot (seconds on the 2-core machine, PNG and PDF), to share plots among
    processes: the corner plot grows with its panels, the trace plot with its parameters."""
    d = len(results.params)
    if kind == "corner":
        p = min(d, 10)
        return 0.05 + 0.05 * p * (p + 1) / 2
    if kind == "trace":
        return 0.05 + 0.1 * min(d, 16)
    return {"run": 0.5, "hmc": 0.7, "gradient": 0.3}.get(kind, 0.5)


def plots_folder(outdir) -> Path:
    """``<outdir>/plots``, created if needed; a :class:`~sampler.run_folder.RunFolderError` (with ``path`` and
    ``errno`` for `write_errors.remedy`) when a file is in its way or it cannot be made. Without this, a file
    named ``plots`` was a FileExistsError traceback after the run had finished."""
    import errno

    from nestgrad.sampler.run_folder import RunFolderError

    folder = Path(outdir) / "plots"
    blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise RunFolderError(f"{folder}: cannot create the plots folder: {blocking} is a file, not a folder; the "
                             f"run's other outputs are written", path=blocking, errno=errno.ENOTDIR)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunFolderError(f"{folder}: cannot create the plots folder ({error.strerror or error}); the run's "
                             f"other outputs are written", path=folder, errno=error.errno) from None
    return folder


def unavailable(results, kind: str, outdir=None) -> str | None:
    """Why ``results`` cannot draw the plot ``kind`` (a sentence), or None when they can. The gradient plot draws
    the cross-check stored in ``outdir`` (or the folder the results were read from) as gradient_check.json."""
    from nestgrad.sampler import plots_gradient

    if kind not in PLOT_KINDS:
        return f"unknown plot kind {kind!r}; the kinds: {', '.join(PLOT_KINDS)}"
    if kind == "gradient":
        outdir = outdir if outdir is not None else getattr(results, "folder", None)
        if outdir is None:
            return ("it draws the gradient cross-check stored in a run folder's gradient_check.json, and these "
                    "results were not read from a run folder (Results.load(folder) reads one)")
        return plots_gradient.check_problem(outdir)
    if kind == "hmc":
        if not results.diagnostics:
            return ("the results hold no per-iteration diagnostics (a run folder read without its "
                    "diagnostics.npz)")
        from nestgrad.sampler.plots_hmc import chain_iterations

        niter, chains = chain_iterations(results.diagnostics)
        if chains == 0:  # the figure would be empty axes under a grey band
            return (f"no HMC chains ran in this run: its {niter} iteration(s) drew their points from the prior "
                    f"(it ended before the chains took over)")
    return None


def figure_of(results, kind: str):
    """One plot of ``results`` as a Figure (``Results.plot``); a ValueError saying why when it cannot be drawn,
    with the kinds that can."""
    why = unavailable(results, kind)
    if why is not None:
        if kind not in PLOT_KINDS:
            raise ValueError(why)
        drawable = [k for k in PLOT_KINDS if unavailable(results, k) is None]
        raise ValueError(f"the {kind!r} plot is unavailable: {why}; available for these results: "
                         f"{', '.join(drawable) or 'none'}")
    with matplotlib.rc_context(STYLE):
        return _makers(results, getattr(results, "folder", None))[kind]()


def _makers(results, outdir):
    from nestgrad.sampler import plots_corner, plots_gradient, plots_hmc, plots_run

    return {
        "corner": lambda: plots_corner.corner_plot(results),
        "run": lambda: plots_run.run_plot(results),
        "trace": lambda: plots_run.trace_plot(results),
        "hmc": lambda: plots_hmc.hmc_plot(results),
        "gradient": lambda: plots_gradient.gradient_plot(plots_gradient.read_gradient_check(outdir)),
    }


def new_figure(figsize=None, constrained_layout=False):
    """A plain Figure on an Agg canvas (see the module docstring): drawn without a display whatever
    ``MPLBACKEND`` or the user's matplotlibrc say; ``savefig`` of a PDF switches to the PDF backend by itself."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=figsize, layout="constrained" if constrained_layout else None)
    FigureCanvasAgg(figure)
    return figure


def subplots(nrows=1, ncols=1, *, figsize=None, constrained_layout=False, margins=None, **kwargs):
    """``(figure, axes)`` as ``pyplot.subplots`` makes them, on a plain Figure. ``margins``: fixed
    ``(left, right, top, bottom, wspace, hspace)`` in inches instead of a layout engine, for plots whose labels
    are known in advance; constrained layout measures every label before drawing, a quarter of a plot's time."""
    figure = new_figure(figsize, constrained_layout and margins is None)
    if margins is not None:
        set_margins(figure, nrows, ncols, margins)
    return figure, figure.subplots(nrows, ncols, **kwargs)


def set_margins(figure, nrows, ncols, margins) -> None:
    """Place an ``nrows`` x ``ncols`` grid of panels at fixed ``(left, right, top, bottom, wspace, hspace)``
    margins in inches (matplotlib takes figure fractions and fractions of a panel)."""
    left, right, top, bottom, wspace, hspace = margins
    width, height = figure.get_size_inches()
    panel_w = (width - left - right - (ncols - 1) * wspace) / ncols
    panel_h = (height - top - bottom - (nrows - 1) * hspace) / nrows
    figure.subplots_adjust(left=left / width, right=1 - right / width, top=1 - top / height,
                           bottom=bottom / height, wspace=wspace / panel_w, hspace=hspace / panel_h)


def save_figure(figure, stem: Path, formats=("png",)) -> Path:
    """Write ``stem.<format>`` for each format; returns the first path."""
    paths = []
    for fmt in formats:
        path = stem.with_name(f"{stem.name}.{fmt}")
        # zlib level 1: a third of the encoding time of the default level for PNGs about 1.3 times larger
        figure.savefig(path, **({"pil_kwargs": {"compress_level": 1}} if fmt == "png" else {}))
        # the layout computed for the first file holds for the others (figure-relative, dpi-independent)
        figure.set_layout_engine("none")
        paths.append(path)
    return paths[0]


def label(results, name: str) -> str:
    """Axis label: the parameter's LaTeX in math mode, or its plain name."""
    latex = (results.latex or {}).get(name)
    return f"${latex.strip('$')}$" if latex else name


def minus_log_x(results) -> np.ndarray:
    """E[-log X] at each dead point (sorted by logL, as the run folder stores them)."""
    from nestgrad.sampler.evidence import live_counts

    return np.cumsum(1.0 / live_counts(results.dead.logl, results.dead.logl_birth))


def weighted_quantiles(values: np.ndarray, weights: np.ndarray, q) -> np.ndarray:
    order = np.argsort(values)
    cdf = np.cumsum(weights[order])
    cdf /= cdf[-1]
    return np.interp(q, cdf, values[order])


def posterior_range(results, j: int, pad: float = 0.15) -> tuple[float, float]:
    """A plotting range holding the posterior mass of parameter j (0.1%..99.9%), padded on both sides."""
    lo, hi = weighted_quantiles(results.dead.theta[:, j], results.weights, [0.001, 0.999])
    if results.truths and results.params[j] in results.truths:
        truth = results.truths[results.params[j]]
        lo, hi = min(lo, truth), max(hi, truth)
    width = hi - lo if hi > lo else max(abs(lo), 1.0) * 1e-3
    lo, hi = lo - pad * width, hi + pad * width
    # never pad past a hard prior bound: no posterior mass can lie there, and smoothing would draw some
    bound_lo, bound_hi = bounds_of(((results.settings or {}).get("prior") or {}).get(results.params[j]))
    lo = lo if bound_lo is None else max(lo, bound_lo)
    hi = hi if bound_hi is None else min(hi, bound_hi)
    return lo, hi
