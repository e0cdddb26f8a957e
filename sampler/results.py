"""The result of a run (shared contract, see docs/internals.md and the sampler issue): dead points, evidence,
posterior weights and samples, per-iteration diagnostics and the settings that produced them."""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np


class DeadPoints(NamedTuple):
    """Every point that died, final live points appended, sorted by logl ascending."""

    u: np.ndarray           # (N, d) unit-cube coordinates
    theta: np.ndarray       # (N, d) physical parameters
    logl: np.ndarray        # (N,)
    logl_birth: np.ndarray  # (N,) contour the point was born above (-inf for initial prior draws)


@dataclass
class Results:
    """Output of :meth:`sampler.NestedSampler.run`.

    ``nlike`` counts likelihood values (each gradient evaluation also yields one); ``ngrad`` counts gradients.
    ``diagnostics`` holds per-iteration arrays of length ``niter``: ``logl_star``, ``step_size``,
    ``outside_fraction``, ``reflections`` (mean per chain), ``reflections_per_chain`` (niter, k), ``acceptance``,
    ``nlike``, ``ngrad`` (per iteration), ``nlive``, ``logz`` and ``logz_remain`` (running estimates), and the
    proposal's ``n_steps``, ``rho_coord``/``rho_logl`` (start-end correlations), ``jumps_tried``/``jumps_accepted``,
    ``nclusters`` and ``nnan`` per iteration.
    ``logz_err`` is the larger of ``logz_err_shrinkage`` (the spread over shrinkage sequences) and ``logz_err_bootstrap``
    (resampled threads, which also sees correlated proposals), combined in quadrature with
    ``logz_err_prior_share``: the spread of the estimated share of the prior where logL is finite (the initial
    draws that had to be redrawn; 0 when none). ``ess_params``: per parameter, the effective number of
    independent posterior samples behind its posterior mean (``sampler.genealogy``: Kish's ESS where chains
    forget their start points, less where they do not); ``ess``: the smallest of those and of logL's own;
    ``samples`` has that many rows.
    ``nnan``: likelihood evaluations that returned NaN (-inf, a zero likelihood, is not counted). ``clusters``: posterior modes with their ``mass``
    and local ``logz`` (with several modes also ``mass_err`` and ``logz_err``, from resampled threads). ``wall_time``: seconds spent sampling, over every session of a resumed run (no compile
    time, no output); ``mpi``: for a run over MPI ranks, per rank (lists, rank 0 first) the ``chains`` run,
    ``busy_seconds`` in chains and likelihood calls, ``waiting_seconds`` blocked on other ranks, ``wall_seconds``
    and ``idle_fraction`` = waiting / wall, with ``ranks`` and ``hosts`` (None for a single process); ``timing``:
    this process's wall time by stage (``sampler.timing``: startup, setup,
    compile with ``kernel`` = where the chain kernel came from, sampling, evidence, output, plots, total),
    the stages the caller measured. ``insertion``: the insertion-rank test (``sampler.insertion``): each new
    point's rank among the points alive at its birth, which is uniform when the proposals draw from the
    constrained prior (``n``, ``ks_p``, ``mean`` ± ``mean_err``, ``worst_window_p`` over ``windows`` windows).
    """

    name: str
    params: list
    latex: dict
    logz: float
    logz_err: float
    information: float
    niter: int
    nlike: int
    ngrad: int
    wall_time: float
    dead: DeadPoints
    weights: np.ndarray
    samples: np.ndarray
    diagnostics: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    truths: dict | None = None
    reference_logz: float | None = None
    logz_err_shrinkage: float | None = None
    logz_err_bootstrap: float | None = None
    logz_err_prior_share: float | None = None
    ess: float | None = None
    ess_params: dict | None = None
    nnan: int = 0
    clusters: list = field(default_factory=list)
    timing: dict = field(default_factory=dict)
    mpi: dict | None = None  # runs over MPI ranks: per-rank chains, busy/waiting seconds, idle fraction (mpi_pool)
    insertion: dict | None = None  # the insertion-rank test of the proposals (sampler.insertion.rank_report)
    sample_logl: np.ndarray | None = None  # logL of each equal-weight sample (None: looked up among the dead points)
    # the run folder these results were read from or saved to: where plot("gradient") finds gradient_check.json
    folder: Path | None = field(default=None, repr=False, compare=False)

    @property
    def nan_fraction(self) -> float:
        """Share of likelihood evaluations that returned NaN (counted as outside every contour)."""
        return self.nnan / max(self.nlike, 1)

    @property
    def dlogz_left(self) -> float | None:
        """The remaining-evidence estimate (dlogz) when the run stopped (None when not recorded)."""
        left = (self.settings or {}).get("dlogz_left")
        if left is not None:
            return float(left)
        remain = (self.diagnostics or {}).get("logz_remain")  # results written before settings held it
        return None if remain is None or len(remain) == 0 else float(remain[-1])

    @property
    def converged(self) -> bool | None:
        """Whether the run stopped because dlogz fell below its target (or every live point tied on a plateau,
        which then holds the rest), rather than at a limit (max_iter, max_nlike, max_time) or a callback; None
        when not recorded."""
        target, left = (self.settings or {}).get("dlogz"), self.dlogz_left
        if (self.settings or {}).get("ended_on_plateau"):
            return True
        return None if target is None or left is None else left < float(target)

    def summary(self) -> str:
        lines = [
            f"{self.name}: logZ = {_log_text(self.logz)} ± {self.logz_err:.3f}   H = {self.information:.2f} nats",
        ]
        if self.logz_err_shrinkage is not None and self.logz_err_bootstrap is not None:
            share = self.logz_err_prior_share or 0.0
            lines.append(f"  logZ error: {self.logz_err_shrinkage:.3f} from shrinkage, "
                         f"{self.logz_err_bootstrap:.3f} from resampling threads (the larger is reported"
                         + (f", combined with {share:.3f} from the estimated share of the prior where logL is "
                            f"finite)" if share > 0 else ")"))
        if self.converged is False:
            lines.append(f"  NOT CONVERGED: the run stopped with dlogz = {self.dlogz_left:.3g} left (target "
                         f"{self.settings['dlogz']:g}): a limit (max_iter, max_nlike, max_time) or a callback ended "
                         f"it first; logZ counts the unexplored rest at the final live points' likelihoods")
        if self.reference_logz is not None:
            dev = (self.logz - self.reference_logz) / self.logz_err if self.logz_err > 0 else float("nan")
            lines.append(f"  reference logZ = {_log_text(self.reference_logz)}  ({dev:+.2f} sigma)")
        settings = self.settings or {}
        precision = ("" if settings.get("dtype", "float64") == "float64" else f" ({settings['dtype']} likelihood"
                     + (", float64 sums)" if settings.get("sum_dtype") == "float64" else ")"))
        lines.append(f"  {self.niter} iterations, {self.nlike} likelihood and {self.ngrad} gradient evaluations"
                     f"{precision}, sampling {self.wall_time:.2f} s")
        if self.timing:
            from .timing import describe

            lines.append(f"  {describe(self.timing)}")
        if self.mpi:
            idle = " ".join(f"{x:.2f}" for x in self.mpi["idle_fraction"])
            lines.append(f"  {self.mpi['ranks']} MPI ranks, idle fraction per rank: {idle}")
        lines.append(f"  {len(self.dead.logl)} dead points, {len(self.samples)} equal-weight samples"
                     + (f" (effective sample size {self.ess:.0f})" if self.ess is not None else ""))
        if self.insertion:
            from .insertion import describe as describe_insertion

            lines.extend(describe_insertion(self.insertion))
        if self.nnan:
            lines.append(f"  {self.nnan} likelihood evaluations ({100 * self.nan_fraction:.2g}%) returned NaN "
                         f"and were treated as zero likelihood")
        if len(self.clusters) > 1:
            parts = ", ".join(f"{100 * c['mass']:.1f}%" + (f" ± {100 * c['mass_err']:.1f}" if "mass_err" in c else "")
                              for c in self.clusters)
            lines.append(f"  {len(self.clusters)} posterior modes, posterior mass {parts}")
        if len(self.samples):
            mean = self.samples.mean(axis=0)
            std = self.samples.std(axis=0)
            width = max(len(p) for p in self.params)
            for p, m, s in zip(self.params, mean, std):
                ess = (self.ess_params or {}).get(p)
                lines.append(f"  {p:<{width}}  {m: .5g} ± {s:.3g}" + (f"   (ESS {ess:.0f})" if ess is not None else ""))
        return "\n".join(lines)

    def save(self, outdir) -> None:
        """Write the run folder (``sampler.run_folder.write_run_folder``)."""
        from .run_folder import make_folder, write_run_folder
        check_path("Results.save", "outdir", outdir, "a folder path")
        write_run_folder(self, make_folder(outdir))  # a file in the way is named as one
        self.folder = Path(outdir)

    def plot(self, kind="corner", path=None):
        """One diagnostic plot as a matplotlib Figure: ``"corner"``, ``"run"``, ``"trace"``, ``"hmc"`` or
        ``"gradient"`` (``sampler.plots``; the last from the run folder's gradient_check.json, for results read
        or saved there); also written to ``path`` (PNG, PDF, ... by its suffix) when given. A kind these results
        cannot draw is a ValueError saying why, with the kinds they can."""
        from .plots import figure_of

        if path is not None:  # checked before drawing: matplotlib's own errors came after the work
            check_path("Results.plot", "path", path, "a file path such as 'corner.png'")
            folder, suffix = Path(path).parent, Path(path).suffix.lower().lstrip(".")
            if not folder.is_dir():
                raise ValueError(f"Results.plot: path: the folder {str(folder)!r} does not exist; create it first")
            from matplotlib.figure import Figure
            formats = Figure().canvas.get_supported_filetypes()
            if suffix not in formats:
                raise ValueError(f"Results.plot: path: {str(path)!r} ends in {('.' + suffix) if suffix else 'no suffix'}"
                                 f"; the file types: {', '.join('.' + f for f in sorted(formats))}")
        figure = figure_of(self, kind)
        if path is not None:
            figure.savefig(path)
        return figure

    def to_anesthetic(self):
        """The run as ``anesthetic.NestedSamples`` (dead points with their birth contours, LaTeX labels).

        Needs the optional package anesthetic (``pip install anesthetic``)."""
        try:
            from anesthetic import NestedSamples
        except ImportError:
            raise ImportError("Results.to_anesthetic needs anesthetic: pip install anesthetic") from None
        labels = {p: f"${self.latex[p]}$" if self.latex.get(p) else p for p in self.params}
        return NestedSamples(data=self.dead.theta, columns=list(self.params), logL=self.dead.logl,
                             logL_birth=self.dead.logl_birth, labels=labels)

    @classmethod
    def load(cls, outdir) -> "Results":
        """Read a run folder written by :meth:`save`."""
        from .run_folder_read import read_run_folder
        check_path("Results.load", "outdir", outdir, "the run folder's path")
        return read_run_folder(outdir)


def _log_text(value) -> str:
    """A log-evidence to 3 decimals, or in exponent form when that would print hundreds of digits (a logL near
    1e300 gave a 300-digit logZ)."""
    return f"{value:.3f}" if abs(value) < 1e9 or value != value else f"{value:.6e}"


def check_path(function, name, value, expected) -> None:
    """A TypeError ``<function>: <name>: expected <expected> (text or a pathlib.Path), got ...`` unless ``value``
    is a non-empty path (Python's own wording was "expected str, bytes or os.PathLike object, not NoneType")."""
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        from nestgrad.likelihoods.ranges import describe
        shown = "an empty path" if isinstance(value, str) else describe(value)
        raise TypeError(f"{function}: {name}: expected {expected} (text or a pathlib.Path), got {shown}")
