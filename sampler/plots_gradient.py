"""The gradient cross-check: saved as `gradient_check.json` in the run folder, and plotted per parameter.

The plot shows, for every checked point and parameter, the relative error of the AD gradient (and of the
analytic gradient, when the config gives one) against five-point finite differences, and of AD against the
analytic gradient, on a log scale with the tolerances `Likelihood.check_gradient` applies.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

CHECK_JSON = "gradient_check.json"
FLOOR = 1e-17   # relative errors of exactly zero are drawn here on the log axis


def write_gradient_check(report, params, outdir) -> Path:
    """Store the report's gradients (JSON: lists of floats; non-finite values as null)."""
    from nestgrad.likelihoods.gradcheck import ANALYTIC_TOLERANCE, FD_TOLERANCE

    def table(array):
        if array is None:
            return None
        return [[float(v) if np.isfinite(v) else None for v in row] for row in np.atleast_2d(array)]

    document = {
        "params": list(params), "ok": bool(report.ok), "skipped": int(report.skipped),
        "thetas": table(report.thetas), "values": [float(v) if np.isfinite(v) else None for v in report.values],
        "ad": table(report.ad), "fd": table(report.fd), "analytic": table(report.analytic),
        "fd_tolerance": FD_TOLERANCE, "analytic_tolerance": ANALYTIC_TOLERANCE,
    }
    path = Path(outdir) / CHECK_JSON
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def has_gradient_check(outdir) -> bool:
    return (Path(outdir) / CHECK_JSON).is_file()


def check_problem(outdir) -> str | None:
    """Why the gradient plot of ``outdir`` cannot be drawn (its gradient_check.json missing or damaged), or None."""
    from nestgrad.sampler.run_folder import RunFolderError

    if not has_gradient_check(outdir):
        return (f"{Path(outdir) / CHECK_JSON} is missing: no gradient cross-check was stored (a run with "
                f"--no-check, or results saved without one)")
    try:
        read_gradient_check(outdir)
    except RunFolderError as error:
        return str(error)
    return None


def read_gradient_check(outdir) -> dict:
    """The stored cross-check; a damaged file is a :class:`~sampler.run_folder.RunFolderError` naming it and the
    field, not a JSON or numpy error from inside the plot."""
    from nestgrad.sampler.run_folder import RunFolderError

    path = Path(outdir) / CHECK_JSON

    def damaged(problem):
        return RunFolderError(f"{path}: {problem}; the file is damaged (`nestgrad check CONFIG` repeats the check)")

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RunFolderError(f"{path}: cannot read ({error.strerror or error})", path, error.errno) from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise damaged(f"not valid JSON ({error})") from None
    if not isinstance(document, dict):
        raise damaged(f"expected a JSON object, found a {type(document).__name__}")
    params = document.get("params")
    if not (isinstance(params, list) and params and all(isinstance(p, str) for p in params)):
        raise damaged(f"field 'params' holds {params!r}, not a list of names")
    for key in ("ok", "fd_tolerance"):
        if key not in document:
            raise damaged(f"field {key!r} is missing")
    for key in ("thetas", "ad", "fd", "analytic"):
        if document.get(key) is None and key in ("ad", "fd"):
            raise damaged(f"field {key!r} is missing")
        if document.get(key) is not None:
            try:
                document[key] = np.array(document[key], dtype=float)  # null -> nan
            except (TypeError, ValueError):
                raise damaged(f"field {key!r} is not a table of numbers") from None
            if key != "thetas" and (document[key].ndim != 2 or document[key].shape[1] != len(params)):
                raise damaged(f"field {key!r} has shape {document[key].shape}, expected (points, {len(params)})")
    for key in ("fd", "analytic"):
        if document.get(key) is not None and document[key].shape != document["ad"].shape:
            raise damaged(f"field {key!r} has shape {document[key].shape}, but 'ad' has {document['ad'].shape}")
    return document


def gradient_plot(check: dict):
    from nestgrad.likelihoods.gradcheck import relative_error
    from nestgrad.sampler.plots import POSTERIOR_COLOR, REFERENCE_COLOR, TRUTH_COLOR, subplots

    params = check["params"]
    d = len(params)
    finite = np.all(np.isfinite(check["ad"]), axis=1) & np.all(np.isfinite(check["fd"]), axis=1)
    ad, fd = check["ad"][finite], check["fd"][finite]
    series = [("AD vs finite differences", relative_error(ad, fd), POSTERIOR_COLOR, "o")]
    if check.get("analytic") is not None:
        analytic = check["analytic"][finite]
        series += [("analytic vs finite differences", relative_error(analytic, fd), TRUTH_COLOR, "^"),
                   ("AD vs analytic", relative_error(ad, analytic), REFERENCE_COLOR, "s")]
    rotate = d > 8
    width = max(5.0, 1.0 + 0.9 * d)
    bottom, right = _name_margins(params, rotate, (width - 1.25) / d)
    # margins in inches, from the names' sizes, rather than a layout engine, which measures every label of the
    # figure first (a third of this plot's time)
    figure, ax = subplots(figsize=(width, 3.75 + bottom), margins=(1.05, right, 0.35, bottom, 0, 0))
    offsets = np.linspace(-0.2, 0.2, len(series)) if len(series) > 1 else [0.0]
    rng = np.random.default_rng(0)
    for (text, errors, color, marker), offset in zip(series, offsets):
        # one collection per series (the points of parameter 0, then 1, ...): a dozen fewer artists to draw
        x = np.concatenate([j + offset + rng.uniform(-0.04, 0.04, errors.shape[0]) for j in range(d)])
        y = np.concatenate([np.maximum(errors[:, j], FLOOR) for j in range(d)])
        ax.scatter(x, y, color=color, marker=marker, s=18, alpha=0.8, label=text)
    ax.axhline(check["fd_tolerance"], color="0.3", ls="--", lw=0.9,
               label=f"tolerance vs finite differences ({check['fd_tolerance']:g})")
    if check.get("analytic") is not None:
        ax.axhline(check["analytic_tolerance"], color="0.3", ls=":", lw=0.9,
                   label=f"tolerance AD vs analytic ({check['analytic_tolerance']:g})")
    ax.set_yscale("log")
    ax.set_ylim(FLOOR / 3, 10.0)
    ax.set_xticks(range(d))
    ax.set_xticklabels(params, rotation=45 if rotate else 0)
    ax.set_xlim(-0.6, d - 0.4)
    ax.set_ylabel("relative error per point\n(exact agreement drawn at $10^{-17}$)")
    verdict = "passed" if check["ok"] else "FAILED"
    ax.set_title(f"gradient cross-check at {int(finite.sum())} prior draws: {verdict}")
    ax.legend(loc="upper left", fontsize=8, ncol=1, framealpha=0.9)
    return figure


def _name_margins(params, rotated: bool, inch_per_param: float) -> tuple[float, float]:
    """(bottom, right) margins in inches for the parameter names under the axes: tick, pad and the tallest
    name below; on the right, whatever of the last name reaches past the axes' end (0.4 of a parameter's width
    beyond its tick). Names are turned by 45 degrees when ``rotated``, centred on their tick either way."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(size=rcParams["xtick.labelsize"])
    sizes = [text_to_path.get_text_width_height_descent(name, prop, ismath=False)[:2] for name in params]
    if rotated:  # the box of a turned name: (width + height) * sin 45 each way; points to inches
        tallest = max(w + h for w, h in sizes) * math.sqrt(0.5) / 72.0
        last = sum(sizes[-1]) * math.sqrt(0.5) / 72.0
    else:
        tallest, last = max(h for _, h in sizes) / 72.0, sizes[-1][0] / 72.0
    bottom = max(0.45, 0.3 + tallest)
    right = max(0.2, 0.5 * last - 0.4 * inch_per_param + 0.1)
    return bottom, right
