"""Guarded adjoint products ``nz_mul(a, b)`` / ``nz_div(a, b)``: ``a * b`` (``a / b``), but exactly 0 when the
adjoint ``a`` is 0 -- so a partial that overflowed to inf (or became NaN) after its value stopped mattering
adds nothing (``ir.GUARD``).

Generated code calls them instead of writing ``(a * b if a != 0 else 0.0)``: a conditional expression is a branch
in the bytecode, and numba's compile time grows with (branches x variables) -- a long straight-line kernel with
one branch per adjoint product took minutes.  Under numba (CPU and CUDA) they are intrinsics that lower to one
``fcmp`` and one ``select`` (no call, no branch, nothing for ``compile_ptx`` to link); in plain Python (and the
CUDA simulator) the Python functions below run.
"""
import numba
from numba import types
from numba.extending import intrinsic


def nz_mul(a, b):
    return a * b if a != 0 else 0.0


def nz_div(a, b):
    return a / b if a != 0 else 0.0


def _guarded(opname):
    @intrinsic
    def guarded(typingctx, a, b):
        if not all(isinstance(t, (types.Float, types.Integer, types.Boolean)) for t in (a, b)):
            return None
        floats = [t for t in (a, b) if isinstance(t, types.Float)]
        result = max(floats, key=lambda t: t.bitwidth) if floats else types.float64

        def codegen(context, builder, signature, args):
            x, y = (context.cast(builder, v, t, result) for v, t in zip(args, signature.args))
            value = getattr(builder, opname)(x, y)
            zero = x.type(0.0)
            # unordered !=: a NaN adjoint still propagates; only an exact zero selects 0
            return builder.select(builder.fcmp_unordered("!=", x, zero), value, zero)

        return result(a, b), codegen
    return guarded


nz_mul_jit = _guarded("fmul")
nz_div_jit = _guarded("fdiv")


def for_target(target):
    """(mul, div) to bind in a generated module: intrinsics, or the Python functions where code runs as Python."""
    if target == "python" or (target == "cuda" and numba.config.ENABLE_CUDASIM):
        return nz_mul, nz_div
    return nz_mul_jit, nz_div_jit
