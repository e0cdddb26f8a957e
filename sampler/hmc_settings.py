"""Tuning of the constrained-HMC proposal and its adaptation between iterations (pure functions of measurements).

Two quantities adapt, each from what the previous iteration's chains did:

* the step size (in whitened units) follows the fraction of steps that left the contour towards
  ``target_outside``;
* the trajectory length follows how much the new points still remember their start points: ``rho`` is the
  correlation between the chains' start and end points (``sampler.decorrelation``), smoothed over iterations.
  Above ``target_correlation`` the trajectories lengthen by ``length_gain``; well below it they shorten slowly,
  never below the starting length ``min_steps + steps_per_dim * d``. The floor is measured, not a guess: on the
  10-D Gaussian (12 seeds) trajectories allowed down to 20 steps gave a logZ seed scatter of 0.20 against a
  reported error of 0.14 although the measured start-end correlations were near zero, while 40 steps
  (20 + 2 d) gave 0.14 against 0.14. A fixed ``n_steps`` turns the adaptation off.

The outside-fraction target is measured too. At 0.2 the chains crawled through heavy-tailed, star-shaped contours
(product of six Cauchy densities, width 0.05 on U(-20, 20)^6, ``tests/sampler/hard_problems.cauchy``): the step
that keeps 80% of moves inside is set by the narrow arms of the star, and 260 steps left a start-end rank
correlation of the coordinates of 0.52 (0.32 with 1300 steps), so logZ scattered twice its reported error over
seeds (nlive 500, 20 seeds: rms pull 1.96, error / seed scatter 0.50). From one frozen mid-run live set, 260 steps
four times longer (outside fraction 0.55, 40% of moves reversed) left a correlation of 0.25, less than 1300 short
ones. With a target of 0.5 the same 20 seeds gave rms pull 0.93, error / scatter 1.08, for 1.27x the likelihood
calls (0.4: 1.05 and 1.02). The 20-D ill-conditioned Gaussian, the unequal mixture, the slanted ridge and the
ignored parameter (10 seeds each) kept rms pulls of 0.8-1.3 and error / scatter 0.7-1.5, and the 30-D Gaussian
and the 2-D and 30-D Gaussian shells (4-6 seeds) rms pulls of 0.76-1.32, for 5-22% more likelihood calls. Not
solved: at nlive 100 the Cauchy problem still over-estimates logZ (30 seeds, mean pull +1.1, rms 1.6; +1.3 and
2.0 at 0.2), which trajectories five times longer reduce to +0.56 and 1.1.
"""

import math
from typing import NamedTuple

from nestgrad.likelihoods.errors import did_you_mean

METRICS = ("auto", "dense", "diagonal")


class HMCSettings(NamedTuple):
    """Settings of the constrained-HMC chains (YAML ``sampler.hmc``).

    n_steps: fixed steps per trajectory, or ``None`` (default) to adapt the length from decorrelation, starting
        at ``min_steps + steps_per_dim * d`` (also the floor) and kept below ``min_steps + max_steps_per_dim * d``.
    min_steps, steps_per_dim, max_steps_per_dim: see n_steps.
    target_correlation: largest wanted correlation between a chain's start and end point.
    length_gain: factor by which trajectories lengthen when they fall short of ``target_jump``.
    refresh_every: a fresh direction every this many steps (a billiard in a round contour conserves its impact
        parameter, so one direction per trajectory would barely change the radius).
    target_outside: fraction of steps that leave the contour, which the step size is tuned to (0.5: see the
        module docstring for why not less).
    initial_step: step length before adaptation, in whitened units (standard deviations of the live points).
    step_jitter: sigma of the per-chain log-normal jitter of the step length (breaks resonances).
    adapt_rate: gain of ``log step += adapt_rate * (target_outside - outside_fraction)``.
    metric: ``dense`` (live-point covariance per cluster), ``diagonal`` (its variances) or ``auto`` (dense up to
        ``dense_max_dim`` dimensions: a dense metric costs O(d^2) per reflection and direction).
    clustering: find modes among the live points (kNN components) and give each its own metric and ellipsoid
        (proposals only: the results' posterior modes are found either way).
    recluster_every: iterations between clusterings while the live points form one cluster (labels of new points
        follow their regions in between).
    recluster_every_modes: iterations between clusterings while they form several. A small mode can stay joined
        to a big one by a neck until late and then lose its last survivors within a few iterations; only a
        clustering in that window gives it a cluster of its own, whose ellipsoid then stays as a ghost through
        which jumps can bring the mode back (``sampler.ghosts``).
    jumps: independence jump proposals (uniform in the union of the clusters' ellipsoids) at each direction
        refresh, or ``None`` (default) to adapt them: where jumps are often accepted (low dimensions, separated
        modes) each chain makes enough of them to expect ``jumps_wanted`` accepted ones, up to ``max_jumps`` per
        refresh; where they are rarely accepted (< ``min_jump_acceptance``) one per refresh. 0 turns jumps off.
        Jumps are what moves chains between modes, so while the live points form several clusters the cut comes
        only below ``min_jump_acceptance_modes`` and the cap is ``max_jumps_modes``: on Rastrigin's function in
        3-D (PolyChord's example, 14-36 clusters of 1-40 points while the contour passes the low modes' peaks)
        the acceptance fell to 0.4-0.8%; one jump a refresh left 60-75% of the chains in their start's mode, the
        modes' shares of the live points drifted from their volumes and logZ came out +0.08 nats high (0.5 error
        bars), and 20 a refresh still left it +0.04 (0.3 error bars, 200 seeds; docs/benchmarks.md).
    axis_slices: slice-sampling moves along the axes of the chain's metric at each direction refresh (0: none).
        One such move crosses a long or heavy-tailed direction whose width the billiard's step (tuned to the
        contour's narrowest directions) would need hundreds of steps to diffuse across.
    pair_slices: slice-sampling moves at each direction refresh along the difference of two live points of the
        chain's cluster (0: none): directions that follow the contour's shape, where no axis of the metric does
        (the arms of a star whose axes are not the coordinate axes). Off by default: they cost 20-40% more
        likelihood values and did not remove the rotated star's bias (docs/benchmarks.md).
    radial_slices: slice-sampling moves at each direction refresh along the line through the centre of the
        chain's cluster and the chain's point, with the density r^(d-1) that polar coordinates about a fixed
        centre give each line (0: none). One move carries a point along its arm of a star, out to the tip or back
        to the core, whatever the arm's orientation; the metric's axes and the billiard do not when the arms run
        along no axis (the rotated Cauchy product: mean pull +0.58 without them, -0.01 with one; 50 seeds). They
        cost 14-28% more likelihood values elsewhere (docs/benchmarks.md, 2026-11-28, sixth session).
    prior_draws: new points are drawn from the prior (by rejection, no chains) while at least this share of prior
        draws is expected above the contour (0: chains from the first iteration). Exact draws from all of the
        contour, so a region cut off from the others early keeps its right share (``sampler.prior_draws``).
    """

    n_steps: int | None = None
    min_steps: int = 20
    steps_per_dim: float = 2.0
    max_steps_per_dim: float = 40.0
    target_correlation: float = 0.25
    length_gain: float = 1.25
    refresh_every: int = 5
    target_outside: float = 0.5
    initial_step: float = 0.5
    step_jitter: float = 0.3
    adapt_rate: float = 2.0
    metric: str = "auto"
    dense_max_dim: int = 50
    clustering: bool = True
    recluster_every: int = 10
    recluster_every_modes: int = 4
    jumps: int | None = None
    jumps_wanted: float = 6.0
    max_jumps: int = 20
    max_jumps_modes: int = 100
    min_jump_acceptance: float = 0.02
    min_jump_acceptance_modes: float = 0.002
    axis_slices: int = 1
    pair_slices: int = 0
    radial_slices: int = 1
    prior_draws: float = 0.01

    def initial_steps(self, ndim: int) -> int:
        if self.n_steps is not None:
            return int(self.n_steps)
        return int(round(self.min_steps + self.steps_per_dim * ndim))

    def max_steps(self, ndim: int) -> int:
        return int(round(self.min_steps + self.max_steps_per_dim * ndim))

    def dense_for(self, ndim: int) -> bool:
        return self.metric == "dense" or (self.metric == "auto" and ndim <= self.dense_max_dim)

    def adapt_step(self, step_size: float, outside_fraction: float) -> float:
        """Next iteration's step size from this iteration's measured outside fraction."""
        new = step_size * math.exp(self.adapt_rate * (self.target_outside - outside_fraction))
        return float(min(max(new, 1e-12), 1e3))

    def adapt_length(self, n_steps: int, rho: float, ndim: int) -> int:
        """Next iteration's trajectory length from the smoothed start-end correlation (module docstring)."""
        if self.n_steps is not None or not math.isfinite(rho):
            return int(n_steps)
        if rho > self.target_correlation:
            new = math.ceil(n_steps * self.length_gain)
        elif rho < 0.5 * self.target_correlation:
            new = math.floor(n_steps * 0.95)
        else:
            new = n_steps
        return int(min(max(new, self.initial_steps(ndim)), self.max_steps(ndim)))

    def adapt_jumps(self, jumps: int, tried: int, accepted: int, n_steps: int, several_modes: bool = False) -> int:
        """Next iteration's jump proposals per refresh from this iteration's jump acceptance (``several_modes``:
        the live points form more than one cluster)."""
        if self.jumps is not None:
            return int(self.jumps)
        if tried == 0:
            return max(int(jumps), 1)
        rate = accepted / tried
        if rate < (self.min_jump_acceptance_modes if several_modes else self.min_jump_acceptance) or rate == 0.0:
            return 1
        refreshes = max(1, -(-int(n_steps) // self.refresh_every))
        cap = self.max_jumps_modes if several_modes else self.max_jumps
        return int(min(max(math.ceil(self.jumps_wanted / (rate * refreshes)), 1), cap))

    @classmethod
    def from_any(cls, value) -> "HMCSettings":
        """Accept ``None``, an ``HMCSettings`` or a dict of fields; unknown keys and bad values are errors naming
        the key."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise TypeError(f"hmc: expected a dict of settings, got {value!r}")
        unknown = sorted(set(value) - set(cls._fields))
        if unknown:
            hints = "".join(did_you_mean(word, cls._fields) for word in unknown)
            raise ValueError(f"hmc: unknown setting(s) {', '.join(unknown)}{hints}; known: {', '.join(cls._fields)}")
        out = cls(**value)
        out._check()
        return out

    def _check(self):
        def bad(key, what):
            raise ValueError(f"hmc.{key} must be {what}, got {getattr(self, key)!r}")

        def number(key, low, high, integer=False):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                bad(key, f"a finite number in [{low}, {high}]")
            if integer and int(v) != v:
                bad(key, "an integer")
            if not low <= v <= high:
                bad(key, f"in [{low}, {high}]")

        if self.n_steps is not None:
            number("n_steps", 1, 10**6, integer=True)
        number("min_steps", 1, 10**5, integer=True)
        number("steps_per_dim", 0, 1000)
        number("max_steps_per_dim", 0, 10**4)
        if self.max_steps_per_dim < self.steps_per_dim:  # the cap below the floor: the cap won, silently
            bad("max_steps_per_dim", f"at least steps_per_dim ({self.steps_per_dim!r}): the chains' length starts "
                                     f"at min_steps + steps_per_dim * d and is kept below min_steps + "
                                     f"max_steps_per_dim * d")
        number("target_correlation", 0.0, 0.99)
        number("length_gain", 1.0, 4.0)
        number("refresh_every", 1, 10**5, integer=True)
        number("target_outside", 1e-3, 0.999)
        number("initial_step", 1e-9, 100.0)
        number("step_jitter", 0.0, 3.0)
        number("adapt_rate", 0.0, 100.0)
        number("dense_max_dim", 0, 10**4, integer=True)
        number("recluster_every", 1, 10**6, integer=True)
        number("recluster_every_modes", 1, 10**6, integer=True)
        if self.jumps is not None:
            number("jumps", 0, 1000, integer=True)
        number("jumps_wanted", 0.0, 1000.0)
        number("max_jumps", 1, 1000, integer=True)
        number("max_jumps_modes", 1, 1000, integer=True)
        number("min_jump_acceptance", 0.0, 1.0)
        number("min_jump_acceptance_modes", 0.0, 1.0)
        number("axis_slices", 0, 1000, integer=True)
        number("pair_slices", 0, 1000, integer=True)
        number("radial_slices", 0, 1000, integer=True)
        number("prior_draws", 0.0, 1.0)
        if self.metric not in METRICS:
            bad("metric", f"one of {', '.join(METRICS)}")
        if not isinstance(self.clustering, bool):
            bad("clustering", "true or false")
