"""Local arrays (ad/local_arrays.py, ad/array_adjoint.py): JAX references for the RK4 ODE fit and the
multivariate normal with its own Cholesky, scratch as reported, no allocation, read-only inputs, PTX, rejections.

The corpus (kernels/local_arrays.py) runs every local-array kernel through finite differences, jit float64 and
float32 and PTX of raw_value_and_grad."""
import math
import tracemalloc

import numba
import numpy as np
import pytest
from numba import cuda

from nestgrad import ad
import ad_test_kernels as corpus
from ad_test_kernels import local_arrays as la
from test_core_helpers import from_text

RK4 = corpus.BY_NAME["lotka_volterra_rk4"]
MVN = corpus.BY_NAME["mvn_cholesky"]
ARRAY_CASES = [c for c in corpus.CASES if "local array" in c.tags]


@pytest.fixture(scope="module")
def derivatives():
    return {c.name: ad.differentiate(c.fn) for c in ARRAY_CASES}


@pytest.fixture(scope="module")
def jax_x64():
    import jax
    x64 = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", x64)


def _jax_rk4(jnp):
    def loglike(theta, obs, dt, nsub):
        a, b, c, d, sigma = theta[0], theta[1], theta[2], theta[3], theta[4]
        f = lambda y: jnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])  # noqa: E731
        y, s = jnp.array([1.0, 0.5]), 0.0
        for step in range(obs.shape[0]):
            for _ in range(nsub):
                q1 = f(y)
                q2 = f(y + 0.5 * dt * q1)
                q3 = f(y + 0.5 * dt * q2)
                q4 = f(y + dt * q3)
                y = y + dt / 6.0 * (q1 + 2.0 * q2 + 2.0 * q3 + q4)
            s = s - jnp.sum((y - obs[step]) ** 2) / (2.0 * sigma * sigma)
        return s - obs.shape[0] * 2.0 * jnp.log(sigma)
    return loglike


def _jax_mvn(jax):
    jnp = jax.numpy

    def loglike(theta, x):
        d = x.shape[1]
        lo = jnp.zeros((d, d))
        k = d
        for i in range(d):
            for j in range(i + 1):
                lo = lo.at[i, j].set(jnp.exp(theta[k]) if i == j else theta[k])
                k += 1
        cov = lo @ lo.T  # jax.scipy's logpdf factors it again: an independent Cholesky and solve
        return jnp.sum(jax.scipy.stats.multivariate_normal.logpdf(x, theta[:d], cov))
    return loglike


def _points(case, count, seed):
    r = np.random.default_rng(seed)
    theta, *data = case.args()
    for _ in range(count):
        yield (theta * r.uniform(0.9, 1.1, theta.shape), *data)


@pytest.mark.parametrize("case", [RK4, MVN], ids=lambda c: c.name)
def test_gradient_matches_jax(case, derivatives, jax_x64):
    jax = jax_x64
    reference = jax.value_and_grad(_jax_rk4(jax.numpy) if case is RK4 else _jax_mvn(jax))
    d = derivatives[case.name]
    fast = d.jit()
    for args in _points(case, 3, seed=8):
        jargs = [jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
        want_value, want = reference(*jargs)
        want = np.asarray(want)
        for obj in (d, fast):
            got = np.full(want.shape, np.nan)
            value = obj.value_and_grad(*args, got)
            assert value == pytest.approx(float(want_value), rel=1e-11)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10 * np.abs(want).max())
        check = ad.check_gradient(case.fn, *args)
        assert check.ok, str(check)


def test_mvn_matches_scipy_value(derivatives):
    from scipy import stats  # a dependency of nestgrad: never skipped
    theta, x = MVN.args()
    lo = np.zeros((3, 3))
    lo[np.tril_indices(3)] = theta[3:]
    lo[np.diag_indices(3)] = np.exp(np.diag(lo))
    want = stats.multivariate_normal(theta[:3], lo @ lo.T).logpdf(x).sum()
    assert derivatives["mvn_cholesky"].value(theta, x) == pytest.approx(want, rel=1e-12)


def test_newton_solve_matches_the_implicit_function_theorem(derivatives):
    """At convergence dz/dtheta = -J^-1 dF/dtheta (J the Jacobian of F in z), z solved independently by scipy."""
    from scipy import optimize  # a dependency of nestgrad: never skipped
    theta, target, max_iter = corpus.BY_NAME["newton_2d"].args()
    for scale in (1.0, 0.8, 1.2):
        a, b = theta * scale
        z = optimize.fsolve(lambda z: [z[0] ** 2 + a * z[1] - target[0], z[1] ** 2 + b * z[0] - target[1]],
                            [1.0, 1.0], xtol=1e-14)
        jac = np.array([[2 * z[0], a], [b, 2 * z[1]]])
        dz = -np.linalg.solve(jac, np.array([[z[1], 0.0], [0.0, z[0]]]))
        want = np.array([2.0, 2.0 * z[1]]) @ dz
        got = np.zeros(2)
        derivatives["newton_2d"].value_and_grad(theta * scale, target, max_iter, got)
        np.testing.assert_allclose(got, want, rtol=1e-9)


@pytest.mark.parametrize("case", ARRAY_CASES, ids=lambda c: c.name)
def test_raw_value_and_report_agree_on_scratch(case, derivatives):
    d = derivatives[case.name]
    args = case.args()
    n = d.scratch_size(*args)
    assert d.needs_scratch and n > 0
    assert f"scratch: {8 * n} bytes per sample (float64)" in d.report(*args)
    assert f"scratch: {4 * n} bytes per sample (float32)" in d.report(*args, dtype="float32")
    assert "local array" in d.report()
    fast = d.jit()
    scratch = np.full(n, np.nan)
    assert fast.raw_value(*args, scratch) == pytest.approx(case.fn(*args), rel=1e-12)
    assert d.value(*args) == pytest.approx(case.fn(*args), rel=1e-12)


@pytest.mark.parametrize("case", ARRAY_CASES, ids=lambda c: c.name)
def test_inputs_stay_read_only(case, derivatives):
    args = case.args()
    before = [np.copy(a) for a in args]
    d = derivatives[case.name]
    d.value_and_grad(*args, np.zeros(args[0].shape))
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)


def test_raw_calls_do_not_allocate(derivatives):
    fast = derivatives["lotka_volterra_rk4"].jit()
    args = RK4.args()
    scratch = np.empty(derivatives["lotka_volterra_rk4"].scratch_size(*args))
    grad = np.zeros(5)
    fast.raw_value_and_grad(*args, grad, scratch)  # warm-up (compile)
    fast.raw_grad(*args, grad, scratch)
    fast.raw_value(*args, scratch)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for _ in range(50):
            fast.raw_value_and_grad(*args, grad, scratch)
            fast.raw_grad(*args, grad, scratch)
            fast.raw_value(*args, scratch)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 64 and peak - before < 1024


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", [c for c in ARRAY_CASES if c.name != "lotka_volterra_rk4" and not c.cuda],
                         ids=lambda c: c.name)
def test_device_functions_compile_to_ptx(case, dtype, derivatives):
    """raw_value (the primal takes scratch when the kernel has local arrays) and raw_grad, both dtypes (the
    corpus' PTX test covers raw_value_and_grad in float64, and every function in both dtypes for the cases marked
    ``cuda``, which are therefore not compiled again here)."""
    dev = derivatives[case.name].cuda(dtype=dtype)
    assert not hasattr(dev, "value"), "a device function cannot allocate: only raw_value"
    args = [a.astype(dtype) if isinstance(a, np.ndarray) else a for a in case.args()]
    arg_types = tuple(numba.typeof(a) for a in args)
    scratch = numba.typeof(np.zeros(1, dtype=dtype))
    for name, types in (("raw_value", arg_types + (scratch,)),
                        ("raw_grad", arg_types + (arg_types[0], scratch))):
        ptx, _ = cuda.compile_ptx(dev.python[name], types, device=True, cc=(9, 0))
        assert ".func" in ptx
        if dtype == "float32":
            assert ".f64" not in ptx.split(".func", 1)[1] or "cvt" in ptx, "float32 kernels stay in float32"


# ---- rejections ------------------------------------------------------------------------------------------------
REJECTED = [
    ("allocation_in_loop",
     "import numpy as np\ndef k(theta, x):\n    s = 0.0\n    for i in range(3):\n        b = np.zeros(2)\n"
     "        b[0] = theta[0]\n        s += b[0]\n    return s\n", 5, "top level"),
    ("array_as_number",
     "import numpy as np\ndef k(theta, x):\n    b = np.zeros(2)\n    b[0] = theta[0]\n    return b * 2.0\n", 5,
     "used as a number"),
    ("shape_from_parameter",
     "import numpy as np\ndef k(theta, x):\n    b = np.zeros(int(theta[0]))\n    return theta[1]\n", 3,
     "depends on the parameter"),
    ("three_dimensions",
     "import numpy as np\ndef k(theta, x):\n    b = np.zeros((2, 2, 2))\n    return theta[1]\n", 3,
     "one or two dimensions"),
    ("wrong_index_count",
     "import numpy as np\ndef k(theta, x):\n    b = np.zeros((2, 2))\n    b[0] = theta[0]\n    return theta[1]\n", 4,
     "dimension"),
]


@pytest.mark.parametrize("name, text, line, words", REJECTED, ids=[r[0] for r in REJECTED])
def test_unsupported_array_uses_are_rejected_with_position(name, text, line, words):
    with pytest.raises(ad.KernelError) as info:
        from_text(text, "k")
    assert info.value.lineno == line, str(info.value)
    assert words in str(info.value)
