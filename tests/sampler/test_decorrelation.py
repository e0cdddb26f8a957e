"""The chains' start-end correlations that adapt the trajectory length (``sampler.decorrelation``): measured on a
subset of many chains, they agree with all chains within the subset's noise."""

import numpy as np

from nestgrad.sampler import decorrelation
from nestgrad.sampler import geometry as geo


def _chains(rng, k, d, rho):
    start = rng.standard_normal((k, d))
    end = rho * start + np.sqrt(1 - rho ** 2) * rng.standard_normal((k, d))
    logl_start, logl_end = -np.sum(start ** 2, axis=1), -np.sum(end ** 2, axis=1)
    return 0.5 + 0.01 * start, 0.5 + 0.01 * end, logl_start, logl_end


def test_many_chains_measured_on_a_subset_agree_with_all_of_them(monkeypatch):
    rng = np.random.default_rng(0)
    u_start, u_end, logl_start, logl_end = _chains(rng, 20000, 5, 0.6)
    geometry = geo.build(np.vstack([u_start, u_end]), np.zeros(40000, np.int64), dense=False)
    subset = decorrelation.chain_correlation(geometry, u_start, u_end, logl_start, logl_end)
    noise = 4 / np.sqrt(decorrelation.MAX_CHAINS)
    monkeypatch.setattr(decorrelation, "MAX_CHAINS", 10 ** 9)
    every = decorrelation.chain_correlation(geometry, u_start, u_end, logl_start, logl_end)
    assert 0.55 < every[0] < 0.65 and 0.25 < every[1] < 0.45  # coordinates rho; logL's rank correlation ~ rho^2
    assert abs(subset[0] - every[0]) < noise and abs(subset[1] - every[1]) < noise


def test_up_to_the_limit_every_chain_counts(monkeypatch):
    rng = np.random.default_rng(1)
    u_start, u_end, logl_start, logl_end = _chains(rng, 300, 4, 0.3)
    geometry = geo.build(np.vstack([u_start, u_end]), np.zeros(600, np.int64), dense=False)
    monkeypatch.setattr(decorrelation, "MAX_CHAINS", 300)
    at_limit = decorrelation.chain_correlation(geometry, u_start, u_end, logl_start, logl_end)
    monkeypatch.setattr(decorrelation, "MAX_CHAINS", 299)
    below = decorrelation.chain_correlation(geometry, u_start, u_end, logl_start, logl_end)
    monkeypatch.setattr(decorrelation, "MAX_CHAINS", 10 ** 9)
    assert decorrelation.chain_correlation(geometry, u_start, u_end, logl_start, logl_end) == at_limit != below
