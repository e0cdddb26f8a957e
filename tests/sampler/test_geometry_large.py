"""The live-set geometry at large nlive: the bounding radius in one compiled pass equals the one from whitened
copies (``triangular.lower_solve``)."""

import numpy as np
import pytest

from nestgrad.sampler import geometry as geo
from nestgrad.sampler.triangular import lower_solve


@pytest.mark.parametrize("diagonal", [True, False])
def test_max_whitened_norm2_is_the_largest_squared_mahalanobis_distance(diagonal):
    rng = np.random.default_rng(4)
    d = 7
    mix = rng.standard_normal((d, d))
    points = rng.standard_normal((3000, d)) @ mix.T * 0.01 + 0.5
    cov = np.cov(points, rowvar=False)
    if diagonal:
        cov = np.diag(np.diag(cov))
    chol = np.sqrt(cov) if diagonal else np.linalg.cholesky(cov)
    mean = points.mean(axis=0)
    white = lower_solve(chol, (points - mean).T, diagonal)
    expected = np.max(np.einsum("ij,ij->j", white, white))
    assert geo.max_whitened_norm2(points, mean, chol, diagonal) == pytest.approx(expected, rel=1e-12)
    # the farthest point decides it: moving it out moves the radius
    far = int(np.argmax(np.einsum("ij,ij->j", white, white)))
    points[far] = mean + 2.0 * (points[far] - mean)
    assert geo.max_whitened_norm2(points, mean, chol, diagonal) == pytest.approx(4.0 * expected, rel=1e-9)
