"""likelihoods.kernel_use: how a kernel uses its arguments, followed into helpers; the data-shape and params
checks built on it (Likelihood and config share it)."""
import sys
import textwrap
import warnings

import numpy as np
import pytest

from nestgrad.likelihoods import DataError, Likelihood, data, kernel_source, kernel_use
from nestgrad.likelihoods.errors import ParamsError
from nestgrad.likelihoods.likelihood import UnusedParameterWarning

KERNELS = textwrap.dedent('''
    import math
    import numpy as np

    def row_sum(x, i):
        return x[i, 0] + x[i, 1]


    def shape_only(theta, x):
        total = 0.0
        for i in range(x.shape[0]):
            total += theta[0] * row_sum(x, i)
        return total


    def pair(theta):
        return theta[1] * theta[2]


    def through_helper(theta, y):
        a, b = theta[0], pair(theta)
        return -0.5 * (y - a) * (y - a) * b


    def loop_index(theta, x):
        total = 0.0
        for k in range(x.shape[0]):
            total += theta[k] * x[k]
        return total


    def regression(theta, X, y):
        total = 0.0
        for i in range(X.shape[0]):
            mu = 0.0
            for j in range(X.shape[1]):
                mu += theta[1 + j] * X[i, j]
            r = (y[i] - mu - theta[0]) / theta[-1]
            total += -0.5 * r * r - math.log(theta[-1])
        return total


    def grouped(theta, g, y):
        total = 0.0
        for i in range(y.shape[0]):
            d = y[i] - theta[int(g[i])]
            total += -0.5 * d * d
        return total


    def dotted(theta, x):
        return -0.5 * np.dot(theta, x) ** 2
''')


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("use") / "kernels.py"
    path.write_text(KERNELS)
    return path


def _use(path, name):
    return kernel_use.of_kernel(kernel_source.resolve(f"{path}:{name}"))


def test_an_array_used_only_through_shape_is_followed_into_the_helper(kernels):
    use = _use(kernels, "shape_only")
    assert use.uses["x"].ndim == 2 and use.uses["x"].where[1] == 6  # x[i, 0] inside row_sum
    L = Likelihood(f"{kernels}:shape_only", ["a"], {"x": np.ones((5, 2))}, backend="python")
    assert L.logl(np.array([[2.0]]))[0] == pytest.approx(20.0)
    with pytest.raises(DataError, match=rf"'x' with 2 indices \({kernels}:6:\d+\).*\(5,\)"):
        Likelihood(f"{kernels}:shape_only", ["a"], {"x": np.ones(5)}, backend="python")


def test_theta_reads_through_helpers_and_tuples(kernels):
    theta = _use(kernels, "through_helper").theta
    assert sorted(theta.const_reads) == [0, 1, 2] and not theta.dynamic
    assert theta.const_reads[2][1] == 17  # the line in pair()
    assert _use(kernels, "through_helper").uses["y"].ndim == 0
    with pytest.raises(ParamsError, match=rf"^{kernels}:17:\d+: .*theta\[2\].*params names only 2"):
        Likelihood(f"{kernels}:through_helper", ["a", "b"], {"y": 1.0}, backend="python")


def test_unused_parameters_warn_and_name_the_parameter(kernels):
    with pytest.warns(UnusedParameterWarning, match=r"never reads c, d \(theta indices 3, 4\)"):
        L = Likelihood(f"{kernels}:through_helper", ["a", "b", "x", "c", "d"], {"y": 1.0}, backend="python")
    assert len(L.warnings) == 1 and L.warnings[0].startswith(f"{kernels}:") and "c, d" in L.warnings[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a loop-indexed theta reading every parameter: nothing to say
        Likelihood(f"{kernels}:loop_index", ["a", "b", "c"], {"x": np.ones(3)}, backend="python")


def test_parameters_read_through_a_loop_over_the_data_are_known_from_its_shape(kernels):
    """A parameter that only a loop over the data could read, and the data too short to reach it: an outsider's
    regression with one coefficient more than the design matrix's columns sampled it as its prior, silently."""
    with pytest.warns(UnusedParameterWarning, match=r"never reads d \(theta indices 3\)"):
        Likelihood(f"{kernels}:loop_index", ["a", "b", "c", "d"], {"x": np.ones(3)}, backend="python")
    params = ["b0", "b1", "b2", "b3", "sigma"]
    data = {"X": np.ones((10, 2)), "y": np.zeros(10)}
    with pytest.warns(UnusedParameterWarning, match=r"never reads b3 \(theta indices 3\)"):
        Likelihood(f"{kernels}:regression", params, data, backend="python")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Likelihood(f"{kernels}:regression", params, {"X": np.ones((10, 3)), "y": np.zeros(10)}, backend="python")
        # indices from data values, or theta read whole: nothing is claimed
        Likelihood(f"{kernels}:grouped", ["m0", "m1", "m2"], {"g": np.zeros(4), "y": np.zeros(4)}, backend="python")
        Likelihood(f"{kernels}:dotted", ["a", "b"], {"x": np.ones(2)}, backend="python")


def test_theta_indexed_by_a_loop_is_checked_against_params_with_the_data(kernels):
    with pytest.raises(ParamsError, match=rf"^{kernels}:28:\d+: .*theta\[k\] \(index 2\).*only 2"):
        Likelihood(f"{kernels}:loop_index", ["a", "b"], {"x": np.ones(3)}, backend="python")


def test_config_checks_use_the_same_analysis(kernels):
    """The checks sampler/config_kernel.py makes, on the KernelSource the Likelihood gets too: one analysis."""
    kernel = kernel_source.from_file(kernels, "shape_only")
    assert kernel_source.resolve(f"{kernels}:shape_only") is kernel and kernel.use is kernel.use
    L = Likelihood(kernel, ["a"], {"x": np.ones((5, 2))}, backend="python")
    assert L.use is kernel.use
    assert data.array_problem(kernel.use, "x", np.ones((5, 2))) is None
    assert "with 2 indices" in data.array_problem(kernel.use, "x", np.ones(5))
    use = kernel_source.from_file(kernels, "through_helper").use
    assert "theta[2]" in kernel_use.theta_problem(use, ["a", "b"])[1]
    assert kernel_use.theta_problem(use, ["a", "b", "c", "unused"]) is None  # too long: a warning, not an error


def test_the_analysis_runs_once_per_kernel(kernels, monkeypatch):
    """Resolving the same file reference again (config load, then build, then the Likelihood) reuses the
    KernelSource and its analysis; a changed file is read and analysed afresh."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as for most users: a stale .pyc could be run
    calls = []
    real = kernel_use.of_kernel
    monkeypatch.setattr(kernel_use, "of_kernel", lambda kernel: calls.append(kernel.name) or real(kernel))
    copy = kernels.parent / "once.py"
    copy.write_text(KERNELS)
    for _ in range(3):
        Likelihood(f"{copy}:shape_only", ["a"], {"x": np.ones((5, 2))}, backend="python")
    assert calls == ["shape_only"]
    copy.write_text(KERNELS + "\n\nEXTRA = 1\n")
    Likelihood(f"{copy}:shape_only", ["a"], {"x": np.ones((5, 2))}, backend="python")
    assert calls == ["shape_only", "shape_only"]
    theta, x = np.array([2.0]), np.ones((5, 2))
    assert kernel_source.from_file(copy, "shape_only").function(theta, x) == 20.0
    edited = KERNELS.replace("total = 0.0\n    for i in range(x.shape[0]):\n        total += theta[0] * row_sum",
                             "total = 1.0\n    for i in range(x.shape[0]):\n        total += theta[0] * row_sum")
    assert edited != KERNELS and len(edited) == len(KERNELS)
    copy.write_text(edited + "\n\nEXTRA = 1\n")  # same size, at once: the text, not a timestamp, decides
    kernel = kernel_source.from_file(copy, "shape_only")
    assert kernel.function(theta, x) == 21.0
    assert Likelihood(kernel, ["a"], {"x": x}, backend="python").logl(theta[None, :])[0] == 21.0  # AD reads it too


REDUCTIONS = textwrap.dedent('''
    import math
    import numpy as np


    def gauss_sum(theta, x, y, sigma):
        return -0.5 * np.sum(((y - theta[0] * x) / sigma) ** 2) - len(x) * math.log(sigma)


    def rows(theta, X, y):
        s = 0.0
        for i in range(X.shape[0]):
            s -= (y[i] - np.dot(X[i, :], theta)) ** 2
        return s - (theta ** 2).sum()


    def with_buffer(theta, x):
        buf = np.zeros(len(x))
        for i in range(len(x)):
            buf[i] = theta[0] * x[i]
        return np.dot(buf, buf)
''')


def test_reductions_and_local_arrays_give_data_shapes(tmp_path):
    """np.sum / np.dot / .sum() operands are arrays unless used as numbers elsewhere (nestgrad.ad.sugar's rule);
    the Likelihood then loads 1-D data for them and agrees with the kernel."""
    path = tmp_path / "reductions.py"
    path.write_text(REDUCTIONS)
    r = np.random.default_rng(2)
    x, y, X = r.normal(size=9), r.normal(size=9), r.normal(size=(9, 2))
    cases = [("gauss_sum", ["a"], {"x": x, "y": y, "sigma": 0.5}, {"x": 1, "y": 1, "sigma": 0}),
             ("rows", ["a", "b"], {"X": X, "y": y}, {"X": 2, "y": 1}),
             ("with_buffer", ["a"], {"x": x}, {"x": 1})]
    for name, params, values, ndims in cases:
        kernel = kernel_source.resolve(f"{path}:{name}")
        use = kernel_use.of_kernel(kernel)
        for arg, nd in ndims.items():
            assert use.uses[arg].ndim == nd, (name, arg, use.uses[arg])
        L = Likelihood(f"{path}:{name}", params, data=values, backend="cpu")
        thetas = r.uniform(0.5, 1.5, (4, len(params)))
        want = [kernel.function(t, *values.values()) for t in thetas]
        np.testing.assert_allclose(L.logl(thetas), want, rtol=1e-12)
