"""Lowering of calls inside kernels: builtins, ``math`` functions, functions with derivative rules (inlined primal
plus a ``RuleCall`` the reverse pass differentiates by the rule; adjoint-form rules and compiled primals are
called instead, external.py) and plain-Python helpers (inlined and differentiated through).

A mixin of ``lower.Lowerer``: inlining lowers the callee's body with the same machinery as the kernel's, and the
kernel's expressions lower calls.  This module does not import ``lower``; ``type(self)`` is the lowerer class.
"""
import ast
import builtins
import types as pytypes

import numpy as np

from . import external, parse, resolve, rules, special, sugar
from .ir import Assign, Const, RuleCall
from .restructure import restructure

RET = "__return__"  # the environment entry holding a function's return value
_MAX_INLINE_DEPTH = 32
# numpy functions on numbers that mean a builtin or an ad.special function (np.maximum(a, b) is max(a, b))
_NUMPY_SCALAR = {np.logaddexp: special.logaddexp}


class CallsMixin:
    """Call lowering for ``lower.Lowerer`` (uses its ``expr``, ``assign``, ``stmt``, ``err``... methods)."""

    def call(self, e):
        reduction = sugar.reduction_kind(e, self.resolve)
        if reduction:
            return sugar.lower_reduction(self, e, reduction)
        fn = self.resolve(e.func)
        fn = _NUMPY_SCALAR.get(fn, fn) if isinstance(fn, np.ufunc) else fn
        rule = rules.user_rule(fn)
        if isinstance(rule, rules.AdjointRule):  # called, not inlined (external.py)
            return external.lower_call(self, e, fn, rule, discard=False)
        if fn is np.where:  # on numbers: the conditional expression
            if len(e.args) != 3 or e.keywords:
                raise self.err(e, "np.where takes three arguments in kernels: np.where(condition, a, b) on numbers")
            return self.ifexp(ast.copy_location(ast.IfExp(test=e.args[0], body=e.args[1], orelse=e.args[2]), e))
        args = [self.expr(a) for a in e.args]
        label = resolve.dotted(e.func)
        if isinstance(rule, rules.FunctionRule) and not isinstance(fn, pytypes.FunctionType):
            return self.rule_call(e, fn, rule, args)  # a compiled primal with inlined partials
        if fn is builtins.len:
            if len(e.args) != 1:
                raise self.err(e, "len() takes one argument")
            info = self.local_array(e.args[0])
            if info is not None:
                return info.dims[0]
            arr = self.array_arg(e.args[0])
            self.note_ndim(e, arr, None, min_ndim=1)  # as x.shape[0]: an array even if the kernel never indexes it
            return self.assign(e, "shape", [arr, Const(0)], hint="n")
        if fn is builtins.float:
            return self.unary_cast(e, "tofloat", args)
        if fn is builtins.int:
            return self.unary_cast(e, "toint", args)
        if fn in (builtins.abs, builtins.min, builtins.max):
            name = fn.__name__
            if name == "abs":
                self.check_nargs(e, label, args, 1)
                return self.assign(e, "call", args, fn="abs")
            if len(args) < 2:
                raise self.unsupported(e, f"{name}() needs at least two numbers (no iterables in kernels)")
            result = args[0]
            for a in args[1:]:
                result = self.assign(e, "call", [result, a], fn=name)
            return result
        if fn is np.square:
            self.check_nargs(e, label, args, 1)
            return self.assign(e, "pow", [args[0], Const(2)])
        if fn in (np.maximum, np.minimum):  # numpy's: a NaN from either argument (Python's max keeps a NaN b out)
            self.check_nargs(e, label, args, 2)
            return self.assign(e, "call", args, fn=fn.__name__)
        if fn is np.clip:  # on numbers: minimum(maximum(a, low), high), NaN from any of the three
            self.check_nargs(e, label, args, 3)
            return self.assign(e, "call", [self.assign(e, "call", args[:2], fn="maximum"), args[2]], fn="minimum")
        math_name = resolve.math_name(fn)
        if math_name == "log" and len(args) == 2:  # math.log(x, base)
            return self.assign(e, "div", [self.assign(e, "call", [args[0]], fn="log"),
                                          self.assign(e, "call", [args[1]], fn="log")])
        if math_name is not None:
            self.check_nargs(e, label, args, rules.MATH_FUNCS[math_name])
            if math_name == "pow":
                return self.assign(e, "pow", args)
            return self.assign(e, "call", args, fn=math_name)
        if isinstance(fn, pytypes.FunctionType) and resolve.inlinable(fn):
            rule = rules.lookup(fn)
            if rule is not None:
                return self.rule_call(e, fn, rule, args)
            return self.inline(e, fn, args)
        if fn is builtins.range:
            raise self.unsupported(e, "range() is only allowed as the iterable of a `for` loop")
        if _is_numpy(fn):  # np.max(x), np.prod(x - mu), np.linalg.norm(x): whole-array functions
            raise self.unsupported(e, f"call to {label!r}: numpy functions other than np.sum, np.dot, np.mean and "
                                      f"the element-wise math ones (np.exp, np.log, ...) are not supported in "
                                      f"kernels; " + sugar.whole_array_advice(sugar.array_name(e.args),
                                                                              getattr(fn, "__name__", None))
                                      + "; or register its derivative with @ad.rule (partials for a function of "
                                        "numbers, an adjoint for one of arrays)")
        raise self.unsupported(e, f"call to {label!r}: it has no derivative rule and no Python source to "
                                  "differentiate; write it as a module-level Python function in the kernel "
                                  "subset or register its partials with @ad.rule")

    def unary_cast(self, e, op, args):
        if len(args) != 1:
            raise self.err(e, "float()/int() take one argument")
        a = args[0]
        if isinstance(a, Const):
            return Const(float(a.value) if op == "tofloat" else int(a.value))
        return self.assign(e, op, args)

    def check_nargs(self, e, label, args, n):
        if len(args) != n:
            raise self.err(e, f"{label}() takes {n} argument{'s' if n != 1 else ''}, got {len(args)}")

    def function_source(self, e, fn):
        if fn in self.ctx.inline_stack:
            raise self.unsupported(e, f"recursion ({fn.__name__} calls itself, directly or indirectly) is not "
                                      "supported: write it as a loop")
        if len(self.ctx.inline_stack) > _MAX_INLINE_DEPTH:
            raise self.unsupported(e, "helper functions nested too deeply")
        return parse.from_function(fn)

    def inline(self, e, fn, args, tuple_return=False):
        """Lower the body of ``fn`` (already fenced) with its parameters bound to ``args``; its return value
        (a tuple of operands when ``tuple_return``)."""
        src = self.function_source(e, fn)
        params = src.arg_names
        if len(params) != len(args):
            raise self.err(e, f"{fn.__name__}() takes {len(params)} arguments, got {len(args)}")
        if src.text not in self.ctx.sources:
            self.ctx.sources.append(src.text)
            self.ctx.helpers.append(fn.__name__)
        env = dict(zip(params, args))
        self.ctx.counter += 1
        prefix = f"{fn.__name__}{self.ctx.counter}_"
        # the differentiator's own functions are not the user's code: their statements keep the call's position
        origin = self.origin or (self.where.pos(e) if resolve.is_own(fn) else None)
        sub = type(self)(src, self.ctx, env, prefix, origin)
        self.ctx.inline_stack.append(fn)
        try:
            sub.out = self.out
            body = restructure(src.node.body)
            if tuple_return:
                body = _split_tuple_returns(body)
            for s in body:
                sub.stmt(s)
        finally:
            self.ctx.inline_stack.pop()
        if tuple_return:
            n = sum(1 for k in sub.env if k.startswith(RET + "#"))
            if n == 0 or any(f"{RET}#{i}" not in sub.env for i in range(n)):
                raise sub.err(src.node, "the rule must return a tuple of partials on every path")
            return tuple(sub.env[f"{RET}#{i}"] for i in range(n))
        if RET not in sub.env:
            if e is self.discarded and not any(isinstance(n, ast.Return) for n in ast.walk(src.node)):
                return Const(0.0)  # called for its writes into local arrays; like Python, it returns nothing
            raise sub.err(src.node, f"{fn.__name__} does not return a value on every path")
        return sub.env[RET]

    def external_statement(self, e):
        """``f(...)`` on its own line when ``f`` has an adjoint rule (it writes into local arrays); else False."""
        fn = self.resolve(e.func)
        rule = rules.user_rule(fn)
        if not isinstance(rule, rules.AdjointRule):
            return False
        external.lower_call(self, e, fn, rule, discard=True)
        return True

    def rule_call(self, e, fn, rule, args):
        saved = self.out
        self.out = []
        if isinstance(fn, pytypes.FunctionType):
            value = self.inline(e, fn, args)
        else:
            self.check_nargs(e, rule.name, args, len(rules.parameters(fn)))
            value = external.primal_call(self, e, fn, args)
        body = self.out
        self.out = saved
        dst = self.fresh(fn.__name__)
        body.append(Assign(dst, "copy", [value], pos=self.pos(e)))
        self.emit(RuleCall(dst, rule, args, body, self.pos(e)))
        return dst


def _split_tuple_returns(stmts):
    """Rewrite ``return (p, q)`` into assignments of ``__return__#0`` ... so branches merge normally."""
    out = []
    for s in stmts:
        if isinstance(s, ast.Return):
            vals = s.value.elts if isinstance(s.value, ast.Tuple) else [s.value]
            for i, v in enumerate(vals):
                a = ast.Assign(targets=[ast.Name(id=f"{RET}#{i}", ctx=ast.Store())], value=v)
                out.append(ast.copy_location(a, s))
        elif isinstance(s, ast.If):
            new = ast.If(test=s.test, body=_split_tuple_returns(s.body), orelse=_split_tuple_returns(s.orelse))
            out.append(ast.copy_location(new, s))
        else:
            out.append(s)
    return out


def _is_numpy(fn):
    return isinstance(fn, np.ufunc) or (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy"
