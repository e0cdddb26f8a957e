"""Data loading, shape checks against the kernel's indexing, casting, and kernel file references."""
import math
import re
import textwrap
import warnings

import numpy as np
import pytest

from nestgrad.likelihoods import DataError, Likelihood, LikelihoodError
from nestgrad.likelihoods.likelihood import NonFiniteDataWarning
from nestgrad.likelihoods.builtin import gaussian4d

KERNEL = textwrap.dedent('''
    import math


    def line(theta, x, y, idx, scale):
        total = 0.0
        for i in range(x.shape[0]):
            r = (y[int(idx[i])] - theta[0] * x[i] - theta[1]) / scale
            total += r * r
        return -0.5 * total


    def implicit(theta, x, idx):
        total = 0.0
        for i in range(idx.shape[0]):
            total += theta[0] * x[idx[i]]
        return total


    def counted(theta, x):
        total = 0.0
        for i in range(int(x[0])):
            total += theta[0] * x[1]
        return total
''')


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(KERNEL)
    return path


def _data(n=6):
    rng = np.random.default_rng(0)
    x = rng.normal(size=n)
    return x, 2.0 * x + 1.0 + 0.1 * rng.normal(size=n)


def _python_line(theta, x, y, scale):
    return -0.5 * float(np.sum(((y - theta[0] * x - theta[1]) / scale) ** 2))


@pytest.mark.parametrize("fmt", ["npy", "npz_key", "npz_single", "csv", "txt"])
def test_each_file_format_round_trips(tmp_path, kernel_file, fmt):
    x, y = _data()
    if fmt == "npy":
        np.save(tmp_path / "x.npy", x)
        spec = "x.npy"
    elif fmt == "npz_key":
        np.savez(tmp_path / "d.npz", x=x, other=y)
        spec = "d.npz:x"
    elif fmt == "npz_single":
        np.savez(tmp_path / "one.npz", values=x)
        spec = "one.npz"
    elif fmt == "csv":
        np.savetxt(tmp_path / "x.csv", x, delimiter=",", header="x", comments="")
        spec = "x.csv"
    else:
        np.savetxt(tmp_path / "x.txt", x)
        spec = "x.txt"
    data = {"x": spec, "y": y.tolist(), "idx": np.arange(6), "scale": 0.5}
    L = Likelihood(f"{kernel_file}:line", ["a", "b"], data, backend="python", data_dir=tmp_path)
    theta = np.array([[1.5, 0.3], [2.0, 1.0]])
    expected = [_python_line(t, x, y, 0.5) for t in theta]
    assert np.allclose(L.logl(theta), expected, rtol=1e-12)


def test_index_data_stays_integer_and_float_data_is_cast(kernel_file):
    x, y = _data()
    L = Likelihood((kernel_file, "line"), ["a", "b"], {"x": x, "y": y, "idx": np.arange(6.0), "scale": 2},
                   backend="python", dtype="float32")
    x_cast, y_cast, idx_cast, scale_cast = L.data
    assert x_cast.dtype == np.float32 and y_cast.dtype == np.float32
    assert idx_cast.dtype.kind == "i" and np.isscalar(scale_cast) and scale_cast.dtype == np.float32
    compiled = Likelihood((kernel_file, "line"), ["a", "b"], {"x": x, "y": y, "idx": np.arange(6), "scale": 2},
                          backend="cpu", dtype="float32")
    theta = np.array([[1.5, 0.3], [2.0, 1.0]], dtype=np.float32)
    assert np.allclose(compiled.logl(theta), L.logl(theta), rtol=1e-5)


INDEX_VIA_VARIABLE = """
def gather(theta, x, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        j = int(idx[i])
        s += theta[0] * x[j]
    return s
"""


def test_index_data_read_into_a_variable_stays_integer(tmp_path):
    """``j = int(idx[i]); x[j]``: cast to float32 with the other data, idx = 16777217 read x[16777216]."""
    (tmp_path / "gather.py").write_text(INDEX_VIA_VARIABLE)
    x = np.zeros(2 ** 24 + 2)
    x[2 ** 24 + 1] = 1.0
    L = Likelihood(f"{tmp_path / 'gather.py'}:gather", ["a"], {"x": x, "idx": np.array([2 ** 24 + 1])},
                   backend="cpu", dtype="float32")
    assert L.data[1].dtype.kind == "i"
    assert L.logl(np.array([[2.0]], np.float32))[0] == 2.0


def test_nan_in_data_is_named_with_its_count_and_first_index(kernel_file):
    """NaN data make the likelihood NaN wherever the kernel reads them; before this warning a run only said that
    too few prior draws had a finite likelihood, and blamed the prior ranges."""
    x, y = _data()
    y[[2, 4]] = np.nan
    with pytest.warns(NonFiniteDataWarning, match=r"data key 'y': 2 of 6 values are NaN or inf \(the first at index 2\)"):
        L = Likelihood((kernel_file, "line"), ["a", "b"], {"x": x, "y": y, "idx": np.arange(6), "scale": 2},
                       backend="python")
    assert np.isnan(L.logl(np.array([[1.5, 0.3]])))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonFiniteDataWarning)  # finite data: no warning
        Likelihood((kernel_file, "line"), ["a", "b"], {"x": x, "y": np.nan_to_num(y), "idx": np.arange(6),
                                                      "scale": 2}, backend="python")


def test_wrong_dimensions_name_the_key_and_the_kernel_line(kernel_file):
    x, y = _data()
    with pytest.raises(DataError) as err:
        Likelihood(f"{kernel_file}:line", ["a", "b"], {"x": x[None, :], "y": y, "idx": np.arange(6), "scale": 1.0})
    message = str(err.value)
    assert err.value.key == "x" and "'x'" in message and f"{kernel_file}:8:" in message and "(1, 6)" in message
    with pytest.raises(DataError, match="'scale'.*scalar"):
        Likelihood(f"{kernel_file}:line", ["a", "b"], {"x": x, "y": y, "idx": np.arange(6), "scale": [1.0, 2.0]})
    with pytest.raises(DataError, match=r"'idx'.*non-integers \(write int"):
        Likelihood(f"{kernel_file}:implicit", ["a"], {"x": x, "idx": np.full(6, 0.5)})


def test_data_read_through_int_may_hold_non_integers_and_large_numbers(kernel_file):
    """``y[int(idx[i])]`` truncates on purpose (an outsider's binned data were refused as "non-integers"), and an
    array whose first element counts a loop and whose second is 1e20 was cast to int64 whole (-4e19 for 4.5e20)."""
    x, y = _data()
    idx = np.array([0.5, 1.7, 2.2, 0.0, 5.9, 3.3])
    theta = np.array([1.5, 0.3])
    for backend in ("python", "cpu"):
        L = Likelihood(f"{kernel_file}:line", ["a", "b"], {"x": x, "y": y, "idx": idx, "scale": 2.0},
                       backend=backend)
        assert L.logl(theta[None])[0] == pytest.approx(_python_line(theta, x, y[idx.astype(int)], 2.0), rel=1e-12)
        counted = Likelihood(f"{kernel_file}:counted", ["a"], {"x": np.array([3.0, 1e20])}, backend=backend)
        assert counted.logl(np.array([[1.5]]))[0] == pytest.approx(3 * 1.5 * 1e20, rel=1e-12)
    with pytest.raises(DataError, match=r"'idx'.*holds 1e\+20, beyond the 64-bit integers"):
        Likelihood(f"{kernel_file}:implicit", ["a"], {"x": x, "idx": np.full(6, 1e20)})


def test_missing_and_extra_keys_are_named(kernel_file):
    x, y = _data()
    with pytest.raises(DataError, match="'idx'.*no entry"):
        Likelihood(f"{kernel_file}:line", ["a", "b"], {"x": x, "y": y, "scale": 1.0})
    with pytest.raises(DataError, match="'z'.*not an argument"):
        Likelihood(f"{kernel_file}:line", ["a", "b"], {"x": x, "y": y, "idx": np.arange(6), "scale": 1.0, "z": 1})


def test_missing_files_and_npz_keys_are_named(tmp_path):
    np.savez(tmp_path / "two.npz", a=np.zeros((2, 5)), b=np.zeros((2, 5)))
    params = gaussian4d.PARAMS
    with pytest.raises(DataError, match="'x'.*no array 'c'.*a, b"):
        Likelihood(gaussian4d.kernel, params, {"x": "two.npz:c"}, data_dir=tmp_path)
    with pytest.raises(DataError, match="'x'.*holds 2 arrays"):
        Likelihood(gaussian4d.kernel, params, {"x": "two.npz"}, data_dir=tmp_path)
    with pytest.raises(DataError, match="'x'.*does not exist"):
        Likelihood(gaussian4d.kernel, params, {"x": "nothere.npy"}, data_dir=tmp_path)
    (tmp_path / "data").mkdir()
    with pytest.raises(DataError, match="'x'.*data' is a folder; name a data file in it"):
        Likelihood(gaussian4d.kernel, params, {"x": "data"}, data_dir=tmp_path)


def test_unsupported_file_types_and_non_numbers_are_named(tmp_path):
    (tmp_path / "x.json").write_text("[1, 2]")
    with pytest.raises(DataError, match=r"'x'.*unsupported data file type '.json'.*\.npy, \.npz, \.csv"):
        Likelihood(gaussian4d.kernel, gaussian4d.PARAMS, {"x": "x.json"}, data_dir=tmp_path)
    np.save(tmp_path / "words.npy", np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(DataError, match="'x'.*expected numbers"):
        Likelihood(gaussian4d.kernel, gaussian4d.PARAMS, {"x": "words.npy"}, data_dir=tmp_path)
    np.save(tmp_path / "renamed.npy", np.ones((2, 3)))
    (tmp_path / "renamed.npy").rename(tmp_path / "renamed.dat")  # text by its extension, binary inside
    with pytest.raises(DataError, match=r"'x'.*renamed\.dat' as whitespace-separated text: it is binary; it is a "
                                        r"numpy array file: name it \.npy"):
        Likelihood(gaussian4d.kernel, gaussian4d.PARAMS, {"x": "renamed.dat"}, data_dir=tmp_path)


def test_kernel_file_that_fails_to_import_names_its_line(tmp_path):
    from nestgrad.likelihoods.kernel_source import KernelImportError

    path = tmp_path / "fails.py"
    path.write_text("import math\n\nTABLE = [1, 2][5]\n\n\ndef f(theta):\n    return theta[0]\n")
    with pytest.raises(KernelImportError, match=rf"importing {path}:3 failed: IndexError"):
        Likelihood(f"{path}:f", ["a"], {})


def test_a_kernel_file_imports_its_sibling_modules(tmp_path):
    """As ``python kernel.py`` would: an outsider's ``from helper import w`` failed unless PYTHONPATH named the
    folder. The folder is on ``sys.path`` only while the file runs."""
    import sys

    folder = tmp_path / "model_with_helper"
    folder.mkdir()
    (folder / "weights_for_kernel.py").write_text("def w(r):\n    return 3.0 * r * r\n")
    (folder / "model.py").write_text("from weights_for_kernel import w\n\n\ndef k(theta, y):\n"
                                     "    return -0.5 * w(theta[0] - y)\n")
    L = Likelihood(f"{folder / 'model.py'}:k", ["a"], {"y": 1.0}, backend="python")
    value, grad = L.logl_and_grad(np.array([[2.0]]))
    assert value[0] == -1.5 and grad[0, 0] == -3.0  # the helper is differentiated too
    assert str(folder) not in sys.path


def test_two_kernel_files_each_get_their_own_sibling_module(tmp_path):
    """An outsider ran two configs in one process, each kernel beside its own ``helpers.py`` (``centre()`` 1.0 and
    5.0): the second kernel imported the first one's ``helpers`` (already in ``sys.modules``) and sampled the first
    likelihood, with its digest. Each now imports its own, as ``python kernel.py`` would; an installed package of a
    sibling's name (numpy) is not replaced."""
    values = []
    for run, centre in (("first", 1.0), ("second", 5.0)):
        folder = tmp_path / run
        folder.mkdir()
        (folder / "helpers_of_a_kernel.py").write_text(f"def centre():\n    return {centre!r}\n")
        (folder / "numpy.py").write_text("raise ImportError('the sibling numpy.py was imported')\n")
        (folder / "model.py").write_text("from helpers_of_a_kernel import centre\n\n\ndef k(theta, w):\n"
                                         "    r = (theta[0] - centre()) / w\n    return -0.5 * r * r\n")
        L = Likelihood(f"{folder / 'model.py'}:k", ["x"], {"w": 1.0}, backend="python")
        value, grad = L.logl_and_grad(np.array([[0.0]]))
        values.append((value[0], grad[0, 0]))
    assert values == [(-0.5, 1.0), (-12.5, 5.0)]
    assert np.__file__ != str(tmp_path / "second" / "numpy.py")


def test_theta_read_beyond_params_is_named(kernel_file):
    with pytest.raises(LikelihoodError, match=r"gaussian4d.py:\d+:\d+: .*theta\[3\].*3 parameter"):
        Likelihood(gaussian4d.kernel, ["mu1", "mu2", "sigma1"], {"x": np.zeros((2, 3))})


def test_bad_kernel_references_are_named(tmp_path, kernel_file):
    with pytest.raises(LikelihoodError, match="no function 'nope'.*line"):
        Likelihood(f"{kernel_file}:nope", ["a"], {})
    with pytest.raises(LikelihoodError, match="does not exist"):
        Likelihood(f"{tmp_path}/missing.py:f", ["a"], {})
    broken = tmp_path / "broken.py"
    broken.write_text("def f(theta):\n    return theta[0] +\n")
    with pytest.raises(LikelihoodError, match=r"broken.py:2:\d+: syntax error"):
        Likelihood(f"{broken}:f", ["a"], {})


def test_kernel_errors_from_ad_point_into_the_users_file(tmp_path):
    from nestgrad import ad

    path = tmp_path / "unsupported.py"
    path.write_text("def f(theta):\n    total = 0.0\n    while total < 1.0:\n        total += theta[0]\n"
                    "    return total\n")
    with pytest.raises(ad.KernelError) as err:
        Likelihood(f"{path}:f", ["a"], {})
    assert str(err.value).startswith(f"{path}:3:")


def test_params_must_be_a_list_of_names():
    with pytest.raises(LikelihoodError, match="params"):
        Likelihood(gaussian4d.kernel, "mu1 mu2 sigma1 sigma2", {"x": np.zeros((2, 3))})


@pytest.mark.parametrize("text, expected", [
    ("y\n0.1\n-0.2\n", [0.1, -0.2]),                       # a header
    ('# measured\n\n"x","y"\n1,2\n3,4\n', [[1, 2], [3, 4]]),  # comments and blank lines before a quoted header
    ("1O.0\n0.1\n-0.2\n", "line 1, column 1: '1O.0' is not a number"),  # a typo in the first row, not a header
    ("NA\n0.1\n", "line 1, column 1: 'NA' is not a number"),
    ("x,y\n1,2\n3,4\n5,oops\n", "line 4, column 2: 'oops' is not a number"),  # file lines, the header counted
    ("1,2\n3\n", "line 2 has 1 values, line 1 has 2"),
    # A first row of infinities or NaN is data (an outsider's such row was dropped as a header, silently).
    ("inf,-inf\n1,2\n", [[math.inf, -math.inf], [1, 2]]),
    ("-Infinity\n2\n", [-math.inf, 2]),
    # A byte-order mark (Excel's "CSV UTF-8") before a header or a first value.
    ("\ufeffx,y\n1,2\n3,4\n", [[1, 2], [3, 4]]),
    ("\ufeff1,2\n3,4\n", [[1, 2], [3, 4]]),
])
def test_text_tables_take_a_header_only_when_it_is_names_and_say_the_file_line(tmp_path, text, expected):
    """An outsider's CSV whose first value was typed '1O.0' lost that row silently (any first line that failed to
    parse was skipped as a header), and errors named numpy's row count after the skipped line."""
    from nestgrad.likelihoods.data import load_value

    (tmp_path / "y.csv").write_text(text)
    if isinstance(expected, str):
        with pytest.raises(DataError, match=re.escape(expected)):
            load_value("y", str(tmp_path / "y.csv"))
    else:
        assert load_value("y", str(tmp_path / "y.csv")).tolist() == expected


def test_a_first_row_of_nan_is_data_not_a_header(tmp_path):
    from nestgrad.likelihoods.data import load_value

    (tmp_path / "y.txt").write_text("nan nan\n2.0 3.0\n")
    values = load_value("y", str(tmp_path / "y.txt"))
    assert values.shape == (2, 2) and np.isnan(values[0]).all() and values[1].tolist() == [2.0, 3.0]


@pytest.mark.parametrize("name, write, expected", [
    ("x.npy", lambda p: p.write_bytes(b""), r"is empty \(0 bytes\)"),  # was numpy's bare EOFError traceback
    ("x.npz", lambda p: p.write_bytes(b""), r"is empty \(0 bytes\)"),
    ("x.csv", lambda p: p.write_text(""), r"is empty \(0 bytes\)"),
    ("x.npy", lambda p: np.save(p, np.zeros(0)), r"holds no values \(an array of shape \(0,\)\)"),
    ("x.npy", lambda p: np.save(p, np.zeros((2, 0))), r"holds no values \(an array of shape \(2, 0\)\)"),
    ("x.npz", lambda p: np.savez(p), "is an empty archive"),
    ("x.csv", lambda p: p.write_text("a,b\n# no rows\n"), "holds no values"),  # a header alone
    ("x.txt", lambda p: p.write_text("# only a comment\n"), "holds no values"),
])
def test_an_empty_data_file_is_named_as_empty(tmp_path, name, write, expected):
    """An outsider's 0-byte .npy ended in numpy's EOFError; a .npy of shape (0,) said only 'is empty (shape (0,))'
    without the file; an empty .csv passed numpy's warning "input contained no data"."""
    write(tmp_path / name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning on the way
        with pytest.raises(DataError, match=rf"data key 'x': file '.*{re.escape(name)}' {expected}"):
            Likelihood(gaussian4d.kernel, gaussian4d.PARAMS, {"x": name}, data_dir=tmp_path)


def _whole_array_kernel(theta, x):
    return -0.5 * (x - theta[0]) ** 2


def test_an_array_given_for_an_argument_used_as_a_number_gets_the_loop_to_write():
    """`x - theta[0]` meant for every element of x: the kernel reads x as a number, so an array for it is refused
    at its line, with the element-by-element loop that does what was meant."""
    with pytest.raises(DataError) as info:
        Likelihood(_whole_array_kernel, ["mu"], {"x": np.arange(5.0)}, backend="python")
    message = str(info.value)
    line = _whole_array_kernel.__code__.co_firstlineno + 1
    assert f"data key 'x': the kernel uses 'x' as a scalar ({__file__}:{line}:" in message, message
    assert "the value has shape (5,)" in message and "index it (x[i])" in message, message
    assert "for i in range(x.shape[0])" in message, message
    assert Likelihood(_whole_array_kernel, ["mu"], {"x": 2.0}, backend="python").logl(np.array([[1.0]]))[0] == -0.5
