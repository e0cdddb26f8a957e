"""Built-in problems: registry, reference log-evidences against independent values, analytic gradients.

None of these needs ``ad``: the references are checked against literature values or a brute-force grid
(a different method from the module's own), and the analytic gradients against finite differences.
"""

import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from likelihood_helpers import prior_draws
from nestgrad.likelihoods import builtin
from nestgrad.ad.check import finite_difference_gradient
from nestgrad.likelihoods.gradcheck import relative_error

ALL = builtin.names()


def test_names_lists_every_required_problem():
    required = {"gaussian4d", "poisson_rates", "gaussian", "gaussian_shells", "rosenbrock", "eggbox",
                "linear_regression", "student_t", "negative_binomial"}
    assert required <= set(ALL)


@pytest.mark.parametrize("name", ALL)
def test_record_is_consistent(name):
    b = builtin.get(name)
    assert b.name == name
    assert set(b.priors) == set(b.params) and len(b.params) == b.ndim
    assert b.kernel.__code__.co_varnames[1:b.kernel.__code__.co_argcount] == tuple(b.data)
    draws = prior_draws(b, 64, np.random.default_rng(1))
    values = np.array([b.kernel(t, *b.data.values()) for t in draws])
    assert np.isfinite(values).any()
    if b.truths is not None:
        assert list(b.truths) == list(b.params)


@pytest.mark.parametrize("name", ALL)
def test_check_points_lie_inside_the_default_priors(name):
    """``Builtin.draw`` (where ``check_gradient`` looks by default) scatters points around the truths that stay
    inside the support of the default priors (read from the sampler's registry), with a finite kernel there."""
    from nestgrad.sampler.priors import Prior

    b = builtin.get(name)
    points = b.draw(np.random.default_rng(3), 256)
    assert points.shape == (256, b.ndim) and np.unique(points, axis=0).shape[0] == 256
    for column, dist in zip(points.T, Prior.from_spec(b.priors).distributions.values()):
        low, high = dist.bounds()
        assert (low is None or column.min() > low) and (high is None or column.max() < high), (dist, column)
    assert np.all(np.isfinite([b.kernel(t, *b.data.values()) for t in points]))


def test_unknown_name_and_option_are_named():
    with pytest.raises(ValueError, match="nosuch"):
        builtin.get("nosuch")
    with pytest.raises(ValueError, match="bogus"):
        builtin.get("gaussian4d", bogus=3)


def test_data_generation_is_seeded():
    a, b, c = (builtin.get("gaussian4d", seed=s).data["x"] for s in (3, 3, 4))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("name", ALL)
def test_analytic_gradient_matches_finite_differences(name):
    b = builtin.get(name)
    thetas = prior_draws(b, 12, np.random.default_rng(2))
    consts = tuple(b.data.values())
    fd = np.array([finite_difference_gradient(b.kernel, t, *consts) for t in thetas])
    analytic = np.empty_like(thetas)
    for t, row in zip(thetas, analytic):
        b.gradient(t, *consts, row)
    assert relative_error(analytic, fd).max() < 1e-6


@pytest.mark.parametrize("ndim,expected", [(2, -1.746), (5, -5.674), (10, -14.590)])
def test_gaussian_shells_logz_matches_literature(ndim, expected):
    assert abs(builtin.get("gaussian_shells", ndim=ndim).reference_logz - expected) < 1e-3


def test_rosenbrock_and_eggbox_logz_match_literature():
    assert abs(builtin.get("rosenbrock").reference_logz - (-6.472)) < 1e-3
    assert abs(builtin.get("eggbox").reference_logz - 235.856) < 1e-3


def test_gaussian4d_logz_against_a_grid():
    b = builtin.get("gaussian4d", n=30, seed=5)
    x = b.data["x"]
    total = 0.0
    for row in x:  # the likelihood and prior factorise over the two rows
        mu, s = np.linspace(0.0, 1.0, 1501), np.linspace(0.01, 0.5, 1501)
        m, sg = np.meshgrid(mu, s, indexing="ij")
        ll = sum(-0.5 * ((xi - m) / sg) ** 2 for xi in row) - row.size * np.log(sg) \
            - 0.5 * row.size * math.log(2 * math.pi)
        total += logsumexp(ll) + math.log(mu[1] - mu[0]) + math.log(s[1] - s[0]) - math.log(0.49)
    assert abs(total - b.reference_logz) < 0.01


def test_poisson_logz_against_quadrature_per_bin():
    from scipy import integrate

    for prior in ("uniform", "loguniform"):
        b = builtin.get("poisson_rates", bins=3, prior=prior, seed=1)
        total = 0.0
        for k, p in zip(b.data["counts"], b.params):
            family, lo, hi = b.priors[p]
            density = (lambda r: 1 / (hi - lo)) if family == "uniform" else (lambda r: 1 / (r * math.log(hi / lo)))
            f = lambda r: math.exp(k * math.log(r) - r - gammaln(k + 1)) * density(r) if r > 0 else 0.0
            value, _ = integrate.quad(f, lo, hi, points=[max(k, lo * 1.01)], limit=200, epsrel=1e-10)
            total += math.log(value)
        assert abs(total - b.reference_logz) < 1e-6


def test_linear_regression_logz_against_a_grid():
    b = builtin.get("linear_regression", n=20, seed=3)
    x, y = b.data["x"], b.data["y"]
    slope = np.linspace(1.3, 1.7, 161)[:, None, None]
    intercept = np.linspace(-0.7, 1.7, 161)[None, :, None]
    log_sigma = np.linspace(math.log(0.1), math.log(1.5), 161)
    sigma = np.exp(log_sigma)[None, None, :]
    rss = sum((yi - slope * xi - intercept) ** 2 for xi, yi in zip(x, y))
    ll = -0.5 * rss / sigma**2 - x.size * np.log(sigma) - 0.5 * x.size * math.log(2 * math.pi)
    assert abs(b.kernel(np.array([1.3, -0.7, 0.1]), x, y) - ll[0, 0, 0]) < 1e-9  # the grid is the kernel
    # the loguniform prior on sigma is flat in log sigma: integrate over the log-sigma grid
    cells = [np.diff(a.ravel())[0] for a in (slope, intercept, log_sigma)]
    logz = logsumexp(ll) + sum(math.log(c) for c in cells) - math.log(100.0) - math.log(math.log(1000.0))
    assert abs(logz - b.reference_logz) < 0.01


def test_correlated_gaussian_logz_is_the_box_mass():
    b = builtin.get("gaussian", ndim=3, rho=0.6, sigma=0.3)
    rng = np.random.default_rng(0)
    cov = np.linalg.inv(b.data["icov"])
    draws = rng.multivariate_normal(b.data["mean"], cov, size=400_000)
    mass = np.mean(np.all((draws > 0) & (draws < 1), axis=1))
    assert abs(math.log(mass) - b.reference_logz) < 0.01


def test_negative_binomial_logz_against_nested_adaptive_quadrature():
    from scipy import integrate

    b = builtin.get("negative_binomial", n=20, seed=2)
    k = b.data["k"]

    def log_l(log_mu, log_r):
        return b.kernel(np.array([math.exp(log_mu), math.exp(log_r)]), k)

    lo, hi = math.log(0.1), math.log(100.0)
    grid = np.linspace(lo, hi, 41)
    shift = max(log_l(a, c) for a in grid for c in grid)
    value, _ = integrate.dblquad(lambda lr, lm: math.exp(log_l(lm, lr) - shift), lo, hi, lo, hi, epsrel=1e-7)
    assert abs(math.log(value) + shift - 2 * math.log(hi - lo) - b.reference_logz) < 1e-3


def test_student_t_logz_against_importance_sampling():
    """Independent of the quadrature: importance sampling in (loc, log scale, log nu), where the priors are
    flat, with a multivariate-t proposal around the posterior mode (Laplace covariance, inflated)."""
    from scipy import optimize, stats

    b = builtin.get("student_t", n=20, seed=4)
    y = b.data["y"]
    box = np.array([[-5.0, 5.0], [math.log(0.01), math.log(10.0)], [math.log(0.5), math.log(100.0)]])

    def log_l(u):  # u: (m, 3) -> (m,), the kernel's formula vectorised over points
        loc, scale, nu = u[:, :1], np.exp(u[:, 1:2]), np.exp(u[:, 2:3])
        z2 = ((y[None, :] - loc) / scale) ** 2
        const = (gammaln(0.5 * (nu + 1)) - gammaln(0.5 * nu) - 0.5 * np.log(nu * math.pi) - np.log(scale))
        return (y.size * const - 0.5 * (nu + 1) * np.log1p(z2 / nu).sum(axis=1, keepdims=True))[:, 0]

    u0 = np.array([[0.3, -0.5, 1.0]])
    assert abs(log_l(u0)[0] - b.kernel(np.array([0.3, math.exp(-0.5), math.exp(1.0)]), y)) < 1e-9
    mode = optimize.minimize(lambda u: -log_l(u[None, :])[0], u0[0], method="Nelder-Mead",
                             options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 4000}).x
    h = 1e-4
    hess = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            def f(di, dj):
                u = mode.copy()
                u[i] += di
                u[j] += dj
                return log_l(u[None, :])[0]
            hess[i, j] = (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h * h)
    proposal = stats.multivariate_t(mode, 2.0 * np.linalg.inv(-hess), df=4, seed=11)
    draws = proposal.rvs(200_000)
    inside = np.all((draws > box[:, 0]) & (draws < box[:, 1]), axis=1)
    log_w = np.where(inside, log_l(draws) - proposal.logpdf(draws), -np.inf)
    logz = logsumexp(log_w) - math.log(draws.shape[0]) - np.log(box[:, 1] - box[:, 0]).sum()
    assert abs(logz - b.reference_logz) < 0.02, (logz, b.reference_logz)
