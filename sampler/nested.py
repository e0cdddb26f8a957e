"""The nested-sampling step as a pure function over explicit state (BlackJAX ``ns/base.py`` style).

``step(state, generator, proposal, k, settings) -> (state, info)`` removes the ``k`` lowest of the ``n`` live
points, starts ``k`` constrained-HMC chains from survivors chosen uniformly (with replacement), replaces the
removed points by the chain end points and records ``logl_birth`` = the highest removed ``logl`` for them.
Randomness comes only from the numpy ``generator`` (start points, step-size jitter) and the per-chain
xoroshiro states carried in ``state.chain_rng``, so a state and a generator state determine everything after.
"""

from typing import NamedTuple

import numpy as np

from .hmc import STAT_NGRAD, STAT_NLIKE, STAT_OUTSIDE, STAT_REFLECT, STAT_REVERSE, STAT_STEPS, HMCSettings


class NSState(NamedTuple):
    """Live points and proposal state between iterations.

    u, theta: (n, d) unit-cube and physical coordinates of the live points.
    logl, logl_birth: (n,) their log-likelihoods and the contours they were born above.
    step_size: current HMC step length (unit-cube units), adapted between iterations.
    chain_rng: (k, 2) uint64 xoroshiro128+ states, one row per chain slot.
    """

    u: np.ndarray
    theta: np.ndarray
    logl: np.ndarray
    logl_birth: np.ndarray
    step_size: float
    chain_rng: np.ndarray


class NSInfo(NamedTuple):
    """What one iteration did.

    dead_u, dead_theta, dead_logl, dead_birth: the k removed points, sorted by logl ascending.
    logl_star: the new contour (highest removed logl); every new point has logl > logl_star.
    step_size: the mean step length the chains used (before jitter).
    outside_fraction: outside first proposals / steps over all chains (what the step size is tuned on).
    reflections: (k,) successful reflections per chain; reversals: (k,) reversals per chain.
    acceptance: fraction of steps that moved (straight or reflected).
    nlike, ngrad: likelihood values and gradients evaluated in this iteration.
    """

    dead_u: np.ndarray
    dead_theta: np.ndarray
    dead_logl: np.ndarray
    dead_birth: np.ndarray
    logl_star: float
    step_size: float
    outside_fraction: float
    reflections: np.ndarray
    reversals: np.ndarray
    acceptance: float
    nlike: int
    ngrad: int


class Proposal(NamedTuple):
    """The fused chain kernel with everything it needs besides the state (see ``sampler.hmc``)."""

    advance: object
    workspace: object
    data: tuple
    codes: np.ndarray
    args: np.ndarray
    n_steps: int
    refresh_every: int


def step(state: NSState, generator: np.random.Generator, proposal: Proposal, k: int,
         settings: HMCSettings) -> tuple[NSState, NSInfo]:
    """One nested-sampling iteration replacing the ``k`` lowest live points; returns the new state and info."""
    n = state.logl.shape[0]
    order = np.argsort(state.logl, kind="stable")
    removed, survivors = order[:k], order[k:]
    logl_star = float(state.logl[removed[-1]])

    starts = survivors[generator.integers(0, n - k, size=k)]
    step_sizes = state.step_size * np.exp(settings.step_jitter * generator.standard_normal(k))
    chain_rng = state.chain_rng.copy()
    ws = proposal.workspace
    proposal.advance(np.ascontiguousarray(state.u[starts]), state.logl[starts], logl_star, step_sizes,
                     proposal.n_steps, proposal.refresh_every, chain_rng, proposal.data, proposal.codes, proposal.args, *ws.arrays())

    info_stats = ws.stats
    steps = int(info_stats[:, STAT_STEPS].sum())
    outside = int(info_stats[:, STAT_OUTSIDE].sum())
    reversals = info_stats[:, STAT_REVERSE].copy()
    outside_fraction = outside / max(steps, 1)
    info = NSInfo(
        dead_u=state.u[removed], dead_theta=state.theta[removed], dead_logl=state.logl[removed],
        dead_birth=state.logl_birth[removed], logl_star=logl_star, step_size=float(state.step_size),
        outside_fraction=float(outside_fraction), reflections=info_stats[:, STAT_REFLECT].copy(),
        reversals=reversals, acceptance=float(1.0 - reversals.sum() / max(steps, 1)),
        nlike=int(info_stats[:, STAT_NLIKE].sum()), ngrad=int(info_stats[:, STAT_NGRAD].sum()))

    u, theta = state.u.copy(), state.theta.copy()
    logl, birth = state.logl.copy(), state.logl_birth.copy()
    u[removed] = ws.out_u
    theta[removed] = ws.out_theta
    logl[removed] = ws.out_logl
    birth[removed] = logl_star
    new_state = NSState(u, theta, logl, birth, settings.adapt(state.step_size, outside_fraction), chain_rng)
    return new_state, info
