"""From a finished (or stopped) run's state and record to :class:`~sampler.results.Results`: evidence with both
error estimates, posterior weights, an honest effective sample size (``sampler.genealogy``), equal-weight samples and per-cluster
posterior mass."""

import math

import numpy as np

from . import evidence, genealogy, insertion
from . import geometry as geo
from .clustering import MIN_SIZE
from .connectivity import Saddles, join_connected
from .results import DeadPoints, Results

NAN_WARNING_FRACTION = 1e-3  # warn when more than this share of likelihood values were NaN
MIN_MODE_MASS = 0.01  # a reported posterior mode holds at least this share of the posterior mass
MODE_DIP = 1.0  # nats: two groups of posterior samples are separate modes when the likelihood between them dips more


def prior_share_error(log_share, draws) -> float:
    """Standard error of ``log_share``, the log of the share of ``draws`` prior draws whose logL was finite (the
    run's ``log_volume_offset``): binomial, ``sqrt((1 - f) / (f draws))``. With 500 finite draws out of 200,000
    it is 0.045, more than the shrinkage error of a run whose posterior fills much of that region."""
    share = math.exp(log_share)
    if share >= 1.0 or draws <= 0:
        return 0.0
    return math.sqrt((1.0 - share) / (share * draws))


def posterior_ess(ev, weights, dead, uid, parent):
    """Effective sample size of each parameter's posterior mean, then of logL: the posterior variance over the
    squared standard error of the mean, which adds the chains' memory (``sampler.genealogy``) and the misjudged
    prior volumes (``evidence.posterior_mean_shrinkage_variance``). For logL only the chains' memory counts (round
    contours: coordinates can decorrelate while the radius does not); its mean drifts with the contour by
    construction, which is the evidence's error, not the samples'. The run's ESS is the smallest of all, so
    that no posterior mean is more precise than the equal-weight samples claim."""
    tree = genealogy.FamilyTree(weights, uid, parent, dead.logl_birth)
    variance, shrinkage = evidence.posterior_spread(weights, dead.theta, ev.nlive)
    error2 = variance / tree.ess_columns(dead.theta) + shrinkage
    out = np.where(error2 > 0, variance / np.where(error2 > 0, error2, 1.0), tree.kish)
    return np.append(out, tree.ess(np.where(np.isfinite(dead.logl), dead.logl, 0.0)))


def _clusters(dead_u, weights, sample_idx, logz, dense, logl_at=None, limit=1000):
    """Modes of the posterior: clusters of (up to ``limit``) distinct points of the equal-weight resample
    ``sample_idx``, and the posterior mass and local evidence ``logz + log(mass)`` of every dead point's region,
    whether or not the sampler clustered its live points (``hmc.clustering`` is about proposals; a run that
    sampled with one metric still has a posterior whose modes are to be told apart).
    With ``logl_at`` (log-likelihoods of unit-cube points), clusters that no valley of more than ``MODE_DIP`` nats
    separates are one mode (``connectivity.Saddles``). Returns ``(modes, region, likelihood evaluations)``."""
    # Distinct points only: a heavy dead point drawn several times is a clique of zero distances in the kNN graph,
    # which the clustering would report as a mode of its own (a 30-D Gaussian showed "2 modes, 99.9% / 0.1%").
    _, first = np.unique(sample_idx, return_index=True)
    points = dead_u[sample_idx[np.sort(first)][:limit]]
    evaluations = 0
    if points.shape[0] > 1:
        # A reported mode holds at least 1% of the samples. Smaller groups join their nearest mode: in many
        # dimensions a handful of mutual nearest neighbours forms an island of the kNN graph by chance, and a
        # Gaussian's far tail is sparse enough to look separated.
        labels = geo.relabel(points, min_size=max(MIN_SIZE, points.shape[0] // 100), separated=math.inf)
        if logl_at is not None and labels.max() > 0:
            saddles = Saddles(logl_at, points, MODE_DIP)
            labels = join_connected(points, labels, saddles)
            evaluations = saddles.evaluations
    else:
        labels = np.zeros(points.shape[0], np.int64)
    geometry = geo.build(points, labels, dense)
    region = geo.regions(geometry, dead_u)
    mass = np.bincount(region, weights=weights, minlength=geometry.nclusters)
    light = mass < MIN_MODE_MASS
    if light.any() and not light.all():
        # A cluster can hold 1% of the samples while its region holds almost no posterior mass (its ellipsoid
        # small inside a big one's); it counts in the nearest heavier mode, as a lighter group does.
        heavy = np.flatnonzero(~light)
        for c in np.flatnonzero(light):
            distance = np.sum((geometry.mean[heavy] - geometry.mean[c]) ** 2, axis=1)
            labels[labels == c] = heavy[np.argmin(distance)]
        labels = np.unique(labels, return_inverse=True)[1].astype(np.int64)
        geometry = geo.build(points, labels, dense)
        region = geo.regions(geometry, dead_u)
        mass = np.bincount(region, weights=weights, minlength=geometry.nclusters)
    out = [{"mass": float(m), "logz": float(logz + math.log(m)) if m > 0 else -math.inf,
            "mean_u": geometry.mean[c].tolist()} for c, m in enumerate(mass)]
    return out, region, evaluations


def _mode_errors(clusters, logl, birth, thread, order, region, logz_err, generator, nboot=64):
    """Each mode's ``mass_err`` and ``logz_err``, from resampling the run's threads (``evidence.bootstrap_logz``
    with the modes as regions): a mode's mass moves with the share of live points that happened to sample it,
    which is what whole threads carry. ``logz_err`` of a mode combines the run's ``logz_err`` with the spread of
    ``log(mass)``. ``region`` is in the sorted order ``order`` of the run's points."""
    by_point = np.empty_like(region)
    by_point[order] = region
    boot = evidence.bootstrap_logz(logl, birth, thread, generator, nboot, region=by_point)
    with np.errstate(invalid="ignore"):  # a mode no resample holds: its log-mass is -inf there
        log_mass = boot[:, 1:] - boot[:, :1]
    for c, mode in enumerate(clusters):
        finite = np.isfinite(log_mass[:, c])
        mode["mass_err"] = float(np.std(np.exp(log_mass[:, c])))
        spread = float(np.std(log_mass[finite, c])) if finite.sum() > 1 else math.inf
        mode["logz_err"] = math.hypot(logz_err, spread)


def _ordered(dead_parts, live, order):
    """``concatenate(dead_parts + [live])[order]`` in one copy when ``order`` leaves the dead points where they are,
    as it does for every run: points die in logl order, and the final live points lie above them all. (At 3.9M
    dead points in 30-D joining them and then gathering u and theta took 0.7-4.8 s.)"""
    n = sum(p.shape[0] for p in dead_parts)
    if np.array_equal(order[:n], np.arange(n)):
        return np.concatenate(list(dead_parts) + [live[order[n:] - n]])
    return np.concatenate(list(dead_parts) + [live])[order]


def make_results(sampler, state, record, settings, logl_at=None) -> Results:
    """The run's results from its final state and record; ``logl_at`` (log-likelihoods of unit-cube points), when
    given, tells apart the posterior's modes (:func:`_clusters`)."""
    def with_live(field, live):
        return np.concatenate(record.dead_parts(field) + [live])

    logl, birth = with_live("logl", state.logl), with_live("birth", state.logl_birth)
    thread, uid, parent = with_live("thread", state.thread), with_live("uid", state.uid), with_live("parent",
                                                                                                   state.parent)
    order = evidence.sort_dead(logl, birth)
    # Post-processing draws come from their own stream, so stopping and resuming cannot shift them.
    post = np.random.default_rng([sampler.seed, 0x5EED])
    ev = evidence.compute(logl, birth, generator=post)
    boot = evidence.bootstrap_logz(logl, birth, thread, post)
    err_boot = float(np.std(boot))
    weights = evidence.posterior_weights(ev)
    dead = DeadPoints(_ordered(record.dead_parts("u"), state.u, order),
                      _ordered(record.dead_parts("theta"), state.theta, order), logl[order], birth[order])
    ess_all = posterior_ess(ev, weights, dead, uid[order], parent[order])
    ess = float(ess_all.min())
    sample_idx = evidence.equal_weight_indices(weights, post, size=max(1, int(ess)))
    samples = dead.theta[sample_idx]
    logz = float(ev.logz + record.log_volume_offset)
    err_share = prior_share_error(record.log_volume_offset, record.initial_draws)
    # The modes are found among a resample of Kish's size, not of the samples' (an ESS of a couple of hundred
    # for one slow parameter would leave too few points for the kNN graph: a 5-D funnel showed "3 modes").
    mode_idx = evidence.equal_weight_indices(weights, post, size=max(1, int(genealogy.kish_ess(weights))))
    clusters, region, nlike_modes = _clusters(dead.u, weights, mode_idx, logz, sampler.dense, logl_at)
    if len(clusters) > 1:
        _mode_errors(clusters, logl, birth, thread, order, region, math.hypot(max(ev.logz_err, err_boot), err_share),
                     np.random.default_rng([sampler.seed, 0x30DE]))
    nlike = record.nlike + nlike_modes
    # its own stream: the test's random tie-breaking moves none of the draws above
    ranks = insertion.rank_report(dead.logl, dead.logl_birth, sampler.nlive,
                                  np.random.default_rng([sampler.seed, 0x1A5E]))
    settings = dict(settings, log_volume_offset=record.log_volume_offset, initial_draws=record.initial_draws)
    return Results(
        name=sampler.name, params=list(sampler.params), latex=dict(sampler.prior.latex),
        logz=logz, logz_err=math.hypot(max(ev.logz_err, err_boot), err_share), information=ev.information,
        niter=record.niter, nlike=nlike, ngrad=record.ngrad, wall_time=record.wall_time, dead=dead,
        weights=weights, samples=samples, diagnostics=dict(record.diagnostics(), dead_cluster=region),
        settings=settings, truths=getattr(sampler.likelihood, "truths", None),
        reference_logz=getattr(sampler.likelihood, "reference_logz", None),
        logz_err_shrinkage=ev.logz_err, logz_err_bootstrap=err_boot, logz_err_prior_share=err_share, ess=ess,
        ess_params=dict(zip(sampler.params, (float(e) for e in ess_all[:-1]))),
        nnan=record.nnan,
        clusters=clusters, insertion=ranks, sample_logl=dead.logl[sample_idx])
