"""The nested-sampling step as a pure function over explicit state (BlackJAX ``ns/base.py`` style).

``step(state, generator, proposal, settings) -> (state, info)`` removes the lowest live points, starts ``k``
constrained-HMC chains from survivors chosen uniformly (with replacement) and adds the chain end points, born at
``logl_star`` = the highest removed ``logl``. Randomness comes only from the numpy ``generator`` (start points,
step-size jitter) and the per-chain xoroshiro states in ``state.chain_rng``, so a state and a generator state
determine everything after.

How many die: normally ``k``, and more when live points tie with the contour: every point whose ``logl``
equals ``logl_star`` dies in the same iteration, so that every survivor and every new point lies strictly above the
contour. Removing ``q`` tied points together with live counts ``n, n-1, ..., n-q+1`` is the plateau treatment of
Fowlie, Handley & Su (2021); the evidence (``sampler.evidence``) gets it from the birth contours without knowing
about plateaus. The ``q - k`` points beyond the ``k`` replaced are replaced next: while the live set is at least
``k`` short of ``nlive``, an iteration *refills* it (nothing dies; ``k`` chains draw new points from the current
contour, born at it), and the one that brings it back to ``nlive`` kills only as many as it adds beyond that.
Refilling with one death an iteration while short is not enough: where every contour is a plateau (the wedding
cake of nested hypercubes, each tier half the volume of the one outside it) a whole tier dies every iteration, the
live set sinks to about ``2 k`` points, and with exact uniform draws in place of the chains logZ came out
+0.12 ± 0.02 nats high with a seed scatter of 0.34 (nlive 500, 400 runs; refilled: -0.01 ± 0.01, scatter 0.19;
``scripts/perfect_ns_plateaus.py``). When all live points
tie, no contour above them is known. Then, and whenever a plateau holds all but fewer than ``k`` live points, the
iteration *widens* the live set instead (no deaths): ``k`` chains draw new points from the current contour (the
plateau and whatever lies above it, uniformly), born at that contour, so that the points above the plateau are
found in proportion to their volume, as more live points would find them; when the plateau points then die
together, their live counts (including the new points) give the region above its right share. Widening stops at
:func:`widening_limit` live points; if all points still tie, :class:`AllLiveTied` ends the run and the final live
points carry the rest (a region above holding less than about 1 / (limit - nlive) of the plateau's volume is
missed: the run says so).

While the contour holds a large share of the prior, the new points are prior draws above it instead of chain
end points (``sampler.prior_draws``; the caller says when, from its estimate of the contour's volume).

Geometry (``sampler.geometry``): the survivors' clusters, metric and ellipsoids, recomputed every iteration from
the survivors; clusters are re-detected every ``recluster_every`` iterations (``recluster_every_modes`` while
there are several) and otherwise follow the regions.
"""

from typing import NamedTuple

import numpy as np

from . import clustering, decorrelation, live_moments, prior_draws
from . import geometry as geo
from . import ghosts as lost_modes
from .connectivity import Segments, join_connected
from .hmc import (CTRL_DENSE, CTRL_JUMPS, CTRL_N_STEPS, CTRL_PAIR_SLICES, CTRL_RADIAL_SLICES, CTRL_REFRESH,
                  CTRL_SLICES, NCTRL, STAT_JUMP_ACCEPTED, STAT_JUMP_TRIED, STAT_NAN, STAT_NGRAD, STAT_NLIKE,
                  STAT_OUTSIDE, STAT_REFLECT, STAT_REGION_EXIT, STAT_REVERSE, STAT_STEPS)


class AllLiveTied(Exception):
    """Every live point has the same log-likelihood, after widening: the contour cannot rise; the run ends."""


class InfiniteLikelihood(Exception):
    """A chain's end point has log-likelihood +inf: the evidence would be infinite; the run stops.

    theta: the first such point's parameters; count: how many of the iteration's new points are +inf."""

    def __init__(self, theta, count):
        super().__init__(f"{count} new point(s) have logL = +inf, the first at theta = {list(theta)}")
        self.theta, self.count = theta, count


# Points that widening on a plateau may add: 10 x nlive, at most 100,000. A region above the plateau holding a
# fraction f of the contour's volume is found with about that many times f points (a likelihood clipped to a floor
# over 99.9% of a 5-D prior with a narrow peak: f ~ 1e-3, so ~5 points at nlive 500, missed on ~1% of seeds). A
# run whose live points all reach the likelihood's flat maximum pays as many chains to establish it.
PLATEAU_WIDENING, MAX_WIDENING = 10, 100_000


def widening_limit(nlive):
    """Most live points a plateau may widen the live set to."""
    return nlive + min(PLATEAU_WIDENING * nlive, MAX_WIDENING)


class NSState(NamedTuple):
    """Live points and proposal state between iterations.

    u, theta: (n, d) unit-cube and physical coordinates of the live points (n is normally nlive); without MPI
        ``sampler.live_rows.ResidentRows``: rows in a slot store, on the host or the GPU, that read as read-only
        arrays (indexing, arithmetic, ``np.asarray`` and the ndarray's methods gather them); valid until the next
        iteration, which reuses the dead points' rows.
    logl, logl_birth: (n,) their log-likelihoods and the contours they were born above.
    thread: (n,) the thread (sequence of points replacing one another) each live point belongs to.
    uid, parent: (n,) each live point's creation id (0, 1, ... in the order points were made) and that of the
        live point its chain started from (-1 for prior draws): the family tree ``sampler.genealogy`` reads.
    labels: (n,) cluster of each live point.
    step_size: current HMC step length (whitened units); n_steps: current trajectory length.
    rho: (2,) running (smoothed) start-end correlations of the chains' coordinates and logl, NaN before the
        first iteration; their maximum drives the trajectory length.
    jumps: independence jump proposals per direction refresh.
    chain_rng: (k, 2) uint64 xoroshiro128+ states, one row per chain slot.
    iteration: iterations done; next_thread: the next unused thread id; next_uid: the next creation id.
    ghost_mean, ghost_cov, ghost_radius2, ghost_until: ellipsoids of clusters whose last live point died, kept as
        jump targets until iteration ``ghost_until`` (``sampler.ghosts``).
    moments: (d + 2, d) running sums of the live points' coordinates for their mean and covariance, or (0, d) when
        not carried (``sampler.live_moments``).
    """

    u: np.ndarray
    theta: np.ndarray
    logl: np.ndarray
    logl_birth: np.ndarray
    thread: np.ndarray
    uid: np.ndarray
    parent: np.ndarray
    labels: np.ndarray
    step_size: float
    n_steps: int
    rho: np.ndarray
    jumps: int
    chain_rng: np.ndarray
    iteration: int
    next_thread: int
    next_uid: int
    ghost_mean: np.ndarray
    ghost_cov: np.ndarray
    ghost_radius2: np.ndarray
    ghost_until: np.ndarray
    moments: np.ndarray


class NSInfo(NamedTuple):
    """What one iteration did.

    dead_u, dead_theta, dead_logl, dead_birth, dead_thread, dead_uid, dead_parent, dead_label: the removed points,
    sorted by logl.
    nlive_before: live points before the removal; logl_star: the new contour (highest removed logl).
    step_size, n_steps: what the chains used; outside_fraction: outside steps / steps.
    reflections: (k,) successful reflections per chain; reversals: (k,) reversals per chain.
    acceptance: fraction of steps that moved; rho_coord, rho_logl: correlations between the chains' start and
    end points (``sampler.decorrelation``); jumps_tried / jumps_accepted: independence jumps;
    nclusters: clusters among the survivors; nlike, ngrad, nnan: likelihood values, gradients and non-finite
    likelihood values evaluated in this iteration.
    """

    dead_u: np.ndarray
    dead_theta: np.ndarray
    dead_logl: np.ndarray
    dead_birth: np.ndarray
    dead_thread: np.ndarray
    dead_uid: np.ndarray
    dead_parent: np.ndarray
    dead_label: np.ndarray
    nlive_before: int
    logl_star: float
    step_size: float
    n_steps: int
    outside_fraction: float
    reflections: np.ndarray
    reversals: np.ndarray
    acceptance: float
    rho_coord: float
    rho_logl: float
    jumps_tried: int
    jumps_accepted: int
    nclusters: int
    nlike: int
    ngrad: int
    nnan: int


class Proposal(NamedTuple):
    """The fused chain kernel with everything it needs besides the state (see ``sampler.hmc``)."""

    advance: object
    workspace: object
    data: tuple
    codes: np.ndarray
    args: np.ndarray
    k: int
    nlive: int
    dense: bool
    logl_at: object  # logl_at(u) -> log-likelihoods of unit-cube points (m, d): the connectivity test's
    neighbours: object = clustering.local_neighbours  # the kNN rows of the clustering (split over MPI ranks)
    live_store: object = None  # where the live set's rows stay (sampler.live_rows; sampler.live_device on the GPU)
    theta_logl_at: object = None  # theta_logl_at(u) -> (theta, logl) of unit-cube points: the prior draws'


def reclusters(state, settings) -> bool:
    """Whether this iteration re-detects the clusters: every ``recluster_every`` iterations while the live points
    are one cluster, every ``recluster_every_modes`` while they are several (decided from the state alone, so
    resumed and multi-rank runs agree)."""
    if not settings.clustering:
        return False
    several = not one_cluster(state.labels)
    return state.iteration % (settings.recluster_every_modes if several else settings.recluster_every) == 0


def one_cluster(labels) -> bool:
    """Whether every live point carries the same cluster label (an empty set counts as one cluster)."""
    return labels.size == 0 or not np.any(labels != labels[0])


# Most live points clustered at once. The kNN graph costs O(n^2 d): 0.05-0.08 s at 2000 points in 30-D, 1.7 s at
# 4000 and 4.3 s at 9000 (one thread), every few iterations. Above this many survivors an evenly strided subset is
# clustered and every point takes the cluster whose ellipsoid is nearest (the regions the chains use); a mode
# needs a few points in the subset to be found, i.e. about n / MAX_CLUSTERED times MIN_SIZE in the whole set.
MAX_CLUSTERED = 2048


def cluster_labels(u, segments, neighbours=clustering.local_neighbours):
    """Cluster labels 0..C-1 of the unit-cube points ``u`` (n, d): kNN components, separated or joined by the
    contour (``segments``: a :class:`Segments`); for more than ``MAX_CLUSTERED`` points, of a subset (above).
    ``neighbours``: what computes the kNN rows (``sampler.clustering.find_clusters``)."""
    n = u.shape[0]
    if n <= MAX_CLUSTERED:
        return join_connected(u, geo.relabel(u, segments=segments, neighbours=neighbours), segments)
    subset = np.linspace(0, n - 1, MAX_CLUSTERED).round().astype(np.int64)
    sub_labels = join_connected(u[subset], geo.relabel(u[subset], segments=segments, neighbours=neighbours),
                                segments)
    if sub_labels.max() == 0:
        return np.zeros(n, np.int64)
    labels = geo.regions(geo.build(u[subset], sub_labels, geo.correlated(u[subset])), u)
    labels[subset] = sub_labels
    return np.unique(labels, return_inverse=True)[1].astype(np.int64)


def _survivor_labels(state, survivors, settings, logl_star, proposal):
    """``(labels, likelihood evaluations spent)`` of the survivors."""
    if reclusters(state, settings):
        u = state.u[survivors]
        segments = Segments(proposal.logl_at, logl_star, u)
        return cluster_labels(u, segments, proposal.neighbours), segments.evaluations
    labels = state.labels[survivors]
    if one_cluster(labels):  # the usual case, without sorting the labels (3 ms an iteration at nlive 1e5)
        return np.zeros(labels.size, np.int64), 0
    # Clusters left without survivors disappear; ids are compacted to 0..C-1.
    return np.unique(labels, return_inverse=True)[1].astype(np.int64), 0


def step(state: NSState, generator: np.random.Generator, proposal: Proposal, settings,
         prior_acceptance: float = 0.0) -> tuple[NSState, NSInfo]:
    """One nested-sampling iteration; returns the new state and info, or raises :class:`AllLiveTied`.

    prior_acceptance: > 0 to draw the new points from the prior by rejection (``sampler.prior_draws``) instead of
    the chains: the expected share of prior draws above the contour."""
    n, d = state.u.shape
    k = proposal.k
    logl = state.logl
    # O(n) selections instead of sorting the live set (8 ms per iteration at nlive 1e5): the same points, in the
    # same order (the dead by logl, ties by index; the survivors by index).
    lowest = np.nanmin(logl)
    plateau = int(np.count_nonzero(logl == lowest))
    refill = n + k <= proposal.nlive  # tied points died beyond k: replace them before anything else dies
    widen = refill or (plateau > max(1, n - k) and n + k <= widening_limit(proposal.nlive))
    if widen:  # draw more points from the current contour (module docstring); nothing dies
        m, logl_star = 0, float(np.max(state.logl_birth))
        dies = np.zeros(n, dtype=bool)
    else:
        m = min(k + n - proposal.nlive, n)
        logl_star = float(np.partition(logl, m - 1)[m - 1])
        dies = logl <= logl_star  # points tied with the contour die too
        m = int(np.count_nonzero(dies))
        if n - m < k and logl_star > lowest and np.count_nonzero(logl == logl_star) > 1:
            # A plateau above the lowest points holds all but fewer than k of the rest: only the points below it
            # die now, so that the next iteration finds it at the bottom and widens, as for a plateau there
            # (killing it with them could leave no survivor and end the run with nothing above it looked for).
            logl_star = float(np.max(logl[logl < logl_star]))
            dies = logl <= logl_star
            m = int(np.count_nonzero(dies))
        if m >= n:
            raise AllLiveTied(f"all {n} live points have logl = {logl_star!r}")
    removed = np.flatnonzero(dies)
    removed, survivors = removed[np.argsort(logl[removed], kind="stable")], np.flatnonzero(~dies)

    labels, nlike_joins = _survivor_labels(state, survivors, settings, logl_star, proposal)
    ws = proposal.workspace
    ns = survivors.size
    resident = geo.is_resident(state.u)  # the live set's rows in a slot store (sampler.live_rows)
    if resident:  # the dead rows are copied out before the chains reuse their slots
        dead_u, dead_theta = state.u.store.gather_both(state.u.slots[removed])
        new_u, new_theta = _resident_rows(state.u, state.theta, removed, survivors, k)
        survivor_u = new_u.rows(new_u.slots[:ns])
    else:
        dead_u, dead_theta = np.take(state.u, removed, axis=0), np.take(state.theta, removed, axis=0)
        new_u, new_theta = _survivors_first(state.u, survivors, ws.out_u), _survivors_first(state.theta, survivors,
                                                                                            ws.out_theta)
        survivor_u = new_u[:ns]
    moments = live_moments.survivors(state.moments, state.iteration, dead_u, survivor_u)
    if moments is None:
        if resident:  # a small live set: everything below on the host, as without residency
            survivor_u = np.asarray(survivor_u)
        mean, cov = None, geo.covariance(survivor_u)
    else:
        mean, cov = live_moments.mean_cov(moments, ns)
    dense = proposal.dense and geo.correlated(survivor_u, cov)
    geometry = geo.build(survivor_u, labels, dense, cov, pool=settings.pair_slices > 0, mean=mean)
    ghosts = _ghosts(state, removed, survivors, dense, proposal, settings)
    geometry = geo.with_ghosts(geometry, ghosts.mean, ghosts.cov, ghosts.radius2)
    starts = survivors[generator.integers(0, survivors.size, size=k)]
    step_sizes = state.step_size * np.exp(settings.step_jitter * generator.standard_normal(k))
    ctrl = np.zeros(NCTRL, np.int64)
    ctrl[CTRL_N_STEPS], ctrl[CTRL_REFRESH] = state.n_steps, settings.refresh_every
    ctrl[CTRL_JUMPS], ctrl[CTRL_DENSE], ctrl[CTRL_SLICES] = state.jumps, int(dense), settings.axis_slices
    ctrl[CTRL_PAIR_SLICES], ctrl[CTRL_RADIAL_SLICES] = settings.pair_slices, settings.radial_slices
    chain_rng = state.chain_rng.copy()
    logl_start = state.logl[starts]
    if resident:  # the chains read their starts and write their end points in the store
        u_start, destination = state.u.rows(state.u.slots[starts]), {"into": new_u.slots[ns:]}
    else:
        u_start, destination = np.take(state.u, starts, axis=0), {}
    drawn = (prior_draws.draw_above(generator, k, d, logl_star, prior_acceptance, settings.prior_draws,
                                    proposal.theta_logl_at) if prior_acceptance > 0 else None)
    from_prior = drawn is not None and drawn.u is not None
    if from_prior:
        prior_draws.place(ws, drawn, geo.regions(geometry, drawn.u),
                          (state.u.store, new_u.slots[ns:]) if resident else None)
    else:
        proposal.advance(u_start, logl_start, logl_star, step_sizes, ctrl, chain_rng, proposal.data,
                         proposal.codes, proposal.args, *geometry.kernel_arrays(), *ws.arrays(), **destination)
        if drawn is not None:  # the draws ran out before k were above the contour: the chains made the points
            ws.stats[0, STAT_NLIKE] += drawn.drawn
            ws.stats[0, STAT_NAN] += drawn.nan
    infinite = np.flatnonzero(ws.out_logl == np.inf)  # above every contour: a chain that reaches +inf keeps it
    if infinite.size:
        first = ns + int(infinite[0])
        raise InfiniteLikelihood(np.asarray(new_theta[first] if resident else ws.out_theta[infinite[0]], float),
                                 int(infinite.size))

    stats = ws.stats
    steps = int(stats[:, STAT_STEPS].sum())
    outside_fraction = int(stats[:, STAT_OUTSIDE].sum()) / max(steps, 1)
    reversals = stats[:, STAT_REVERSE].copy()
    if from_prior:  # no chains ran: no chain statistics (NaN in the run's diagnostics)
        outside_fraction = rho_coord = rho_logl = float("nan")
    else:
        rho_coord, rho_logl = decorrelation.chain_correlation(geometry, u_start, ws.out_u, logl_start, ws.out_logl)
    rho = np.array([decorrelation.smooth(state.rho[0], rho_coord), decorrelation.smooth(state.rho[1], rho_logl)])
    info = NSInfo(
        dead_u=dead_u, dead_theta=dead_theta, dead_logl=state.logl[removed],
        dead_birth=state.logl_birth[removed], dead_thread=state.thread[removed], dead_uid=state.uid[removed],
        dead_parent=state.parent[removed], dead_label=state.labels[removed],
        nlive_before=n, logl_star=logl_star, step_size=float(state.step_size), n_steps=int(state.n_steps),
        outside_fraction=float(outside_fraction), reflections=stats[:, STAT_REFLECT].copy(), reversals=reversals,
        acceptance=float("nan") if from_prior else float(1.0 - reversals.sum() / max(steps, 1)),
        rho_coord=rho_coord, rho_logl=rho_logl,
        jumps_tried=int(stats[:, STAT_JUMP_TRIED].sum()), jumps_accepted=int(stats[:, STAT_JUMP_ACCEPTED].sum()),
        nclusters=int(labels.max()) + 1, nlike=int(stats[:, STAT_NLIKE].sum()) + nlike_joins,
        ngrad=int(stats[:, STAT_NGRAD].sum()),
        nnan=int(stats[:, STAT_NAN].sum()))

    # A refill draws from the run's own contour (its latest), a plateau's widening possibly from a lower one;
    # either way the chains' statistics would misadapt the proposal, as would prior draws' (no chains ran).
    frozen = (widen and not refill) or from_prior
    # New points continue the threads of the removed ones; extra new points (refilling) open new threads.
    reused = min(m, k)
    new_threads = np.concatenate([state.thread[removed[:reused]],
                                  state.next_thread + np.arange(k - reused, dtype=np.int64)])
    if not resident:
        new_u[ns:], new_theta[ns:] = ws.out_u, ws.out_theta
    new_state = NSState(
        u=new_u,
        theta=new_theta,
        logl=np.concatenate([state.logl[survivors], ws.out_logl]),
        logl_birth=np.concatenate([state.logl_birth[survivors], np.full(k, logl_star)]),
        thread=np.concatenate([state.thread[survivors], new_threads]),
        uid=np.concatenate([state.uid[survivors], state.next_uid + np.arange(k, dtype=np.int64)]),
        parent=np.concatenate([state.parent[survivors],
                               np.full(k, -1, np.int64) if from_prior else state.uid[starts]]),
        labels=np.concatenate([labels, ws.out_cluster]),
        step_size=state.step_size if frozen else settings.adapt_step(state.step_size, outside_fraction),
        n_steps=state.n_steps if frozen else settings.adapt_length(int(state.n_steps), float(rho.max()), d),
        rho=state.rho if frozen else rho,
        jumps=state.jumps if frozen else settings.adapt_jumps(int(state.jumps), info.jumps_tried,
                                                                info.jumps_accepted, int(state.n_steps),
                                                                several_modes=not one_cluster(labels)),
        chain_rng=chain_rng, iteration=int(state.iteration) + 1,
        next_thread=int(state.next_thread) + k - reused, next_uid=int(state.next_uid) + k, ghost_mean=ghosts.mean, ghost_cov=ghosts.cov,
        ghost_radius2=ghosts.radius2, ghost_until=ghosts.until,
        moments=live_moments.unknown(d) if moments is None else live_moments.added(moments, ws.out_u))
    return new_state, info


def _survivors_first(array, survivors, new):
    """A new array with ``array``'s ``survivors`` rows first and room for ``new``'s rows after them (the caller
    fills those): ``concatenate([array[survivors], new])`` with one pass over the survivors instead of two (8 ms
    an array an iteration at nlive 1e5 in 30-D). ``mode="clip"``: with ``out``, the default mode copies first."""
    out = np.empty((survivors.size + new.shape[0],) + array.shape[1:], np.result_type(array, new))
    np.take(array, survivors, axis=0, out=out[:survivors.size], mode="clip")
    return out


def _resident_rows(u, theta, removed, survivors, k):
    """The next live set's rows in the store: the survivors' slots, then ``k`` for the new points (the dead points'
    slots first; their rows are on the host by now)."""
    store = u.store
    store.release(u.slots[removed])
    slots = np.concatenate([u.slots[survivors], store.take(k)])
    return u.rows(slots), theta.rows(slots)


def _ghosts(state, removed, survivors, dense, proposal, settings):
    """The ghost ellipsoids of this iteration: the state's, less expired ones and those holding a survivor, plus
    one for each cluster that lost its last live point now (its shape from the live points before the deaths)."""
    old = lost_modes.Ghosts(state.ghost_mean, state.ghost_cov, state.ghost_radius2, state.ghost_until)
    if not settings.clustering:
        return old
    if old.radius2.size == 0 and one_cluster(state.labels):
        return old  # one cluster and no ghosts: nothing lost, nothing to expire
    # New points of the last iteration may carry a ghost's index: compact the labels to 0..C-1 first.
    labels = np.unique(state.labels, return_inverse=True)[1]
    lost = np.setdiff1d(labels[removed], labels[survivors])
    old_geometry = geo.build(state.u, labels, dense) if lost.size else None
    return lost_modes.update(old, old_geometry, lost, state.u[survivors], int(state.iteration),
                             lost_modes.lifetime_iterations(proposal.nlive, proposal.k))
