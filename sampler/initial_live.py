"""The run's first live points: ``nlive`` prior draws with a finite log-likelihood, and the state they start.

Draws with a NaN or -inf log-likelihood are redrawn; the share kept estimates the prior mass of the finite region,
whose log the run adds to logZ (``log_volume_offset``)."""

import numpy as np

from . import live_moments
from .ghosts import Ghosts
from .nested import NSState
from .rng import seed_chain_states

MAX_DRAW_ROUNDS = 1000  # rounds of n draws before a likelihood finite almost nowhere is given up on


class NoFiniteDraws(ValueError):
    """Too few prior draws have a finite log-likelihood (or one is +inf); the message says what to check."""


def finite_prior_draws(generator, n, d, transform, logl_of):
    """``(u, theta, logl, drawn, finite, nan)``: the first ``n`` of rounds of ``n`` unit-cube draws whose
    log-likelihood (``logl_of(theta)``, ``theta = transform(u)``) is finite; how many were drawn, how many of them
    were finite (``finite / drawn`` estimates the finite region's prior mass) and how many gave NaN."""
    us, thetas, logls = [], [], []
    have, drawn, nan = 0, 0, 0
    for _ in range(MAX_DRAW_ROUNDS):
        u = generator.random((n, d))
        theta = transform(u)
        logl = logl_of(theta)
        drawn += n
        nan += int(np.count_nonzero(np.isnan(logl)))  # -inf is a zero likelihood, written on purpose
        ok = np.isfinite(logl) | (logl == np.inf)
        us.append(u[ok]), thetas.append(theta[ok]), logls.append(logl[ok])
        have += int(ok.sum())
        if have >= n:
            break
    else:
        why = (f"{nan} of them NaN: check the kernel, and the data for NaN (a warning names a data array "
               f"holding any)" if nan else "the rest -inf: check the prior ranges against the likelihood's "
               f"support; an inf in the data, or a division by zero in the kernel, also gives -inf")
        raise NoFiniteDraws(f"fewer than {n} of {drawn} prior draws have a finite log-likelihood ({why})")
    u, theta, logl = (np.concatenate(a)[:n] for a in (us, thetas, logls))
    if np.any(logl == np.inf):
        first = int(np.flatnonzero(logl == np.inf)[0])
        raise NoFiniteDraws(f"the log-likelihood returned +inf at a prior draw, theta = {theta[first].tolist()} (in "
                            f"the order of params): a log-likelihood must be finite or -inf")
    return u, theta, logl, drawn, have, nan


def first_state(u, theta, logl, hmc, nchains, generator) -> NSState:
    """The state before the first iteration: the draws as live points of their own threads, born at -inf, the
    proposal's initial settings (``hmc``: ``sampler.hmc_settings.HMCSettings``) and ``nchains`` chain states."""
    n, d = u.shape
    return NSState(u=u, theta=theta, logl=logl, logl_birth=np.full(n, -np.inf),
                   thread=np.arange(n, dtype=np.int64), uid=np.arange(n, dtype=np.int64),
                   parent=np.full(n, -1, np.int64), labels=np.zeros(n, np.int64),
                   step_size=float(hmc.initial_step), n_steps=hmc.initial_steps(d), rho=np.full(2, np.nan),
                   jumps=1 if hmc.jumps is None else int(hmc.jumps),
                   chain_rng=seed_chain_states(generator, nchains), iteration=0, next_thread=n, next_uid=n,
                   **{f"ghost_{f}": a for f, a in Ghosts.none(d)._asdict().items()},
                   moments=live_moments.unknown(d))
