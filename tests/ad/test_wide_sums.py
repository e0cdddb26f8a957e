"""A float32 build with ``sum_dtype="float64"``: the sums a kernel's loops accumulate (its value over the data and
the gradient's sums) are float64, the per-point arithmetic float32. The reference is the float64 build."""
import math

import numpy as np
import pytest

from nestgrad import ad
from nestgrad.ad import linalg
from nestgrad.ad.derivative import wide_sums


def long_sum(theta, x):
    mu, s = theta[0], theta[1]
    q = 0.0
    for i in range(x.shape[0]):
        d = (x[i] - mu) / s
        q += d * d
    return -0.5 * q - x.shape[0] * math.log(s)


def two_level(theta, x):
    """A sum inside a sum, and one accumulated by subtraction."""
    total = 0.0
    for j in range(x.shape[0]):
        row = 0.0
        for i in range(x.shape[1]):
            row -= (x[j, i] - theta[0]) ** 2
        total += row * theta[1]
    return total


def _errors(fn, args64, fastmath):
    d = ad.differentiate(fn)
    theta64 = args64[0]
    g64 = np.zeros(theta64.size)
    v64 = d.jit(dtype="float64").raw_value_and_grad(*args64, g64, np.zeros(0))
    out = {}
    for sums in (None, "float64"):
        k = d.jit(dtype="float32", sum_dtype=sums, fastmath=fastmath)
        args = [a.astype(np.float32) for a in args64]
        g = np.zeros(theta64.size, np.float32)
        # theta is rounded to float32 in both builds: compare with the float64 build at the rounded theta
        v = k.raw_value_and_grad(*args, g, np.zeros(0, np.float32))
        out[sums] = (abs(v - v64) / abs(v64), np.max(np.abs(g - g64) / np.abs(g64)))
    return out


@pytest.mark.parametrize("fastmath", [False, True], ids=["sequential", "reassociated"])
def test_float64_sums_recover_the_float64_results(fastmath):
    rng = np.random.default_rng(0)
    x = rng.normal(0.5, 0.1, 200_000)
    theta = np.array([0.51, 0.11], np.float32).astype(np.float64)  # exactly representable in float32
    err = _errors(long_sum, [theta, x.astype(np.float32).astype(np.float64)], fastmath)
    value, grad = err["float64"]
    assert value < 1e-6 and grad < 2e-5, err
    if not fastmath:  # a sequential float32 sum of 2e5 terms loses digits (as on the GPU, which does not reorder)
        assert err[None][1] > 20 * grad, err


def test_nested_and_subtracted_sums_are_widened():
    rng = np.random.default_rng(1)
    x = rng.normal(0.3, 0.2, (300, 300)).astype(np.float32).astype(np.float64)
    theta = np.array([0.25, 1.5], np.float32).astype(np.float64)
    err = _errors(two_level, [theta, x], False)
    assert err["float64"][0] < 1e-6 and err["float64"][1] < 1e-5, err
    assert err[None][0] > 10 * err["float64"][0], err


def test_the_source_says_so_and_only_float32_builds_change():
    d = ad.differentiate(long_sum)
    wide = d.jit(dtype="float32", sum_dtype="float64").source
    assert "sums float64" in wide.splitlines()[0] and "np.float64(" in wide
    assert "np.float64(" not in d.jit(dtype="float32").source
    assert d.jit(dtype="float64", sum_dtype="float64") is d.jit(dtype="float64")  # nothing to widen
    assert not wide_sums("float64", "float64") and wide_sums("float32", "float64")
    with pytest.raises(ValueError, match="narrower"):
        wide_sums("float64", "float32")


def branch_sum(theta, x):
    """Each branch adds its own term: the IR merges the two sums into one name the loop copies back."""
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s += theta[0] * x[i]
        else:
            s += theta[1]
    return s


def censored_gaussian(theta, x):
    """A Tobit-like likelihood: points below the limit add a tail term, the others a density term; one branch
    depends on the parameters (the limit moves with theta[1])."""
    mu, lim = theta[0], theta[1]
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < lim:
            total += math.log(0.5 * math.erfc((mu - lim) / 1.4142135623730951))
        else:
            d = x[i] - mu
            total -= 0.5 * d * d
    return total


def one_sided(theta, x):
    """Only one branch adds (the other leaves the sum as it is)."""
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.3:
            s += (x[i] - theta[0]) ** 2 * theta[1]
    return -s


@pytest.mark.parametrize("fn", [branch_sum, censored_gaussian, one_sided], ids=lambda f: f.__name__)
def test_sums_accumulated_in_branches_are_widened(fn):
    """An outsider's battery found these kept in float32: 100,000 terms under if/else gave the value 3e-4 too
    large relative (33 nats on a log-likelihood of 1e5)."""
    rng = np.random.default_rng(2)
    x = rng.normal(0.4, 0.3, 100_000).astype(np.float32).astype(np.float64)
    theta = np.array([0.45, 0.2], np.float32).astype(np.float64)
    err = _errors(fn, [theta, x], False)
    assert err["float64"][0] < 2e-6 and err["float64"][1] < 2e-7, err
    assert err[None][0] > 10 * err["float64"][0], err
    # the gradient's sums too: a parameter read inside a branch once added into the float32 gradient array
    # every iteration (5e-6 to 8e-6 relative), now into a float64 adjoint added to it once after the loop
    assert err[None][1] > 10 * err["float64"][1], err


def scales_in_a_local_array(theta, X):
    """The model's three numbers kept in a local array the data loop reads."""
    m = np.zeros(3)
    m[0] = math.exp(theta[0])
    m[1] = theta[1]
    m[2] = math.exp(theta[2])
    total = 0.0
    for i in range(X.shape[0]):
        z0 = X[i, 0] / m[0]
        z1 = (X[i, 1] - m[1] * z0) / m[2]
        total += -0.5 * (z0 * z0 + z1 * z1) - theta[0] - theta[2]
    return total


def bivariate_rows(theta, X):
    """README's multivariate normal over data rows (ad.linalg.mvn_logpdf_rows)."""
    mean = np.empty(2)
    lo = np.zeros((2, 2))
    work = np.empty((2, 2))
    mean[0], mean[1] = theta[0], theta[1]
    lo[0, 0], lo[1, 0], lo[1, 1] = math.exp(theta[2]), theta[3], math.exp(theta[4])
    return linalg.mvn_logpdf_rows(X, mean, lo, work)


@pytest.mark.parametrize("fn, theta", [
    (scales_in_a_local_array, [0.1, 0.3, -0.2]),
    (bivariate_rows, [0.1, 0.2, 0.05, 0.3, -0.1]),
], ids=lambda v: getattr(v, "__name__", None))
def test_sums_through_local_arrays_and_mvn_rows_are_widened(fn, theta):
    """An outsider's battery (the GPU default, float32 with float64 sums, 1e5 rows): a local array's adjoint summed
    in its float32 slots gave the gradient 2.3e-4 relative off, mvn_logpdf_rows' own float32 scatter sum its value
    7.6e-6 (about 1 nat) and its gradient 2.9e-3 (a component 3%) off."""
    from nestgrad.likelihoods import Likelihood

    rng = np.random.default_rng(0)
    X = (rng.normal(size=(100_000, 2)) + [0.0, 0.3]).astype(np.float32).astype(np.float64)
    thetas = np.array([theta], np.float32).astype(np.float64)
    params = [f"p{i}" for i in range(len(theta))]
    v64, g64 = Likelihood(fn, params, {"X": X}, backend="cpu", dtype="float64").logl_and_grad(thetas)
    v, g = Likelihood(fn, params, {"X": X}, backend="cpu", dtype="float32", sum_dtype="float64").logl_and_grad(
        thetas.astype(np.float32))
    assert abs(v[0] - v64[0]) < 2e-7 * abs(v64[0]), (v, v64)
    assert np.linalg.norm(g[0] - g64[0]) < 2e-6 * np.linalg.norm(g64[0]), (g, g64)
