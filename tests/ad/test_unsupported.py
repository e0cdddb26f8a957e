"""Every unsupported construct is rejected at differentiation time with an exact ``file:line:col:`` position.

Expected positions are not hard-coded: the line is found from the marker comment ``# <- name`` in
kernels/unsupported.py, the column from the ``ast`` nodes of the offending kind on that line (0- or 1-based,
whichever ad/errors.py documents).
"""
import ast
import os

import pytest

from nestgrad import ad
import ad_test_kernels.unsupported as bad

KERNEL_FILE = os.path.realpath(bad.__file__)
with open(KERNEL_FILE) as _f:
    SOURCE = _f.read()
TREE = ast.parse(SOURCE)

# (kernel, marker on the offending line, ast node kinds the error may point at)
CASES = [
    ("write_into_data", "data_write", (ast.Assign, ast.Subscript)),
    ("augmented_write_into_data", "data_augwrite", (ast.AugAssign, ast.Subscript)),
    ("write_into_active", "active_write", (ast.Assign, ast.Subscript)),
    ("no_rule_numpy_ufunc", "ufunc_call", (ast.Call, ast.Attribute)),
    ("no_rule_c_function", "c_call", (ast.Call, ast.Attribute)),
    ("numpy_random", "np_random", (ast.Call, ast.Attribute)),
    ("stdlib_random", "random", (ast.Call, ast.Attribute)),
    ("string_constant", "string", (ast.Constant, ast.Assign)),
    ("recursion", "recursion", (ast.Call, ast.Name)),
    ("recursion_through_helper", "helper_recursion", (ast.Call, ast.Name)),
    ("while_loop", "while", (ast.While,)),
    ("continue_in_loop", "continue", (ast.Continue,)),
    ("return_in_loop", "loop_return", (ast.Return,)),
    ("lambda_expression", "lambda", (ast.Lambda,)),
    ("lambda_helper", "lambda_helper", (ast.Call,)),
    ("list_comprehension", "comprehension", (ast.ListComp,)),
    ("generator_expression", "generator", (ast.GeneratorExp, ast.Call, ast.Name)),
    ("attribute_assignment", "attribute_assign", (ast.Assign, ast.Attribute)),
    ("global_list", "global_list", (ast.Name, ast.Subscript)),
    ("global_dict", "global_dict", (ast.Name, ast.Subscript, ast.Constant)),
    ("global_array", "global_array", (ast.Name, ast.Subscript)),
    ("nested_function", "nested_def", (ast.FunctionDef,)),
    ("try_except", "try", (ast.Try,)),
    ("iterate_over_array", "iterate_array", (ast.For, ast.Name)),
    ("enumerate_over_array", "enumerate_array", (ast.Call,)),
    ("zip_over_arrays", "zip_arrays", (ast.Call,)),
    ("enumerate_zip_nested_target", "nested_loop_target", (ast.Tuple,)),
    ("array_slice", "slice", (ast.Slice, ast.Subscript)),
    ("keyword_argument", "keyword_call", (ast.Call, ast.keyword)),
    ("global_statement", "global_stmt", (ast.Global,)),
    ("f_string", "fstring", (ast.JoinedStr,)),
    ("discarded_call", "discarded_call", (ast.Expr, ast.Call)),
    ("sum_with_axis", "sum_axis", (ast.Call,)),
    ("row_outside_reduction", "row_alone", (ast.Subscript,)),
    ("reduction_of_scalars", "sum_scalar", (ast.Call,)),
    ("sliced_range_in_reduction", "sum_slice", (ast.Slice,)),
]


def marker_line(marker):
    hits = [n for n, line in enumerate(SOURCE.splitlines(), start=1) if line.rstrip().endswith(f"# <- {marker}")]
    assert len(hits) == 1, f"marker {marker!r} must appear exactly once in {KERNEL_FILE}"
    return hits[0]


def node_columns(line, kinds):
    """0-based start columns of the nodes of the given kinds that start on ``line``."""
    return {n.col_offset for n in ast.walk(TREE) if isinstance(n, kinds) and getattr(n, "lineno", None) == line}


def test_errors_form_a_hierarchy():
    assert issubclass(ad.UnsupportedError, ad.KernelError)
    assert issubclass(ad.KernelError, Exception)


@pytest.mark.parametrize("name, marker, kinds", CASES, ids=[c[0] for c in CASES])
def test_unsupported_construct_is_rejected_with_position(name, marker, kinds):
    fn = getattr(bad, name)
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate(fn, wrt="theta")
    err = info.value
    line = marker_line(marker)
    columns = node_columns(line, kinds)
    assert columns, f"test bug: no {kinds} node on line {line}"
    assert os.path.realpath(err.filename) == KERNEL_FILE, f"{err.filename!r} is not the kernel file"
    assert err.lineno == line, f"{name}: line {err.lineno}, expected {line} (marker {marker!r}): {err}"
    assert err.col in columns or err.col - 1 in columns, (
        f"{name}: col {err.col}, expected one of {sorted(columns)} (0-based) or +1 (1-based): {err}")
    text = str(err)
    prefix = f"{err.filename}:{err.lineno}:{err.col}:"
    assert text.startswith(prefix), f"{text!r} does not start with {prefix!r}"
    assert len(text) > len(prefix) + 10, "the message must say what is wrong"


def test_column_convention_is_consistent():
    """All rejected constructs use one convention: either every column is 0-based or every one 1-based."""
    conventions = {0, 1}
    for name, marker, kinds in CASES:
        with pytest.raises(ad.UnsupportedError) as info:
            ad.differentiate(getattr(bad, name), wrt="theta")
        columns = node_columns(marker_line(marker), kinds)
        conventions &= {base for base in (0, 1) if info.value.col - base in columns}
    assert conventions, "columns mix 0-based and 1-based conventions"


def test_source_text_errors_name_the_given_file():
    text = (
        "import math\n"
        "\n"
        "def k(theta, x):\n"
        "    s = 0.0\n"
        "    i = 0\n"
        "    while i < 3:\n"
        "        s += theta[0] * x[i]\n"
        "        i += 1\n"
        "    return s\n"
    )
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate_source(text, "k", wrt="theta", filename="user_kernel.py")
    err = info.value
    assert err.filename == "user_kernel.py"
    assert err.lineno == 6
    assert err.col in (4, 5)
    assert str(err).startswith(f"user_kernel.py:6:{err.col}:")


# User mistakes that are not "unsupported constructs" still give one KernelError naming the place.
MISTAKES = [
    # (id, kernel text, wrt, (line, 0-based col) of the offending spot or None for "the def line")
    ("undefined_name", "def k(theta, x):\n    s = theta[0] * y_undefined\n    return s\n", "theta", (2, 19)),
    ("assigned_in_one_branch",
     "def k(theta, x):\n    if theta[0] > 0.0:\n        z = 1.0\n    return theta[0] * z\n", "theta", (4, 22)),
    ("syntax_error", "def k(theta, x):\n    s = theta[0] +\n    return s\n", "theta", (2, None)),
    ("wrt_not_an_argument", "def k(theta, x):\n    return theta[0] * x[0]\n", "phi", (1, None)),
    ("returns_an_array", "def k(theta, x):\n    return theta\n", "theta", (2, None)),
    ("active_value_as_loop_bound",
     "def k(theta, x):\n    s = 0.0\n    for j in range(theta[0]):\n        s += x[j]\n    return s\n", "theta",
     (3, None)),
]


@pytest.mark.parametrize("name, text, wrt, where", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_user_mistakes_raise_kernel_error_with_position(name, text, wrt, where):
    with pytest.raises(ad.KernelError) as info:
        ad.differentiate_source(text, "k", wrt=wrt, filename="mistake.py")
    err = info.value
    line, col = where
    assert err.filename == "mistake.py"
    assert err.lineno == line, str(err)
    if col is not None:
        assert err.col in (col, col + 1), str(err)
    assert str(err).startswith(f"mistake.py:{err.lineno}:{err.col}:")


def test_module_level_array_is_named_and_the_fix_given():
    """A module-level array read in the kernel (a constant table) is data: the message names it and says so."""
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate(bad.global_array, wrt="theta")
    assert "'COEFFICIENTS' is a value from outside the kernel (module level" in str(info.value) and "pass it as data" in str(info.value)


@pytest.mark.parametrize("name, loop, reads", [
    ("iterate_over_array", "for i in range(x.shape[0]):", "v = x[i]"),
    ("enumerate_over_array", "for i in range(x.shape[0]):", "xi = x[i]"),
    ("zip_over_arrays", "for i in range(x.shape[0]):", "xi = x[i]; yi = y[i]")])
def test_loops_over_arrays_get_the_index_loop_to_write(name, loop, reads):
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate(getattr(bad, name), wrt="theta")
    assert f"write `{loop}` and read `{reads}` in the body" in str(info.value), str(info.value)


def test_a_lambda_as_the_kernel_is_refused_at_its_line():
    square = lambda theta: theta[0] * theta[0]  # noqa: E731
    with pytest.raises(ad.UnsupportedError, match="lambdas are not supported") as caught:
        ad.differentiate(square)
    assert caught.value.lineno == square.__code__.co_firstlineno and caught.value.filename == __file__
