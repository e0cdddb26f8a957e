"""CUDA device functions run inside a batched kernel (one thread per sample) under the CUDA simulator.

The simulator must be switched on before numba is first imported, so the work runs in a subprocess: this file
executed as a script. The test side parses the JSON it prints and checks each kernel against the pure-Python
derivative. The same harness runs unchanged on a real GPU (run this file as a script without the variable).
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
BATCH = 5
FLOAT32_SUBSET = ("gauss4d", "poisson", "euler_decay", "digamma_sum")
# tolerances on errors scaled by max(1, |value|, |grad|): float64 device code replays the same operations as
# the pure-Python derivative; float32 is judged against float64 like the jit float32 test
TOLERANCE = {"float64": 1e-11, "float32": 1e-4}

if "ad_test_kernels" not in sys.modules:  # run as a script: load the corpus the way conftest.py does
    sys.path.insert(0, str(HERE))
    import conftest  # noqa: F401,E402


def _batched_kernel_source(nargs, active_positions, raw_value=False):
    """Text of a @cuda.jit kernel calling the device functions once per sample.

    Active arguments arrive as (B, n) arrays, one row per sample; constants are shared by every thread.
    ``raw_value``: the kernel has local arrays, so its primal takes the sample's scratch row too.
    """
    params = [f"a{k}" for k in range(nargs)]
    grads = [f"g{k}" for k in active_positions]
    only = [f"h{k}" for k in active_positions]
    call_args = [f"a{k}[i]" if k in active_positions else f"a{k}" for k in range(nargs)]
    lines = [
        f"def batched({', '.join(params + grads + only)}, scratch, values, plain_values):",
        "    i = cuda.grid(1)",
        "    if i < values.shape[0]:",
        f"        values[i] = raw_value_and_grad({', '.join(call_args + [g + '[i]' for g in grads])}, scratch[i])",
        f"        raw_grad({', '.join(call_args + [h + '[i]' for h in only])}, scratch[i])",
        f"        plain_values[i] = value({', '.join(call_args + (['scratch[i]'] if raw_value else []))})",
    ]
    return "\n".join(lines) + "\n"


def _run_case(case, ad, cuda, np, nm, dtype="float64"):
    """Run one corpus kernel batched on the (simulated) device; return max scaled error vs float64 pure Python."""
    d = ad.differentiate(case.fn, wrt=case.wrt[0] if len(case.wrt) == 1 else case.wrt)
    dev = d.cuda(dtype=dtype)
    args = case.args()
    positions = nm.active_positions(case.fn, case.wrt)
    rng = np.random.default_rng(3)
    per_sample = [[a * rng.uniform(0.97, 1.03, a.shape) if k in positions else a for k, a in enumerate(args)]
                  for _ in range(BATCH)]
    raw_value = not hasattr(dev, "value")  # local arrays: only raw_value (ad/local_arrays.py)
    namespace = {"cuda": cuda, "raw_value_and_grad": dev.raw_value_and_grad, "raw_grad": dev.raw_grad,
                 "value": dev.raw_value if raw_value else dev.value}
    exec(_batched_kernel_source(len(args), positions, raw_value), namespace)
    kernel = cuda.jit(namespace["batched"])

    def device(a):
        cast = nm.to_dtype((a,), dtype)[0]
        return cuda.to_device(np.ascontiguousarray(cast)) if isinstance(cast, np.ndarray) else cast

    inputs = [device(np.stack([s[k] for s in per_sample])) if k in positions else device(a)
              for k, a in enumerate(args)]
    grads = [cuda.to_device(np.full((BATCH,) + args[k].shape, np.nan, dtype)) for k in positions]
    only = [cuda.to_device(np.full((BATCH,) + args[k].shape, np.nan, dtype)) for k in positions]
    size = d.scratch_size(*args)
    scratch = cuda.to_device(np.full((BATCH, max(size, 1)), np.nan, dtype))
    values = cuda.to_device(np.full(BATCH, np.nan, dtype))
    plain = cuda.to_device(np.full(BATCH, np.nan, dtype))
    kernel[1, 32](*inputs, *grads, *only, scratch, values, plain)
    got_values, got_plain = values.copy_to_host(), plain.copy_to_host()
    got_grads = [g.copy_to_host() for g in grads]
    got_only = [g.copy_to_host() for g in only]

    worst = 0.0
    for b, sample in enumerate(per_sample):
        want = [np.full(np.shape(sample[k]), np.nan) for k in positions]
        want_value = d.value_and_grad(*sample, *want)
        scale = nm.scale_of(want_value, want)
        errors = [abs(got_values[b] - want_value), abs(got_plain[b] - want_value)]
        for k, w in enumerate(want):
            errors += list(np.abs(got_grads[k][b] - w)) + list(np.abs(got_only[k][b] - w))
        worst = max(worst, max(float(e) for e in errors) / scale)  # NaN propagates as a failure below
        if any(not np.isfinite(e) for e in errors):
            worst = float("inf")
    return {"worst_scaled_error": worst, "needs_scratch": bool(d.needs_scratch)}


def _main():
    """Script side: runs in a fresh interpreter with NUMBA_ENABLE_CUDASIM=1 (or on a real GPU without it)."""
    import numpy as np
    from numba import cuda

    from nestgrad import ad
    import ad_test_kernels as corpus
    from ad_test_kernels import numerics as nm

    results = {}
    names = sys.argv[1:] or [c.name for c in corpus.CASES if c.cuda]
    runs = [(name, "float64") for name in names] + [(name, "float32") for name in FLOAT32_SUBSET if name in names]
    for name, dtype in runs:
        try:
            results[f"{name}-{dtype}"] = _run_case(corpus.BY_NAME[name], ad, cuda, np, nm, dtype)
        except Exception as exc:  # reported per kernel so one failure does not hide the others
            results[f"{name}-{dtype}"] = {"error": f"{type(exc).__name__}: {exc}"}
    print("CUDASIM-RESULTS " + json.dumps(results))


def _cuda_subset():
    import ad_test_kernels as corpus  # loaded by conftest.py
    return [c.name for c in corpus.CASES if c.cuda]


@pytest.fixture(scope="module")
def simulator_results():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    root = HERE.parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(root)] + [p for p in [env.get("PYTHONPATH")] if p])
    proc = subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve())], env=env, cwd=str(root),
                          capture_output=True, text=True, timeout=600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("CUDASIM-RESULTS ")]
    assert proc.returncode == 0 and lines, f"simulator run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1][len("CUDASIM-RESULTS "):])


def test_cuda_subset_is_representative():
    import ad_test_kernels as corpus
    subset = [c for c in corpus.CASES if c.cuda]
    tags = {t for c in subset for t in c.tags}
    assert len(subset) >= 10
    assert {"gauss4d", "poisson", "euler_decay"} <= {c.name for c in subset}
    assert "special.digamma" in tags and "helper" in tags and "loop-carried" in tags


@pytest.mark.parametrize("name, dtype", [(n, "float64") for n in _cuda_subset()]
                         + [(n, "float32") for n in FLOAT32_SUBSET])
def test_device_functions_match_cpu_in_simulator(simulator_results, name, dtype):
    result = simulator_results[f"{name}-{dtype}"]
    assert "error" not in result, result.get("error")
    assert result["worst_scaled_error"] <= TOLERANCE[dtype], result


if __name__ == "__main__":
    _main()
