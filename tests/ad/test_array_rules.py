"""``@ad.rule`` for functions with array arguments and for functions compiled elsewhere (ad/external.py,
ad/external_adjoint.py): gradients against finite differences and JAX, numba float64 and float32, the CUDA
simulator and PTX, what report() says, and the errors at the call's position.

The compiled functions (kernels/array_rules.py) are numba functions built from a string: they have no source,
so these kernels differentiate only if the differentiator calls them without reading them.
"""
import inspect
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if "ad_test_kernels" not in sys.modules:  # run as a script: load the corpus the way conftest.py does
    sys.path.insert(0, str(HERE))
    import conftest  # noqa: F401,E402

from nestgrad import ad  # noqa: E402
from ad_test_kernels import array_rules as ar  # noqa: E402
from ad_test_kernels.case import Case  # noqa: E402
from device_calls import (ptx_without_driver, raw_value_and_grad_ptx, run_simulator,  # noqa: E402,F401 (a fixture)
                          simulate_cases)

CASES = {
    "line_fit": Case("line_fit", ar.line_fit, ar.line_fit_args),
    "stepped_state": Case("stepped_state", ar.stepped_state, ar.stepped_args),
    "overwrite_after_reads": Case("overwrite_after_reads", ar.overwrite_after_reads, ar.stepped_args),
    "parameter_array": Case("parameter_array", ar.parameter_array, ar.stepped_args),
}


def _points(name, count=3, seed=5):
    theta, *data = CASES[name].args()
    r = np.random.default_rng(seed)
    yield (theta, *data)
    for _ in range(count - 1):
        yield (theta * r.uniform(0.8, 1.2, theta.shape), *data)


@pytest.fixture(scope="module")
def derivatives():
    return {name: ad.differentiate(case.fn) for name, case in CASES.items()}


@pytest.fixture(scope="module")
def jax_x64():
    import jax
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", x64)


def _jax_reference(name, jax):
    jnp = jax.numpy

    def line_fit(theta, x, y, w):
        r = theta[0] + theta[1] * x - y
        return -0.5 / theta[2] ** 2 * jnp.sum(w * r * r) - x.shape[0] * jnp.log(theta[2])

    def stepped_state(theta, x):
        state, total = x, 0.0
        for _ in range(3):
            tmp = theta[0] * state
            total = total + jnp.sum(tmp)
            state = jnp.sin(tmp) + theta[1] * state
        return total + jnp.sum(state)

    def overwrite_after_reads(theta, x):
        buf = theta[0] * x
        a = jnp.sum(buf * buf * x)
        buf = theta[1] * x
        return a * jnp.sum(buf) + buf[0] * theta[0]

    def parameter_array(theta, x):
        softplus = jnp.sum(jnp.log1p(jnp.exp(theta[0] * x + theta[1])))
        cdf = 0.5 * jax.scipy.special.erfc(-(theta[2] - 0.5 * theta[0]) / jnp.sqrt(2.0))
        return softplus * theta[2] + cdf

    return {"line_fit": line_fit, "stepped_state": stepped_state, "overwrite_after_reads": overwrite_after_reads,
            "parameter_array": parameter_array}[name]


def _value_and_grad(obj, args):
    grad = np.full(args[0].shape, np.nan, dtype=np.asarray(args[0]).dtype)
    return obj.value_and_grad(*args, grad), grad


def test_compiled_functions_have_no_source():
    for fn in (ar.scale_into, ar.scale_into_adjoint, ar.softplus_sum, ar.gauss_cdf):
        with pytest.raises(OSError):
            inspect.getsource(fn.py_func)


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences_and_jax(name, derivatives, jax_x64):
    jax = jax_x64
    reference = jax.jit(jax.value_and_grad(_jax_reference(name, jax)))
    for args in _points(name):
        check = ad.check_gradient(CASES[name].fn, *args)
        assert check.ok, str(check)
        want_value, want = reference(*[jax.numpy.asarray(a) for a in args])
        want = np.asarray(want)
        value, grad = _value_and_grad(derivatives[name], args)
        assert value == pytest.approx(float(want_value), rel=1e-12)
        np.testing.assert_allclose(grad, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("name, dtype", [("stepped_state", "float64"), ("parameter_array", "float64"),
                                         ("parameter_array", "float32"),
                                         pytest.param("stepped_state", "float32", marks=pytest.mark.slow)])
def test_numba_float64_and_float32(name, dtype, derivatives):
    d = derivatives[name]
    tolerance = 1e-12 if dtype == "float64" else 1e-5
    fast = d.jit(dtype=dtype)
    for args in _points(name, count=2, seed=9):
        want_value, want = _value_and_grad(d, args)
        cast = tuple(np.asarray(a, dtype) if isinstance(a, np.ndarray) else a for a in args)
        value, grad = _value_and_grad(fast, cast)
        scale = max(1.0, abs(want_value), float(np.abs(want).max()))
        assert abs(value - want_value) / scale < tolerance
        assert float(np.abs(grad - want).max()) / scale < tolerance


@pytest.mark.slow
@pytest.mark.parametrize("name", ["line_fit", "overwrite_after_reads"])
def test_numba_float64_others(name, derivatives):
    fast = derivatives[name].jit()
    for args in _points(name, count=2):
        want_value, want = _value_and_grad(derivatives[name], args)
        value, grad = _value_and_grad(fast, args)
        assert value == pytest.approx(want_value, rel=1e-12)
        np.testing.assert_allclose(grad, want, rtol=1e-11, atol=1e-13 * np.abs(want).max())


def test_report_says_what_the_calls_store(derivatives):
    text = derivatives["line_fit"].report(*ar.line_fit_args())
    assert "call to weighted_sq (line" in text and "(assumed: every local array passed" in text
    assert "a copy of what it overwrites is stored in scratch" in text  # `model` was written before the call
    text = derivatives["parameter_array"].report(*ar.stepped_args())
    assert "call to softplus_sum" in text and "call to gauss_cdf" in text and "its partials are inlined" in text
    assert "scratch: 0 bytes per sample" in text


def test_inputs_stay_read_only_and_calls_do_not_allocate(derivatives):
    import tracemalloc
    args = ar.stepped_args()
    before = [np.copy(a) for a in args]
    fast = derivatives["stepped_state"].jit()
    scratch = np.empty(derivatives["stepped_state"].scratch_size(*args))
    grad = np.zeros(3)
    fast.raw_value_and_grad(*args, grad, scratch)  # compile
    tracemalloc.start()
    for _ in range(50):
        fast.raw_value_and_grad(*args, grad, scratch)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert current < 2000
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("marker, name, make_args", [
    ("def chi2(", "line", lambda: (np.array([0.9, 2.1, 0.3]), np.linspace(0.0, 1.0, 10),
                                   1.0 + 2.0 * np.linspace(0.0, 1.0, 10) + 0.1 * np.sin(np.arange(10.0)))),
    ("linalg.mvn_logpdf_rows(x, mean, lo, work)", "mvn",
     lambda: (np.array([0.1, -0.1, 0.2, 0.1, 0.2, -0.1, 0.3, 0.1, 0.05]),
              np.random.default_rng(0).normal(size=(30, 3)))),
], ids=["numba-rule", "linalg"])
def test_readme_examples(marker, name, make_args):
    """README's examples (section "What the differentiator accepts"), with the imports they assume."""
    import re
    readme = (HERE.parents[1] / "README.md").read_text(encoding="utf-8")
    (snippet,) = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if marker in b]
    text = ("import math\n\nimport numba\nimport numpy as np\n\nfrom nestgrad import ad\n"
            "from nestgrad.ad import linalg\n\n" + snippet)
    d = ad.differentiate_source(text, name, filename="README-example.py")
    args = make_args()
    grad = np.zeros_like(args[0])
    d.jit().value_and_grad(*args, grad)
    reference = np.zeros_like(args[0])
    d.value_and_grad(*args, reference)
    np.testing.assert_allclose(grad, reference, rtol=1e-12)
    from test_core_helpers import fd_gradient
    kernel = {}
    exec(compile(text, "README-example.py", "exec"), kernel)  # noqa: S102 (the same text, for finite differences)
    np.testing.assert_allclose(reference, fd_gradient(kernel[name], args), rtol=1e-6, atol=1e-8)


# ---- the rule's form and the call are checked -----------------------------------------------------------

_WRONG_ARITY = '''
import numpy as np
from nestgrad import ad

def total(v):
    s = 0.0
    for i in range(v.shape[0]):
        s += v[i]
    return s

@ad.rule(total)
def total_adjoint(v, g):
    return 0.0

def k(theta):
    buf = np.zeros(2)
    buf[0] = theta[0]
    return total(buf)
'''


def test_adjoint_with_the_wrong_parameter_count_is_reported_at_the_call():
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate_source(_WRONG_ARITY, "k", filename="arity.py")
    err = info.value
    assert (err.filename, err.lineno) == ("arity.py", 18)
    assert "adjoint rule of total takes 2 parameters" in str(err)


_WRITES_DATA = '''
import numpy as np
from nestgrad.ad import linalg

def k(theta, x, b):
    lo = np.zeros((2, 2))
    lo[0, 0] = theta[0]
    lo[1, 1] = theta[1]
    linalg.solve_lower(lo, b, x)
    return lo[0, 0]
'''

_ALIASED = '''
import numpy as np
from nestgrad.ad import linalg

def k(theta):
    a = np.zeros((2, 2))
    a[0, 0] = theta[0]
    a[1, 1] = theta[1]
    linalg.cholesky(a, a)
    return a[0, 0]
'''


@pytest.mark.parametrize("text, line, col, words", [
    (_WRITES_DATA, 9, 30, "must then be a local array"),
    (_ALIASED, 9, 23, "is passed twice to cholesky, which writes into it"),
], ids=["writes-into-data", "aliased-output"])
def test_calls_that_would_write_inputs_or_alias_are_rejected(text, line, col, words):
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate_source(text, "k", filename="calls.py")
    err = info.value
    assert (err.lineno, err.col) in ((line, col), (line, col + 1)), str(err)
    assert words in str(err)


def test_functions_alike_but_for_a_global_are_told_apart():
    """Generated modules (and numba's cache of them) name a called function by what it computes: two functions
    with the same name and bytecode but different globals must not share a name."""
    from nestgrad.ad import external
    source = "def scaled(v):\n    return v[0] * SCALE\n"
    first, second = {"SCALE": 1.0}, {"SCALE": 2.0}
    exec(source, first)  # noqa: S102
    exec(source, second)  # noqa: S102
    assert external.key(first["scaled"]) != external.key(second["scaled"])
    again = {"SCALE": 1.0}
    exec(source, again)  # noqa: S102
    assert external.key(again["scaled"]) == external.key(first["scaled"])  # stable: the same computation


def test_rule_forms_are_checked_when_registered():
    def f(a, b):
        return a * b

    with pytest.raises(TypeError, match="not parameters of f"):
        ad.rule(f, writes=("c",))
    with pytest.raises(TypeError, match="must be plain Python"):
        ad.rule(f)(ar.gauss_cdf)  # a compiled function in the partials form (it would have to be inlined)
    with pytest.raises(TypeError, match="fewer than"):
        ad.rule(f)(lambda a: a)


# ---- CUDA: the simulator (subprocess) and PTX -------------------------------------------------------------

SIMULATED = ("stepped_state", "parameter_array")


def _simulate():
    simulate_cases(CASES, SIMULATED)


@pytest.fixture(scope="module")
def simulator_results():
    return run_simulator(__file__)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", SIMULATED)
def test_cuda_simulator_matches_python(name, dtype, simulator_results):
    result = simulator_results[f"{name}-{dtype}"]
    assert "error" not in result, result.get("error")
    assert result["worst_scaled_error"] < (1e-11 if dtype == "float64" else 1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_device_code_compiles_to_ptx(dtype, derivatives, ptx_without_driver):
    import numba
    result = raw_value_and_grad_ptx(ptx_without_driver, derivatives["parameter_array"], CASES["parameter_array"],
                                    dtype)
    assert result == getattr(numba, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["line_fit", "stepped_state", "overwrite_after_reads"])
def test_all_device_code_compiles_to_ptx(name, dtype, derivatives, ptx_without_driver):
    import numba
    assert raw_value_and_grad_ptx(ptx_without_driver, derivatives[name], CASES[name], dtype) == getattr(numba, dtype)


if __name__ == "__main__":
    _simulate()
