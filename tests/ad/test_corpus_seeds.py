"""The seed kernels against hand-written gradients, the report's promises, scratch and the raw variants."""
import ast

import numpy as np
import pytest

from nestgrad import ad
import ad_test_kernels as corpus
from ad_test_kernels import numerics as nm
from ad_test_kernels import control_flow, recursions, seeds

GAUSS = corpus.BY_NAME["gauss4d"]
POISSON = corpus.BY_NAME["poisson"]
SCRATCH_CASES = [c for c in corpus.CASES if "loop-carried" in c.tags]


@pytest.fixture(scope="module")
def gauss_d():
    return ad.differentiate(seeds.gauss4d)


@pytest.fixture(scope="module")
def poisson_d():
    return ad.differentiate(seeds.poisson, wrt="theta")


def _random_points(case, count, seed):
    """Points around the case's test point (the seeds' analytic gradients hold everywhere in the domain)."""
    r = np.random.default_rng(seed)
    theta, *data = case.args()
    for _ in range(count):
        yield (theta * r.uniform(0.8, 1.25, theta.shape), *data)


@pytest.mark.parametrize("case", [GAUSS, POISSON], ids=lambda c: c.name)
def test_seed_gradients_match_analytic(case, gauss_d, poisson_d):
    d = gauss_d if case is GAUSS else poisson_d
    fast = d.jit()
    for args in _random_points(case, 5, seed=17):
        (want,) = case.analytic(*args)
        scale = nm.scale_of(case.fn(*args), [want])
        for obj in (d, fast):
            got = np.full_like(want, np.nan)
            value = obj.value_and_grad(*args, got)
            assert value == pytest.approx(case.fn(*args), rel=1e-11)
            assert not nm.close_mismatch(got, want, 1e-10, 1e-12 * scale), f"{case.name} vs analytic"
            only = np.full_like(want, np.nan)
            obj.grad(*args, only)
            assert not nm.close_mismatch(only, want, 1e-10, 1e-12 * scale), f"{case.name} grad vs analytic"


def test_check_gradient_accepts_the_seeds():
    for case in (GAUSS, POISSON):
        args = case.args()
        check = ad.check_gradient(case.fn, *args)
        assert check.ok, str(check)
        assert check.max_rel_err < 1e-6
        assert str(check)


def test_gauss4d_report_promises_no_storage(gauss_d):
    report = gauss_d.report()
    assert "independent-iteration reduction" in report
    assert "nothing stored" in report
    assert "scratch: 0 bytes per sample" in report
    assert not gauss_d.needs_scratch
    assert gauss_d.scratch_size(*GAUSS.args()) == 0


def _grad_only_functions(source):
    """Text of the emitted functions that compute the gradient without the value (grad / raw_grad)."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and "grad" in node.name and "value" not in node.name:
            found.append((node.name, ast.get_source_segment(source, node)))
    return found


def test_poisson_grad_eliminates_value_only_work(poisson_d):
    functions = _grad_only_functions(poisson_d.source)
    assert functions, "no grad function found in the emitted source:\n" + poisson_d.source
    for name, text in functions:
        assert "lgamma" not in text, f"{name} still computes lgamma:\n{text}"
        assert "log(" not in text, f"{name} still computes log(lam):\n{text}"


def test_ode_report_states_scratch():
    d = ad.differentiate(recursions.euler_decay)
    report = d.report()
    assert "loop-carried state" in report
    assert "stored in scratch" in report
    assert d.needs_scratch
    args = corpus.BY_NAME["euler_decay"].args()
    size = d.scratch_size(*args)
    assert size >= args[1].shape[0], "one stored value per Euler step at least"
    assert "bytes per sample" in report


@pytest.mark.parametrize("case", SCRATCH_CASES + [GAUSS], ids=lambda c: c.name)
def test_raw_variants_with_scratch_match(case):
    """The allocation-free raw forms take a caller-owned scratch buffer and agree with value_and_grad."""
    d = ad.differentiate(case.fn, wrt=case.wrt[0])
    args = case.args()
    size = d.scratch_size(*args)
    assert (size > 0) == d.needs_scratch
    want = np.full(args[0].shape, np.nan)
    value = d.value_and_grad(*args, want)
    fast = d.jit()
    scale = nm.scale_of(value, [want])
    for fill in (0.0, 1e300):  # whatever the buffer held before must not matter
        scratch = np.full(size, fill)
        got = np.full_like(want, np.nan)
        raw_value = fast.raw_value_and_grad(*args, got, scratch)
        assert raw_value == pytest.approx(value, rel=1e-11, abs=1e-11 * scale)
        assert not nm.close_mismatch(got, want, 1e-11, 1e-11 * scale)
        got[:] = np.nan
        assert fast.raw_grad(*args, got, np.full(size, fill)) is None
        assert not nm.close_mismatch(got, want, 1e-11, 1e-11 * scale)


def test_early_return_gives_minus_inf():
    d = ad.differentiate(control_flow.early_return)
    theta, x = corpus.BY_NAME["early_return"].args()
    for bad in (np.array([0.3, -0.5]), np.array([5.0, 0.1])):  # first guard, then the computed guard
        assert control_flow.early_return(bad, x) == -np.inf
        grad = np.zeros(2)
        assert d.value_and_grad(bad, x, grad) == -np.inf
        assert d.value(bad, x) == -np.inf
        assert d.jit().value_and_grad(bad, x, grad) == -np.inf


def test_jit_keeps_nan_for_bad_samples(poisson_d):
    """The default fastmath flags keep NaN semantics: a sample outside the domain yields NaN, not a number."""
    fast = poisson_d.jit()
    _, c = POISSON.args()
    bad = np.array([-1.0])  # log(lam) of a negative rate
    grad = np.zeros(1)
    assert np.isnan(fast.value(bad, c))
    assert np.isnan(fast.value_and_grad(bad, c, grad))
