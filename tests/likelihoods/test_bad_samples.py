"""Bad samples (NaN, +inf, math domain errors) become NaN and are counted; -inf stays -inf; no exception."""

import math
import textwrap

import numpy as np
import pytest

from nestgrad.likelihoods import Likelihood

KERNEL = textwrap.dedent('''
    import math


    def risky(theta, x):
        s = 0.0
        if theta[0] > 0.0:
            s = math.log(theta[0])
        else:
            s = -math.inf
        return s + math.sqrt(theta[1]) + math.exp(theta[2]) * x
''')

THETAS = np.array([
    [1.0, 4.0, 0.0],      # fine
    [-1.0, 4.0, 0.0],     # -inf: outside the support, a legitimate value
    [1.0, -4.0, 0.0],     # sqrt of a negative number: domain error -> NaN
    [1.0, 4.0, 1000.0],   # exp overflow -> +inf -> NaN
    [2.0, 1.0, 0.5],      # fine
])


@pytest.fixture(scope="module")
def kernel_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "risky.py"
    path.write_text(KERNEL)
    return path


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_bad_samples_give_nan_and_a_count(kernel_file, backend):
    L = Likelihood(f"{kernel_file}:risky", ["a", "b", "c"], {"x": 2.0}, backend=backend)
    v = L.logl(THETAS).copy()
    assert L.nbad == 2
    assert v[1] == -math.inf
    assert np.isnan(v[2]) and np.isnan(v[3])
    assert v[0] == pytest.approx(0.0 + 2.0 + 2.0) and v[4] == pytest.approx(math.log(2.0) + 1.0 + 2.0 * math.exp(0.5))

    v, g = L.logl_and_grad(THETAS)
    assert L.nbad == 2 and np.isnan(v[[2, 3]]).all() and np.isnan(g[[2, 3]]).all()
    assert v[1] == -math.inf and np.isfinite(g[[0, 4]]).all()
    assert g[4] == pytest.approx([0.5, 0.5, 2.0 * math.exp(0.5)])

    g = L.grad(THETAS)
    assert np.isnan(g[2]).all() and np.isnan(g[3]).all() and np.isfinite(g[[0, 4]]).all()
    assert L.nbad == 2 and L.nbad_total == 6 and L.ncalls_total == 15  # totals over the three calls


def test_a_batch_of_only_bad_samples(kernel_file):
    L = Likelihood(f"{kernel_file}:risky", ["a", "b", "c"], {"x": 2.0}, backend="cpu")
    v = L.logl(np.tile(THETAS[2], (50, 1)))
    assert np.isnan(v).all() and L.nbad == 50
    L.logl(THETAS[:1])
    assert L.nbad == 0  # the count is per call ...
    assert L.nbad_total == 50 and L.ncalls_total == 51  # ... the totals accumulate
