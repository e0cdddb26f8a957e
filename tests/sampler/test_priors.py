"""Prior transforms against scipy's quantile functions, their derivatives against finite differences, and the
spec/factory error messages."""

import math

import numpy as np
import pytest
from scipy import stats

from nestgrad.sampler import priors
from nestgrad.sampler.prior_families import ndtri
from nestgrad.sampler.priors import Prior, PriorError

CASES = [
    (priors.Uniform(-2.0, 3.0), stats.uniform(-2.0, 5.0)),
    (priors.LogUniform(0.01, 10.0), stats.loguniform(0.01, 10.0)),
    (priors.Normal(1.5, 0.3), stats.norm(1.5, 0.3)),
    (priors.TruncatedNormal(0.0, 1.0, -0.5, 2.0), stats.truncnorm(-0.5, 2.0, 0.0, 1.0)),
    # Intervals far out in either tail (Phi(8) rounds to 1 in float64; the upper ones are mapped mirrored).
    (priors.TruncatedNormal(0.0, 1.0, 8.0, 9.0), stats.truncnorm(8.0, 9.0)),
    (priors.TruncatedNormal(0.0, 1.0, -9.0, -8.0), stats.truncnorm(-9.0, -8.0)),
    (priors.TruncatedNormal(2.0, 0.5, 4.5, 30.0), stats.truncnorm(5.0, 56.0, 2.0, 0.5)),
    (priors.TruncatedNormal(0.0, 1.0, 0.5, 3.0), stats.truncnorm(0.5, 3.0)),
    (priors.LogNormal(0.2, 0.5), stats.lognorm(0.5, scale=math.exp(0.2))),
    (priors.HalfNormal(2.0), stats.halfnorm(scale=2.0)),
    (priors.Exponential(3.0), stats.expon(scale=3.0)),
    (priors.Cauchy(1.0, 0.5), stats.cauchy(1.0, 0.5)),
    (priors.Beta(2.0, 5.0), stats.beta(2.0, 5.0)),
    (priors.Beta(2.0, 3.0, low=-1.0, high=1.0), stats.beta(2.0, 3.0, loc=-1.0, scale=2.0)),
]
U = np.linspace(0.001, 0.999, 157)


@pytest.mark.parametrize("dist,ref", CASES, ids=[type(c[0]).__name__ + str(i) for i, c in enumerate(CASES)])
def test_transform_matches_scipy_quantile(dist, ref):
    got = dist.transform(U)
    tol = 2e-6 if dist.family == "beta" else 1e-10  # Beta is a 4097-knot table (see its docstring)
    np.testing.assert_allclose(got, ref.ppf(U), rtol=tol, atol=tol)


@pytest.mark.parametrize("dist,ref", CASES, ids=[type(c[0]).__name__ + str(i) for i, c in enumerate(CASES)])
def test_jacobian_matches_finite_differences(dist, ref):
    prior = Prior({"x": dist})
    u = U[5:-5:7][:, None]
    h = 1e-6 if dist.family != "beta" else 1.0 / 8192  # inside one table segment the slope is exact
    fd = (prior.transform(u + h) - prior.transform(u - h)) / (2 * h)
    jac = prior.transform_jacobian(u)
    if dist.family == "beta":
        np.testing.assert_allclose(jac, 1.0 / ref.pdf(ref.ppf(u)), rtol=2e-2)
    else:
        np.testing.assert_allclose(jac, fd, rtol=1e-5)


def test_loguniform_over_more_than_float64s_range_of_ratios():
    """An outsider's LogUniform(1e-300, 1e300) gave NaN and inf (high / low overflows, and so did low * (high /
    low)^u); the run then blamed the likelihood's support. Now the quantiles are exp(log low + u log(high/low))."""
    u = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    for low, high in ((1e-300, 1e300), (1e-200, 1e150), (1e-300, 1.0)):
        want = np.exp(np.log(low) + u * (np.log(high) - np.log(low)))
        dist = priors.LogUniform(low, high)
        np.testing.assert_allclose(dist.transform(u), want, rtol=1e-12)
        np.testing.assert_allclose(dist.jacobian(u), want * (np.log(high) - np.log(low)), rtol=1e-12)


def test_a_range_wider_than_float64_is_refused_at_high():
    with pytest.raises(PriorError, match="high - low .* overflows float64") as caught:
        priors.Uniform(-1e308, 1e308)
    assert caught.value.argument == "high"


def test_ndtri_full_precision_in_both_tails():
    from scipy import special
    p = np.concatenate([np.logspace(-300, -1, 60), np.linspace(0.05, 0.95, 61), 1 - np.logspace(-15, -2, 30)])
    got = np.array([ndtri(x) for x in p])
    np.testing.assert_allclose(got, special.ndtri(p), rtol=5e-15, atol=5e-15)
    assert ndtri(0.0) == -math.inf and ndtri(1.0) == math.inf and math.isnan(ndtri(1.5))


def test_batch_and_single_agree_and_shapes():
    prior = Prior({"a": priors.Uniform(0, 1), "b": priors.Normal(0, 1), "c": priors.Beta(0.5, 0.5)})
    u = np.random.default_rng(0).random((20, 3))
    batch = prior.transform(u)
    assert batch.shape == (20, 3) and prior.transform_jacobian(u).shape == (20, 3)
    for row, th in zip(u, batch):
        np.testing.assert_array_equal(prior.transform(row), th)
    assert prior.names == ["a", "b", "c"] and prior.ndim == 3
    assert prior.codes.shape == (3,) and prior.args.shape[0] == 3



def test_threaded_and_serial_batches_give_the_same_bits():
    """Small batches run on the calling thread, large ones over threads: the numbers must not depend on which."""
    from nestgrad.sampler import prior_families as pf

    prior = Prior({f"x{i}": dist for i, (dist, _) in enumerate(CASES)})
    u = np.random.default_rng(1).random((pf.PARALLEL_ROWS + 3, prior.ndim))
    out = [np.empty_like(u) for _ in range(4)]
    pf.transform_batch(prior.codes, prior.args, u, out[0], out[1])
    pf.transform_rows(prior.codes, prior.args, u, out[2], out[3])
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out[1], out[3])
    np.testing.assert_array_equal(prior.transform(u[:5]), out[0][:5])  # below PARALLEL_ROWS: the serial path
    np.testing.assert_array_equal(prior.transform(u), out[0])

def test_beta_table_has_exact_endpoints():
    d = priors.Beta(0.7, 3.0, low=2.0, high=5.0)
    np.testing.assert_array_equal(d.transform([0.0, 1.0]), [2.0, 5.0])


def test_from_spec_and_make_round_trip():
    spec = {"mu": ("uniform", 0.0, 1.0), "s": ("loguniform", 0.01, 0.5), "n": ("normal", 0.1, 0.05),
            "t": ("truncnormal", 0.0, 1.0, -1.0, 1.0), "b": {"family": "beta", "a": 2, "b": 2}}
    prior = Prior.from_spec(spec)
    again = Prior.from_spec(prior.to_spec())
    assert prior.distributions == again.distributions
    assert priors.make("gaussian", mu=1, sigma=2) == priors.Normal(1, 2)
    u = np.random.default_rng(1).random((5, 5))
    np.testing.assert_array_equal(prior.transform(u), again.transform(u))


@pytest.mark.parametrize("call,words", [
    (lambda: priors.make("weibull", 1.0), ["weibull", "known families"]),
    (lambda: priors.make("uniform", low=0.0), ["uniform", "high"]),
    (lambda: priors.make("normal", mu=0.0, sigma=-1.0), ["normal", "sigma", "> 0"]),
    (lambda: priors.make("uniform", 1.0, 0.0), ["uniform", "low < high"]),
    (lambda: priors.make("loguniform", 0.0, 1.0), ["loguniform", "low"]),
    (lambda: priors.make("normal", mu="a", sigma=1.0), ["normal", "mu", "number"]),
    (lambda: Prior.from_spec({"x": ("uniform", 0.0)}), ["'x'", "uniform", "high"]),
    (lambda: Prior.from_spec({"y": 3.0}), ["'y'"]),
])
def test_errors_name_family_and_argument(call, words):
    with pytest.raises(PriorError) as err:
        call()
    for w in words:
        assert w in str(err.value), (w, str(err.value))


def test_prior_draws_follow_the_distribution():
    """Uniform u through the transform gives samples of the target law (KS)."""
    u = np.random.default_rng(2).random(4000)
    for dist, ref in CASES:
        assert stats.kstest(dist.transform(u), ref.cdf).pvalue > 1e-3, dist


def test_ndtri_of_subnormal_probabilities_is_finite():
    from scipy import special
    p = np.array([5e-324, 1e-320, 1e-310, 2.0 ** -1022])
    np.testing.assert_allclose([ndtri(x) for x in p], special.ndtri(p), rtol=1e-8)
