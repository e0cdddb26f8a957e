"""The insertion-rank test (sampler/insertion.py): its counts against the definition, its calibration over
perfect nested-sampling runs, what it detects and what it cannot, and its place in a run's results."""

import json

import numpy as np
import pytest
from scipy import stats

from nestgrad.sampler import insertion


def volume_run(nlive, k, rng, draw=None, stop=1e-6):
    """(logl, birth) of nested sampling on logL = -X (X the prior volume) deleting k points an iteration; new
    points at volume ``draw(rng, k, x_star)``, exactly uniform below the contour when ``draw`` is None."""
    draw = draw or (lambda r, m, x_star: x_star * r.random(m))
    x, birth = rng.random(nlive), np.full(nlive, -np.inf)
    dead_l, dead_b = [], []
    while True:
        removed = np.argsort(-x)[:k]
        x_star = x[removed].min()
        dead_l.append(-x[removed])
        dead_b.append(birth[removed])
        if x_star < stop:
            break
        x[removed], birth[removed] = draw(rng, k, x_star), -x_star
    keep = np.ones(nlive, bool)
    keep[removed] = False
    return np.concatenate(dead_l + [-x[keep]]), np.concatenate(dead_b + [birth[keep]])


def brute_force(logl, birth):
    """Per new point, by the definition: among the other points born at or below its contour and alive above it,
    how many have lower logL, how many the same, and how many there are (in birth order, as positions())."""
    rows = []
    for i in np.argsort(birth, kind="stable"):
        b = birth[i]
        if not np.isfinite(b) or logl[i] <= b:  # initial draws, and points not above their contour, are left out
            continue
        others = (birth <= b) & (logl > b)
        others[i] = False
        rows.append((b, np.sum(others & (logl < logl[i])), np.sum(others & (logl == logl[i])), np.sum(others)))
    return rows


@pytest.mark.parametrize("seed", range(4))
def test_counts_follow_the_definition_with_ties(seed):
    rng = np.random.default_rng(seed)
    logl, birth = volume_run(40, 4, rng, stop=0.05)
    logl = np.round(logl, 2)  # plateaus: many equal logL, and contours equal to some points' logL
    birth = np.where(np.isfinite(birth), np.round(birth, 2), birth)
    order = rng.permutation(logl.size)  # the function must not rely on the dead points' order
    logl, birth = logl[order], birth[order]
    want = brute_force(logl, birth)
    by_logl = np.argsort(logl, kind="stable")
    sorted_l, sorted_b = logl[by_logl], birth[by_logl]
    by_birth = np.argsort(sorted_b, kind="stable")
    queries = by_birth[np.isfinite(sorted_b[by_birth]) & (sorted_l[by_birth] > sorted_b[by_birth])]
    less, ties, total = insertion._counts(sorted_l, sorted_b, by_birth, queries)
    got = sorted(zip(sorted_b[queries], less, ties, total))
    assert got == sorted(want)
    assert any(t > 0 for _, _, t, _ in want)  # the ties were exercised
    u = insertion.positions(logl, birth, np.random.default_rng(0))
    assert u.size == sum(1 for row in want if row[3] > 0) and ((u >= 0) & (u < 1)).all()


def test_calibrated_over_perfect_runs():
    """Exact draws: the positions' mean pulls have unit spread, and the p-values are not too small. New points born
    together are ranked among each other too, which makes the test a little conservative (at k = nlive/10, over 300
    runs of 200 live points, 8% of p-values fell below 0.1 against 10% expected)."""
    pulls, p = [], []
    for seed in range(60):
        logl, birth = volume_run(200, 20, np.random.default_rng(seed))
        report = insertion.rank_report(logl, birth, 200, np.random.default_rng(seed))
        pulls.append((report["mean"] - 0.5) / report["mean_err"])
        p.append(min(report["ks_p"], report["worst_window_p"]))
    assert report["windows"] >= 10 and report["n"] > 2000
    assert abs(np.mean(pulls)) < 0.45 and 0.7 < np.std(pulls) < 1.3
    assert np.mean(np.array(p) < 0.05) < 0.2 and min(p) > insertion.ALARM_P / 10
    assert stats.kstest(p, "uniform").pvalue > 1e-4 or np.median(p) > 0.5  # uniform, or conservative


@pytest.mark.parametrize("draw, lean", [
    (lambda r, m, x: x * (0.5 + 0.5 * r.random(m)), None),  # only the outer half of the volume
    (lambda r, m, x: x * 0.9 * r.random(m), "high"),        # never the outer tenth: ranked too high
    # one new point in ten stuck at the contour, as a chain that never left it
    (lambda r, m, x: np.where(r.random(m) < 0.1, x * (0.9 + 0.1 * r.random(m)), x * r.random(m)), "low"),
])
def test_detects_proposals_that_miss_part_of_the_contour(draw, lean):
    logl, birth = volume_run(300, 30, np.random.default_rng(1), draw, stop=1e-5)
    report = insertion.rank_report(logl, birth, 300, np.random.default_rng(1))
    assert report["ks_p"] < 1e-6
    if lean is not None:
        assert (report["mean"] < 0.5) == (lean == "low")
    assert any("note:" in line for line in insertion.describe(report))


def test_blind_to_a_scale_free_lean():
    """What the test cannot see (so the docs say so): new points at x_star * U**0.9 lean the same way at every
    contour, the live set settles into that lean, and the ranks stay uniform while logZ is off by about a nat."""
    logl, birth = volume_run(300, 30, np.random.default_rng(2), lambda r, m, x: x * r.random(m) ** 0.9)
    report = insertion.rank_report(logl, birth, 300, np.random.default_rng(2))
    assert report["ks_p"] > 1e-3 and not any("note:" in line for line in insertion.describe(report))


def test_too_few_new_points_give_no_report():
    logl, birth = volume_run(10, 5, np.random.default_rng(0), stop=0.3)
    assert insertion.rank_report(logl[:15], birth[:15], 10, np.random.default_rng(0)) is None
    assert insertion.describe(None) == []


def test_a_run_reports_it_in_its_summary_and_results_json(tmp_path):
    import nestgrad as ng

    def kernel(theta):
        return -0.5 * ((theta[0] - 0.5) ** 2 + (theta[1] - 0.5) ** 2) / 0.01

    uniform = {"prior": "uniform", "low": 0, "high": 1}
    res = ng.run(kernel, params={"a": uniform, "b": uniform}, nlive=100, seed=3, progress=False,
                 out=tmp_path / "run", backend="cpu")
    report = res.insertion
    assert report["n"] > 300 and report["ks_p"] > insertion.ALARM_P and abs(report["mean"] - 0.5) < 5 * report["mean_err"]
    assert "insertion ranks: KS p" in res.summary()
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["insertion"] == pytest.approx(report)
    assert ng.Results.load(tmp_path / "run").insertion == pytest.approx(report)


@pytest.mark.parametrize("n, lean", [(20, 1.0), (20, 1.5), (300, 1.0), (300, 1.2), (20000, 1.0), (20000, 1.03)])
def test_ks_pvalue_agrees_with_scipys_exact_test(n, lean):
    rng = np.random.default_rng(n)
    for _ in range(5):
        u = rng.random(n) ** lean
        exact = stats.kstest(u, "uniform").pvalue
        assert insertion.ks_pvalue(u) == pytest.approx(exact, rel=0.05, abs=1e-12)
