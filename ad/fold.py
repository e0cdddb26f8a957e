"""Constant folding while lowering: an operation on two literals is computed as Python computes it."""
import ast

_COMPARE = {ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b,
            ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b}


def fold_compare(op, a, b):
    """``a op b`` (``op`` an ``ast`` comparison class) for two constants, or None when it cannot be decided."""
    try:
        return bool(_COMPARE[op](a, b))
    except (KeyError, TypeError):
        return None


def fold(op, a, b):
    """The IR operation ``op`` on two numbers, or None where the result would not be what the compiled kernel
    computes (booleans, a division by zero, an overflow, a huge or negative integer power)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    try:
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            return a / b
        if op == "pow" and isinstance(b, int) and abs(b) < 64 and not (a == 0 and b < 0):
            r = a ** b
            return r if isinstance(r, (int, float)) else None
    except (ZeroDivisionError, OverflowError):
        return None
    return None
