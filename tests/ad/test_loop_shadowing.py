"""A loop variable that reuses a name or is reassigned in its loop: Python's meaning with gradients that agree
with finite differences; where the name is read after that loop (which kernels cannot do), one message at the
read naming the name, what it shadowed and the loop (before: "name 'i' is not defined here ... assign it
before", although it was assigned before)."""
import os

import numpy as np
import pytest

from nestgrad import ad
import ad_test_kernels.shadowing as k

KERNEL_FILE = os.path.realpath(k.__file__)
X = np.linspace(0.5, 2.0, 5)
THETA = np.array([0.3, 0.7])

WORKING = [
    (k.loop_variable_named_like_data, (X, 4)),
    (k.loop_variable_is_its_own_bound, (X, 4)),
    (k.loop_variable_reassigned, (X,)),
    (k.loop_variable_reset, (X,)),
    (k.loop_variable_made_a_float, (X,)),
    (k.inner_loop_reuses_outer_variable, (X,)),
    (k.scalar_data_reassigned_in_loop, (X, 1.5)),
]


@pytest.mark.parametrize("fn, data", WORKING, ids=[w[0].__name__ for w in WORKING])
def test_reused_loop_variables_follow_python_and_differentiate_correctly(fn, data):
    d = ad.differentiate(fn)
    grad = np.zeros(2)
    assert d.value_and_grad(THETA.copy(), *data, grad) == pytest.approx(fn(THETA.copy(), *data), rel=1e-12)
    check = ad.check_gradient(fn, THETA.copy(), *data)
    assert check.ok, str(check)


def _line(marker):
    with open(KERNEL_FILE) as f:
        hits = [n for n, line in enumerate(f, start=1) if line.rstrip().endswith(f"# <- {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


READ_AFTER = [
    (k.data_read_after_shadowing_loop, "n", "read_data", "loop_data", "kernel argument 'n'"),
    (k.theta_read_after_shadowing_loop, "theta", "read_theta", "loop_theta", "kernel argument 'theta'"),
    (k.local_read_after_shadowing_loop, "i", "read_local", "loop_local", "variable 'i'"),
    (k.outer_index_read_after_inner_loop, "i", "read_outer", "loop_inner", "enclosing loop's variable 'i'"),
    (k.loop_variable_read_after_its_loop, "i", "read_plain", "loop_plain", None),
    # before: the module's N_TERMS = 10 was read, a silently wrong value and gradient (Python reads the index, 2)
    (k.module_constant_read_after_shadowing_loop, "N_TERMS", "read_module", "loop_module",
     "module-level value 'N_TERMS'"),
]


@pytest.mark.parametrize("fn, name, read, loop, shadowed", READ_AFTER, ids=[r[0].__name__ for r in READ_AFTER])
def test_a_loop_variable_read_after_its_loop_is_named_with_the_loop(fn, name, read, loop, shadowed):
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate(fn)
    err, text = info.value, str(info.value)
    assert os.path.realpath(err.filename) == KERNEL_FILE and err.lineno == _line(read), text
    assert f"{name!r} " in text and f"the loop at {_line(loop)}:" in text, text
    assert "is not defined here" not in text, text
    if shadowed:
        assert f"reuses the name of the {shadowed}" in text and "give that loop its own variable" in text, text
    else:
        assert "cannot be read after it" in text and f"`last = {name}`" in text, text


def test_a_local_named_like_a_module_constant_is_never_the_constant():
    """Python's rule: a name the function assigns is local everywhere in it, so reading it before the assignment
    is an error (UnboundLocalError), not the module's value (which the kernel silently read before)."""
    fn = k.module_constant_read_before_local_assignment
    with pytest.raises(UnboundLocalError):
        fn(THETA, X)
    with pytest.raises(ad.KernelError) as info:
        ad.differentiate(fn)
    assert info.value.lineno == _line("read_before_local"), str(info.value)
    assert "the module-level 'SCALE' is not read, since this function assigns 'SCALE'" in str(info.value)
