"""Early returns → if/else: after this pass a ``return`` is only ever the last statement of its block.

``if s <= 0: return -math.inf`` followed by more code becomes ``if s <= 0: return -math.inf`` / ``else: <more
code>``: the statements after an ``if`` that may return are moved into each branch that does not always return.
"""
import ast


def always_returns(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def contains_return(stmts):
    for s in stmts:
        for node in ast.walk(s):
            if isinstance(node, ast.Return):
                return True
    return False


def restructure(stmts):
    """Return a new statement list in which every ``return`` ends its block (``For`` bodies never return: the
    fence rejects that)."""
    out = []
    for k, s in enumerate(stmts):
        if isinstance(s, ast.Return):
            out.append(s)
            return out  # anything after it is unreachable
        if isinstance(s, ast.If) and contains_return([s]):
            rest = stmts[k + 1:]
            then = s.body if always_returns(s.body) else s.body + rest
            orelse = s.orelse if always_returns(s.orelse) else s.orelse + rest
            new = ast.If(test=s.test, body=restructure(then), orelse=restructure(orelse))
            ast.copy_location(new, s)
            out.append(new)
            return out
        out.append(s)
    return out
