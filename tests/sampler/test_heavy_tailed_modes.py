"""The heavy-tailed two-mode variant (tests/sampler/heavy_tailed_modes.py): its exact references agree with
quadrature and finite differences, and one run finds both modes with the right evidence."""

import numpy as np
from scipy import integrate, stats

from heavy_tailed_modes import CauchyMixture, cauchy_mixture
from nestgrad.sampler import NestedSampler


def test_evidence_and_weights_match_quadrature_in_one_dimension():
    problem = CauchyMixture(np.array([[-5.0], [5.0], [12.0]]), [0.5, 0.3, 0.2], 0.05, 20.0)
    density = lambda x: np.exp(problem.logl(np.array([[x]]))[0]) / 40.0  # noqa: E731 (prior density 1/40)
    edges = [-20.0, -5.0, 0.0, 5.0, 8.5, 12.0, 20.0]
    pieces = [integrate.quad(density, a, b, limit=400)[0] for a, b in zip(edges[:-1], edges[1:])]
    assert abs(np.log(sum(pieces)) - problem.logz) < 1e-8
    mass = np.array([pieces[0] + pieces[1], pieces[2] + pieces[3], pieces[4] + pieces[5]]) / sum(pieces)
    np.testing.assert_allclose(problem.weights, mass, atol=1e-3)  # basins split at the midpoints: tails cross


def _assert_gradient_matches_central_differences(problem, points, h=1e-6):
    for x in points:
        _, grad = problem.logl_and_grad(x[None])
        fd = [(problem.logl((x + h * e)[None])[0] - problem.logl((x - h * e)[None])[0]) / (2 * h)
              for e in np.eye(x.size)]
        np.testing.assert_allclose(grad[0], fd, rtol=1e-5, atol=1e-7)


def test_gradient_matches_central_differences():
    _assert_gradient_matches_central_differences(cauchy_mixture(), np.random.default_rng(1).uniform(-8, 8, (5, 4)))


def test_one_run_finds_both_modes_and_the_evidence():
    problem = cauchy_mixture()
    res = NestedSampler(problem, problem.prior, nlive=300, seed=4).run(progress=False)
    assert abs(res.logz - problem.logz) < 4 * res.logz_err
    weights = problem.mode_weights(res.dead.theta, res.weights)
    assert np.all(np.abs(weights - problem.weights) < 0.2), weights


def test_rotated_product_reference_evidence():
    """Its gradient agrees with central differences, and its box mass (Monte Carlo) agrees with the exact
    arctangent product when the rotation is the identity and with quadrature in 2-D."""
    from heavy_tailed_modes import box_mass_of_rotated_cauchy, rotated_cauchy, rotation

    _assert_gradient_matches_central_differences(rotated_cauchy(draws=1_000_000),
                                                 np.random.default_rng(2).uniform(-3, 3, (4, 6)))
    exact = (2 / np.pi * np.arctan(20.0 / 0.05)) ** 6
    assert abs(box_mass_of_rotated_cauchy(np.eye(6), 0.05, 20.0, 2_000_000) - exact) < 4e-4
    rot = rotation(2, 3)
    density = lambda b, a: np.prod(0.05 / np.pi / (0.05 ** 2 + (rot @ np.array([a, b])) ** 2))  # noqa: E731
    quad, _ = integrate.dblquad(density, -20, 20, -20, 20, epsabs=1e-10)
    assert abs(box_mass_of_rotated_cauchy(rot, 0.05, 20.0, 2_000_000) - quad) < 4e-4


def test_correlated_student_reference_evidence():
    """Its density is scipy's multivariate t, its gradient agrees with central differences, and its box mass
    (Monte Carlo of exact draws) agrees with 2-D quadrature of scipy's density."""
    from heavy_tailed_modes import box_mass_of_student, correlated_student

    problem = correlated_student(draws=1_000_000)
    mean, precision = problem.cpu_kernels().data[1], problem.cpu_kernels().data[2]
    cov = np.linalg.inv(precision)
    x = np.random.default_rng(3).uniform(-3, 3, (6, 6))
    assert np.allclose(problem.logl(x), stats.multivariate_t(loc=mean, shape=cov, df=1.0).logpdf(x), atol=1e-9)
    _assert_gradient_matches_central_differences(problem, x[:4])
    mean2, cov2 = np.array([0.5, -1.0]), np.array([[1.0, 0.9], [0.9, 1.0]])
    density = stats.multivariate_t(loc=mean2, shape=cov2, df=1.0)
    quad, _ = integrate.dblquad(lambda b, a: density.pdf([a, b]), -5, 5, -5, 5, epsabs=1e-10)
    mc = box_mass_of_student(mean2, np.linalg.cholesky(cov2), 1.0, 5.0, 2_000_000)
    assert abs(mc - quad) < 1e-3, (mc, quad)  # standard error ~2.5e-4 at a mass of ~0.85
