"""The JAX reference: a batched, masked interpreter of the generated kernel's ``ast`` (see the package docstring).

All evaluation points run at once: a value that depends on ``theta`` is a float64/int64/bool JAX array of shape
``(P,)``; a value that does not (data, loop indices, constants, integer state never touched under a
``theta``-dependent branch) stays a Python number, computed with Python's own semantics. An ``if`` (or ``x if
c else y``, ``and``/``or``, ``min``/``max``) whose condition is a Python bool runs only the branch taken; one
whose condition is an array runs both branches under masks and merges every assignment with ``jnp.where``, so
each point follows exactly the path Python takes at that point and ``jax.vjp`` differentiates that path.
``return`` clears the returning points from the frame's ``active`` mask. Loops have ``theta``-independent
bounds (the generator guarantees it) and are unrolled.

Every decision on a float array records how close it was to switching: ``|l - r| / (1 + |l| + |r|)`` for a
comparison, ``min``/``max``, ``abs`` (``r = 0``) and the distance to the next jump of a float ``//``, ``%`` or
``floor``, masked to the points that actually evaluate it; ``margin`` is the minimum per point.
"""
import ast
import math

import types

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special as sps
from jax.scipy import special as jss

jax.config.update("jax_enable_x64", True)


class InterpError(Exception):
    """A construct outside the interpreter's subset: a generator/interpreter bug, never an ``ad`` finding."""


class Data:
    """A constant (non-differentiated) array argument."""

    def __init__(self, a):
        self.a = np.asarray(a)


class Theta:
    def __init__(self, tb):
        self.tb = tb


class Frame:
    def __init__(self, env, active):
        self.env, self.active, self.result = env, active, None


def traced(v):
    return not isinstance(v, (bool, int, float, np.generic, Data, Theta, tuple))


def num(v):
    """Python's bool-is-int: a bool taking part in arithmetic counts 0/1."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if traced(v) and v.dtype == np.bool_:
        return v.astype(np.int64)
    return v


def is_float(v):
    return isinstance(v, (float, np.floating)) or (traced(v) and np.issubdtype(v.dtype, np.floating))


NPOINTS = 4   # every traced value has this shape: one compiled XLA computation per primitive and dtype


def lift(v, dtype=None):
    """A (NPOINTS,) array of a fixed dtype (no weak types), so eager JAX compiles few primitive variants."""
    if not traced(v):
        v = num(v)
        return np.full(NPOINTS, v, dtype=dtype or (np.float64 if isinstance(v, (float, np.floating))
                                                   else np.int64))
    return v if dtype is None or v.dtype == dtype else v.astype(dtype)


def common(a, b):
    """Both operands as arrays of one dtype (Python's promotion: bool < int < float)."""
    kinds = [lift(a).dtype if not traced(a) else a.dtype for a in (a, b)]
    if any(np.issubdtype(k, np.floating) for k in kinds):
        dt = np.float64
    elif all(k == np.bool_ for k in kinds):
        dt = np.bool_
    else:
        dt = np.int64
    return lift(a if dt != np.int64 else num(a), dt), lift(b if dt != np.int64 else num(b), dt)


def and_(a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return a & b


def not_(a):
    return (not a) if isinstance(a, bool) else ~a


def truthy(v):
    if not traced(v):
        return bool(v)
    return v if v.dtype == np.bool_ else v != lift(0, v.dtype)


def _lbeta(a, b):
    return jss.gammaln(a) + jss.gammaln(b) - jss.gammaln(a + b)


JAX_FUNCS = {
    "exp": jnp.exp, "log": jnp.log, "log1p": jnp.log1p, "expm1": jnp.expm1, "sqrt": jnp.sqrt, "sin": jnp.sin,
    "cos": jnp.cos, "tan": jnp.tan, "tanh": jnp.tanh, "sinh": jnp.sinh, "cosh": jnp.cosh, "atan": jnp.arctan,
    "atan2": jnp.arctan2, "hypot": jnp.hypot, "erf": jss.erf, "erfc": jss.erfc, "lgamma": jss.gammaln,
    "pow": jnp.power, "log2": jnp.log2, "log10": jnp.log10, "digamma": jss.digamma,
    "trigamma": lambda a: jss.polygamma(1, a), "logaddexp": jnp.logaddexp,
    "log1pexp": lambda a: jnp.logaddexp(0.0, a), "xlogy": jss.xlogy, "lbeta": _lbeta,
}
NUMPY_FUNCS = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "atan": np.arctan,
    "atan2": np.arctan2, "hypot": np.hypot, "erf": sps.erf, "erfc": sps.erfc, "lgamma": sps.gammaln,
    "pow": np.power, "log2": np.log2, "log10": np.log10, "digamma": sps.digamma,
    "trigamma": lambda a: sps.polygamma(1, a), "logaddexp": np.logaddexp,
    "log1pexp": lambda a: np.logaddexp(0.0, a), "xlogy": sps.xlogy,
    "lbeta": lambda a, b: sps.gammaln(a) + sps.gammaln(b) - sps.gammaln(a + b),
}
# NUMPY: values and switch margins (cheap); JAX: values and gradients (the reference), no margins
NUMPY = types.SimpleNamespace(name="numpy", select=np.where, funcs=NUMPY_FUNCS, floor=np.floor,
                              gather=lambda a, idx: a[idx])
JAX = types.SimpleNamespace(name="jax", select=jax.lax.select, funcs=JAX_FUNCS, floor=jnp.floor,
                            gather=lambda a, idx: jnp.asarray(a)[idx])
PYOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
         ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
         ast.Pow: lambda a, b: a ** b}
CMPOPS = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
          ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


class Interpreter:
    def __init__(self, tree, npoints, backend):
        self.B = backend
        self.funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
        if npoints != NPOINTS:
            raise InterpError(f"the interpreter runs {NPOINTS} points at a time")
        self.margin = lift(np.inf)
        self.npoints = npoints

    def select(self, c, a, b):
        if isinstance(c, bool):
            return a if c else b
        return self.B.select(c, *common(a, b))

    def note(self, mask, l, r):
        """Record the distance to a switch of a decision on float arrays (NUMPY pass only)."""
        if self.B is not NUMPY or mask is False or not (is_float(l) or is_float(r)) or not (traced(l) or traced(r)):
            return
        l, r = common(l, r)
        self.keep(mask, np.abs(l - r) / (1.0 + np.abs(l) + np.abs(r)))

    def note_jump(self, mask, q):
        """Distance of ``q`` to the nearest integer, where ``floor(q)`` jumps."""
        if self.B is not NUMPY or mask is False or not (traced(q) and is_float(q)):
            return
        frac = q - np.floor(q)
        self.keep(mask, np.minimum(frac, 1.0 - frac) / (1.0 + np.abs(q)))

    def keep(self, mask, m):
        m = np.where(np.isnan(m), 0.0, m)   # a nan decision is as unreliable as a tie
        self.margin = np.minimum(self.margin, self.select(mask, m, np.inf))

    # ---- functions -------------------------------------------------------------------------------------
    def call_function(self, name, args, mask):
        fn = self.funcs[name]
        params = [a.arg for a in fn.args.args]
        frame = Frame(dict(zip(params, args)), mask)
        self.exec_block(fn.body, frame, True)
        return frame.result

    def run(self, theta_points, data_args):
        res = self.call_function("kern", [Theta(theta_points)] + [
            Data(a) if isinstance(a, np.ndarray) else a for a in data_args], True)
        return lift(num(res), np.float64)

    # ---- statements ------------------------------------------------------------------------------------
    def exec_block(self, stmts, frame, mask):
        for s in stmts:
            eff = and_(mask, frame.active)
            if eff is False:
                return
            self.exec(s, frame, eff)

    def assign(self, frame, name, value, mask):
        old = frame.env.get(name)
        frame.env[name] = value if (old is None or mask is True) else self.select(mask, value, old)

    def exec(self, s, frame, mask):
        if isinstance(s, ast.Assign):
            (target,) = s.targets
            if isinstance(target, ast.Name):
                self.assign(frame, target.id, self.ev(s.value, frame, mask), mask)
            elif isinstance(target, ast.Tuple) and isinstance(s.value, ast.Tuple):
                values = [self.ev(v, frame, mask) for v in s.value.elts]
                for t, v in zip(target.elts, values):
                    self.assign(frame, t.id, v, mask)
            else:
                raise InterpError(ast.unparse(s))
        elif isinstance(s, ast.AugAssign):
            name = s.target.id
            value = self.binop(type(s.op), frame.env[name], self.ev(s.value, frame, mask), mask)
            self.assign(frame, name, value, mask)
        elif isinstance(s, ast.If):
            c = truthy(self.ev(s.test, frame, mask))
            if isinstance(c, bool):
                self.exec_block(s.body if c else s.orelse, frame, mask)
            else:
                self.exec_block(s.body, frame, and_(mask, c))
                self.exec_block(s.orelse, frame, and_(mask, not_(c)))
        elif isinstance(s, ast.For):
            if not (isinstance(s.iter, ast.Call) and s.iter.func.id == "range"):
                raise InterpError(ast.unparse(s))
            bounds = [self.ev(a, frame, mask) for a in s.iter.args]
            if any(traced(b) for b in bounds):
                raise InterpError("loop bound depends on theta: " + ast.unparse(s.iter))
            for i in range(*[int(b) for b in bounds]):
                frame.env[s.target.id] = i
                self.exec_block(s.body, frame, mask)
        elif isinstance(s, ast.Return):
            value = self.ev(s.value, frame, mask)
            frame.result = value if frame.result is None else self.select(mask, value, frame.result)
            frame.active = and_(frame.active, not_(mask))
        elif not isinstance(s, (ast.Pass, ast.Expr)):
            raise InterpError(ast.unparse(s))

    # ---- expressions -----------------------------------------------------------------------------------
    def binop(self, op, a, b, mask):
        a, b = num(a), num(b)
        if not traced(a) and not traced(b):
            try:
                return PYOPS[op](a, b)
            except (ArithmeticError, ValueError):
                return math.nan
        a, b = common(a, b)
        if op in (ast.FloorDiv, ast.Mod) and is_float(a):
            self.note_jump(mask, a / b)
        return PYOPS[op](a, b)

    def compare(self, op, a, b, mask):
        self.note(mask, a, b)
        a, b = num(a), num(b)
        if not traced(a) and not traced(b):
            return CMPOPS[op](a, b)
        return CMPOPS[op](*common(a, b))

    def ev(self, e, frame, mask):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            return frame.env[e.id]
        if isinstance(e, ast.BinOp):
            return self.binop(type(e.op), self.ev(e.left, frame, mask), self.ev(e.right, frame, mask), mask)
        if isinstance(e, ast.UnaryOp):
            v = self.ev(e.operand, frame, mask)
            if isinstance(e.op, ast.Not):
                return not_(truthy(v))
            v = num(v)
            return -v if isinstance(e.op, ast.USub) else v
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return self.compare(type(e.ops[0]), self.ev(e.left, frame, mask),
                                self.ev(e.comparators[0], frame, mask), mask)
        if isinstance(e, ast.BoolOp):
            res = self.ev(e.values[0], frame, mask)
            for operand in e.values[1:]:
                t = truthy(res)
                go = t if isinstance(e.op, ast.And) else not_(t)
                if go is False:
                    continue
                nxt = self.ev(operand, frame, and_(mask, go))
                res = self.select(t, nxt, res) if isinstance(e.op, ast.And) else self.select(t, res, nxt)
            return res
        if isinstance(e, ast.IfExp):
            c = truthy(self.ev(e.test, frame, mask))
            if isinstance(c, bool):
                return self.ev(e.body if c else e.orelse, frame, mask)
            return self.select(c, self.ev(e.body, frame, and_(mask, c)), self.ev(e.orelse, frame, and_(mask, not_(c))))
        if isinstance(e, ast.Subscript):
            return self.subscript(self.ev(e.value, frame, mask), e.slice, frame, mask)
        if isinstance(e, ast.Attribute):
            if isinstance(e.value, ast.Name) and e.value.id == "math":
                return {"pi": math.pi, "e": math.e, "inf": math.inf}[e.attr]
            v = self.ev(e.value, frame, mask)
            if isinstance(v, Data) and e.attr == "shape":
                return tuple(int(s) for s in v.a.shape)
            raise InterpError(ast.unparse(e))
        if isinstance(e, ast.Call):
            return self.call(e, frame, mask)
        raise InterpError(ast.unparse(e))

    def subscript(self, v, sl, frame, mask):
        idx = [self.ev(i, frame, mask) for i in (sl.elts if isinstance(sl, ast.Tuple) else [sl])]
        idx = [num(i) for i in idx]
        if isinstance(v, Theta):
            return v.tb[:, int(idx[0])]
        if isinstance(v, tuple):
            return v[int(idx[0])]
        if not isinstance(v, Data):
            raise InterpError("subscript of " + type(v).__name__)
        if any(traced(i) for i in idx):
            return self.B.gather(v.a, tuple(lift(i, np.int64) for i in idx))
        return v.a[tuple(int(i) for i in idx)].item()

    def call(self, e, frame, mask):
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in ("math", "special"):
            args = [num(self.ev(a, frame, mask)) for a in e.args]
            if f.attr in ("fabs", "floor"):
                (a,) = args
                if f.attr == "floor":
                    self.note_jump(mask, a)
                    return float(math.floor(a)) if not traced(a) else self.B.floor(a)
                self.note(mask, a, 0.0)
                return abs(float(a)) if not traced(a) else abs(a)
            if not any(traced(a) for a in args):
                return float(NUMPY_FUNCS[f.attr](*[np.float64(a) for a in args]))
            return self.B.funcs[f.attr](*[lift(a, np.float64) for a in args])
        if not isinstance(f, ast.Name):
            raise InterpError(ast.unparse(e))
        args = [self.ev(a, frame, mask) for a in e.args]
        if f.id in self.funcs:
            return self.call_function(f.id, args, mask)
        if f.id == "len":
            return int(args[0].a.shape[0])
        if f.id == "abs":
            (a,) = args
            self.note(mask, a, 0.0)
            return abs(num(a)) if not traced(a) else abs(num(a))
        if f.id in ("min", "max") and len(args) == 2:
            a, b = args
            self.note(mask, a, b)
            swap = self.compare(ast.Lt if f.id == "min" else ast.Gt, b, a, False)
            return self.select(truthy(swap), b, a)
        raise InterpError(ast.unparse(e))


def value_and_grad(source, theta_points, data_args):
    """Values ``(P,)`` from numpy and from JAX, JAX gradients ``(P, ntheta)`` and switch margins ``(P,)``."""
    tree = ast.parse(source)
    points = np.asarray(theta_points, dtype=np.float64)
    with np.errstate(all="ignore"):
        it = Interpreter(tree, len(points), NUMPY)
        numpy_values = it.run(points, data_args)

    def f(tb):
        return Interpreter(tree, len(points), JAX).run(tb, data_args)

    values, pullback = jax.vjp(f, jnp.asarray(points))
    (grads,) = pullback(jnp.ones_like(values))
    return np.asarray(values), np.asarray(grads), it.margin, numpy_values
