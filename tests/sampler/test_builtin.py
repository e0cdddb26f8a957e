"""The sampler through the real pipeline: ``likelihoods.builtin`` problem -> ad-generated kernels ->
``Likelihood.cpu_kernels()`` -> fused HMC."""

import numpy as np

from nestgrad.likelihoods import builtin
from nestgrad.sampler import NestedSampler, Prior


def test_every_builtin_default_prior_builds():
    for name in builtin.names():
        b = builtin.get(name)
        prior = Prior.from_spec(b.priors)
        assert prior.names == list(b.params), name
        theta = prior.transform(np.random.default_rng(0).random((8, prior.ndim)))
        assert np.all(np.isfinite(theta)), name


def test_gaussian4d_builtin_logz_within_three_sigma():
    b = builtin.get("gaussian4d")
    like = b.likelihood(backend="cpu")
    res = NestedSampler(like, Prior.from_spec(b.priors), nlive=300, seed=3).run(dlogz=0.1, progress=False)
    assert abs(res.logz - b.reference_logz) <= 3 * res.logz_err, (res.logz, res.logz_err, b.reference_logz)
    # The HMC end points' likelihoods agree with the batched backend's.
    np.testing.assert_allclose(like.logl(res.dead.theta[-50:]), res.dead.logl[-50:], rtol=1e-10)
    truths = np.array([b.truths[p] for p in b.params])
    assert np.all(np.abs(res.samples.mean(axis=0) - truths) < 0.05)


def test_float32_kernels_give_the_same_evidence():
    """float32 likelihood kernels (the GPU default) drive the same chains; logZ stays within 3 sigma."""
    b = builtin.get("gaussian4d")
    like = b.likelihood(backend="cpu", dtype="float32")
    res = NestedSampler(like, Prior.from_spec(b.priors), nlive=300, seed=3).run(dlogz=0.1, progress=False)
    assert res.settings["dtype"] == "float32"
    assert abs(res.logz - b.reference_logz) <= 3 * res.logz_err, (res.logz, res.logz_err, b.reference_logz)
