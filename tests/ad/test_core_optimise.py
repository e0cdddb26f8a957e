"""Optimisation passes on generated IR (ad/reciprocal.py, ad/forwarding.py, ad/factoring.py, ad/optimise.py):
gradients stay right (finite differences, jit vs Python), and each pass does what it claims on tiny kernels."""
import re

import numba
import numpy as np
import pytest

from nestgrad.ad.ir import Assign, Const, For, Return, walk
from nestgrad.ad.optimise import NameSource, allows, optimise
from nestgrad.ad.pipeline import _optimised
from nestgrad.ad.types import TypeInfo
from test_core_helpers import assert_gradient_ok, from_text

GAUSS = '''
import math

def k(theta, x):
    mu1, mu2, s1, s2 = theta[0], theta[1], theta[2], theta[3]
    n = x.shape[1]
    quad = 0.0
    for i in range(n):
        d1 = (x[0, i] - mu1) / s1
        d2 = (x[1, i] - mu2) / s2
        quad += d1 * d1 + d2 * d2
    return -0.5 * quad - n * (math.log(s1) + math.log(s2))
'''

CHAINS = '''
import math

def k(theta, x, w):
    a = theta[0]
    s = theta[1]
    c = theta[2]
    acc = 0.0
    other = 1.0
    for i in range(x.shape[0]):
        e = (x[i] - a) / s
        f = -(e * c) / s
        acc -= 3.0 * e * e * c - f / s + w[i] * e
        other = other + e * e
        for j in range(2):
            acc += (e + x[j]) * c / s
    return acc * math.exp(0.1 * other) + c * s
'''

GUARDED = '''
def k(theta, x):
    s = theta[1]
    y = 0.0
    for i in range(x.shape[0]):
        if s > 0.0:
            y += (x[i] - theta[0]) / s
        y += x[i] * theta[0]
    return y * y
'''


def _loops(stmts):
    return [s for s in walk(stmts) if isinstance(s, For)]


def _loop_ops(loop):
    return [s for s in walk(loop.body) if isinstance(s, Assign)]


def _gauss_args(n=40):
    rng = np.random.default_rng(3)
    return np.array([0.4, 0.6, 0.12, 0.17]), np.stack([rng.normal(0.4, 0.1, n), rng.normal(0.6, 0.15, n)])


def _chain_args(n=9):
    rng = np.random.default_rng(5)
    return np.array([0.3, 1.7, -0.8]), rng.normal(0.0, 1.0, n), rng.normal(1.0, 0.5, n)


def _python_fn(text):
    ns = {}
    exec(compile(text, "<optimise-test>", "exec"), ns)
    return ns["k"]


@pytest.mark.parametrize("text,args", [(GAUSS, _gauss_args()), (CHAINS, _chain_args()),
                                       (GUARDED, (np.array([0.3, 0.8]), np.linspace(-1.0, 2.0, 7)))])
def test_optimised_gradients_match_finite_differences(text, args):
    assert_gradient_ok(from_text(text), _python_fn(text), args, rtol=1e-6)


def test_guarded_division_is_not_hoisted_and_python_variant_runs_with_zero_divisor():
    d = from_text(GUARDED)
    assert re.search(r"/ s__\d+", d.source)  # still divides, under its guard
    g = np.zeros(2)
    value = d.value_and_grad(np.array([0.3, 0.0]), np.linspace(-1.0, 2.0, 7), g)  # no ZeroDivisionError
    assert np.isfinite(value) and np.all(np.isfinite(g))


def test_gauss_loops_have_no_division_and_no_invariant_multiplicand():
    c = _optimised(from_text(GAUSS)._c, True)
    for ir in (c.vg_ir, c.grad_ir, c.value_ir):
        loop, = _loops(ir)
        ops = _loop_ops(loop)
        assert not [s for s in ops if s.op == "div"]
        written = {s.dst for s in ops} | {loop.var}
        invariant_factor = [s for s in ops if s.op == "mul" and any(isinstance(a, str) and a not in written
                                                                     for a in s.args)]
        assert not invariant_factor, invariant_factor
        # what the hand-written kernel does: per data point two differences, two squares and four sums at most
        assert len([s for s in ops if s.op in ("add", "sub", "mul")]) <= 8


def test_without_arcp_and_reassoc_divisions_and_products_stay():
    d = from_text(GAUSS)
    c = _optimised(d._c, {"contract", "nsz"})
    loop = _loops(c.vg_ir)[0]
    assert [s for s in _loop_ops(loop) if s.op == "div"]
    args = _gauss_args()
    fast, exact = d.jit(), d.jit(fastmath=False)
    g1, g2 = np.zeros(4), np.zeros(4)
    v1 = fast.value_and_grad(*args, g1)
    v2 = exact.value_and_grad(*args, g2)
    assert v1 == pytest.approx(v2, rel=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-11)


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-12), ("float32", 2e-4)])
def test_jit_matches_python_for_chains(dtype, rtol):
    d = from_text(CHAINS)
    args = _chain_args()
    g_py = np.zeros(3)
    v_py = d.value_and_grad(*args, g_py)
    j = d.jit(dtype=dtype)
    cast = tuple(np.asarray(a, dtype) for a in args)
    g = np.zeros(3, dtype)
    assert j.value_and_grad(*cast, g) == pytest.approx(v_py, rel=rtol)
    np.testing.assert_allclose(g, g_py, rtol=rtol, atol=rtol * np.abs(g_py).max())


def test_zero_trip_loop_keeps_gradient():
    d = from_text(GAUSS)
    theta, _ = _gauss_args()
    g = np.full(4, np.nan)
    x = np.zeros((2, 0))
    assert d.value_and_grad(theta, x, g) == 0.0
    np.testing.assert_array_equal(g, 0.0)


def _ir_fixture():
    """for i: q_b = q_b + c; c = 0.0; c = c + q_b; t = q_b * e; acc = acc + t; q_b = 0.0 -- the fused-loop
    pattern: c carries the same value through every iteration, q_b is zero at every iteration head."""
    body = [Assign("q_b", "add", ["q_b", "c"]), Assign("c", "copy", [Const(0.0)]),
            Assign("c", "add", ["c", "q_b"]), Assign("e", "index", ["x", "i"]),
            Assign("t", "mul", ["q_b", "e"]), Assign("acc", "add", ["acc", "t"]),
            Assign("q_b", "copy", [Const(0.0)])]
    prog = [Assign("q_b", "copy", [Const(0.0)]), Assign("acc", "copy", [Const(0.0)]),
            Assign("c", "copy", ["g"]), For("i", Const(0), "n", Const(1), body), Return("acc")]
    types = TypeInfo({"i": "int", "n": "int"}, {"x": 1}, set(), set())
    return prog, types


def _run_ir(prog, g, xs):
    """A tiny interpreter for the straight-line loop programs above (values of every variable at the end)."""
    env = {"g": g, "x": xs, "n": len(xs)}

    def val(o):
        return o.value if isinstance(o, Const) else env[o]

    def run(stmts):
        for s in stmts:
            if isinstance(s, Return):
                continue
            if isinstance(s, For):
                for i in range(val(s.start), val(s.stop), val(s.step)):
                    env[s.var] = i
                    run(s.body)
                continue
            a = [val(x) for x in s.args]
            env[s.dst] = {"copy": lambda: a[0], "add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1],
                          "mul": lambda: a[0] * a[1], "div": lambda: a[0] / a[1],
                          "index": lambda: a[0][a[1]]}[s.op]()
    run(prog)
    return env


def test_forwarding_and_factoring_on_ir():
    prog, types = _ir_fixture()
    fresh = NameSource(prog)
    out = optimise(prog, types, fresh)
    loop, = _loops(out)
    ops = _loop_ops(loop)
    assert [s.op for s in ops if s.op == "mul"] == []   # c * e became a sum of e, multiplied after the loop
    xs = [0.5, -1.25, 2.0, 3.5]
    before = _run_ir(prog, 1.5, xs)
    after = _run_ir(out, 1.5, xs)
    assert after["acc"] == pytest.approx(before["acc"], rel=1e-15) and before["acc"] == pytest.approx(1.5 * 4.75)


def test_flag_helper():
    assert allows(True, "arcp") and not allows(False, "arcp")
    assert allows({"fast"}, "reassoc") and allows(frozenset({"arcp"}), "arcp") and not allows({"nsz"}, "arcp")


def _backward_branch_regions(ptx):
    """Line ranges of the PTX loops: from a label to a later branch back to it."""
    lines = ptx.splitlines()
    labels = {line.strip()[:-1]: i for i, line in enumerate(lines) if re.match(r"^\$L\w+:$", line.strip())}
    regions = []
    for i, line in enumerate(lines):
        m = re.search(r"bra(?:\.uni)?\s+(\$L\w+);", line)
        if m and labels.get(m.group(1), i) < i:
            regions.append(lines[labels[m.group(1)]:i + 1])
    return regions


def test_cuda_float32_gauss_loops_do_not_divide():
    from numba import cuda
    dev = from_text(GAUSS).cuda(dtype="float32")
    f32 = numba.float32
    ptx, _ = cuda.compile_ptx(dev.python["raw_value_and_grad"], (f32[:], f32[:, :], f32[:], f32[:]),
                              device=True, cc=(9, 0))
    regions = _backward_branch_regions(ptx)
    assert regions, "no loop found in the PTX"
    assert not [line for r in regions for line in r if "div." in line]


@pytest.mark.parametrize("dtype,vector", [("float64", r"<\d+ x double>"), ("float32", r"<\d+ x float>")])
def test_fused_gauss_loop_vectorises(dtype, vector):
    from nestgrad.ad.derivative import DEFAULT_FASTMATH
    module = from_text(GAUSS).jit(dtype=dtype).module
    # an uncached dispatcher (inspection is disabled for functions loaded from numba's cache)
    f = numba.njit(fastmath=set(DEFAULT_FASTMATH), error_model="numpy")(module.py_raw_value_and_grad)
    theta, x = _gauss_args()
    f(theta.astype(dtype), x.astype(dtype), np.zeros(4, dtype), np.zeros(0, dtype))
    llvm = f.inspect_llvm(f.signatures[0])
    assert re.search(r"fadd (reassoc |contract |arcp |nsz |afn )*" + vector, llvm), "fused loop not vectorised"


@pytest.mark.parametrize("text,args", [(GAUSS, _gauss_args()), (CHAINS, _chain_args())])
def test_value_and_value_and_grad_return_the_same_bits(text, args):
    """``value`` is ``value_and_grad`` without the gradient work, so reassociated sums agree exactly."""
    d = from_text(text)
    for fns in (d, d.jit()):
        g = np.zeros(len(args[0]))
        assert fns.value(*args) == fns.value_and_grad(*args, g)
