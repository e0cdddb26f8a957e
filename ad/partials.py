"""Lowering of derivative rules for the reverse pass: the adjoint templates of ``rules.ADJOINTS`` and the partials
functions of ``@ad.rule``.

Template parts that involve the result's adjoint ``g`` (``g``, ``g * x``, ``g / x``, a leading ``-``) become guarded
IR operations here; every other part is kernel-language code and goes through the ordinary lowering (so
``special.digamma(a)`` is inlined).  The statements get the position of the primal statement they differentiate.
"""
import ast

from . import parse, rules
from .ir import GUARD, Assign
from .lower import Lowerer

_GUARDED = {ast.Mult: "mul", ast.Div: "div"}


def lower_adjoint(template, args, result, adjoint, ctx, out, pos):
    """Statements (appended to ``out``) computing one argument's share of ``adjoint`` by ``template``; returns
    ``(operand, negate)``: the amount, and whether it is subtracted from the argument's adjoint."""
    tree = _parse(template)
    negate = isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub)
    if negate:
        tree = tree.operand
    if isinstance(tree, ast.Name) and tree.id == "g":  # most statements: a sum or a copy passes g on
        return adjoint, negate
    env = {"a": args[0], "r": result}
    if len(args) > 1:
        env["b"] = args[1]
    src = parse.Source(node=None, filename="<rule>", namespace=rules.template_namespace(), text=template)
    low = Lowerer(src, ctx, env, prefix="d_", origin=pos)
    low.out = out
    return _adjoint_part(tree, adjoint, low), negate


def _adjoint_part(e, adjoint, low):
    if isinstance(e, ast.Name) and e.id == "g":
        return adjoint
    if isinstance(e, ast.BinOp) and type(e.op) in _GUARDED and _mentions_g(e.left) and not _mentions_g(e.right):
        left = _adjoint_part(e.left, adjoint, low)
        right = low.expr(e.right)
        t = low.ctx.fresh("p")  # no "d_" prefix: a share of the adjoint, not a partial
        low.emit(Assign(t, _GUARDED[type(e.op)], [left, right], GUARD, low.origin))
        return t
    if _mentions_g(e):  # a rule's mistake, not the user's
        raise AssertionError(f"adjoint template {ast.unparse(e)!r}: g must be the left operand of * or /")
    return low.expr(e)


def _mentions_g(e):
    return any(isinstance(n, ast.Name) and n.id == "g" for n in ast.walk(e))


_TREES = {}


def _parse(template):
    """The template's expression tree (lowering only reads it, so one tree serves every use)."""
    if template not in _TREES:
        _TREES[template] = ast.parse(template, "<rule>", mode="eval").body
    return _TREES[template]


def lower_partials(rule, args, ctx, out):
    """Statements (appended to ``out``) computing the partials of the ``@ad.rule`` function ``rule`` (a
    ``rules.FunctionRule``) at ``args``; returns one operand per argument."""
    src = parse.from_function(rule.function)
    low = Lowerer(src, ctx, {}, prefix="")
    low.out = out
    fake = ast.Call(func=ast.Name(id=rule.name), args=[], keywords=[])
    ast.copy_location(fake, src.node)
    partials = low.inline(fake, rule.function, args, tuple_return=True)
    if len(partials) != len(args):
        raise low.err(src.node, f"the rule returns {len(partials)} partials for {len(args)} arguments")
    return list(partials)
