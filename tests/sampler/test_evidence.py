"""evidence.py on exact synthetic runs: new points are drawn exactly from the constrained prior of a d-dim
Gaussian (in prior-volume space, where V(L) is known), k at a time, so any bias is the integrator's."""

import math

import numpy as np
import pytest
from scipy import special, stats

from nestgrad.sampler import evidence
from peer_problems import pyramid_logz

D, SIGMA = 10, 0.08


def _log_l(x):
    """logL of N(0, SIGMA^2 I) at the contour enclosing prior volume x (a ball of volume 1 is the prior)."""
    log_vd = 0.5 * D * math.log(math.pi) - special.gammaln(D / 2 + 1)
    r = np.exp((np.log(x) - log_vd) / D)
    return -0.5 * (r / SIGMA) ** 2 - D * (math.log(SIGMA) + 0.5 * math.log(2 * math.pi))


def _true_logz():
    log_vd = 0.5 * D * math.log(math.pi) - special.gammaln(D / 2 + 1)
    r1 = math.exp(-log_vd / D)  # radius of the unit-volume ball
    return math.log(stats.chi2(D).cdf((r1 / SIGMA) ** 2))


def exact_run(nlive, k, rng, stop_log_x=-40.0):
    """(logl, logl_birth) of a perfect nested-sampling run deleting k points per iteration."""
    x = rng.random(nlive)
    birth = np.full(nlive, -np.inf)
    dead_l, dead_b = [], []
    while True:
        order = np.argsort(-x)  # largest volume = lowest likelihood first
        removed = order[:k]
        x_star = x[removed[-1]]
        dead_l.append(_log_l(x[removed]))
        dead_b.append(birth[removed])
        if math.log(x_star) < stop_log_x:
            break
        x[removed] = rng.random(k) * x_star
        birth[removed] = _log_l(np.full(k, x_star))
    keep = np.ones(nlive, bool)
    keep[removed] = False
    return (np.concatenate(dead_l + [_log_l(x[keep])]), np.concatenate(dead_b + [birth[keep]]))


def test_batch_deletion_counts_are_n_down_to_n_minus_k_plus_1():
    rng = np.random.default_rng(0)
    logl, birth = exact_run(20, 7, rng, stop_log_x=-3.0)
    order = evidence.sort_dead(logl, birth)
    counts = evidence.live_counts(logl[order], birth[order])
    np.testing.assert_array_equal(counts[:7], [20, 19, 18, 17, 16, 15, 14])
    np.testing.assert_array_equal(counts[7:14], [20, 19, 18, 17, 16, 15, 14])
    np.testing.assert_array_equal(counts[-3:], [3, 2, 1])  # final live points run the count down to 1


def test_corrected_counting_is_unbiased_and_naive_is_biased():
    nlive, k, runs = 100, 50, 60
    rng = np.random.default_rng(1)
    truth = _true_logz()
    corrected, naive, errors, moments = [], [], [], []
    for _ in range(runs):
        logl, birth = exact_run(nlive, k, rng)
        order = evidence.sort_dead(logl, birth)
        ev = evidence.compute(logl, birth, generator=rng)
        counts = evidence.live_counts(logl[order], birth[order])
        corrected.append(ev.logz)
        errors.append(evidence.simulated_error(logl[order], counts, rng, ndraws=100))
        moments.append(ev.logz_err)
        # The naive estimate: every one of the k deaths of a batch shrinks the volume as if n points were live.
        naive_counts = np.where(np.arange(counts.size) < counts.size - nlive, nlive, counts)
        naive.append(evidence.from_counts(logl[order], naive_counts, generator=rng, ndraws=10).logz)
    corrected, naive = np.array(corrected), np.array(naive)
    sem = corrected.std() / math.sqrt(runs)
    assert abs(corrected.mean() - truth) < 3 * sem + 0.01, (corrected.mean(), truth, sem)
    assert naive.mean() - truth > max(10 * sem, 0.5), (naive.mean(), truth)  # measurably biased upwards
    # The simulated-shrinkage error describes the run-to-run scatter, and so does the one from exact moments.
    assert 0.7 < np.mean(errors) / corrected.std() < 1.4
    assert 0.7 < np.mean(moments) / corrected.std() < 1.4


def test_information_matches_gaussian_kl():
    rng = np.random.default_rng(2)
    logl, birth = exact_run(400, 40, rng)
    ev = evidence.compute(logl, birth, generator=rng)
    truth = _true_logz()
    expected_h = -0.5 * D - D * (math.log(SIGMA) + 0.5 * math.log(2 * math.pi)) - truth
    assert abs(ev.information - expected_h) < 0.3, (ev.information, expected_h)


def test_running_evidence_equals_final_integration():
    rng = np.random.default_rng(3)
    nlive, k = 50, 10
    logl, birth = exact_run(nlive, k, rng, stop_log_x=-10)
    run = evidence.RunningEvidence()
    dead_part = logl[:-nlive + k]  # the exact run appends its final live points (nlive - k of them) last
    for start in range(0, dead_part.size, k):
        run.remove(np.sort(dead_part[start:start + k]), nlive)
    run.remove(np.sort(logl[dead_part.size:]), nlive - k, last=True)
    assert run.logz == pytest.approx(evidence.compute(logl, birth).logz, abs=1e-10)


PYRAMID_D, PYRAMID_S = 10, 100.0  # the hyper-pyramid (peer_problems.pyramid)


def _pyramid_logl(r):
    """logL = -(max_i |x_i - 1/2|)^(1/s) on U(0, 1)^d: nearly flat, so almost all of Z is the prior's bulk."""
    return -(r ** (1.0 / PYRAMID_S))


def pyramid_run(rng, nlive, k, dlogz):
    """(logl, logl_birth, thread) of a perfect run on the pyramid stopped by the sampler's rule (``dlogz``): new
    points uniform inside the contour, a cube of half-width r, so their r is r_star times the largest of d
    uniforms; each new point continues the thread of the slot it refills."""
    r = 0.5 * rng.random((nlive, PYRAMID_D)).max(axis=1)
    birth, thread = np.full(nlive, -np.inf), np.arange(nlive)
    dead = []
    running = evidence.RunningEvidence()
    while running.remaining(_pyramid_logl(r)) >= dlogz:
        removed = np.argsort(r)[::-1][:k]  # largest r: lowest logl
        logl = _pyramid_logl(r[removed])
        dead.append((logl, birth[removed], thread[removed]))
        running.remove(logl, nlive)
        r[removed] = r[removed].min() * rng.random((k, PYRAMID_D)).max(axis=1)
        birth[removed] = logl.max()
    dead.append((_pyramid_logl(r), birth, thread))
    return tuple(np.concatenate(part) for part in zip(*dead))


def test_stopping_early_on_a_flat_likelihood_is_unbiased_and_its_error_is_the_scatter():
    """Stopped at the default dlogz 0.1, the final live points hold about a tenth of Z, and the volume inside the
    highest one's contour (1 / (e^0.577 nlive) of theirs) is the last point's too: dropped, logZ came out -1.0e-4
    low, 3.4 seed scatters (48 standard errors over these 200 seeds), and the error said 1.8e-4 against a scatter
    of 3.0e-5. The thread bootstrap's spread (the run's other error) must not exceed the scatter either."""
    truth = pyramid_logz(PYRAMID_D, PYRAMID_S)
    logz, err, boot = [], [], []
    for seed in range(200):
        logl, birth, thread = pyramid_run(np.random.default_rng(seed), 500, 50, 0.1)
        ev = evidence.compute(logl, birth)
        logz.append(ev.logz)
        err.append(ev.logz_err)
        if seed < 20:
            boot.append(np.std(evidence.bootstrap_logz(logl, birth, thread, np.random.default_rng(seed), 64)))
    logz, scatter = np.array(logz), np.std(logz, ddof=1)
    assert abs(logz.mean() - truth) < 3.0 * scatter / math.sqrt(logz.size), (logz.mean() - truth, scatter)
    assert 0.75 < np.mean(err) / scatter < 1.33, (np.mean(err), scatter)
    assert np.mean(boot) < 1.5 * scatter, (np.mean(boot), scatter)


def test_weights_and_equal_weight_resampling():
    rng = np.random.default_rng(4)
    logl, birth = exact_run(200, 20, rng)
    ev = evidence.compute(logl, birth, generator=rng)
    w = evidence.posterior_weights(ev)
    assert w.sum() == pytest.approx(1.0) and np.all(w >= 0)
    idx1 = evidence.equal_weight_indices(w, np.random.default_rng(7))
    idx2 = evidence.equal_weight_indices(w, np.random.default_rng(7))
    np.testing.assert_array_equal(idx1, idx2)
    sorted_l = np.sort(logl)
    assert abs(sorted_l[idx1].mean() - np.sum(w * sorted_l)) < 3 * np.sqrt(np.sum(w * (sorted_l - np.sum(w * sorted_l)) ** 2) / idx1.size)
    assert idx1.size == int(1.0 / np.sum(w ** 2))


def test_inconsistent_input_is_rejected():
    with pytest.raises(ValueError, match="logl_birth"):
        evidence.live_counts(np.array([0.0, 1.0]), np.array([-np.inf, 2.0]))


@pytest.mark.parametrize("nlive, k, tolerance", [(25, 5, 0.12), (100, 50, 0.05), (500, 25, 0.05)])
def test_error_from_exact_moments_matches_a_long_simulation(nlive, k, tolerance):
    """The moments' spread of log Z against 3000 simulated shrinkage sequences (their own noise: 1.3%); at
    nlive 25 log Z is visibly not log-normal and the moments give a few percent less."""
    rng = np.random.default_rng(nlive)
    logl, birth = exact_run(nlive, k, rng)
    order = evidence.sort_dead(logl, birth)
    counts = evidence.live_counts(logl[order], birth[order])
    simulated = evidence.simulated_error(logl[order], counts, rng, ndraws=3000)
    assert evidence.shrinkage_error(logl[order], counts) == pytest.approx(simulated, rel=tolerance)


def test_error_source_moments_from_nlive_100_or_for_long_runs(monkeypatch):
    rng = np.random.default_rng(5)
    for nlive, moments in [(100, True), (99, False)]:
        logl, birth = exact_run(nlive, 10, rng)
        order = evidence.sort_dead(logl, birth)
        counts = evidence.live_counts(logl[order], birth[order])
        exact = evidence.shrinkage_error(logl[order], counts)
        assert (evidence.from_counts(logl[order], counts, ndraws=10).logz_err == exact) is moments
    monkeypatch.setattr(evidence, "MAX_SIMULATED", 10 * logl.size)  # too long to simulate: moments at any nlive
    assert evidence.from_counts(logl[order], counts, ndraws=11).logz_err == exact
    assert evidence.from_counts(logl[order], counts, ndraws=10).logz_err != exact


def _bootstrap_by_sorting_each_resample(logl, birth, thread, generator, nboot):
    """The definition: resample whole threads, sort the resampled points, count, integrate."""
    ids, inverse = np.unique(thread, return_inverse=True)
    out = []
    for _ in range(nboot):
        multiplicity = np.bincount(generator.integers(0, ids.size, size=ids.size), minlength=ids.size)
        chosen = np.repeat(np.arange(logl.size), multiplicity[inverse])
        order = np.argsort(logl[chosen], kind="stable")
        l, b = logl[chosen][order], birth[chosen][order]
        out.append(evidence.from_counts(l, evidence.live_counts(l, b), ndraws=1).logz)
    return np.array(out)


@pytest.mark.parametrize("ties", [False, True])
def test_thread_bootstrap_equals_sorting_every_resample(ties):
    """Threads of an exact run (each point's thread is the slot it refilled); with ``ties`` the likelihood takes
    few distinct values, so many deaths share a contour."""
    rng = np.random.default_rng(6)
    nlive, k = 40, 4
    x, birth, thread = rng.random(nlive), np.full(nlive, -np.inf), np.arange(nlive)
    dead = []
    level = (lambda v: np.round(_log_l(v), 0)) if ties else _log_l
    for _ in range(60):
        logl = level(x)
        order = np.argsort(logl, kind="stable")
        star = logl[order[k - 1]]
        removed = np.flatnonzero(logl <= star)
        if removed.size >= nlive:
            break
        dead.append((logl[removed], birth[removed], thread[removed]))
        x_star = x[removed].min()
        x[removed] = rng.random(removed.size) * x_star
        while np.any(level(x[removed]) <= star):  # new points strictly above the contour
            bad = removed[level(x[removed]) <= star]
            x[bad] = rng.random(bad.size) * x_star
        birth[removed] = star
    dead.append((level(x), birth, thread))
    logl, birth, thread = (np.concatenate([d[i] for d in dead]) for i in range(3))
    fast = evidence.bootstrap_logz(logl, birth, thread, np.random.default_rng(9), nboot=20)
    slow = _bootstrap_by_sorting_each_resample(logl, birth, thread, np.random.default_rng(9), 20)
    # the compiled single pass sums the weights in another order than the definition's numpy passes
    np.testing.assert_allclose(fast, slow, rtol=1e-13, atol=0)
    assert np.std(fast) > 0  # the resamples differ


def test_threaded_bootstrap_gives_the_same_values(monkeypatch):
    rng = np.random.default_rng(8)
    logl, birth = exact_run(60, 6, rng, stop_log_x=-8.0)
    thread = rng.integers(0, 60, logl.size)  # any labelling is a valid input for this comparison
    order = evidence.sort_dead(logl, birth)
    logl, birth, thread = logl[order], birth[order], thread[order]
    serial = evidence.bootstrap_logz(logl, birth, thread, np.random.default_rng(2), nboot=19)
    monkeypatch.setattr(evidence, "THREADED_BOOTSTRAP", 0)
    threaded = evidence.bootstrap_logz(logl, birth, thread, np.random.default_rng(2), nboot=19)
    np.testing.assert_array_equal(threaded, serial)


def test_posterior_spread_of_a_matrix_column_is_its_definition():
    rng = np.random.default_rng(4)
    n = 5000
    weights = rng.random(n) ** 4
    weights /= weights.sum()
    nlive = rng.integers(50, 400, n)
    matrix = rng.standard_normal((n, 3)) * [1.0, 1e-6, 1e3] + [0.0, 0.5, 7.0]
    for column in range(3):
        values = matrix[:, column]  # a strided view, as the posterior ESS passes it
        mean = weights @ values
        variance = weights @ (values - mean) ** 2
        suffix = np.cumsum((weights * (values - mean))[::-1])[::-1]  # G_i = sum_{j >= i} w_j (f_j - mean)
        shrinkage = np.sum((suffix / nlive) ** 2)
        got = evidence.posterior_spread(weights, values, nlive)
        np.testing.assert_allclose(got, (variance, shrinkage), rtol=1e-6)  # column 1: mean 5e5 x its spread
        assert evidence.posterior_mean_shrinkage_variance(weights, values, nlive) == got[1]


@pytest.mark.parametrize("nregions", [1, 3])
def test_bootstrap_by_region_keeps_the_whole_runs_values_and_shares(nregions):
    """Column 0 with regions is the logZ without them, bit for bit; the regions' shares of each resample's
    evidence add up to one (a single region holds all of it)."""
    rng = np.random.default_rng(11)
    logl, birth = exact_run(80, 8, rng, stop_log_x=-9.0)
    thread = rng.integers(0, 80, logl.size)
    region = rng.integers(0, nregions, logl.size)
    whole = evidence.bootstrap_logz(logl, birth, thread, np.random.default_rng(5), nboot=12)
    by_region = evidence.bootstrap_logz(logl, birth, thread, np.random.default_rng(5), nboot=12, region=region)
    assert by_region.shape == (12, 1 + nregions)
    np.testing.assert_array_equal(by_region[:, 0], whole)
    shares = np.exp(by_region[:, 1:] - by_region[:, :1]).sum(axis=1)
    np.testing.assert_allclose(shares, 1.0, rtol=1e-12)
    if nregions > 1:
        assert np.all(np.isfinite(by_region[:, 1:])) and np.ptp(by_region[:, 1]) > 0
