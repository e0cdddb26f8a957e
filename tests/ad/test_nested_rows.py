"""Rows of a nested storing loop's values per iteration of the outer loop (ad/nested_rows.py).

The kernels (kernels/nested_rows.py) are in the corpus, so their gradients with rows are checked against finite
differences, jit float64/float32 and PTX there.  Here: which loops get rows; that the other path (rows over the
budget: the inner loop replayed) gives the same gradient on the CPU and in the CUDA simulator; and that
``report()`` states the rows and their bytes as the scratch size has them.
"""
import functools
import inspect
import pathlib
import re
import sys
import types

import numpy as np
import pytest

from nestgrad import ad
from nestgrad.ad.nested_rows import DEFAULT_BUDGET

HERE = pathlib.Path(__file__).resolve().parent
if "ad_test_kernels" not in sys.modules:  # run as a script (the simulator side): load the corpus as conftest.py does
    import importlib.util
    spec = importlib.util.spec_from_file_location("ad_test_kernels", HERE / "kernels" / "__init__.py",
                                                  submodule_search_locations=[str(HERE / "kernels")])
    module = importlib.util.module_from_spec(spec)
    sys.modules["ad_test_kernels"] = module
    spec.loader.exec_module(module)
    sys.path.insert(0, str(HERE))

from ad_test_kernels import nested_rows  # noqa: E402
from device_calls import SIMULATOR_TAG, run_simulator  # noqa: E402

CASES = nested_rows.CASES
BY_NAME = {c.name: c for c in CASES}
SIMULATED = ("rk4_rows", "stored_scalar_rows", "prefix_and_rest_write", "three_levels")
_ROWS = re.compile(r"rows(\d+) = .* the forward run of the loop at line (\d+) stores")


def _loop_var(fn, line):
    """The variable of the ``for`` loop on source line ``line`` of ``fn``'s file."""
    lines, first = inspect.getsourcelines(fn)
    return re.match(r"\s*for (\w+) in", lines[line - first]).group(1)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_loops_that_get_rows(case):
    text = ad.differentiate(case.fn).report()
    pairs = {(_loop_var(case.fn, int(outer)), _loop_var(case.fn, int(inner))) for inner, outer in _ROWS.findall(text)}
    assert pairs == nested_rows.ROWS.get(case.name, set())


@pytest.mark.parametrize("case", [c for c in CASES if c.name in nested_rows.ROWS], ids=lambda c: c.name)
def test_replaying_the_inner_loop_gives_the_same_gradient(case):
    """budget 0: never rows, the inner loop is replayed -- the other path of the same generated code."""
    args = case.args()
    out = {}
    for budget in (DEFAULT_BUDGET, 0):
        d = ad.differentiate(case.fn, store_budget=budget)
        grad, jgrad = np.zeros_like(args[0]), np.zeros_like(args[0])
        value = d.value_and_grad(*args, grad)
        jvalue = d.jit().raw_value_and_grad(*args, jgrad, np.full(d.scratch_size(*args), np.nan))
        out[budget] = (value, grad, jvalue, jgrad)
    with_rows, replayed = out[DEFAULT_BUDGET], out[0]
    for a, b in zip(with_rows, replayed):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    assert np.all(np.isfinite(with_rows[1])) and np.any(with_rows[1] != 0)


def _rows_report(d, args):
    text = d.report(*args)
    need = [int(n) for n in re.findall(r"for these arguments: (\d+) elements", text)]
    nbytes = [int(n) for n in re.findall(r"for these arguments: \d+ elements \((\d+) bytes\)", text)]
    total = int(re.search(r"scratch: (\d+) bytes per sample", text).group(1))
    return text, need, nbytes, total


def test_report_gives_the_rows_bytes_the_scratch_size_has():
    case = BY_NAME["rk4_rows"]
    theta, x, steps = case.args()
    d, flat = ad.differentiate(case.fn), ad.differentiate(case.fn, store_budget=0)
    text, need, nbytes, total = _rows_report(d, (theta, x, steps))
    assert total == 8 * d.scratch_size(theta, x, steps)
    # per outer iteration: steps copies of y (2 each), one of k as the step loop starts, one of y after it
    assert need == [x.shape[0] * (steps * 2 + 2 + 2)] and nbytes == [8 * need[0]]
    # with rows, the regions of the inner loop have x.shape[0] rows; without, one
    assert d.scratch_size(theta, x, steps) - flat.scratch_size(theta, x, steps) == need[0] // x.shape[0] * (
        x.shape[0] - 1)
    assert "local array y: stored in scratch, a copy per iteration (2 per iteration x steps iterations x rows" in text
    assert "local array y: a copy after the loop (2 x rows" in text
    assert f"<= {DEFAULT_BUDGET}: rows" in text
    assert "(float32)" in d.report(theta, x, steps, dtype="float32")
    assert f"scratch: {4 * d.scratch_size(theta, x, steps)} bytes" in d.report(theta, x, steps, dtype="float32")


def test_rows_are_decided_per_call_from_the_arguments():
    case = BY_NAME["rows_budget_exceeded"]
    theta, x, steps = case.args()
    d, flat = ad.differentiate(case.fn), ad.differentiate(case.fn, store_budget=0)
    text, need, _, _ = _rows_report(d, (theta, x, steps))
    assert need[0] > DEFAULT_BUDGET and "this loop is replayed" in text
    assert d.scratch_size(theta, x, steps) == flat.scratch_size(theta, x, steps)
    small = (theta, x[:3], 5)  # the same kernel within the budget
    text, need, _, _ = _rows_report(d, small)
    assert need[0] <= DEFAULT_BUDGET and "this loop is replayed" not in text
    assert d.scratch_size(*small) > flat.scratch_size(*small)


def test_lotka_volterra_rows_for_the_step_loop():
    """The RK4 fit of the issue: the step loop's copies of y are kept per (observation, step)."""
    corpus = sys.modules["ad_test_kernels"]
    case = corpus.BY_NAME["lotka_volterra_rk4"]
    args = case.args()
    d = ad.differentiate(case.fn)
    text, need, _, total = _rows_report(d, args)
    assert len(need) == 1 and total == 8 * d.scratch_size(*args)
    assert re.search(r"local array y: stored in scratch, a copy per iteration \(2 per iteration x \w+ iterations "
                     r"x rows\d+\)", text)


# ---- the CUDA simulator, both paths --------------------------------------------------------------------------

def _simulate():
    """Script side (NUMBA_ENABLE_CUDASIM=1): the simulated cases with rows and with the inner loop replayed."""
    import json

    from numba import cuda

    import test_cuda_sim
    from ad_test_kernels import numerics as nm

    results = {}
    for budget in (DEFAULT_BUDGET, 0):
        with_budget = types.SimpleNamespace(differentiate=functools.partial(ad.differentiate, store_budget=budget))
        for name in SIMULATED:
            for dtype in ("float64", "float32"):
                key = f"{name}-{budget}-{dtype}"
                try:
                    results[key] = test_cuda_sim._run_case(BY_NAME[name], with_budget, cuda, np, nm, dtype)
                except Exception as exc:  # reported per case so one failure does not hide the others
                    results[key] = {"error": f"{type(exc).__name__}: {exc}"}
    print(SIMULATOR_TAG + json.dumps(results))


@pytest.fixture(scope="module")
def simulated():
    return run_simulator(__file__)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("budget", [DEFAULT_BUDGET, 0])
@pytest.mark.parametrize("name", SIMULATED)
def test_simulator_matches_cpu_on_both_paths(simulated, name, budget, dtype):
    import test_cuda_sim
    result = simulated[f"{name}-{budget}-{dtype}"]
    assert "error" not in result, result.get("error")
    assert result["worst_scaled_error"] <= test_cuda_sim.TOLERANCE[dtype], result


if __name__ == "__main__":
    _simulate()
