"""ad.linalg: kernels calling cholesky, solve_lower, solve_lower_t, logdet_chol, mvn_logpdf and mvn_logpdf_rows
(kernels/linalg.py) differentiate correctly -- against finite differences and JAX at several random points, in
pure Python, numba float64 and float32, the CUDA simulator and PTX -- and agree with the kernel that writes its
own Cholesky in loops, at a fraction of its scratch.

The simulator part runs this file as a script in a subprocess (NUMBA_ENABLE_CUDASIM=1 must be set before numba is
first imported) and reuses test_cuda_sim's batched harness.
"""
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if "ad_test_kernels" not in sys.modules:  # run as a script: load the corpus the way conftest.py does
    sys.path.insert(0, str(HERE))
    import conftest  # noqa: F401,E402

from nestgrad import ad  # noqa: E402
from ad_test_kernels import linalg as kl  # noqa: E402
from ad_test_kernels import local_arrays as la  # noqa: E402
from ad_test_kernels.case import Case  # noqa: E402
from device_calls import (ptx_without_driver, raw_value_and_grad_ptx, run_simulator,  # noqa: E402,F401 (a fixture)
                          simulate_cases)

CASES = {
    "mvn_linalg": Case("mvn_linalg", kl.mvn_linalg, kl.mvn_args),
    "gp_marginal": Case("gp_marginal", kl.gp_marginal, kl.gp_args),
    "triangular": Case("triangular", kl.triangular, kl.triangular_args),
    "model_rows": Case("model_rows", kl.model_rows, kl.model_rows_args),
}
POINTS = 3
# float32 builds are judged against the float64 reference, errors scaled by max(1, |value|, max |grad|) (measured:
# 1e-7 to 7e-7, the Gaussian process's the largest: its covariance's condition number amplifies rounding)
FLOAT32_TOLERANCE = {"mvn_linalg": 1e-5, "gp_marginal": 2e-5, "triangular": 1e-5, "model_rows": 1e-5}


def _points(name, seed=8):
    """The case's point, then POINTS - 1 random perturbations of its parameters (data unchanged)."""
    theta, *data = CASES[name].args()
    r = np.random.default_rng(seed)
    yield (theta, *data)
    for _ in range(POINTS - 1):
        yield (theta * r.uniform(0.8, 1.2, theta.shape) + r.normal(0.0, 0.05, theta.shape), *data)


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
    """The same model in JAX (jax.numpy / jax.scipy): an independent implementation of every step."""
    jnp, jsl, stats = jax.numpy, jax.scipy.linalg, jax.scipy.stats

    def lower_from(params, d, diag):
        lo = jnp.zeros((d, d))
        k = 0
        for i in range(d):
            for j in range(i + 1):
                lo = lo.at[i, j].set(diag(params[k]) if i == j else params[k])
                k += 1
        return lo

    def mvn_linalg(theta, x):
        d = x.shape[1]
        lo = lower_from(theta[d:], d, jnp.exp)
        return jnp.sum(stats.multivariate_normal.logpdf(x, theta[:d], lo @ lo.T))

    def gp_marginal(theta, t, y):
        amp, ell, noise, c = jnp.exp(theta[0]), jnp.exp(theta[1]), jnp.exp(theta[2]), theta[3]
        dt = (t[:, None] - t[None, :]) / ell
        cov = amp ** 2 * jnp.exp(-0.5 * dt ** 2) + noise ** 2 * jnp.eye(t.shape[0])
        chol = jnp.linalg.cholesky(cov)
        z = jsl.solve_triangular(chol, y - c, lower=True)
        return stats.multivariate_normal.logpdf(y, c * jnp.ones_like(y), cov) + 0.1 * z[-1] + 0.05 * chol[-1, 0]

    def triangular(theta, b, c):
        lo = lower_from(theta, b.shape[0], lambda v: 1.0 + v * v)
        u = jsl.solve_triangular(lo, b, lower=True)
        w = jsl.solve_triangular(lo.T, u, lower=False)
        return 2.0 * jnp.sum(jnp.log(jnp.abs(jnp.diag(lo)))) + c @ w + 0.3 * u @ u

    def model_rows(theta, x, cov_diag):
        d = x.shape[1]
        pred = x * theta[0] + theta[1] * jnp.arange(d)
        lo = jnp.diag(cov_diag) + jnp.tril(jnp.full((d, d), 0.1 * theta[2]), -1)
        return jnp.sum(stats.multivariate_normal.logpdf(pred, jnp.zeros(d), lo @ lo.T))

    return {"mvn_linalg": mvn_linalg, "gp_marginal": gp_marginal, "triangular": triangular,
            "model_rows": model_rows}[name]


def _value_and_grad(obj, args):
    grad = np.full(args[0].shape, np.nan, dtype=np.asarray(args[0]).dtype)
    return obj.value_and_grad(*args, grad), grad


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences(name, derivatives):
    for args in _points(name):
        check = ad.check_gradient(CASES[name].fn, *args)
        assert check.ok, str(check)
        value, grad = _value_and_grad(derivatives[name], args)
        assert value == pytest.approx(CASES[name].fn(*args), rel=1e-12)  # the kernel itself runs as Python


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_jax(name, derivatives, jax_x64):
    jax = jax_x64
    reference = jax.jit(jax.value_and_grad(_jax_reference(name, jax)))
    for args in _points(name, seed=21):
        want_value, want = reference(*[jax.numpy.asarray(a) for a in args])
        want = np.asarray(want)
        value, grad = _value_and_grad(derivatives[name], args)
        assert value == pytest.approx(float(want_value), rel=1e-10)
        np.testing.assert_allclose(grad, want, rtol=1e-8, atol=1e-10 * np.abs(want).max())


def _compiled_agree(d, name, dtype, tolerance):
    fast = d.jit(dtype=dtype)
    for args in _points(name, seed=3):
        want_value, want = _value_and_grad(d, args)
        cast = tuple(np.asarray(a, dtype) if isinstance(a, np.ndarray) else a for a in args)
        value, grad = _value_and_grad(fast, cast)
        scale = max(1.0, abs(want_value), float(np.abs(want).max()))
        assert abs(value - want_value) / scale < tolerance
        assert float(np.abs(grad - want).max()) / scale < tolerance
        n = d.scratch_size(*args)
        scratch = np.full(n, np.nan, dtype)
        assert abs(fast.raw_value(*cast, scratch) - want_value) / scale < tolerance


def test_jit_float64_gaussian_process(derivatives):
    """(float32 device arithmetic of ad.linalg runs in the simulator test below; numba float32 with -m slow)"""
    _compiled_agree(derivatives["gp_marginal"], "gp_marginal", "float64", 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", CASES)
def test_jit_agrees_with_python(name, dtype, derivatives):
    _compiled_agree(derivatives[name], name, dtype, 1e-12 if dtype == "float64" else FLOAT32_TOLERANCE[name])


def test_agrees_with_the_cholesky_written_in_loops(derivatives):
    """The same model, with the factorisation and the solves written in the kernel (local_arrays.mvn_cholesky):
    the same value and gradient; the call stores nothing where the loops keep a copy of the factor per
    iteration."""
    loops = ad.differentiate(la.mvn_cholesky)
    for d in (3, 5):
        args = kl.mvn_args(d=d, n=15, seed=d)
        value, grad = _value_and_grad(derivatives["mvn_linalg"], args)
        want_value, want = _value_and_grad(loops, args)
        assert value == pytest.approx(want_value, rel=1e-12)
        np.testing.assert_allclose(grad, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    # (both kernels build L and Sigma in loops, which store a copy of the array per iteration: O(d^3) each)
    args = kl.mvn_args(d=8)
    assert derivatives["mvn_linalg"].scratch_size(*args) < loops.scratch_size(*args)
    text = derivatives["mvn_linalg"].report(*args)
    assert "call to cholesky (line" in text and "nothing stored" in text
    assert "local array chol: stored in scratch, a copy per iteration" in loops.report(*args)


def test_report_names_the_calls_and_their_copies(derivatives):
    text = derivatives["gp_marginal"].report(*kl.gp_args())
    assert "call to cholesky" in text and "call to mvn_logpdf" in text and "its adjoint rule" in text
    n = derivatives["gp_marginal"].scratch_size(*kl.gp_args())
    assert f"scratch: {8 * n} bytes per sample (float64)" in text


def test_not_positive_definite_gives_nan_not_an_exception():
    a = np.array([[1.0, 2.0], [2.0, 1.0]])
    out = np.zeros((2, 2))
    ad.linalg.cholesky(a, out)
    assert out[0, 0] == 1.0 and np.isnan(out[1, 1])


def test_linalg_matches_numpy_and_scipy():
    """The primals themselves, against numpy.linalg / scipy.linalg on a random SPD matrix."""
    import scipy.linalg as scipy_linalg  # a dependency: never skipped
    r = np.random.default_rng(4)
    a = r.normal(size=(6, 6))
    spd = a @ a.T + 6 * np.eye(6)
    lo = np.zeros((6, 6))
    ad.linalg.cholesky(spd, lo)
    np.testing.assert_allclose(lo, np.linalg.cholesky(spd), rtol=1e-12, atol=1e-14)
    b, out = r.normal(size=6), np.empty(6)
    ad.linalg.solve_lower(lo, b, out)
    np.testing.assert_allclose(out, scipy_linalg.solve_triangular(lo, b, lower=True), rtol=1e-12)
    ad.linalg.solve_lower_t(lo, b, out)
    np.testing.assert_allclose(out, scipy_linalg.solve_triangular(lo.T, b, lower=False), rtol=1e-12)
    assert ad.linalg.logdet_chol(lo) == pytest.approx(np.linalg.slogdet(spd)[1], rel=1e-12)


def test_float32_arrays_keep_the_arithmetic_in_float32():
    """numba types a bare float literal as float64: ad.linalg makes its constants in the arrays' type, so with
    float32 arrays no variable of any function or adjoint is float64 (only literals and one-off products are),
    except ``total``, the sums over the data rows that mvn_logpdf_rows keeps in float64 on purpose (summed in
    float32, 1e5 rows put its value 1 nat and its gradient 3% off)."""
    import numba
    f, d = np.float32, 3
    mat, vec, rows, g = (lambda: np.eye(d, dtype=f) + f(0.1)), (lambda: np.ones(d, f)), np.ones((5, d), f), f(1.0)
    la_ = ad.linalg
    calls = {la_.cholesky: (mat(), mat()), la_.cholesky_adjoint: (mat(), mat(), g, mat(), mat()),
             la_.solve_lower_adjoint: (mat(), vec(), vec(), g, mat(), vec(), vec()),
             la_.solve_lower_t_adjoint: (mat(), vec(), vec(), g, mat(), vec(), vec()),
             la_.logdet_chol: (mat(),), la_.mvn_logpdf: (vec(), vec(), mat(), vec()),
             la_.mvn_logpdf_adjoint: (vec(), vec(), mat(), vec(), g, vec(), vec(), mat(), vec()),
             la_.mvn_logpdf_rows: (rows, vec(), mat(), mat()),
             la_.mvn_logpdf_rows_adjoint: (rows, vec(), mat(), mat(), g, rows.copy(), vec(), mat(), mat())}
    for fn, args in calls.items():
        compiled = numba.njit(fn)
        compiled(*args)
        (signature,) = compiled.signatures
        typemap = compiled.overloads[signature].type_annotation.typemap
        wide = sorted(name for name, t in typemap.items() if t == numba.float64 and not name.startswith("$"))
        sums = {name for name in wide if name.split(".")[0] == "total"}
        assert bool(sums) == ("rows" in fn.__name__), f"{fn.__name__}: {wide}"
        assert not set(wide) - sums, f"{fn.__name__}: {wide}"
        assert compiled.overloads[signature].signature.return_type in (numba.float32, numba.none), fn.__name__


# ---- CUDA: the simulator (subprocess) and PTX -------------------------------------------------------------

SIMULATED = ("gp_marginal", "triangular")


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
    assert result["worst_scaled_error"] < (1e-11 if dtype == "float64" else FLOAT32_TOLERANCE[name])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_device_code_compiles_to_ptx(dtype, derivatives, ptx_without_driver):
    import numba
    result = raw_value_and_grad_ptx(ptx_without_driver, derivatives["triangular"], CASES["triangular"], dtype)
    assert result == getattr(numba, dtype)  # a float32 build computes in float32


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", [n for n in CASES if n != "triangular"])
def test_all_device_code_compiles_to_ptx(name, dtype, derivatives, ptx_without_driver):
    import numba
    assert raw_value_and_grad_ptx(ptx_without_driver, derivatives[name], CASES[name], dtype) == getattr(numba, dtype)


if __name__ == "__main__":
    _simulate()
