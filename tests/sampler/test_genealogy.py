"""The posterior ESS from the family tree of a run's points (sampler.genealogy): the one-pass pair sum against
brute force, and the ESS against the variance of weighted means over simulated nested-sampling-like trees whose
values follow the model (an autoregression along the tree) and one whose values do not correlate."""

import math

import numpy as np
import pytest

from nestgrad.sampler import genealogy


def _random_forest(rng, n, roots, k=10):
    """``(parent, birth)`` of ``n`` points created in order: the first ``roots`` are roots (born at -inf), then
    steps of ``k`` points born together (birth = the step), each the child of a random live point, replacing
    ``k`` random live points (a population of ``roots``, as in nested sampling)."""
    parent = np.full(n, -1, np.int64)
    birth = np.full(n, -np.inf)
    live = np.arange(roots)
    for start in range(roots, n, k):
        new = np.arange(start, min(start + k, n))
        parent[new] = live[rng.integers(roots, size=new.size)]
        birth[new] = start
        live[rng.choice(roots, size=new.size, replace=False)] = new
    return parent, birth


def _brute_pair_sum(parent, w, rho):
    n = parent.size
    ancestors = []
    for i in range(n):
        chain, j = {}, i
        depth = 0
        while j >= 0:
            chain[j] = depth
            j, depth = parent[j], depth + 1
        ancestors.append(chain)
    total = 0.0
    for i in range(n):
        for j in range(n):
            common = [a for a in ancestors[i] if a in ancestors[j]]
            if common:
                d = min(ancestors[i][a] + ancestors[j][a] for a in common)
                total += w[i] * w[j] * rho ** d
    return total


@pytest.mark.parametrize("rho", [0.0, 0.3, 0.9])
def test_one_pass_pair_sum_matches_brute_force(rho):
    rng = np.random.default_rng(3)
    parent, _ = _random_forest(rng, 80, 6, k=2)
    w = rng.random(80)
    w /= w.sum()
    assert genealogy._pair_sum(parent, w, rho) == pytest.approx(_brute_pair_sum(parent, w, rho), rel=1e-12)


def _simulate(rng, parent, rho):
    """Values along the tree: a root is N(0, 1), a child rho * parent + sqrt(1 - rho^2) N(0, 1)."""
    x = np.empty(parent.size)
    noise = rng.standard_normal(parent.size)
    for i, p in enumerate(parent):
        x[i] = noise[i] if p < 0 else rho * x[p] + math.sqrt(1.0 - rho * rho) * noise[i]
    return x


@pytest.mark.parametrize("rho", [0.0, 0.6, 0.9])
def test_ess_predicts_the_variance_of_weighted_means_over_simulated_trees(rho):
    """Over 400 replicate values on one tree, the variance of the weighted mean is what the ESS says (within the
    chi-square range of 400 draws, widened for the spread of the measured rho), and shuffling the tree's ids
    (another creation order of the same points) changes nothing."""
    rng = np.random.default_rng(11)
    n = 3000
    parent, birth = _random_forest(rng, n, 100)
    w = np.exp(np.linspace(-8.0, 0.0, n))  # weights rising along creation, like a posterior late in a run
    w /= w.sum()
    means, sizes = [], []
    for _ in range(400):
        x = _simulate(rng, parent, rho)
        means.append(w @ x)
        sizes.append(genealogy.FamilyTree(w, np.arange(n), parent, birth).ess(x))
    predicted = 1.0 / np.median(sizes)  # var(x) = 1
    ratio = np.var(means) / predicted
    assert 0.8 < ratio < 1.25, (ratio, np.median(sizes), genealogy.kish_ess(w))
    if rho > 0:
        assert np.median(sizes) < 0.8 * genealogy.kish_ess(w)
    # The same points listed in another order, ids and parent ids travelling with them.
    perm = rng.permutation(n)
    ess = genealogy.FamilyTree(w[perm], np.arange(n)[perm], parent[perm], birth[perm]).ess(x[perm])
    assert ess == pytest.approx(sizes[-1], rel=1e-9)


def test_independent_columns_get_kish_and_a_broken_tree_falls_back_to_kish():
    rng = np.random.default_rng(5)
    n = 2000
    parent, birth = _random_forest(rng, n, 50)
    w = rng.random(n)
    w /= w.sum()
    x = rng.standard_normal((n, 3))  # no memory of the parent at all
    tree = genealogy.FamilyTree(w, np.arange(n), parent, birth)
    ess = np.array([tree.ess(column) for column in x.T])
    assert tree.whole and np.all(ess > 0.9 * genealogy.kish_ess(w)) and np.all(ess <= genealogy.kish_ess(w) * (1 + 1e-12))
    for uid, par in ((np.arange(n) + 1, parent), (np.arange(n), np.where(parent >= 0, n - 1, -1))):
        tree = genealogy.FamilyTree(w, uid, par, birth)
        assert not tree.whole and tree.ess(x[:, 0]) == genealogy.kish_ess(w)


def test_a_drift_with_the_contour_is_not_taken_for_chain_memory():
    """Values that drift as the contour rises (every point born later lies higher), with no memory of the
    parent: parent and child correlate over the run, not within the points born together, and the ESS stays
    Kish's."""
    rng = np.random.default_rng(2)
    n = 3000
    parent, birth = _random_forest(rng, n, 100)
    w = np.exp(np.linspace(-8.0, 0.0, n))
    w /= w.sum()
    x = np.where(np.isfinite(birth), 5.0 * birth / n, 0.0) + rng.standard_normal(n)
    assert np.corrcoef(x[parent >= 0], x[parent[parent >= 0]])[0, 1] > 0.5  # the drift alone correlates them
    ess = genealogy.FamilyTree(w, np.arange(n), parent, birth).ess(x)
    assert ess == pytest.approx(genealogy.kish_ess(w), rel=0.05)
