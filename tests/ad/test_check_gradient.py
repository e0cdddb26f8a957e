"""ad.check: finite differences, the error metric, and that wrong gradients (AD or analytic) are caught."""
import math

import numpy as np
import pytest

from nestgrad import ad
from nestgrad.ad import special
from nestgrad.ad.check import GradientCheck, check_gradient, finite_difference_gradient
from ad_test_kernels.seeds import gauss4d  # the corpus' seed kernel (DESIGN.md)


def gauss4d_grad(theta, x, out):
    mu1, mu2, s1, s2 = theta
    n = x.shape[1]
    d1, d2 = (x[0] - mu1) / s1, (x[1] - mu2) / s2
    out[0] = d1.sum() / s1
    out[1] = d2.sum() / s2
    out[2] = (d1 * d1).sum() / s1 - n / s1
    out[3] = (d2 * d2).sum() / s2 - n / s2


def poisson(theta, counts, t):
    amp, rate = theta[0], theta[1]
    total = 0.0
    for i in range(counts.shape[0]):
        lam = amp * math.exp(-rate * t[i])
        total += counts[i] * math.log(lam) - lam - math.lgamma(counts[i] + 1.0)
    return total


def poisson_grad(theta, counts, t, out=None):
    """Returns the gradient instead of filling ``out`` (check_gradient accepts both)."""
    amp, rate = theta
    lam = amp * np.exp(-rate * t)
    dlam = counts / lam - 1.0
    return np.array([(dlam * lam / amp).sum(), (dlam * -t * lam).sum()])


class FakeDerivative:
    """Stands in for ad.differentiate's result: value_and_grad from an analytic gradient, optionally broken."""

    def __init__(self, fn, grad, corrupt=None, value_offset=0.0):
        self.fn, self.grad, self.corrupt, self.value_offset = fn, grad, corrupt, value_offset

    def value_and_grad(self, theta, *rest):
        *consts, out = rest
        returned = self.grad(theta, *consts, out)
        if returned is not None:
            out[:] = returned
        if self.corrupt is not None:
            self.corrupt(out)
        return self.fn(theta, *consts) + self.value_offset


@pytest.fixture
def gauss_data():
    rng = np.random.default_rng(3)
    return np.stack([rng.normal(0.3, 0.1, 200), rng.normal(0.6, 0.2, 200)])


@pytest.fixture
def poisson_data():
    rng = np.random.default_rng(4)
    t = np.linspace(0.0, 5.0, 60)
    return rng.poisson(20.0 * np.exp(-0.4 * t)).astype(np.float64), t


def test_finite_differences_match_the_analytic_gradient(gauss_data, poisson_data):
    theta = np.array([0.25, 0.7, 0.12, 0.18])
    exact = np.zeros(4)
    gauss4d_grad(theta, gauss_data, exact)
    fd = finite_difference_gradient(gauss4d, theta, gauss_data)
    assert np.allclose(fd, exact, rtol=1e-9, atol=0.0)
    theta = np.array([18.0, 0.37])
    fd = finite_difference_gradient(poisson, theta, *poisson_data)
    assert np.allclose(fd, poisson_grad(theta, *poisson_data), rtol=1e-9, atol=0.0)


def test_finite_differences_with_respect_to_another_argument():
    def shifted_square(offset, theta):
        return (theta[0] - offset[0]) ** 2 + 3.0 * offset[1] ** 3

    offset, theta = np.array([0.5, -2.0]), np.array([1.75])
    fd = finite_difference_gradient(shifted_square, offset, theta, wrt_index=0)
    assert np.allclose(fd, [-2.0 * (1.75 - 0.5), 9.0 * 4.0], rtol=1e-10)
    fd = finite_difference_gradient(shifted_square, offset, theta, wrt_index=1)
    assert np.allclose(fd, [2.0 * (1.75 - 0.5)], rtol=1e-10)


def test_correct_gradients_pass_with_and_without_analytic(gauss_data, poisson_data):
    theta = np.array([0.25, 0.7, 0.12, 0.18])
    check = check_gradient(gauss4d, theta, gauss_data, derivative=FakeDerivative(gauss4d, gauss4d_grad))
    assert isinstance(check, GradientCheck) and check.ok and check.max_rel_err < 1e-8
    assert check.analytic is None and check.rel_err_analytic is None
    check = check_gradient(gauss4d, theta, gauss_data, analytic=gauss4d_grad,
                           derivative=FakeDerivative(gauss4d, gauss4d_grad))
    assert check.ok and np.array_equal(check.ad, check.analytic)
    check = check_gradient(poisson, np.array([18.0, 0.37]), *poisson_data, analytic=poisson_grad,
                           derivative=FakeDerivative(poisson, poisson_grad))
    assert check.ok, str(check)


@pytest.mark.parametrize("index, factor", [(0, 1.0 + 1e-4), (2, -1.0), (3, 1.0 - 1e-5)])
def test_wrong_ad_gradient_fails(gauss_data, index, factor):
    def corrupt(out):
        out[index] *= factor

    theta = np.array([0.25, 0.7, 0.12, 0.18])
    check = check_gradient(gauss4d, theta, gauss_data, derivative=FakeDerivative(gauss4d, gauss4d_grad, corrupt))
    assert not check.ok
    assert check.rel_err_fd[index] > check.rtol
    assert all(check.rel_err_fd[i] <= check.rtol for i in range(4) if i != index)
    assert f"theta[{index}]" in str(check).splitlines()[-1]


def test_wrong_analytic_gradient_fails_even_when_ad_is_right(gauss_data):
    def wrong(theta, x, out):
        gauss4d_grad(theta, x, out)
        out[1] *= 1.001

    theta = np.array([0.25, 0.7, 0.12, 0.18])
    check = check_gradient(gauss4d, theta, gauss_data, analytic=wrong,
                           derivative=FakeDerivative(gauss4d, gauss4d_grad))
    assert not check.ok
    assert check.rel_err_fd.max() <= check.rtol and check.rel_err_analytic[1] > check.rtol
    assert "analytic" in str(check).splitlines()[-1]


def test_wrong_value_fails(gauss_data):
    theta = np.array([0.25, 0.7, 0.12, 0.18])
    check = check_gradient(gauss4d, theta, gauss_data,
                           derivative=FakeDerivative(gauss4d, gauss4d_grad, value_offset=1e-3))
    assert not check.ok and check.value_rel_err > check.rtol


def test_zero_gradient_component_at_the_mode_passes_but_a_small_error_there_fails(gauss_data):
    # at mu = sample mean the mu-gradient is zero up to rounding: finite differences give noise only
    theta = np.array([gauss_data[0].mean(), gauss_data[1].mean(), 0.12, 0.18])
    exact = np.zeros(4)
    gauss4d_grad(theta, gauss_data, exact)
    assert abs(exact[0]) < 1e-9
    assert check_gradient(gauss4d, theta, gauss_data, derivative=FakeDerivative(gauss4d, gauss4d_grad)).ok

    def corrupt(out):
        out[0] += 1e-4 * abs(out[2])  # tiny next to the sigma components, far above rounding noise

    check = check_gradient(gauss4d, theta, gauss_data, derivative=FakeDerivative(gauss4d, gauss4d_grad, corrupt))
    assert not check.ok and check.rel_err_fd[0] > check.rtol


def test_several_active_arguments_in_kernel_order():
    def kernel(a, x, b):
        total = 0.0
        for i in range(x.shape[0]):
            total += math.sin(a[0] * x[i]) * b[0] + a[1] * b[1] * x[i] ** 2
        return total

    def grads(a, x, b, ga, gb):
        ga[0] = (np.cos(a[0] * x) * x * b[0]).sum()
        ga[1] = (b[1] * x ** 2).sum()
        gb[0] = np.sin(a[0] * x).sum()
        gb[1] = (a[1] * x ** 2).sum()

    class Derivative:
        arg_names = ("a", "x", "b")

        @staticmethod
        def value_and_grad(a, x, b, ga, gb):
            grads(a, x, b, ga, gb)
            return kernel(a, x, b)

    a, x, b = np.array([0.7, -1.3]), np.linspace(-1.0, 2.0, 25), np.array([2.0, 0.5])
    check = check_gradient(kernel, a, x, b, wrt=("a", "b"), analytic=grads, derivative=Derivative())
    assert check.ok, str(check)
    assert check.names == ("a[0]", "a[1]", "b[0]", "b[1]")


def test_table_lists_every_parameter_and_ends_with_the_verdict(gauss_data):
    theta = np.array([0.25, 0.7, 0.12, 0.18])
    names = ("mu1", "mu2", "sigma1", "sigma2")
    check = check_gradient(gauss4d, theta, gauss_data, analytic=gauss4d_grad, names=names,
                           derivative=FakeDerivative(gauss4d, gauss4d_grad))
    lines = str(check).splitlines()
    assert [c.strip() for c in lines[0].split("|")] == ["parameter", "AD", "analytic", "finite diff", "rel err"]
    for name, line in zip(names, lines[2:6]):
        assert line.startswith(name)
        assert float(line.split("|")[1]) == pytest.approx(check.ad[names.index(name)], rel=1e-11)
    assert lines[-1].startswith("OK")


def test_user_mistakes_give_clear_messages(gauss_data):
    theta = np.array([0.25, 0.7, 0.12, 0.18])
    fake = FakeDerivative(gauss4d, gauss4d_grad)
    with pytest.raises(ValueError, match=r"wrt='params' is not an argument of gauss4d\(theta, x\)"):
        check_gradient(gauss4d, theta, gauss_data, wrt="params", derivative=fake)
    with pytest.raises(ValueError, match="1-D array"):
        check_gradient(gauss4d, theta.reshape(2, 2), gauss_data, derivative=fake)

    def edge(theta):
        return math.sqrt(1.0 - theta[0])

    with pytest.raises(ValueError, match="parameter 0 shifted by"):
        finite_difference_gradient(edge, np.array([1.0]))


def scaled_sum(theta, x):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * math.exp(0.5 * theta[0])  # float32 element * Python float stays float32 (NEP 50)
    return total


def test_float32_inputs_are_checked_in_float64_without_touching_the_callers_arrays(gauss_data):
    theta, x = np.array([0.3], dtype=np.float32), np.linspace(0.5, 2.0, 50).astype(np.float32)
    before = theta.copy(), x.copy()
    exact = 0.5 * math.exp(0.5 * float(theta[0])) * x.astype(np.float64).sum()
    fd = finite_difference_gradient(scaled_sum, theta, x)
    assert abs(fd[0] - exact) <= 1e-9 * exact  # differences of float32 sums would be off by ~1e-4
    assert np.array_equal(theta, before[0]) and np.array_equal(x, before[1])
    theta4 = np.array([0.25, 0.7, 0.12, 0.18], dtype=np.float32)
    check = check_gradient(gauss4d, theta4, gauss_data.astype(np.float32),
                           derivative=FakeDerivative(gauss4d, gauss4d_grad))
    assert check.ok and theta4.dtype == np.float32


# ---------------------------------------------------------------- through ad.differentiate

def student_t(theta, y):
    mu, sigma, nu = theta[0], theta[1], theta[2]
    total = 0.0
    for i in range(y.shape[0]):
        z = (y[i] - mu) / sigma
        total += (math.lgamma(0.5 * (nu + 1.0)) - math.lgamma(0.5 * nu) - 0.5 * math.log(nu * math.pi)
                  - math.log(sigma) - 0.5 * (nu + 1.0) * math.log1p(z * z / nu))
    return total


def special_mixture(theta, y, k):
    w, a, b = theta[0], theta[1], theta[2]
    total = 0.0
    for i in range(y.shape[0]):
        # mixture weights expit(w) and expit(-w), in logs
        left = -special.log1pexp(-w) - 0.5 * (y[i] - a) ** 2
        right = -special.log1pexp(w) - 0.5 * (y[i] + a) ** 2
        total += special.logaddexp(left, right)
        total += special.xlogy(k[i], b) - special.lbeta(a * a + 1.0, b)
    return total


def test_check_gradient_through_the_differentiator(gauss_data, poisson_data):
    theta = np.array([0.25, 0.7, 0.12, 0.18])
    check = check_gradient(gauss4d, theta, gauss_data, analytic=gauss4d_grad)
    assert check.ok, str(check)
    check = check_gradient(poisson, np.array([18.0, 0.37]), *poisson_data, analytic=poisson_grad)
    assert check.ok, str(check)


def test_check_gradient_through_the_differentiator_with_special_functions():
    y = np.random.default_rng(5).standard_t(4.0, 80) * 0.5 + 0.2
    check = check_gradient(student_t, np.array([0.15, 0.45, 3.7]), y)  # d lgamma(nu) needs digamma
    assert check.ok, str(check)
    k = np.arange(20, dtype=np.float64) % 3
    check = check_gradient(special_mixture, np.array([0.3, 0.8, 2.5]), y[:20], k)
    assert check.ok, str(check)


def test_the_check_catches_a_gradient_that_is_wrong_for_the_kernel_it_is_given():
    # the derivative of a different kernel (a slip a user can make with derivative=) must not pass
    y = np.random.default_rng(6).normal(0.0, 1.0, 30)

    def scaled_t(theta, y):
        return 1.001 * student_t(theta, y)

    wrong = ad.differentiate(student_t)
    check = check_gradient(scaled_t, np.array([0.1, 0.9, 5.0]), y, derivative=wrong)
    assert not check.ok and check.value_rel_err > check.rtol
