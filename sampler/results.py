"""The result of a run (shared contract, see docs/internals.md and the sampler issue): dead points, evidence,
posterior weights and samples, per-iteration diagnostics and the settings that produced them."""

from dataclasses import dataclass, field
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
    ``nlike``, ``ngrad`` (per iteration), ``nlive``, ``logz`` and ``logz_remain`` (running estimates).
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
    ess: float | None = None
    nnan: int = 0
    clusters: list = field(default_factory=list)

    def summary(self) -> str:
        lines = [
            f"{self.name}: logZ = {self.logz:.3f} ± {self.logz_err:.3f}   H = {self.information:.2f} nats",
        ]
        if self.reference_logz is not None:
            dev = (self.logz - self.reference_logz) / self.logz_err if self.logz_err > 0 else float("nan")
            lines.append(f"  reference logZ = {self.reference_logz:.3f}  ({dev:+.2f} sigma)")
        lines.append(f"  {self.niter} iterations, {self.nlike} likelihood and {self.ngrad} gradient evaluations, "
                     f"{self.wall_time:.2f} s")
        lines.append(f"  {len(self.dead.logl)} dead points, {len(self.samples)} equal-weight samples")
        if len(self.samples):
            mean = self.samples.mean(axis=0)
            std = self.samples.std(axis=0)
            width = max(len(p) for p in self.params)
            for p, m, s in zip(self.params, mean, std):
                lines.append(f"  {p:<{width}}  {m: .5g} ± {s:.3g}")
        return "\n".join(lines)

    def save(self, outdir) -> None:
        """Write the run folder (``sampler.run_folder.write_run_folder``)."""
        from .run_folder import write_run_folder
        write_run_folder(self, outdir)

    @classmethod
    def load(cls, outdir) -> "Results":
        """Read a run folder written by :meth:`save`."""
        from .run_folder import read_run_folder
        return read_run_folder(outdir)
