"""The contour's own say in clustering (sampler.connectivity) and the ghost ellipsoids of lost modes
(sampler.ghosts): geometric cases with known answers, then the sampler on the mixture whose narrow mode was lost."""

import numpy as np
import pytest

from hard_problems import unequal_mixture
from nestgrad.sampler import NestedSampler
from nestgrad.sampler import geometry as geo
from nestgrad.sampler.clustering import find_clusters
from nestgrad.sampler.connectivity import Segments, join_connected
from nestgrad.sampler.ghosts import Ghosts, update


def in_balls(centres, radius):
    centres = np.atleast_2d(centres)

    def logl_at(u):
        d2 = np.min(((u[:, None, :] - centres[None]) ** 2).sum(axis=2), axis=1)
        return np.where(d2 < radius ** 2, 0.0, -1.0)  # contour at -0.5: inside the balls

    return logl_at


def uniform_ball(rng, centre, radius, n):
    d = len(centre)
    x = rng.standard_normal((n, d))
    x *= radius * rng.random((n, 1)) ** (1.0 / d) / np.linalg.norm(x, axis=1, keepdims=True)
    return np.asarray(centre) + x


def test_segments_join_one_ball_and_not_two_separated_balls():
    rng = np.random.default_rng(0)
    a = uniform_ball(rng, [0.3, 0.3, 0.5], 0.1, 40)
    b = uniform_ball(rng, [0.7, 0.7, 0.5], 0.1, 40)
    two = Segments(in_balls([[0.3, 0.3, 0.5], [0.7, 0.7, 0.5]], 0.1), -0.5, np.vstack([a, b]))
    assert not two.joined(a, b)
    one = Segments(in_balls([[0.5, 0.5, 0.5]], 0.35), -0.5, np.vstack([a, b]))  # the same points in one ball
    assert one.joined(a, b)
    assert two.evaluations > 0 and one.evaluations > 0


def test_join_connected_merges_the_arms_of_a_cross_and_keeps_a_separate_ball_apart():
    rng = np.random.default_rng(1)
    # A cross: two thin slabs through the centre (one connected contour), and a ball well away from it.
    horizontal = np.column_stack([rng.uniform(0.1, 0.6, 60), rng.uniform(0.34, 0.36, 60)])
    vertical = np.column_stack([rng.uniform(0.34, 0.36, 60), rng.uniform(0.1, 0.6, 60)])
    ball = uniform_ball(rng, [0.85, 0.85], 0.05, 30)
    u = np.vstack([horizontal, vertical, ball])
    labels = np.repeat([0, 1, 2], [60, 60, 30])

    def logl_at(p):
        cross = ((np.abs(p[:, 1] - 0.35) < 0.01) & (p[:, 0] > 0.1) & (p[:, 0] < 0.6)) | (
            (np.abs(p[:, 0] - 0.35) < 0.01) & (p[:, 1] > 0.1) & (p[:, 1] < 0.6))
        return np.where(cross | (((p - 0.85) ** 2).sum(axis=1) < 0.05 ** 2), 0.0, -1.0)

    merged = join_connected(u, labels, Segments(logl_at, -0.5, u))
    assert merged[0] == merged[60] and merged[0] != merged[120]
    assert np.array_equal(np.unique(merged), [0, 1])


def test_last_survivors_of_a_narrow_mode_keep_their_cluster_when_the_contour_separates_them():
    rng = np.random.default_rng(2)
    big = uniform_ball(rng, [0.4, 0.5, 0.5, 0.5, 0.5], 0.2, 400)
    # Three points of a narrow mode just outside the big ball: nearer to it than its points are spaced apart.
    narrow_centre = np.array([0.75, 0.5, 0.5, 0.5, 0.5])
    narrow = uniform_ball(rng, narrow_centre, 0.02, 3)
    u = np.vstack([big, narrow])
    without = find_clusters(u)
    big_ball, narrow_ball = in_balls([0.4, 0.5, 0.5, 0.5, 0.5], 0.2), in_balls(narrow_centre, 0.02)

    def logl_at(p):  # the big ball or the narrow ball
        return np.maximum(big_ball(p), narrow_ball(p))

    with_contour = find_clusters(u, segments=Segments(logl_at, -0.5, u))
    assert len(set(without[-3:]) & set(without[:-3])) == 1  # distance alone merges them into the big mode
    assert set(with_contour[-3:]).isdisjoint(with_contour[:-3])  # the contour keeps them apart


def _cross(p):
    """A thin cross through (0.35, 0.35) whose horizontal arm reaches x = 0.95: one connected, non-convex contour."""
    return np.where(((np.abs(p[:, 1] - 0.35) < 0.01) & (p[:, 0] > 0.1) & (p[:, 0] < 0.95)) | (
        (np.abs(p[:, 0] - 0.35) < 0.01) & (p[:, 1] > 0.1) & (p[:, 1] < 0.6)), 0.0, -1.0)


def test_a_lone_point_far_out_on_an_arm_joins_its_star():
    """The last point far out on an arm of a star is far from every other point (it used to keep a cluster of its
    own, fed only by itself: the heavy-tailed mixture's bias), but a segment along the arm is inside the contour."""
    rng = np.random.default_rng(4)
    horizontal = np.column_stack([rng.uniform(0.1, 0.5, 80), rng.uniform(0.341, 0.359, 80)])
    vertical = np.column_stack([rng.uniform(0.341, 0.359, 80), rng.uniform(0.1, 0.6, 80)])
    lone = np.array([[0.9, 0.35]])
    u = np.vstack([horizontal, vertical, lone])
    assert len(np.unique(find_clusters(u))) == 2  # by distance alone the lone point is a mode of its own
    labels = find_clusters(u, segments=Segments(_cross, -0.5, u))
    assert np.all(labels == labels[0])


def test_a_lone_point_that_no_segment_joins_stays_apart():
    """A point in a small separate ball beside the cross, nearer to the arm than to anything else: every segment
    tried crosses the gap, so it keeps its cluster."""
    rng = np.random.default_rng(5)
    horizontal = np.column_stack([rng.uniform(0.1, 0.9, 120), rng.uniform(0.341, 0.359, 120)])
    vertical = np.column_stack([rng.uniform(0.341, 0.359, 80), rng.uniform(0.1, 0.6, 80)])
    lone = np.array([[0.6, 0.45]])
    u = np.vstack([horizontal, vertical, lone])

    def logl_at(p):
        return np.maximum(_cross(p), np.where(((p - lone[0]) ** 2).sum(axis=1) < 0.01 ** 2, 0.0, -1.0))

    labels = find_clusters(u, segments=Segments(logl_at, -0.5, u))
    assert labels[-1] not in labels[:-1]


def test_the_search_for_a_joining_segment_has_a_bounded_cost():
    """Nothing joins a lone point to a separate ball: at most MAX_SEGMENTS segments are tried from each side."""
    from nestgrad.sampler.clustering import MAX_DEPTH, MAX_SEGMENTS
    from nestgrad.sampler.connectivity import POINTS

    rng = np.random.default_rng(6)
    u = np.vstack([uniform_ball(rng, [0.3, 0.3], 0.1, 200), [[0.8, 0.8]]])
    segments = Segments(in_balls([[0.3, 0.3], [0.8, 0.8]], 0.1), -0.5, u)
    labels = find_clusters(u, segments=segments, depth=MAX_DEPTH - 1)  # one level: no reclustering inside
    assert labels[-1] not in labels[:-1] and len(np.unique(labels)) == 2
    assert 0 < segments.evaluations <= 2 * MAX_SEGMENTS * POINTS


def test_a_lost_cluster_becomes_a_ghost_until_a_live_point_is_inside_or_it_expires():
    rng = np.random.default_rng(3)
    a = uniform_ball(rng, [0.3, 0.3], 0.05, 30)
    b = uniform_ball(rng, [0.7, 0.7], 0.05, 4)
    u = np.vstack([a, b])
    old = geo.build(u, np.repeat([0, 1], [30, 4]), dense=True)
    ghosts = update(Ghosts.none(2), old, [1], a, iteration=10, lifetime_iterations=30)
    assert ghosts.radius2.size == 1 and ghosts.until[0] == 40
    np.testing.assert_allclose(ghosts.mean[0], b.mean(axis=0))
    # A jump target again: the geometry has a second ellipsoid whose proposal share follows its volume.
    both = geo.with_ghosts(geo.build(a, np.zeros(30, np.int64)), ghosts.mean, ghosts.cov, ghosts.radius2)
    assert both.nclusters == 2 and 0.0 < both.cdf[0] < 1.0 and both.cdf[1] == 1.0
    assert update(ghosts, None, [], a, iteration=39, lifetime_iterations=30).radius2.size == 1
    assert update(ghosts, None, [], a, iteration=40, lifetime_iterations=30).radius2.size == 0  # expired
    assert update(ghosts, None, [], np.vstack([a, b[:1]]), 11, 30).radius2.size == 0  # holds a live point


def test_the_pair_slice_pool_groups_points_by_cluster_and_gives_ghosts_none():
    rng = np.random.default_rng(7)
    u = rng.random((12, 3))
    labels = np.array([1, 0, 2, 1, 0, 0, 2, 1, 1, 0, 2, 2])
    g = geo.build(u, labels, dense=False)
    np.testing.assert_array_equal(g.pool_start, [0, 4, 8, 12])
    for c in range(3):  # each cluster's rows, in their original order
        np.testing.assert_array_equal(g.pool[g.pool_start[c]:g.pool_start[c + 1]], u[labels == c])
    ghost = geo.with_ghosts(g, u[:1], 0.01 * np.eye(3)[None], np.array([1.0]))
    assert ghost.nclusters == 4 and ghost.pool_start[4] == ghost.pool_start[3]  # a ghost has no live points
    assert len(ghost.kernel_arrays()) == 7 and ghost.kernel_arrays()[5] is g.pool
    pool, pool_start = geo.build(u, labels, dense=False, pool=False).kernel_arrays()[5:]  # without pair slices
    assert pool.shape == (1, 3) and pool_start.shape == (4,) and not pool_start.any()


def test_narrow_light_mode_kept_on_the_seeds_that_lost_it():
    """Seed 2 lost the 0.1 mode of the mixture (widths 0.5 / 0.8 / 0.3) before the contour kept its last
    survivors apart and lost modes left ghosts: its weight was 0; now all three weights are within 0.05."""
    problem = unequal_mixture()
    res = NestedSampler(problem, problem.prior, nlive=500, seed=2).run(progress=False)
    weights = problem.mode_weights(res.dead.theta, res.weights)
    assert np.all(np.abs(weights - problem.weights) < 0.05), weights


def test_clustering_runs_more_often_while_there_are_several_clusters():
    """Every ``recluster_every`` iterations with one cluster, every ``recluster_every_modes`` with several, off
    without clustering; from the state alone (resumed and multi-rank runs take the same decisions)."""
    from types import SimpleNamespace

    from nestgrad.sampler.hmc_settings import HMCSettings
    from nestgrad.sampler.nested import reclusters

    settings = HMCSettings(recluster_every=10, recluster_every_modes=4)
    one = [i for i in range(41) if reclusters(SimpleNamespace(iteration=i, labels=np.zeros(50, int)), settings)]
    several = [i for i in range(41)
               if reclusters(SimpleNamespace(iteration=i, labels=np.arange(50) % 3), settings)]
    assert one == [0, 10, 20, 30, 40] and several == list(range(0, 41, 4))
    off = HMCSettings(clustering=False)
    assert not any(reclusters(SimpleNamespace(iteration=i, labels=np.arange(50) % 3), off) for i in range(41))


def _balls_logl(centres, width):
    def logl_at(x):
        return np.max([-((x - c) ** 2).sum(axis=1) / (2 * width ** 2) for c in centres], axis=0)
    return logl_at


@pytest.mark.parametrize("d", [3, 20])
def test_many_live_points_are_clustered_through_a_subset_and_labelled_by_region(d):
    """Above MAX_CLUSTERED points a subset is clustered and everyone takes the nearest cluster's label: three
    separated balls of uneven sizes (the smallest 4% of the points) still come out as three clusters, each point
    with its own ball's label; at or below MAX_CLUSTERED the subset path is not taken (same labels as before)."""
    from nestgrad.sampler.nested import MAX_CLUSTERED, cluster_labels

    rng = np.random.default_rng(d)
    centres = [np.full(d, 0.25), np.full(d, 0.75), np.r_[np.full(d - 1, 0.25), 0.75]]
    sizes = [6000, 3600, 400]
    u = np.vstack([c + 0.02 * rng.standard_normal((m, d)) for c, m in zip(centres, sizes)])
    truth = np.repeat(np.arange(3), sizes)
    labels = cluster_labels(u, Segments(_balls_logl(centres, 0.02), -3.0 * d, u))
    assert labels.max() == 2
    for ball in range(3):  # one label per ball, a different one for each
        assert np.unique(labels[truth == ball]).size == 1
    assert np.unique(labels[[0, 6000, 9600]]).size == 3
    few = u[rng.choice(u.shape[0], MAX_CLUSTERED, replace=False)]
    segments = Segments(_balls_logl(centres, 0.02), -3.0 * d, few)
    np.testing.assert_array_equal(cluster_labels(few, segments),
                                  join_connected(few, geo.relabel(few, segments=segments), segments))
