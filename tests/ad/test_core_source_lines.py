"""Generated code names the user's line each statement comes from (``# file:line`` above it), and
``ad.source_line`` maps a line of generated code back to that user line."""
import importlib.util
import re
import sys

import numpy as np
import pytest

from nestgrad import ad

KERNEL = '''\
import math

from nestgrad.ad import special


def helper(u, v):
    w = u * v
    return w / (1.0 + w * w)


def kern(theta, x):
    a = theta[0] * 2.0
    b = math.exp(theta[1])
    s = 0.0
    for i in range(x.shape[0]):
        s += math.log(1.0 + a * a * x[i])
    h = helper(a, b)
    g = special.digamma(b)
    return s * b + h + g / x[0]
'''
LINES = KERNEL.splitlines()
COMMENT = re.compile(r"\s*# (.+):(\d+)")


def line_of(text):
    """1-based line of the kernel file that contains ``text``."""
    (k,) = [k for k, line in enumerate(LINES, 1) if text in line]
    return k


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    path = tmp_path_factory.mktemp("source_lines") / "two_functions.py"
    path.write_text(KERNEL)
    spec = importlib.util.spec_from_file_location("ad_source_lines_kernel", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return str(path), module.kern, ad.differentiate(module.kern)


def statement_lines(source):
    """(1-based line number, text) of every generated statement inside a function body."""
    out, in_function = [], False
    for k, line in enumerate(source.splitlines(), 1):
        if line.startswith("def "):
            in_function = True
            continue
        if not line.startswith("    "):
            in_function = False
            continue
        text = line.strip()
        if in_function and text and not text.startswith(('"""', "#")):
            out.append((k, text))
    return out


def origins(source, pattern):
    """The user lines that generated statements matching the regular expression ``pattern`` come from."""
    return {ad.source_line(source, k) for k, text in statement_lines(source) if re.search(pattern, text)}


@pytest.mark.parametrize("which", ["source", "primal_source"])
def test_every_statement_maps_into_the_kernel_or_its_helper(kernel, which):
    path, _, d = kernel
    source = getattr(d, which)
    user_lines = set(range(line_of("def helper"), line_of("return w /") + 1)) | set(
        range(line_of("def kern"), len(LINES) + 1))
    found = [ad.source_line(source, k) for k, _ in statement_lines(source)]
    assert found and all(f is not None and f[0] == path and f[1] in user_lines for f in found), found


def test_comments_point_at_the_lines_the_statements_come_from(kernel):
    path, _, d = kernel
    for source in (d.primal_source, d.source):
        assert origins(source, r"math\.exp\(") == {(path, line_of("math.exp"))}
        assert origins(source, r"^(?!digamma)\w+ = math\.log\(") == {(path, line_of("math.log"))}
        assert origins(source, r"^for i__") == {(path, line_of("for i in range"))}
        # the inlined helper's statements name the helper's own lines
        assert origins(source, r"^helper\d+_w__\d+ = ") == {(path, line_of("w = u * v"))}
        # ad.special is not the user's code: its inlined body names the user's call
        assert origins(source, r"^digamma\d+_") == {(path, line_of("special.digamma"))}
    # the reverse sweep: the adjoint of log(1 + a*a*x[i]) divides by its argument, on the user's line
    assert (path, line_of("math.log")) in origins(d.source, r"_b = |_nz_mul\(")


def test_error_raised_in_generated_code_maps_to_the_kernel_line(kernel):
    path, kern, d = kernel
    theta, x = np.array([0.3, 0.2]), np.array([0.0, 1.0, 2.0])
    generated = d.cache_files[0]  # the module d.value runs from: its text is d.source
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError) as info:
        d.value(theta, x)
    frames = [tb for tb in _frames(info.value.__traceback__) if tb.tb_frame.f_code.co_filename == generated]
    assert frames
    assert ad.source_line(d.source, frames[-1].tb_lineno) == (path, line_of("g / x[0]"))
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        kern(theta, x)  # the kernel itself fails there too


def _frames(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_compiled_module_carries_the_same_comments(kernel):
    path, _, d = kernel
    text = d.jit().source
    assert origins(text, r"math\.exp\(") == {(path, line_of("math.exp"))}


@pytest.mark.parametrize("which", ["source", "primal_source"])
def test_comments_stand_on_their_own_lines_one_per_run_of_statements(kernel, which):
    source = getattr(kernel[2], which)
    lines = source.splitlines()
    comments = [k for k, line in enumerate(lines) if COMMENT.fullmatch(line)]
    statements = statement_lines(source)
    assert comments and len(comments) < len(statements)
    assert all(not COMMENT.fullmatch(lines[k + 1]) for k in comments)  # never two in a row
    assert all("#" not in text for _, text in statements)  # none at the end of a code line


def test_lines_outside_function_bodies_map_to_nothing(kernel):
    source = kernel[2].source
    lines = source.splitlines()
    assert ad.source_line(source, 1) is None  # module header
    first_def = next(k for k, line in enumerate(lines, 1) if line.startswith("def "))
    assert ad.source_line(source, first_def) is None
    assert ad.source_line(source, first_def + 1) is None  # the docstring, before the first statement
