"""Generated CUDA device functions type-check for a real GPU: ``numba.cuda.compile_ptx(..., cc=(9, 0))``.

The CUDA simulator does not type-check (it runs plain Python), so this is the test that the emitted device
code is valid numba-cuda. It needs no GPU and no driver because the device functions are self-contained.
compile_ptx costs ~0.3-1 s per function, so by default: raw_value_and_grad (primal and adjoint together) of
every kernel in float64, and all three functions in both dtypes for the CUDA subset; the rest with ``-m slow``.
"""
import numba
import numpy as np
import pytest
from numba import cuda

from nestgrad import ad
import ad_test_kernels as corpus
from ad_test_kernels import numerics as nm

CC = (9, 0)
_derivatives = {}


def _derivative(case):
    if case.name not in _derivatives:
        _derivatives[case.name] = ad.differentiate(case.fn, wrt=case.wrt[0] if len(case.wrt) == 1 else case.wrt)
    return _derivatives[case.name]


def python_function(dev, name):
    """The plain Python function behind device function ``name`` (what compile_ptx takes).

    docs/internals.md ("ad (core) — additions"): the cuda object's ``.python`` dict; the dispatcher's
    ``py_func`` is the same function.
    """
    fn = getattr(dev, "python", {}).get(name) or getattr(getattr(dev, name), "py_func", None)
    assert fn is not None, f"cuda object exposes no plain Python function for {name!r}"
    return fn


ALL_FUNCTIONS = ("value", "raw_value_and_grad", "raw_grad")


def _check_ptx(case, dtype, functions=ALL_FUNCTIONS, sum_dtype=None, ptx_out=None):
    d = _derivative(case)
    dev = d.cuda(dtype=dtype, sum_dtype=sum_dtype)
    args = nm.to_dtype(case.args(), np.dtype(dtype))
    positions = nm.active_positions(case.fn, case.wrt)
    arg_types = tuple(numba.typeof(a) for a in args)
    grad_types = tuple(numba.typeof(args[k]) for k in positions)
    scratch_type = numba.typeof(np.zeros(1, dtype=dtype))
    if not hasattr(dev, "value"):  # a kernel with local arrays: its primal takes scratch (raw_value)
        functions = tuple("raw_value" if f == "value" else f for f in functions)
    signatures = {
        "value": (arg_types, numba.types.Float),
        "raw_value": (arg_types + (scratch_type,), numba.types.Float),
        "raw_value_and_grad": (arg_types + grad_types + (scratch_type,), numba.types.Float),
        "raw_grad": (arg_types + grad_types + (scratch_type,), numba.types.NoneType),
    }
    results = {}
    for name in functions:
        types, want_kind = signatures[name]
        ptx, result = cuda.compile_ptx(python_function(dev, name), types, device=True, cc=CC)
        assert ".func" in ptx, f"{case.name}.{name}: no device function in the PTX"
        assert isinstance(result, want_kind), f"{case.name}.{name} ({dtype}) returns {result}"
        results[name] = result
        if ptx_out is not None:
            ptx_out[name] = ptx
    return results


SUBSET = [c for c in corpus.CASES if c.cuda]
OTHERS = [c for c in corpus.CASES if not c.cuda]


@pytest.mark.parametrize("case", corpus.CASES, ids=lambda c: c.name)
def test_value_and_grad_compiles_to_ptx_float64(case):
    _check_ptx(case, "float64", ("raw_value_and_grad",))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", SUBSET, ids=lambda c: c.name)
def test_subset_device_functions_compile_to_ptx(case, dtype):
    _check_ptx(case, dtype, ("value", "raw_grad") if dtype == "float64" else ALL_FUNCTIONS)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", OTHERS, ids=lambda c: c.name)
def test_all_device_functions_compile_to_ptx(case, dtype):
    _check_ptx(case, dtype, ("value", "raw_grad") if dtype == "float64" else ALL_FUNCTIONS)


def test_float32_build_computes_in_float32():
    """A float32 build that silently promotes to float64 (e.g. through float64 literals) loses the GPU speed."""
    results = _check_ptx(corpus.BY_NAME["gauss4d"], "float32", ("value", "raw_value_and_grad"))
    assert results["value"] == numba.float32, results
    assert results["raw_value_and_grad"] == numba.float32, results


def test_cuda_source_is_exposed():
    d = _derivative(corpus.BY_NAME["gauss4d"])
    source = d.cuda().source
    assert isinstance(source, str) and "def " in source


@pytest.mark.parametrize("case", SUBSET, ids=lambda c: c.name)
def test_float32_builds_with_float64_sums_compile_to_ptx(case):
    _check_ptx(case, "float32", ("raw_value_and_grad",), sum_dtype="float64")


def test_float64_sums_add_in_float64_and_only_there():
    """gauss4d's data loop sums its squared residuals (and their gradients): with ``sum_dtype="float64"`` those
    additions are float64 in the PTX while the residuals stay float32; without it nothing is float64."""
    plain, wide = {}, {}
    _check_ptx(corpus.BY_NAME["gauss4d"], "float32", ("raw_value_and_grad",), ptx_out=plain)
    results = _check_ptx(corpus.BY_NAME["gauss4d"], "float32", ("raw_value_and_grad",), sum_dtype="float64",
                         ptx_out=wide)
    assert ".f64" not in plain["raw_value_and_grad"]
    text = wide["raw_value_and_grad"]
    assert "add.f64" in text or "add.rn.f64" in text, "no float64 addition"
    assert "sub.f32" in text or "sub.rn.f32" in text or "fma.rn.f32" in text  # residuals still float32
    assert results["raw_value_and_grad"] == numba.float64  # the value is the float64 sum's
