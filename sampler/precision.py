"""Whether a float32 likelihood resolved the posterior it was sampled for.

A float32 kernel (the GPU's default, ``likelihoods.likelihood.default_precision``) sees each parameter rounded to
float32, whose spacing near a value x is about 6e-8 |x|. A posterior whose standard deviation spans N such steps
sees a likelihood that is a staircase: near one standard deviation from the peak each step changes logL by about
1/N nats, so contours tie (plateaus) and logZ can be off by up to about 1/(2N) nats. Float64 sums do not help: the
rounding is of the parameters. Below :data:`MIN_STEPS` steps the run says so and names the parameters.
"""

import numpy as np

MIN_STEPS = 100  # float32 steps across a posterior standard deviation below which the run warns


class Float32ResolutionWarning(UserWarning):
    """A parameter's posterior is only a few float32 steps wide: sample with dtype float64."""


def coarse_parameters(params, theta, weights, dtype) -> list[str]:
    """Messages for the parameters whose weighted posterior (``theta`` (n, d), ``weights`` (n,)) spans fewer than
    :data:`MIN_STEPS` steps of float32 at its mean; none unless ``dtype`` is float32."""
    if np.dtype(dtype) != np.float32 or theta.shape[0] == 0 or not np.sum(weights) > 0:
        return []
    w = np.asarray(weights, dtype=np.float64) / np.sum(weights)
    theta = np.asarray(theta, dtype=np.float64)
    mean = w @ theta
    sd = np.sqrt(np.maximum(w @ (theta - mean) ** 2, 0.0))
    step = np.spacing(np.abs(mean).astype(np.float32)).astype(np.float64)
    messages = []
    for name, m, s, h in zip(params, mean, sd, step):
        if s < MIN_STEPS * h:
            messages.append(f"parameter {name}: its posterior (mean {m:.9g}, sd {s:.3g}) is {s / h:.3g} float32 "
                            f"steps wide: a float32 likelihood rounds it, so logL moves in steps of about "
                            f"{h / s if s > 0 else np.inf:.2g} nats and the evidence and posterior are that coarse; "
                            f"sample with dtype: float64 (or reparametrise it to an offset from {m:.9g})")
    return messages
