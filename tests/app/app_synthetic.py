"""Exact synthetic nested-sampling runs, independent of the sampler, for testing files and plots.

The likelihood is an isotropic Gaussian N(centre, sigma^2 I) on the unit cube with a uniform prior, so the
constrained prior {L > L*} is a ball (clipped by the cube) and new points can be drawn from it exactly by
rejection. L is normalised in u and the cube holds all but ~1e-6 of its mass, so logZ = 0 whatever the linear map
theta = low + (high - low) u is.
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from nestgrad.sampler.results import DeadPoints, Results

CENTRE, SIGMA = 0.5, 0.1


def _logl(u):
    d = u.shape[-1]
    r2 = np.sum((u - CENTRE) ** 2, axis=-1)
    return -0.5 * r2 / SIGMA**2 - 0.5 * d * np.log(2 * np.pi * SIGMA**2)


def _draw_above(rng, logl_star, d):
    """One point uniform in the cube with logL > logl_star (exact: ball of the contour, rejection)."""
    r2_max = -2 * SIGMA**2 * (logl_star + 0.5 * d * np.log(2 * np.pi * SIGMA**2)) if np.isfinite(logl_star) else np.inf
    while True:
        if r2_max < 0.25:  # the ball lies inside the cube: draw in the ball directly
            direction = rng.standard_normal(d)
            direction /= np.linalg.norm(direction)
            u = CENTRE + np.sqrt(r2_max) * rng.uniform() ** (1.0 / d) * direction
        else:
            u = rng.uniform(size=d)
        if np.sum((u - CENTRE) ** 2) < r2_max:
            return u


def gaussian_run(d=2, nlive=100, seed=0, low=-1.0, high=3.0, name="synthetic", stop_dlogz=1e-3):
    """A finished exact run returned as a `Results`; theta = low + (high - low) * u for every parameter."""
    rng = np.random.default_rng(seed)
    live_u = rng.uniform(size=(nlive, d))
    live_l = _logl(live_u)
    live_b = np.full(nlive, -np.inf)
    dead_u, dead_l, dead_b, logl_star = [], [], [], []
    log_x = 0.0
    logz = -np.inf
    while True:
        i = int(np.argmin(live_l))
        dead_u.append(live_u[i].copy()); dead_l.append(live_l[i]); dead_b.append(live_b[i])
        logl_star.append(live_l[i])
        logz = np.logaddexp(logz, live_l[i] + log_x - np.log(nlive))
        log_x -= 1.0 / nlive
        live_u[i] = _draw_above(rng, live_l[i], d)
        live_b[i] = live_l[i]
        live_l[i] = _logl(live_u[i][None])[0]
        if live_l.max() + log_x - logz < np.log(stop_dlogz):
            break
    order = np.argsort(live_l)
    u = np.vstack([np.array(dead_u), live_u[order]])
    logl = np.concatenate([dead_l, live_l[order]])
    birth = np.concatenate([dead_b, live_b[order]])
    niter = len(dead_l)
    # live counts: nlive for every iteration, then nlive, nlive-1, ..., 1 for the final live points
    counts = np.concatenate([np.full(niter, nlive), np.arange(nlive, 0, -1)])
    log_x = -np.cumsum(1.0 / counts)
    log_dx = np.log(np.exp(np.concatenate([[0.0], log_x[:-1]])) - np.exp(log_x))
    log_w = logl + log_dx
    logz_total = logsumexp(log_w)
    weights = np.exp(log_w - logz_total)
    information = float(np.sum(weights * (logl - logz_total)))
    width = high - low
    theta = low + width * u
    samples = theta[rng.choice(len(theta), size=500, p=weights)]
    params = [f"x{j}" for j in range(d)]
    diagnostics = {
        "logl_star": np.array(logl_star),
        "step_size": 0.1 * np.exp(-np.arange(niter) / (3.0 * nlive)),
        "outside_fraction": rng.uniform(0.1, 0.4, niter),
        "reflections": rng.poisson(3.0, niter).astype(float),
        "acceptance": rng.uniform(0.8, 1.0, niter),
        "nlike": rng.poisson(40, niter).astype(np.int64),
        "ngrad": rng.poisson(30, niter).astype(np.int64),
        "nlive": np.full(niter, nlive, dtype=np.int64),
        "logz": np.logaddexp.accumulate(log_w[:niter]),
        "logz_remain": (np.maximum.accumulate(logl[::-1])[::-1] + log_x)[:niter],
        "reflections_per_chain": rng.poisson(3.0, (niter, 1)).astype(float),
    }
    return Results(
        name=name, params=params, latex={p: rf"x_{{{j}}}" for j, p in enumerate(params)},
        logz=float(logz_total), logz_err=float(np.sqrt(max(information, 0.0) / nlive)),
        information=information, niter=niter, nlike=int(diagnostics["nlike"].sum()),
        ngrad=int(diagnostics["ngrad"].sum()), wall_time=0.5,
        dead=DeadPoints(u=u, theta=theta, logl=logl, logl_birth=birth),
        weights=weights, samples=samples, diagnostics=diagnostics,
        settings={"nlive": nlive, "delete_fraction": 1.0 / nlive, "seed": seed, "backend": "synthetic",
                  "dtype": "float64", "dlogz": stop_dlogz, "hmc": {"steps": 10},
                  "prior": {p: ["uniform", low, high] for p in params}},
        truths={p: low + width * CENTRE for p in params}, reference_logz=0.0,
    )
