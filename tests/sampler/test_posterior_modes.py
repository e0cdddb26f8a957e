"""The posterior modes a run reports (``Results.clusters``): clusters of the equal-weight samples.

Equal-weight samples repeat heavy dead points, and in many dimensions a few mutual nearest neighbours form an
island of the kNN graph by chance; neither is a mode. A separated mode is reported from 1% of the posterior mass
(20 of the 2000 samples clustered); a lighter one is counted in its nearest mode."""
from types import SimpleNamespace

import numpy as np

from nestgrad.sampler.evidence import equal_weight_indices
from nestgrad.sampler.run_results import _clusters

HMC = SimpleNamespace(clustering=True)


def _modes(dead_u, weights, rng):
    weights = weights / weights.sum()
    sample_idx = equal_weight_indices(weights, rng, size=2000)
    clusters, region = _clusters(dead_u, weights, sample_idx, 0.0, HMC, True)
    return clusters, region


def test_a_30d_gaussian_posterior_is_one_mode_despite_repeated_samples():
    for seed in range(10):
        rng = np.random.default_rng(seed)
        z = rng.standard_normal((6000, 30))
        # heavy-tailed weights, as dead points near the peak carry: many samples repeat a few points
        weights = rng.exponential(size=6000) ** 3
        clusters, _ = _modes(0.5 + 0.02 * z, weights, rng)
        assert len(clusters) == 1, (seed, [c["mass"] for c in clusters])
        assert abs(clusters[0]["mass"] - 1.0) < 1e-12


def _two_modes(rng, light):
    d = 5
    big = 0.3 + 0.02 * rng.standard_normal((5000, d))
    small = 0.7 + 0.01 * rng.standard_normal((600, d))
    weights = np.concatenate([np.full(5000, (1 - light) / 5000), np.full(600, light / 600)])
    return np.vstack([big, small]), weights


def test_a_separated_two_percent_mode_is_reported_with_its_mass():
    for seed in range(5):
        rng = np.random.default_rng(100 + seed)
        clusters, region = _modes(*_two_modes(rng, 0.02), rng)
        masses = sorted(c["mass"] for c in clusters)
        assert len(masses) == 2, (seed, masses)
        assert abs(masses[0] - 0.02) < 1e-9 and abs(masses[1] - 0.98) < 1e-9
        assert np.unique(region[5000:]).size == 1 and region[5000] != region[0]


def test_a_mode_under_one_percent_is_counted_in_the_nearest_one():
    rng = np.random.default_rng(7)
    clusters, _ = _modes(*_two_modes(rng, 0.004), rng)
    assert len(clusters) == 1 and abs(clusters[0]["mass"] - 1.0) < 1e-12
