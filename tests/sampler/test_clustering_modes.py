"""Modes among live points (sampler.clustering) and the ellipsoids they get (sampler.geometry).

A mode down to its last few live points must keep a cluster and an ellipsoid of its own, or jumps can never bring
chains back into it and its weight drifts to zero; points at the edge of one mode (nobody's near neighbour in
many dimensions) must not be split off."""
import numpy as np
import pytest

from nestgrad.sampler import geometry as geo
from nestgrad.sampler.clustering import find_clusters


def _ball(rng, n, d, centre, radius):
    z = rng.standard_normal((n, d))
    z *= (radius * rng.random(n) ** (1.0 / d) / np.linalg.norm(z, axis=1))[:, None]
    return centre + z


@pytest.mark.parametrize("d", [2, 5, 10, 20])
def test_points_uniform_in_one_ball_form_one_cluster(d):
    for seed in range(5):
        points = _ball(np.random.default_rng(seed), 500, d, np.zeros(d), 1.0)
        assert np.unique(find_clusters(points)).size == 1, f"d={d} seed={seed}"


@pytest.mark.parametrize("d", [5, 20])
def test_one_elongated_correlated_mode_is_one_cluster(d):
    """The ill-conditioned Gaussian's contour: an ellipsoid with AR(1) correlation 0.95 and scales 0.05 to 1."""
    idx = np.arange(d)
    scales = np.geomspace(0.05, 1.0, d)
    cov = 0.95 ** np.abs(idx[:, None] - idx[None, :]) * np.outer(scales, scales)
    chol = np.linalg.cholesky(cov)
    for seed in range(5):
        points = _ball(np.random.default_rng(seed), 500, d, np.zeros(d), 1.0) @ chol.T
        assert np.unique(find_clusters(points)).size == 1, f"seed={seed}"


@pytest.mark.parametrize("d,survivors", [(2, 1), (5, 1), (5, 3), (10, 2), (20, 4)])
def test_the_last_survivors_of_a_narrow_mode_keep_their_own_cluster(d, survivors):
    for seed in range(5):
        rng = np.random.default_rng(seed)
        a = _ball(rng, 300, d, np.full(d, -4.0), 1.0)
        b = _ball(rng, 200, d, np.full(d, 4.0), 1.5)
        c = _ball(rng, survivors, d, np.r_[4.0, -4.0, np.zeros(d - 2)], 0.3)
        labels = find_clusters(np.vstack([a, b, c]))
        la, lb, lc = labels[:300], labels[300:500], labels[500:]
        assert np.unique(lc).size == 1 and lc[0] not in set(la) | set(lb), f"seed={seed}: {np.unique(labels)}"
        assert np.unique(la).size == 1 and np.unique(lb).size == 1 and la[0] != lb[0]


@pytest.mark.parametrize("d", [2, 5, 10])
def test_a_lone_survivor_gets_an_ellipsoid_around_its_mode(d):
    """Live points are uniform in the contour, so a mode holding one of n points has about 1/n of the volume of a
    mode holding all n: its survivor lies anywhere inside a ball of that volume, and its ellipsoid must contain
    the mode's centre (where the contour shrinks to) without spanning the other mode."""
    rng = np.random.default_rng(1)
    n = 400
    big = _ball(rng, n, d, np.zeros(d), 1.0)
    small_radius = (1.0 / n) ** (1.0 / d)
    centre = np.r_[6.0, np.zeros(d - 1)]
    for _ in range(50):
        lone = _ball(rng, 1, d, centre, small_radius)
        points = np.vstack([big, lone])
        labels = np.r_[np.zeros(n, np.int64), 1]
        g = geo.build(points, labels, dense=True)
        dist = geo.scaled_distance2(g, np.vstack([centre, np.zeros(d)]))
        assert dist[0, 1] <= 1.0, "the mode's centre lies outside its survivor's ellipsoid"
        assert dist[1, 1] > 1.0, "the survivor's ellipsoid reaches the other mode"
        assert np.all(geo.regions(g, big) == 0)


@pytest.mark.parametrize("d,survivors", [(2, 1), (5, 3), (10, 2)])
def test_row_blocks_of_the_distance_matrix_find_the_same_clusters(d, survivors, monkeypatch):
    """The kNN graph is built in row blocks (an n x n matrix at nlive 1e5 is 80 GB): blocks of any size, down to a
    row each, give the same labels, small separated modes included."""
    import nestgrad.sampler.clustering as clustering

    for seed in range(4):
        rng = np.random.default_rng(seed)
        points = np.vstack([_ball(rng, 300, d, np.full(d, -4.0), 1.0), _ball(rng, 200, d, np.full(d, 4.0), 1.5),
                            _ball(rng, survivors, d, np.r_[4.0, -4.0, np.zeros(d - 2)], 0.3)])
        whole = find_clusters(points)
        assert np.unique(whole).size == 3
        for block_rows in (7, 1, points.shape[0]):  # 7 rows per block; one row per block; the whole matrix
            monkeypatch.setattr(clustering, "BLOCK_ROWS", block_rows)
            np.testing.assert_array_equal(find_clusters(points), whole)
            monkeypatch.undo()
