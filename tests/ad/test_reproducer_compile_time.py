"""Issue 14, class 6: compile time of long straight-line kernels stays about linear in their length.

The reproducer (swaps, an if/else and a max per block) did not finish compiling in 15 minutes at 40 blocks: numba's
compile time grows with (branches x variables), and the generated code had a branch per adjoint product.  No
timing asserts: the 10-block kernel runs in the fast suite, the 40-block one (about 20 s) is marked slow.
"""
import numpy as np
import pytest

from nestgrad import ad

RNG = np.random.default_rng(146)


_SWAP_BLOCK = """    a = a * 0.999 + b * 0.01
    b = b - 0.01 * math.sin(a * c)
    c = c + 0.001 * a * b
    if a > b:
        a = a - 0.001 * c
    else:
        b = b + 0.001 * c
    a, b = b * 1.0001, a
    c = max(c, a * 0.5)
"""


def _swaps(repetitions):
    text = ("import math\n\n\ndef swaps(theta):\n    a, b, c = theta[0], theta[1], theta[2]\n"
            + _SWAP_BLOCK * repetitions + "    return a * b + c\n")
    d = ad.differentiate_source(text, "swaps", filename=f"<swaps{repetitions}>")
    namespace = {}
    exec(compile(text, f"<swaps{repetitions}>", "exec"), namespace)
    fn = namespace["swaps"]
    j = d.jit()
    for theta in RNG.uniform(0.5, 1.5, (4, 3)):
        check = ad.check_gradient(fn, theta, derivative=d)
        assert check.ok, str(check)
        g, gj = np.zeros(3), np.zeros(3)
        assert j.value_and_grad(theta, gj) == pytest.approx(d.value_and_grad(theta, g), rel=1e-12)
        assert np.allclose(gj, g, rtol=1e-10, atol=1e-12)


def test_straight_line_swaps_10():
    _swaps(10)


@pytest.mark.slow
def test_straight_line_swaps_40():
    _swaps(40)
