"""Reads out of bounds are errors at the kernel's file:line:col before anything runs: proven from the data's
shapes where the indices are affine in range loops, found by a bounds-checked Python run otherwise."""
import textwrap

import numpy as np
import pytest

from nestgrad.likelihoods import Likelihood
from nestgrad.likelihoods.errors import KernelIndexError, ParamsError
from nestgrad.sampler.cli import main

KERNELS = textwrap.dedent('''
    import numpy as np


    def out_of_bounds(theta, x, y):
        total = 0.0
        for i in range(x.shape[0]):
            r = y[i] - theta[0] - theta[1] * x[i + 1]
            total += -0.5 * r * r
        return total


    def guarded(theta, x):
        total = 0.0
        for i in range(x.shape[0]):
            if i + 1 < x.shape[0]:
                total += (x[i + 1] - x[i]) * theta[0]
        return total


    def lagged(theta, x):
        total = 0.0
        for i in range(len(x)):
            total += (x[i] - theta[0] * x[i - 1]) ** 2
        return -total


    def strided(theta, x):
        n = x.shape[0]
        total = 0.0
        for i in range(1, n - 1, 2):
            total += theta[0] * (x[i - 1] + x[i + 1])
        return total


    def tail(x, n):
        s = 0.0
        for j in range(n):
            s += x[j + 1, 0]
        return s


    def via_helper(theta, x, m):
        return theta[0] * tail(x, m)


    def lookup(theta, x, idx):
        total = 0.0
        for i in range(idx.shape[0]):
            total += theta[0] * x[int(idx[i])]
        return total


    def local_past_end(theta, x):
        buf = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            buf[i] = (x[i] - theta[0]) ** 2
        return -0.5 * (buf[0] + buf[x.shape[0]])


    def scatter(theta, idx):
        b = np.zeros(7)
        for i in range(idx.shape[0]):
            b[idx[i]] += theta[0] * (i + 1)
        return b[3] * theta[1]


    def theta_from_the_end(theta):
        s = 0.0
        for k in range(2):
            s += (k + 1.0) * theta[-1 - k]
        return s


    def regression_rows(theta, X, y):
        total = 0.0
        for i in range(X.shape[0]):
            total += -0.5 * (y[i] - np.dot(X[i, :], theta)) ** 2
        return total


    def weighted(theta, w, y):
        return -0.5 * np.sum(w * (y - theta[0]) ** 2)


    def local_dot(theta, x):
        buf = np.zeros(3)
        for i in range(3):
            buf[i] = theta[0] * i
        return -0.5 * np.dot(buf, x)


    def shifted_dot(theta, x, m):
        return -0.5 * (np.dot(x, x) - theta[0] * m.shape[0]) ** 2
''')


def at(marker):
    """``line:col`` of ``marker`` in KERNELS (1-based, as in the error messages)."""
    for number, line in enumerate(KERNELS.splitlines(), 1):
        if marker in line:
            return f"{number}:{line.index(marker) + 1}"
    raise AssertionError(marker)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("bounds") / "kernels.py"
    path.write_text(KERNELS)
    return path


def _make(path, name, data, params=("a", "b")):
    return Likelihood(f"{path}:{name}", list(params), data, backend="python")


def test_the_reproducer_is_proven_out_of_bounds_at_its_line(kernels):
    x = np.linspace(0.0, 1.0, 20)
    with pytest.raises(KernelIndexError) as info:
        _make(kernels, "out_of_bounds", {"x": x, "y": 2.0 * x})
    error = info.value
    assert f"{error.filename}:{error.lineno}:{error.col}" == f"{kernels}:{at('x[i + 1]')}"
    assert str(error).startswith(f"{kernels}:{at('x[i + 1]')}: x[i + 1] reads index 20 on axis 0 of 'x'")
    assert "i = 19" in str(error) and error.array == "x" and error.config_key == ("likelihood", "kernel")


def test_guarded_and_in_range_reads_are_accepted(kernels):
    x = np.arange(6.0)
    assert _make(kernels, "guarded", {"x": x}, ["a"]).logl(np.array([[2.0]]))[0] == pytest.approx(10.0)
    strided = _make(kernels, "strided", {"x": x}, ["a"])  # reads x[0] + x[2] and x[2] + x[4]
    assert strided.logl(np.array([[1.0]]))[0] == pytest.approx(8.0)


def test_a_negative_loop_index_is_an_error_not_a_silent_wrap(kernels):
    message = rf"^{kernels}:{at('x[i - 1]')}: x\[i - 1\] reads index -1 .*wraps around"
    with pytest.raises(KernelIndexError, match=message):
        _make(kernels, "lagged", {"x": np.ones(5)}, ["a"])


def test_reads_in_helpers_point_at_the_helper_line(kernels):
    message = rf"^{kernels}:{at('x[j + 1, 0]')}: x\[j \+ 1, 0\] reads index 4 .*j = 3"
    with pytest.raises(KernelIndexError, match=message):
        _make(kernels, "via_helper", {"x": np.ones((4, 2)), "m": 4}, ["a"])
    _make(kernels, "via_helper", {"x": np.ones((4, 2)), "m": 3}, ["a"])  # reads rows 1..3 of 4


def test_data_dependent_indices_are_checked_by_running_the_kernel(kernels):
    ok = _make(kernels, "lookup", {"x": np.arange(5.0), "idx": np.array([0, 4])}, ["a"])
    assert ok.logl(np.array([[1.0]]))[0] == pytest.approx(4.0)
    with pytest.raises(KernelIndexError, match=rf"^{kernels}:{at('x[int(')}: x\[int\(idx\[i\]\)\] reads 'x' out of "
                                               r"bounds \(index 5 is out of bounds"):
        _make(kernels, "lookup", {"x": np.arange(5.0), "idx": np.array([0, 5])}, ["a"])


def test_a_local_array_read_past_its_end_is_an_error_before_any_sampling(kernels):
    """Every data read is in range, so the static pass proves nothing wrong; the local array's read (numba would
    read the scratch beyond it: a run sampled a garbage likelihood silently) is caught by the checked run."""
    message = (rf"^{kernels}:{at('buf[x.shape[0]]')}: buf\[x.shape\[0\]\] reads 'buf' out of bounds \(index 5 is "
               r"out of bounds for axis 0 with size 5\)")
    with pytest.raises(KernelIndexError, match=message):
        _make(kernels, "local_past_end", {"x": np.arange(5.0)}, ["a"])


def test_check_gradient_reports_the_kernel_line_not_generated_code(kernels):
    L = _make(kernels, "lookup", {"x": np.arange(5.0), "idx": np.array([0, 4])}, ["a"])
    L._data64 = (L._data64[0][:3], L._data64[1])  # as if the data shrank after construction
    with pytest.raises(KernelIndexError, match=rf"^{kernels}:{at('x[int(')}:"):
        L.check_gradient(np.array([[1.0]]))


def _config(folder, kernel, n_params, x):
    np.save(folder / "x.npy", x)
    np.save(folder / "y.npy", 2.0 * x[: len(x)])
    params = "".join(f"  p{k}: {{prior: uniform, low: 0.1, high: 2.0}}\n" for k in range(n_params))
    path = folder / f"{kernel}.yaml"
    path.write_text(f"likelihood:\n  kernel: kernels.py:{kernel}\n  data: {{x: x.npy, y: y.npy}}\n"
                    f"params:\n{params}sampler: {{nlive: 20, seed: 1}}\nbackend: cpu\n")
    return path


@pytest.mark.parametrize("flags", [["--no-check"], []], ids=["no-check", "check"])
def test_the_cli_refuses_before_sampling_with_exit_2(tmp_path, kernels, capsys, flags):
    (tmp_path / "kernels.py").write_text(kernels.read_text() + textwrap.dedent('''

        def reads_three(theta, x, y):
            total = 0.0
            for i in range(x.shape[0]):
                total += -0.5 * (y[i] - theta[0] - theta[1] * x[i]) ** 2 / (theta[2] * theta[2])
            return total
    '''))
    x = np.linspace(0.0, 1.0, 10)
    assert main(["run", str(_config(tmp_path, "out_of_bounds", 2, x)), "--quiet", *flags]) == 2
    assert f"{tmp_path / 'kernels.py'}:{at('x[i + 1]')}: x[i + 1]" in capsys.readouterr().err
    assert main(["run", str(_config(tmp_path, "reads_three", 2, x)), "--quiet", *flags]) == 2
    err = capsys.readouterr().err
    assert ": params: " in err and "theta[2]" in err and f"{tmp_path / 'kernels.py'}:" in err


def test_params_error_is_a_kernel_index_error_naming_params():
    assert issubclass(ParamsError, KernelIndexError) and ParamsError.config_key == ("params",)


def test_a_reduction_over_arrays_of_different_lengths_is_an_error_before_any_sampling(kernels):
    """An outsider's battery: ``np.dot(X[i, :], theta)`` with one column more than params read theta past its end
    (and the process then died of heap corruption); ``np.sum(w * (y - a) ** 2)`` with ``w`` of length 1 summed
    one term where numpy broadcasts; ``np.dot(x, y)`` with ``y`` shorter read past it. The generated loop runs
    over the first operand's length, so the lengths must agree: said at the reduction's line from the shapes."""
    X, y = np.ones((8, 4)), np.zeros(8)
    with pytest.raises(ParamsError, match=rf"^{kernels}:{at('np.dot(X[i, :], theta)')}: np.dot\(X\[i, :\], theta\) "
                                          r"reduces arrays of different lengths \(X\[i, :\] has 4, theta has 3\).*"
                                          r"params names: a, b, c"):
        _make(kernels, "regression_rows", {"X": X, "y": y}, ["a", "b", "c"])
    assert _make(kernels, "regression_rows", {"X": X, "y": y}, list("abcd")).logl(np.zeros((1, 4)))[0] == 0.0
    with pytest.raises(KernelIndexError, match=r"w has 1, y has 5.*no broadcasting"):
        _make(kernels, "weighted", {"w": np.ones(1), "y": np.arange(5.0)}, ["a"])
    weighted = _make(kernels, "weighted", {"w": np.full(5, 2.0), "y": np.arange(5.0)}, ["a"])
    assert weighted.logl(np.array([[0.0]]))[0] == pytest.approx(-30.0)
    # one array in the reduction (m only gives a count): nothing to compare
    assert _make(kernels, "shifted_dot", {"x": np.ones(3), "m": np.ones(7)}, ["a"]).logl(
        np.array([[0.0]]))[0] == pytest.approx(-4.5)
    # a local array's length is not a data shape: the checked run finds the mismatch (numpy's error, at its line)
    with pytest.raises(KernelIndexError, match=rf"^{kernels}:{at('np.dot(buf, x)')}: .*different lengths"):
        _make(kernels, "local_dot", {"x": np.ones(2)}, ["a"])


RECURSION = '''
import numpy as np


def cum_local(theta, x):
    n = x.shape[0]
    s = np.zeros(n)
    s[0] = x[0] * theta[0]
    for i in range(1, n):
        s[i] = s[i - 1] * theta[1] + x[i] * theta[0]
    total = 0.0
    for i in range(n):
        total += -0.5 * (s[i] - 1.0) ** 2
    return total
'''


def test_a_kernel_storing_more_per_sample_than_any_batch_could_hold_is_refused_with_the_way_out(tmp_path,
                                                                                                 monkeypatch):
    """A recursion kept in a data-sized local array stores a copy of it per iteration, N^2 values: at N = 1e5 the
    first call died of numpy's "Unable to allocate 596 GiB" with no word of why."""
    from nestgrad.likelihoods import LikelihoodError, likelihood

    (tmp_path / "recursion.py").write_text(RECURSION)
    monkeypatch.setattr(likelihood, "MAX_SCRATCH_BYTES", 2 ** 20)  # the N^2 growth, at a size a test affords
    x = np.ones(1000)
    with pytest.raises(LikelihoodError, match=r"recursion.py:5:1: kernel 'cum_local' keeps [\d,]+ values .*report"
                                              r".*scalar variables"):
        Likelihood(f"{tmp_path / 'recursion.py'}:cum_local", ["a", "b"], {"x": x}, backend="python")
    Likelihood(f"{tmp_path / 'recursion.py'}:cum_local", ["a", "b"], {"x": x[:100]}, backend="python")


def test_integer_data_that_indexes_a_write_stays_integer(kernels):
    """`b[idx[i]] += ...`: idx indexes a local array's element that is written; it was made float for the checked
    Python run, whose IndexError (float indices) was then reported as a read of theta past its end."""
    idx = np.array([3, 0, 5, 3, 1, 3])
    likelihood = _make(kernels, "scatter", {"idx": idx})
    assert likelihood.logl(np.array([[0.7, 1.3]]))[0] == pytest.approx((1 + 4 + 6) * 0.7 * 1.3)


def test_a_negative_loop_index_into_theta_says_it_wraps(kernels):
    """theta[-1 - k] reads theta within its length: the message says the index wraps around, not that the kernel
    reads more parameters than params names."""
    with pytest.raises(KernelIndexError, match=r"theta\[-1 - k\] reads index -1 .*wraps around") as info:
        _make(kernels, "theta_from_the_end", {})
    assert "params names only" not in str(info.value)
