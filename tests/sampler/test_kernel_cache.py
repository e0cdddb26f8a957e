"""Same seed → bit-identical runs in different processes, whatever numba's on-disk cache holds.

The first process below compiles the differentiator's and the likelihood's generated modules (cache cold) and
has a child process compile the fused chain kernel into the cache; later processes load all of them (cache
warm). A fused HMC kernel that linked cached code, or was compiled in one process and loaded in another, gave
different last bits in the two (see sampler/stable_jit.py and sampler/hmc_cache.py); this catches it. A run
interrupted in the cold process and resumed in a warm one must equal the uninterrupted run, and the CLI must
say that it compiles, load the kernel afterwards, and answer ``--resume`` of a finished run from its files.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import nestgrad.sampler.hmc_cpu as hmc_cpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """
import json, sys
from nestgrad.likelihoods import builtin
from nestgrad.sampler import NestedSampler
from nestgrad.sampler.priors import Prior

b = builtin.get("gaussian4d")
s = NestedSampler(b.likelihood(backend="cpu"), Prior.from_spec(b.priors), nlive=2000, seed=11)
notes = []
s.compile(notify=notes.append)
from nestgrad.sampler import clustering, evidence, prior_families
from nestgrad.sampler import geometry
helpers = (prior_families.compiled_signatures() + clustering.compiled_signatures() + geometry.compiled_signatures()
           + evidence.compiled_signatures())
helpers_ready = all(len(d.signatures) == 1 for d, _ in helpers)  # compiled while the child compiled the kernel
checkpoint = sys.argv[1] if len(sys.argv) > 1 else None
resume = len(sys.argv) > 2 and sys.argv[2] == "resume"
max_iter = int(sys.argv[3]) if len(sys.argv) > 3 else 20
r = s.run(dlogz=0.01, progress=False, max_iter=max_iter, checkpoint=checkpoint, resume=resume)
advance_range = s._proposal.advance.inner.advance.advance_range  # SlotAdvance(AdaptiveThreads(kernel))
print(json.dumps({"logl": r.dead.logl.tolist(), "u": r.dead.u.tolist(), "kernel": s.compile_info["kernel"],
                  "notes": notes, "overloads": len(advance_range.overloads), "niter": r.niter,
                  "helpers_ready": helpers_ready,
                  "undeclared": [str(t) for d, sig in helpers for t in d.signatures if tuple(t) != tuple(sig)]}))
"""


def _env(cache_dir):
    env = dict(os.environ, NESTGRAD_CACHE_DIR=str(cache_dir), NUMBA_CACHE_DIR=str(cache_dir / "numba"),
               PYTHONPATH=ROOT)
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def _run(cache_dir, *args):
    done = subprocess.run([sys.executable, "-c", SCRIPT, *map(str, args)], env=_env(cache_dir),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cold_and_warm_cache_processes_give_identical_runs(tmp_path):
    checkpoint = tmp_path / "checkpoint.npz"
    cold = _run(tmp_path, checkpoint, "start", 20)
    assert any(name.endswith(".nbi") for _, _, files in os.walk(tmp_path / "numba") for name in files)
    warm = _run(tmp_path)
    np.testing.assert_array_equal(cold["logl"], warm["logl"])
    np.testing.assert_array_equal(cold["u"], warm["u"])
    # the cold process had a child compile the kernel and said so; both ran the kernel loaded from the cache,
    # and neither compiled another specialisation of it during the run
    assert cold["kernel"] == "compiled" and len(cold["notes"]) == 1 and "compiling" in cold["notes"][0]
    assert warm["kernel"] == "cache" and warm["notes"] == []
    assert cold["overloads"] == warm["overloads"] == 1
    # the small compiled helpers were ready before the cold run sampled, with the types the run then used
    assert cold["helpers_ready"] and cold["undeclared"] == warm["undeclared"] == []

    # stopped in the cold process, resumed in a warm one: the uninterrupted run
    resumed = _run(tmp_path, checkpoint, "resume", 40)
    uninterrupted = _run(tmp_path, tmp_path / "other.npz", "start", 40)
    assert resumed["niter"] == uninterrupted["niter"] == 40
    np.testing.assert_array_equal(resumed["logl"], uninterrupted["logl"])
    np.testing.assert_array_equal(resumed["u"], uninterrupted["u"])


CONFIG = """\
name: cached
likelihood:
  builtin: gaussian4d
sampler:
  nlive: 100
  dlogz: 0.5
  seed: 3
backend: cpu
output:
  dir: {out}
  plots: []
"""


def test_cli_says_it_compiles_then_loads_and_resume_of_a_finished_run_recomputes_nothing(tmp_path):
    config = tmp_path / "cached.yaml"
    config.write_text(CONFIG.format(out=tmp_path / "run"))
    env = _env(tmp_path / "cache")

    def nestgrad(*args):
        done = subprocess.run([sys.executable, "-m", "nestgrad", "run", str(config), *args], env=env,
                              capture_output=True, text=True, timeout=900, cwd=ROOT)
        assert done.returncode == 0, done.stderr
        return done, json.loads((tmp_path / "run" / "results.json").read_text())

    cold, cold_json = nestgrad()
    assert "nestgrad: compiling the sampler's chain kernel" in cold.stderr
    assert cold_json["timing"]["kernel"] == "compiled"
    warm, warm_json = nestgrad()
    assert "compiling" not in warm.stderr and warm_json["timing"]["kernel"] == "cache"
    dead = (tmp_path / "run" / "cached_dead-birth.txt").read_text()
    assert warm_json["logz"] == cold_json["logz"] and warm_json["niter"] == cold_json["niter"]
    # the wall time is split by stage and the stages add up to no more than the total
    timing = warm_json["timing"]
    stages = ("startup", "setup", "compile", "sampling", "evidence", "output")
    assert all(timing[s] >= 0 for s in stages) and sum(timing[s] for s in stages) <= timing["total"] + 0.05
    assert "wall time" in warm.stdout and "loaded from the cache" in warm.stdout

    files = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "run").iterdir() if p.is_file()}
    resumed, resumed_json = nestgrad("--resume")
    assert "nothing was recomputed" in resumed.stdout and "compiling" not in resumed.stderr
    assert resumed.stdout.splitlines()[0] == warm.stdout.splitlines()[0]  # the stored logZ line
    assert resumed_json == warm_json and (tmp_path / "run" / "cached_dead-birth.txt").read_text() == dead
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "run").iterdir() if p.is_file()} == files


@pytest.mark.parametrize("cached", [False, True])
def test_the_chain_kernel_is_compiled_against_fresh_copies_of_the_likelihood(cached, tmp_path, monkeypatch):
    from numba import njit

    if cached:  # functions a child process can import: the kernel module of hmc_cache binds fresh copies
        import importlib

        monkeypatch.setenv("NESTGRAD_CACHE_DIR", str(tmp_path))
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
        source = tmp_path / "fresh_copy_likelihood.py"
        source.write_text("from numba import njit\n\n\n@njit\ndef value(theta, data, scratch):\n"
                          "    return -0.5 * (theta[0] - 0.5) ** 2\n\n\n@njit\n"
                          "def value_and_grad(theta, data, grad, scratch):\n    grad[0] = -(theta[0] - 0.5)\n"
                          "    return value(theta, data, scratch)\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        module = importlib.import_module("fresh_copy_likelihood")
        value, value_and_grad = module.value, module.value_and_grad
        from nestgrad.sampler import hmc_cache
        module_text = hmc_cache.module_text(value, value_and_grad)
        assert module_text is not None and "fresh_dispatcher" in module_text
        namespace = vars(hmc_cache.kernel_module(module_text))
        called = namespace["evaluate"].py_func.__globals__["value"]
        assert called is not value and called.py_func.__code__ is value.py_func.__code__
        return

    @njit(cache=False)
    def value(theta, data, scratch):
        return -0.5 * (theta[0] - 0.5) ** 2

    @njit
    def value_and_grad(theta, data, grad, scratch):
        grad[0] = -(theta[0] - 0.5)
        return value(theta, data, scratch)

    advance, evaluate = hmc_cpu._kernels(value, value_and_grad)
    assert hmc_cpu._kernels(value, value_and_grad) == (advance, evaluate)  # compiled once per likelihood
    called = evaluate.py_func.__globals__["value"]
    assert called is not value and called.py_func.__code__ is value.py_func.__code__
