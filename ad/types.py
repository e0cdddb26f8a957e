"""Type inference: every IR variable is ``int``, ``float`` or ``bool``; kernel arguments are arrays (with the
number of indices seen) or scalars.

Python semantics: ``int op float`` is float, ``/`` is always float, a variable assigned both an int and a float
(``s = 0`` then ``s += x[i]``) is float.  An array whose elements are used as indices holds integers; a scalar
argument used as a loop bound or an index is an int.  The active float width (float32/float64) is chosen at
emission time.
"""
from .errors import KernelError, UnsupportedError, error_at
from .ir import AStore, Assign, ExtCall, For, RuleCall, is_var, walk
from .sugar import whole_array_advice

_RANK = {"bool": 0, "int": 1, "float": 2}


def join(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a if _RANK[a] >= _RANK[b] else b


class TypeInfo:
    """``types[var]`` for IR variables, plus argument kinds."""

    def __init__(self, types, arrays, int_arrays, int_scalars):
        self.types = types
        self.arrays = arrays            # argument -> ndim
        self.int_arrays = int_arrays    # arrays whose elements are integers
        self.int_scalars = int_scalars  # scalar arguments used as integers

    def of(self, operand):
        if not is_var(operand):
            v = operand.value
            return "bool" if isinstance(v, bool) else ("int" if isinstance(v, int) else "float")
        if operand in self.types:
            return self.types[operand]
        if operand in self.arrays:
            return "array"
        return "int" if operand in self.int_scalars else "float"


def infer(body, arg_names, array_ndim, filename, active=()):
    arrays = dict(array_ndim)
    int_arrays, int_scalars = set(), set()
    producers = {}
    for s in walk(body):
        if isinstance(s, Assign):
            producers.setdefault(s.dst, s)
    for _ in range(50):
        info = TypeInfo({}, arrays, int_arrays, int_scalars)
        _fixpoint(body, info, filename)
        changed = _integer_contexts(body, info, producers, arg_names, filename, active)
        if not changed:
            return info
    raise KernelError("type inference did not converge", filename, 0, 0)


_BOOL_ARITHMETIC = {"add": "adding", "sub": "subtracting", "mul": "multiplying", "neg": "negating"}


def check_bool_arithmetic(body, info, filename):
    """Reject ``+ - *`` between two booleans and unary minus of one (comparisons used as numbers).

    Their meaning depends on where the booleans came from: Python's ``True + True`` is 2, but a comparison of
    numpy scalars (``theta[0] < theta[1]`` when the sampler calls the plain kernel) is a ``numpy.bool_``, for
    which ``+`` is a logical or, ``*`` a logical and, and ``-`` an error; numba and CUDA follow Python.  No single
    rule matches the plain kernel everywhere, so the kernel must say which it means.  A boolean mixed with a
    number (``(x < y) * x``, ``n + (x > 0)``) means the same everywhere and is accepted."""
    for s in walk(body):
        if isinstance(s, Assign) and s.op in _BOOL_ARITHMETIC and all(info.of(a) == "bool" for a in s.args):
            raise error_at(s.pos,
                f"{_BOOL_ARITHMETIC[s.op]} booleans (comparisons) is ambiguous: Python's True + True is 2 but "
                "numpy's bool (what comparing array elements gives) makes + a logical or, * a logical and and - "
                "an error; write float(a < b) + float(c < d) to count, or `or`/`and` for logic", filename,
                UnsupportedError)


def _result_type(s, info, filename):
    op, args = s.op, s.args
    t = [info.of(a) for a in args]
    read = 1 if op in ("index", "shape") else 0  # the operands read as numbers
    if "array" in t[read:]:
        array = next(a for a, kind in zip(args[read:], t[read:]) if kind == "array")
        raise error_at(s.pos, f"the array argument {array!r} is used as a number here (whole-array arithmetic such "
                       f"as `{array} * theta[0]` is not supported): index it, {array}[i] -- "
                       + whole_array_advice(array), filename)
    if op == "copy":
        return t[0]
    if op in ("add", "sub", "mul"):
        return "float" if "float" in t else "int"
    if op in ("floordiv", "mod"):
        return "float" if "float" in t else "int"
    if op == "div":
        return "float"
    if op == "pow":
        b = args[1]
        if t[0] != "float" and t[1] != "float" and not is_var(b) and b.value >= 0:
            return "int"
        return "float"
    if op == "neg":
        return "int" if t[0] == "bool" else t[0]
    if op in ("cmp", "not"):
        return "bool"
    if op == "index":
        return "int" if args[0] in info.int_arrays else "float"
    if op in ("shape", "toint"):
        return "int"
    if op == "tofloat":
        return "float"
    if op == "load":
        return "bool"  # the stored value's own type wins in the join (scratch holds floats of any origin)
    if op == "aload":
        return "float"
    if op in ("tripcount", "loadint"):
        return "int"
    if op == "call":
        if s.fn in ("isnan", "isinf", "isfinite"):
            return "bool"
        if s.fn in ("floor", "ceil", "trunc"):
            return "int"
        if s.fn == "abs":
            return "int" if t[0] == "bool" else t[0]
        if s.fn in ("min", "max", "minimum", "maximum"):
            return "float" if "float" in t else "int"
        return "float"
    raise AssertionError(op)


def _fixpoint(body, info, filename):
    for _ in range(100):
        changed = False
        for s in walk(body):
            if isinstance(s, Assign):
                new = join(info.types.get(s.dst), _result_type(s, info, filename))
            elif isinstance(s, RuleCall):
                new = "float"
            elif isinstance(s, ExtCall):  # an external function returns a float (or a tuple of floats)
                for v in s.results:
                    if info.types.get(v) != "float":
                        info.types[v] = "float"
                        changed = True
                continue
            elif isinstance(s, For):
                new = "int"
                if s.counter:
                    info.types[s.counter] = "int"
                if info.types.get(s.var) != new:
                    info.types[s.var] = new
                    changed = True
                continue
            else:
                continue
            if info.types.get(s.dst) != new:
                info.types[s.dst] = new
                changed = True
        if not changed:
            return
    raise AssertionError("type fixpoint")


def _integer_contexts(body, info, producers, arg_names, filename, active):
    """Operands used as indices or bounds must be integers; learn int arrays / int scalar arguments."""
    changed = False

    def need_int(op, pos, what):
        nonlocal changed
        if not is_var(op):
            if isinstance(op.value, float):
                raise error_at(pos, f"{what} must be an integer, got {op.value!r}", filename)
            return
        if info.of(op) != "float":
            return
        if op in arg_names and op not in info.arrays:
            info.int_scalars.add(op)
            changed = True
            return
        src = producers.get(op)
        if src is not None and src.op == "index":
            if src.args[0] in active:
                raise error_at(pos, f"{what} must be an integer, but this is an element of the active parameter "
                                    f"array {src.args[0]!r}: parameters are continuous; pass integer sizes as data",
                               filename)
            if src.args[0] not in info.int_arrays:
                info.int_arrays.add(src.args[0])
                changed = True
            return  # the element type is updated in the next round
        if src is not None and src.op == "copy" and is_var(src.args[0]):
            return need_int(src.args[0], pos, what)
        if src is not None and src.op in ("add", "sub", "mul", "neg", "floordiv", "mod"):
            for a in src.args:  # ``x[i + idx[j]]``, a local array's slot ``offset + idx[j]``: each part an integer
                need_int(a, pos, what)
            return
        raise error_at(pos, f"{what} must be an integer, but this value is a float: use int(...) or an integer "
                            "expression", filename)

    for s in walk(body):
        if isinstance(s, Assign) and s.op == "index":
            for a in s.args[1:]:
                need_int(a, s.pos, "an array index")
        elif isinstance(s, Assign) and s.op == "shape":
            need_int(s.args[1], s.pos, "a shape index")
        elif isinstance(s, Assign) and s.op == "aload":
            need_int(s.args[0], s.pos, "an array index")
        elif isinstance(s, AStore):
            need_int(s.slot, s.pos, "an array index")
        elif isinstance(s, For):
            for a in (s.start, s.stop, s.step):
                need_int(a, s.pos, "a range() bound")
    return changed
