"""Calls inside kernels: builtins, ``math`` functions, functions with derivative rules (inlined primal plus a
``RuleCall`` the reverse pass differentiates by the rule) and plain-Python helpers (inlined and differentiated
through).  Also the lowering of rule partials for the reverse pass.
"""
import ast
import builtins
import math
import sys
import types as pytypes

import numpy as np

from . import fence, parse, rules
from .ir import Assign, Const, RuleCall
from .restructure import restructure

_RET = "__return__"
_AD_PACKAGE = __name__.rsplit(".", 1)[0] + "."  # functions of the differentiator itself (ad.special)
_MAX_INLINE_DEPTH = 32


class CallsMixin:
    """Call lowering for ``lower._Lowerer`` (uses its ``expr``, ``assign``, ``err``... methods)."""

    def call(self, e):
        fn = self.resolve(e.func)
        args = [self.expr(a) for a in e.args]
        label = _dotted(e.func)
        if fn is builtins.len:
            if len(e.args) != 1:
                raise self.err(e, "len() takes one argument")
            arr = self.array_arg(e.args[0])
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
        math_name = _math_name(fn)
        if math_name is not None:
            self.check_nargs(e, label, args, rules.MATH_FUNCS[math_name])
            if math_name == "pow":
                return self.assign(e, "pow", args)
            return self.assign(e, "call", args, fn=math_name)
        if isinstance(fn, pytypes.FunctionType) and _inlinable(fn):
            rule = rules.lookup(fn)
            if rule is not None:
                return self.rule_call(e, fn, rule, args)
            return self.inline(e, fn, args)
        if fn is builtins.range:
            raise self.unsupported(e, "range() is only allowed as the iterable of a `for` loop")
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
        src = parse.from_function(fn)
        return src

    def inline(self, e, fn, args, tuple_return=False, tag="h"):
        src = self.function_source(e, fn)
        fence.check_function(src.node, src.filename, allow_tuple_return=tuple_return)
        params = src.arg_names
        if len(params) != len(args):
            raise self.err(e, f"{fn.__name__}() takes {len(params)} arguments, got {len(args)}")
        if src.text not in self.ctx.sources:
            self.ctx.sources.append(src.text)
            self.ctx.helpers.append(fn.__name__)
        env = dict(zip(params, args))
        self.ctx.counter += 1
        prefix = f"{fn.__name__}{self.ctx.counter}_"
        sub = type(self)(src, self.ctx, env, prefix)
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
            n = sum(1 for k in sub.env if k.startswith(_RET + "#"))
            if n == 0 or any(f"{_RET}#{i}" not in sub.env for i in range(n)):
                raise sub.err(src.node, "the rule must return a tuple of partials on every path")
            return tuple(sub.env[f"{_RET}#{i}"] for i in range(n))
        if _RET not in sub.env:
            raise sub.err(src.node, f"{fn.__name__} does not return a value on every path")
        return sub.env[_RET]

    def rule_call(self, e, fn, rule, args):
        saved = self.out
        self.out = []
        value = self.inline(e, fn, args)
        body = self.out
        self.out = saved
        dst = self.fresh(fn.__name__)
        body.append(Assign(dst, "copy", [value]))
        self.emit(RuleCall(dst, rule, args, body, self.where.pos(e)))
        return dst




def lower_partials(rule, args, result, ctx, out, pos=(0, 0)):
    """Statements (appended to ``out``) computing the partials of ``rule`` at ``args``/``result``; returns
    one operand per argument.  Used by the reverse pass."""
    if isinstance(rule, rules.FunctionRule):
        src = parse.from_function(rule.function)
        low = _lowerer()(src, ctx, {}, prefix="")
        low.out = out
        fake = ast.Call(func=ast.Name(id=rule.name), args=[], keywords=[])
        ast.copy_location(fake, src.node)
        partials = low.inline(fake, rule.function, args, tuple_return=True)
        if len(partials) != len(args):
            raise low.err(src.node, f"the rule returns {len(partials)} partials for {len(args)} arguments")
        return list(partials)
    return [lower_template(t, args, result, ctx, out) for t in rule.templates]


def lower_template(template, args, result, ctx, out):
    """Lower one partial-derivative template expression with ``a``, ``b``, ``r`` bound."""
    tree = ast.parse(template, "<rule>", mode="eval").body
    env = {"a": args[0], "r": result}
    if len(args) > 1:
        env["b"] = args[1]
    src = parse.Source(node=None, filename="<rule>", namespace=rules.special_namespace(), text=template)
    low = _lowerer()(src, ctx, env, prefix="d_")
    low.out = out
    return low.expr(tree)


def _split_tuple_returns(stmts):
    """Rewrite ``return (p, q)`` into assignments of ``__return__#0`` ... so branches merge normally."""
    out = []
    for s in stmts:
        if isinstance(s, ast.Return):
            vals = s.value.elts if isinstance(s.value, ast.Tuple) else [s.value]
            for i, v in enumerate(vals):
                a = ast.Assign(targets=[ast.Name(id=f"{_RET}#{i}", ctx=ast.Store())], value=v)
                out.append(ast.copy_location(a, s))
        elif isinstance(s, ast.If):
            new = ast.If(test=s.test, body=_split_tuple_returns(s.body), orelse=_split_tuple_returns(s.orelse))
            out.append(ast.copy_location(new, s))
        else:
            out.append(s)
    return out




def _inlinable(fn):
    """User code and ad.special are inlined; library functions (numpy, scipy, the standard library) are not:
    their bodies are outside the kernel subset, so they need a rule instead."""
    top = (getattr(fn, "__module__", None) or "").split(".")[0]
    if (getattr(fn, "__module__", None) or "").startswith(_AD_PACKAGE) or fn in rules._USER_RULES:
        return True
    return top not in _LIBRARIES and top not in getattr(sys, "stdlib_module_names", ())


_LIBRARIES = {"numpy", "scipy", "numba", "jax", "torch", "cupy", "sympy", "pandas"}


def _math_name(fn):
    for name in rules.MATH_FUNCS:
        if getattr(math, name, None) is fn:
            return name
    if isinstance(fn, np.ufunc) and fn.__name__ in rules.NUMPY_ALIASES:
        return rules.NUMPY_ALIASES[fn.__name__]
    return None




def _dotted(e):
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return _dotted(e.value) + "." + e.attr
    return "<expr>"


def _lowerer():
    from .lower import _Lowerer  # lower.py imports this module: resolve the class at call time
    return _Lowerer
