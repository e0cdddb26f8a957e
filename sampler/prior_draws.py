"""New live points drawn from the prior itself, by rejection, while the contour still holds a large share of it.

A chain moves from a live point, so its end point lies in the part of the contour its start lies in. Where the
contour cuts a region off from the rest, that region keeps the live points it had and gains new ones in proportion
to them, not to its volume: right on average, but with the spread of a Polya urn, and a region whose last live
point dies is never entered again (a chain cannot reach it; no live point's ellipsoid covers it). Draws from the
whole prior kept when above the contour are exact, independent draws from all of it, and cost 1 / X likelihood
values each where the contour holds a share X of the prior -- fewer than a chain's while X is large, and no
gradients. So, as dynesty draws from the unit cube first, the run's new points come from the prior while the
expected acceptance ``X`` (the run's estimate of the contour's prior volume, times the share of the prior where
the likelihood is finite) is at least ``hmc.prior_draws``, and from the chains after. At the default 0.01 a point
costs at most about 100 values and the whole phase about 100 x nlive, which replaces about 4.6 x nlive chains.

What it found: half a 3-D prior a plateau (logL = 0), the other half a peak cut off from the plateau (beyond a
gap where logL falls far below 0) holding half the evidence; with the chains alone the peak's live points all
died on 1 of 40 seeds before the plateau was reached, and the run ended there with logZ 0.80 low (pull -17)
(``tests/sampler/test_prior_draws.py``).
"""

import math
from typing import NamedTuple

import numpy as np

from .hmc import STAT_NAN, STAT_NLIKE

MAX_BATCH = 1 << 18  # draws evaluated at once (two float64 arrays of MAX_BATCH x d)
MIN_BATCH = 64
# Draws given to one iteration's points, as a multiple of k / the least acceptance used: the run's estimate of
# X is a mean over shrinkage sequences, and the true share is seldom below half of it.
DRAW_LIMIT = 4.0


class Drawn(NamedTuple):
    """What :func:`draw_above` made. u, theta, logl: the ``k`` points (``None`` when the draws ran out first);
    drawn: likelihood values computed; nan: how many of them were NaN."""

    u: np.ndarray | None
    theta: np.ndarray | None
    logl: np.ndarray | None
    drawn: int
    nan: int


def draw_above(generator, k, d, logl_star, acceptance, least_acceptance, theta_logl_at) -> Drawn:
    """``k`` prior draws with ``logl > logl_star``: rounds of unit-cube draws sized by the expected
    ``acceptance`` (then by the one observed), given up after ``DRAW_LIMIT * k / least_acceptance`` draws.
    ``theta_logl_at(u)`` -> ``(theta, logl)`` of unit-cube points ``u`` (m, d)."""
    limit = int(math.ceil(DRAW_LIMIT * k / least_acceptance))
    us, thetas, logls = [], [], []
    have = drawn = nan = 0
    while have < k:
        rate = have / drawn if have else acceptance
        size = min(MAX_BATCH, limit - drawn, max(MIN_BATCH, int(math.ceil(1.2 * (k - have) / rate))))
        if size <= 0:
            return Drawn(None, None, None, drawn, nan)
        u = generator.random((size, d))
        theta, logl = theta_logl_at(u)
        drawn += size
        nan += int(np.count_nonzero(np.isnan(logl)))
        above = logl > logl_star  # NaN and -inf are below every contour; a tie with it is not above
        us.append(u[above]), thetas.append(theta[above]), logls.append(logl[above])
        have += int(np.count_nonzero(above))
    u, theta, logl = (np.concatenate(parts)[:k] for parts in (us, thetas, logls))
    return Drawn(u, theta, logl, drawn, nan)


def place(workspace, drawn, regions, slots=None) -> None:
    """The draws as the iteration's new points, where the chains would have put theirs: the chain workspace's
    outputs (``regions``, each draw's region, as a chain's cluster; the counts in the first chain's statistics)
    and, for a live set in slots, ``slots = (store, the new points' slots)``."""
    workspace.out_u[:], workspace.out_theta[:], workspace.out_logl[:] = drawn.u, drawn.theta, drawn.logl
    workspace.out_cluster[:] = regions
    workspace.stats[:] = 0
    workspace.stats[0, STAT_NLIKE], workspace.stats[0, STAT_NAN] = drawn.drawn, drawn.nan
    if slots is not None:
        store, into = slots
        store.put_host_rows(into, drawn.u, drawn.theta)


def expected_acceptance(log_x, log_finite_share) -> float:
    """The share of prior draws expected above the contour: its estimated volume in the finite region, times that
    region's share of the prior."""
    return math.exp(log_x + log_finite_share)
