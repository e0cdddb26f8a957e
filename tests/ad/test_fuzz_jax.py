"""Differential fuzzing of ``ad`` against JAX (issue 14): random kernels, same source, three evaluations.

Design in ``tests/ad/fuzz/__init__.py``; open findings in ``tests/ad/fuzz/FINDINGS.md``. The fast suite runs
the generator's ``FAST`` features; every construct family is on (no finding is open). A family found wrong
gets its own switch, off in ``FAST`` until ``ad`` is fixed, with the finding in FINDINGS.md. Seeds are fixed: a failure message holds the kernel source and the point, and
``python -m tests.ad.fuzz.reduce SEED`` minimises it.
"""
import importlib.util
import pathlib
import sys

import pytest

import jax  # noqa: F401  -- the test extra brings it: a missing jax is a broken install, not a skip


def _load_fuzz_package():
    """``tests/ad/fuzz`` imported as ``ad_fuzz`` by location (the name cannot collide with another ``fuzz``)."""
    if "ad_fuzz" in sys.modules:
        return sys.modules["ad_fuzz"]
    folder = pathlib.Path(__file__).resolve().parent / "fuzz"
    spec = importlib.util.spec_from_file_location("ad_fuzz", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["ad_fuzz"] = module
    spec.loader.exec_module(module)
    return module


_load_fuzz_package()
from ad_fuzz import generator, runner  # noqa: E402

FAST_CASES = 200         # Python derivative for every case ...
FAST_BLOCK = 40
FAST_SIZE = 0.6          # ... of small kernels (differentiation and eager JAX cost grow with size)
FAST_JIT_EVERY = 25      # ... numba jit float64 (seconds per compile) for every 25th
FAST_JIT32 = (60, 160)   # ... and float32 for these two
SLOW_CASES = 3000
SLOW_BLOCK = 100
SLOW_JIT_EVERY = 20
SLOW_JIT32_EVERY = 50


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz_kernels")


def _run(seeds, feats, folder, size, jit_every, jit32=(), stop_at_first=False, **kw):
    outcomes = []
    for seed in seeds:
        out = runner.run_case(seed, feats, size=size, folder=folder, jit=seed % jit_every == 0,
                              jit32=seed in jit32, **kw)
        outcomes.append(out)
        if stop_at_first and out.status in ("fail", "kernel_error"):
            break
    return outcomes


def _check(outcomes):
    bad = [o for o in outcomes if o.status in ("fail", "kernel_error")]
    assert not bad, f"{len(bad)} failing cases\n\n" + "\n\n".join(o.report() for o in bad[:3])
    summary = runner.summarise(outcomes)
    # not vacuous: most cases are differentiated and most of their points compared
    assert summary.get("unsupported", 0) <= 0.2 * len(outcomes), summary
    assert summary["points"] >= 2.5 * len(outcomes), summary
    return summary


@pytest.mark.parametrize("block", range(FAST_CASES // FAST_BLOCK))
def test_fuzz_fast(block, folder):
    seeds = range(block * FAST_BLOCK, (block + 1) * FAST_BLOCK)
    _check(_run(seeds, generator.FAST, folder, FAST_SIZE, FAST_JIT_EVERY, FAST_JIT32))


@pytest.mark.slow
@pytest.mark.parametrize("block", range(SLOW_CASES // SLOW_BLOCK))
def test_fuzz_slow(block, folder):
    seeds = range(100_000 + block * SLOW_BLOCK, 100_000 + (block + 1) * SLOW_BLOCK)
    jit32 = [s for s in seeds if s % SLOW_JIT32_EVERY == 7]
    _check(_run(seeds, generator.FAST, folder, 1.0, SLOW_JIT_EVERY, jit32))


def test_fuzzer_catches_a_wrong_gradient(folder):
    """The comparison is live: nestgrad's gradients scaled by 1 + 1e-4 must be reported as failures."""
    outcomes = _run(range(8), generator.FAST, folder, FAST_SIZE, 10**9, mutate=lambda g: g * (1.0 + 1e-4))
    caught = [o for o in outcomes if o.status == "fail" and o.kind == "grad"]
    assert len(caught) >= 4, runner.summarise(outcomes)


def test_fuzzer_catches_a_numba_crash(folder, monkeypatch):
    """An exception from the jit path is a failure (kind ``numba``), not an accepted rejection."""
    def broken(self, *a, **k):
        raise TypeError("planted numba typing error")
    monkeypatch.setattr("nestgrad.ad.Derivative.jit", broken)
    out = runner.run_case(0, generator.FAST, size=FAST_SIZE, folder=folder, jit=True)
    assert out.status == "fail" and out.kind == "numba", out.report()
