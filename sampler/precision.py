"""Whether the numbers a run computes with resolved the posterior it was sampled for.

Float32 parameters. A float32 kernel (the GPU's default, ``likelihoods.likelihood.default_precision``) sees each
parameter rounded to float32, whose spacing near a value x is about 6e-8 |x|. A posterior whose standard deviation
spans N such steps sees a likelihood that is a staircase: near one standard deviation from the peak each step
changes logL by about 1/N nats, so contours tie (plateaus) and logZ can be off by up to about 1/(2N) nats. Float64
sums do not help: the rounding is of the parameters. Below :data:`MIN_STEPS` steps the run says so and names the
parameters.

The unit cube's reach. The chains move in the priors' quantiles ``u``, float64 numbers in [0, 1], which are dense
near 0 and spaced 1.1e-16 apart below 1: an unbounded prior's upper tail ends, for the sampler, at ``u = 1 - 2^-53``
(8.2 sds into a normal's upper tail, 37 scales into an exponential's; its lower tail reaches 38 sds), and so does a
bounded prior whose bound lies beyond that (a truncated normal on [-5, 100]). A posterior beyond that is cut off
there, silently; within :data:`MIN_REACH_SDS` posterior sds of it the run says so.
"""

import numpy as np

MIN_STEPS = 100  # float32 steps across a posterior standard deviation below which the run warns
MIN_REACH_SDS = 4.0  # posterior sds between the posterior mean and the end of the cube's reach below which it warns
# The largest unit-cube values below 1 (a family may map one of them to 1 and so to infinity) and the smallest above 0.
_TOP = 1.0 - np.ldexp(1.0, -53) * np.array([1.0, 2.0, 4.0])
_BOTTOM = np.array([np.nextafter(0.0, 1.0), np.ldexp(1.0, -1022), np.ldexp(1.0, -60)])


class Float32ResolutionWarning(UserWarning):
    """A parameter's posterior is only a few float32 steps wide: sample with dtype float64."""


class PriorReachWarning(UserWarning):
    """A parameter's posterior lies near the end of its prior's tail that float64 unit-cube values reach."""


def _weighted_moments(theta, weights):
    w = np.asarray(weights, dtype=np.float64) / np.sum(weights)
    theta = np.asarray(theta, dtype=np.float64)
    mean = w @ theta
    return mean, np.sqrt(np.maximum(w @ (theta - mean) ** 2, 0.0))


def coarse_parameters(params, theta, weights, dtype) -> list[str]:
    """Messages for the parameters whose weighted posterior (``theta`` (n, d), ``weights`` (n,)) spans fewer than
    :data:`MIN_STEPS` steps of float32 at its mean; none unless ``dtype`` is float32."""
    if np.dtype(dtype) != np.float32 or theta.shape[0] == 0 or not np.sum(weights) > 0:
        return []
    mean, sd = _weighted_moments(theta, weights)
    step = np.spacing(np.abs(mean).astype(np.float32)).astype(np.float64)
    messages = []
    for name, m, s, h in zip(params, mean, sd, step):
        if s < MIN_STEPS * h:
            messages.append(f"parameter {name}: its posterior (mean {m:.9g}, sd {s:.3g}) is {s / h:.3g} float32 "
                            f"steps wide: a float32 likelihood rounds it, so logL moves in steps of about "
                            f"{h / s if s > 0 else np.inf:.2g} nats and the evidence and posterior are that coarse; "
                            f"sample with dtype: float64 (or reparametrise it to an offset from {m:.9g})")
    return messages


def reach(distribution) -> tuple:
    """``(lowest, highest)`` parameter values the unit cube's float64 values map ``distribution`` to, or None on a
    side whose hard bound they reach (the support ends there, not the cube's reach). A bound counts as reached
    within a millionth of the prior's interquartile range: a truncated normal on [-5, 100] ends for the sampler at
    8.2 sds, far short of its bound (an outsider's posterior 10 sds out was cut there without a word)."""
    bounds = distribution.bounds()
    quartiles = distribution.transform(np.array([0.25, 0.75]))
    tolerance = 1e-6 * abs(float(quartiles[1] - quartiles[0]))
    ends = []
    for bound, us, pick in zip(bounds, (_BOTTOM, _TOP), (np.min, np.max)):
        values = distribution.transform(us)
        values = values[np.isfinite(values)]
        end = None if values.size == 0 else float(pick(values))
        reached = end is None or (bound is not None and abs(end - bound) <= tolerance)
        ends.append(None if reached else end)
    return tuple(ends)


def beyond_reach(prior, theta, weights) -> list[str]:
    """Messages for the parameters whose weighted posterior mean lies within :data:`MIN_REACH_SDS` posterior sds
    of the end of its prior's reach (:func:`reach`); ``prior`` a ``sampler.priors.Prior``. Where the support has a
    bound beyond that end, only when the part out of reach is at least a posterior sd wide (a Beta posterior piled
    against 1 is not cut by the last 1e-6 of the support that the table's quantiles do not reach)."""
    distributions = getattr(prior, "distributions", None)
    if not distributions or theta.shape[0] == 0 or not np.sum(weights) > 0:
        return []
    mean, sd = _weighted_moments(theta, weights)
    messages = []
    for (name, dist), m, s in zip(distributions.items(), mean, sd):
        for side, end, bound in zip(("lower", "upper"), reach(dist), dist.bounds()):
            if end is None or not abs(end - m) < MIN_REACH_SDS * s:
                continue
            if bound is not None and abs(bound - end) < s:
                continue
            where = "u = 1 - 1.1e-16" if side == "upper" else "u near 1e-300"
            normal = dist.family in ("normal", "truncnormal")
            flip = ("; or sample minus the parameter, under the mirrored normal prior: float64 reaches 38 sds "
                    "into a normal's lower tail and 8.2 into its upper") if side == "upper" and normal else ""
            messages.append(
                f"parameter {name}: its posterior (mean {m:.6g}, sd {s:.3g}) lies {abs(end - m) / s:.2g} sds from "
                f"{end:.6g}, where its {dist.describe()} prior's {side} tail ends for the sampler ({where}, the last "
                f"float64 unit-cube value): the chains cannot go beyond it, so the posterior and the evidence may "
                f"be cut off there. Use a prior the data do not contradict this strongly (wider, or centred nearer "
                f"the posterior){flip}")
    return messages
