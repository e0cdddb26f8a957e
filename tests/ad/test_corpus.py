"""Every corpus kernel: AD gradient vs finite differences, and the pure-Python / numba variants agree.

Derivatives and their numba compilations are shared across tests through module-level caches, so each kernel
is differentiated once and compiled once per dtype.
"""
import zlib

import numpy as np
import pytest

from nestgrad import ad
import ad_test_kernels as corpus
from ad_test_kernels import numerics as nm

CASES = corpus.CASES
_derivatives = {}
_jits = {}


def derivative(case):
    if case.name not in _derivatives:
        wrt = case.wrt[0] if len(case.wrt) == 1 else case.wrt
        _derivatives[case.name] = ad.differentiate(case.fn, wrt=wrt)
    return _derivatives[case.name]


def jitted(case, dtype="float64"):
    key = (case.name, dtype)
    if key not in _jits:
        d = derivative(case)
        _jits[key] = d.jit() if dtype == "float64" else d.jit(dtype=dtype)
    return _jits[key]


def grad_buffers(case, args, fill=np.nan):
    """One gradient output per active argument (wrt order), pre-filled so that 'overwritten' is checked."""
    return [np.full(np.shape(args[p]), fill, dtype=np.asarray(args[p]).dtype)
            for p in nm.active_positions(case.fn, case.wrt)]


def call_value_and_grad(obj, case, args, fill=np.nan):
    grads = grad_buffers(case, args, fill)
    value = obj.value_and_grad(*args, *grads)
    return value, grads


def call_grad(obj, case, args, fill=np.nan):
    grads = grad_buffers(case, args, fill)
    result = obj.grad(*args, *grads)
    assert result is None, "grad returns None (the value is not needed)"
    return grads


def test_corpus_is_large_and_names_unique():
    assert len(CASES) >= 40
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradient_matches_finite_differences(case):
    args = case.args()
    d = derivative(case)
    value, grads = call_value_and_grad(d, case, args)
    expected_value = case.fn(*args)
    assert value == pytest.approx(expected_value, rel=1e-12, abs=1e-12), "value_and_grad's value vs the kernel"
    fd, steps = nm.finite_difference_gradient(case.fn, list(args), nm.active_positions(case.fn, case.wrt))
    problems = nm.fd_mismatch(grads, fd, steps, expected_value)
    assert not problems, f"{case.name}: AD vs finite differences:\n" + "\n".join(problems)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_grad_and_value_variants_agree(case):
    args = case.args()
    d = derivative(case)
    value, grads = call_value_and_grad(d, case, args)
    # grad_out is overwritten, not accumulated: a second call into dirty buffers gives the same result
    value_again, grads_dirty = call_value_and_grad(d, case, args, fill=123.0)
    only_grads = call_grad(d, case, args, fill=-7.0)
    scale = nm.scale_of(value, grads)
    assert d.value(*args) == pytest.approx(case.fn(*args), rel=1e-12, abs=1e-12 * scale)
    assert value_again == value
    for g, gd, go in zip(grads, grads_dirty, only_grads):
        assert not nm.close_mismatch(gd, g, 0.0, 0.0), "grad_out must be overwritten, not accumulated"
        assert not nm.close_mismatch(go, g, 1e-12, 1e-12 * scale), "grad vs value_and_grad"


class RawForms:
    """A compiled kernel's ``value_and_grad`` / ``grad`` as the batch drivers and the chains call them: the raw
    forms, into a scratch buffer of ``scratch_size`` filled with NaN (a read before a write shows in the results).
    Compiling the allocating wrappers as well re-optimises the whole adjoint inside each wrapper (a third of a
    scratch kernel's compile time); they are checked on a few kernels below."""

    def __init__(self, kernels, ngrads):
        self.kernels, self.ngrads = kernels, ngrads
        self.value = kernels.value

    def _scratch(self, args):
        return np.full(self.kernels.scratch_size(*args), np.nan, dtype=self.kernels.dtype)

    def value_and_grad(self, *args_and_grads):
        args = args_and_grads[:len(args_and_grads) - self.ngrads]
        return self.kernels.raw_value_and_grad(*args_and_grads, self._scratch(args))

    def grad(self, *args_and_grads):
        args = args_and_grads[:len(args_and_grads) - self.ngrads]
        return self.kernels.raw_grad(*args_and_grads, self._scratch(args))


def compiled_forms(case, dtype="float64"):
    """What the jit tests call: the raw forms for kernels with scratch, the functions themselves otherwise
    (without scratch ``value_and_grad`` is ``raw_value_and_grad``)."""
    kernels = jitted(case, dtype)
    if not derivative(case).needs_scratch:
        return kernels
    return RawForms(kernels, len(nm.active_positions(case.fn, case.wrt)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_jit_float64_matches_python(case):
    args = case.args()
    value, grads = call_value_and_grad(derivative(case), case, args)
    fast = compiled_forms(case)
    scale = nm.scale_of(value, grads)
    # 1e-11: numba's libm and reassociated reductions may differ from CPython's in the last bits
    jvalue, jgrads = call_value_and_grad(fast, case, args)
    assert jvalue == pytest.approx(value, rel=1e-11, abs=1e-11 * scale)
    assert fast.value(*args) == pytest.approx(value, rel=1e-11, abs=1e-11 * scale)
    for jg, g, go in zip(jgrads, grads, call_grad(fast, case, args)):
        assert not nm.close_mismatch(jg, g, 1e-11, 1e-11 * scale), "jit value_and_grad vs pure Python"
        assert not nm.close_mismatch(go, g, 1e-11, 1e-11 * scale), "jit grad vs pure Python"


# Kernels with scratch whose allocating wrappers are compiled and checked too: a loop-carried tape, a kernel with
# an early exit, and one with a local array.
WRAPPED = ("accumulators", "kepler_newton", "means")


@pytest.mark.parametrize("name", WRAPPED)
def test_jit_wrappers_allocate_their_scratch(name):
    case = corpus.BY_NAME[name]
    assert derivative(case).needs_scratch
    args = case.args()
    fast = jitted(case)
    value, grads = call_value_and_grad(derivative(case), case, args)
    scale = nm.scale_of(value, grads)
    jvalue, jgrads = call_value_and_grad(fast, case, args)
    assert jvalue == pytest.approx(value, rel=1e-11, abs=1e-11 * scale)
    for jg, g, go in zip(jgrads, grads, call_grad(fast, case, args)):
        assert not nm.close_mismatch(jg, g, 1e-11, 1e-11 * scale), "jit value_and_grad vs pure Python"
        assert not nm.close_mismatch(go, g, 1e-11, 1e-11 * scale), "jit grad vs pure Python"


# Kernels whose numba compile alone takes 10-30 s on the CI machine: their float32 build runs under -m slow
# (their float64 build is compiled and checked in every run).
SLOW_FLOAT32 = {"mvn_cholesky", "lotka_volterra_rk4"}


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.slow) if c.name in SLOW_FLOAT32 else c
                                  for c in CASES if c.float32], ids=lambda c: c.name)
def test_jit_float32_matches_float64(case):
    args64 = case.args()
    value, grads = call_value_and_grad(derivative(case), case, args64)
    args32 = nm.to_dtype(args64, np.float32)
    value32, grads32 = call_value_and_grad(compiled_forms(case, "float32"), case, args32)
    assert all(g.dtype == np.float32 for g in grads32)
    scale = nm.scale_of(value, grads)
    # float32 tolerance: ~1e3 ulps relative, plus cancellation in sums measured against the overall scale
    assert value32 == pytest.approx(value, rel=1e-3, abs=1e-4 * scale)
    for g32, g in zip(grads32, grads):
        problems = nm.close_mismatch(g32, g, 1e-3, 1e-4 * scale)
        assert not problems, f"{case.name}: float32 vs float64 gradient: {problems}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradient_at_nearby_points(case):
    """Three more points around the test point: catches adjoints that are right only for one branch pattern.

    A point that lands within a step of a switch (abs/min/max/if) is skipped; at least one must be checked.
    """
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))  # deterministic per kernel
    positions = nm.active_positions(case.fn, case.wrt)
    d = derivative(case)
    checked = 0
    for _ in range(3):
        args = [a * rng.uniform(0.9, 1.1, a.shape) if k in positions else a for k, a in enumerate(case.args())]
        if not nm.smooth_at(case.fn, args, positions):
            continue
        value, grads = call_value_and_grad(d, case, args)
        want = case.fn(*args)
        assert value == pytest.approx(want, rel=1e-12, abs=1e-12)
        fd, steps = nm.finite_difference_gradient(case.fn, list(args), positions)
        problems = nm.fd_mismatch(grads, fd, steps, want)
        assert not problems, f"{case.name} at {args[positions[0]]}:\n" + "\n".join(problems)
        checked += 1
    assert checked, "every nearby point was at a switch"
