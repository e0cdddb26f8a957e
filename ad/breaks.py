"""``break`` in a ``for ... in range(...)`` loop, rewritten (on the ``ast``, before lowering) into a flag.

    for i in range(n):                     flag = False                     (bound before the loop, by lowering)
        a(i)                               for i in range(n):
        if converged:              →           if not flag:
            b(i)                                   a(i)
            break                                  if converged:
        c(i)                                           b(i)
                                                       flag = True
                                                   if not flag:
                                                       c(i)

Every statement that a ``break`` may skip is guarded by ``not flag``, so the rewritten loop is an ordinary loop
for every later pass: activity, loop classification and the adjoint need nothing new.  Two facts make it fast
again: an iteration that starts with the flag set does nothing (forward, and so its adjoint is the identity),
so the emitted forward loop leaves at the head of such an iteration (``ir.For.exit_flag``), and the reverse
sweep runs over the iterations that ran (reverse.py counts them in its forward sweep), each of which started
with the flag clear -- the reverse pass sets it to ``False`` instead of storing it.

The flag gets a name no Python identifier can have (``#``), so they never meet the user's.
A ``break`` belongs to the innermost loop around it: nested loops are rewritten when they are lowered.
"""
import ast


def own_breaks(stmts):
    """True when a ``break`` in ``stmts`` leaves the loop whose body they are (not a nested loop's)."""
    for s in stmts:
        if isinstance(s, ast.Break):
            return True
        if isinstance(s, ast.If) and (own_breaks(s.body) or own_breaks(s.orelse)):
            return True
    return False


def rewrite(body, flag, loop):
    """The loop body ``body`` with its breaks turned into ``flag = True`` and guards (module docstring)."""
    return [_guard(flag, _guarded(body, flag), loop)]


def _guarded(stmts, flag):
    out = []
    for k, s in enumerate(stmts):
        if isinstance(s, ast.Break):
            out.append(_located(ast.Assign(targets=[_name(flag, ast.Store())], value=ast.Constant(True)), s))
            return out  # the rest of the block is unreachable
        if isinstance(s, ast.If) and own_breaks([s]):
            out.append(ast.copy_location(ast.If(test=s.test, body=_guarded(s.body, flag) or [ast.Pass()],
                                                orelse=_guarded(s.orelse, flag)), s))
            rest = stmts[k + 1:]
            if rest:
                out.append(_guard(flag, _guarded(rest, flag), rest[0]))
            return out
        out.append(s)
    return out


def _guard(flag, body, where):
    test = _located(ast.UnaryOp(op=ast.Not(), operand=_name(flag)), where)
    return ast.copy_location(ast.If(test=test, body=body, orelse=[]), where)


def _name(name, ctx=None):
    return ast.Name(id=name, ctx=ctx or ast.Load())


def _located(node, where):
    """``node`` and its children at ``where``'s position (generated code names the user's line)."""
    for n in ast.walk(node):
        ast.copy_location(n, where)
    return node
