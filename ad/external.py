"""Calls that are not inlined: functions with an adjoint-form ``@ad.rule`` (rules.py), and compiled primals.

Such a function's body is never read.  Lowering emits an ``ExtCall`` statement: local arrays are passed whole as
``View``s of their scratch region, array arguments of the kernel by name, numbers as operands.  The reverse pass
(external_adjoint.py) calls the rule's adjoint.  Generated modules fetch the functions at import time from the
table here, compiled for their target (``function``): numba dispatchers are used as they are when they match the
target and otherwise recompiled from their ``py_func``; plain Python is compiled with ``numba.njit`` or
``cuda.jit(device=True)``, and the pure-Python module calls the Python function itself.

Whether a kernel argument passed bare is an array or a number is decided after lowering (``resolve_arguments``):
an argument indexed anywhere is an array, one used as a number is a number, and any other is settled by the
adjoint's parameter count (which says how many of the call's arguments are arrays).
"""
import ast
import hashlib

from . import rules
from .errors import UnsupportedError, error_at
from .ir import AStore, Assign, Const, ExtCall, View, is_var, uses, walk

_TABLE = {}      # key -> the function as registered
_COMPILED = {}   # (key, target) -> the callable for that target
_OWN = __name__.rsplit(".", 1)[0] + "."  # nestgrad.ad: its functions may use numba's on-disk cache


def python_function(fn):
    return getattr(fn, "py_func", fn)


def key(fn):
    """A name for ``fn`` that is stable across processes and says what it computes: module, qualified name and a
    hash of its bytecode and of the globals it reads (numbers, and the functions it calls, alike), so that a
    generated module -- and numba's on-disk cache of it -- never serves a different function under the same
    name; registers ``fn`` under it."""
    py = python_function(fn)
    digest = hashlib.sha256(_fingerprint(py, set()).encode()).hexdigest()[:12]
    k = f"{getattr(py, '__module__', None) or '?'}.{getattr(py, '__qualname__', repr(py))}:{digest}"
    _TABLE.setdefault(k, fn)
    return k


_PLAIN = (int, float, complex, str, bytes, bool, type(None))


def _fingerprint(obj, seen):
    """Text standing for what ``obj`` computes (bytecode, constants, the values of the globals and closure cells
    it reads, recursively); the object's id where that cannot be known (then nothing is shared or cached)."""
    if isinstance(obj, _PLAIN) or (isinstance(obj, tuple) and all(isinstance(v, _PLAIN) for v in obj)):
        return repr(obj)
    if type(obj).__name__ == "module":
        return "module " + obj.__name__
    if hasattr(obj, "co_code"):
        return repr((obj.co_code, obj.co_names, [_fingerprint(c, seen) for c in obj.co_consts]))
    py = python_function(obj)
    code = getattr(py, "__code__", None)
    if code is None:
        return f"{type(obj).__name__} {getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', id(obj))}"
    if id(py) in seen:
        return "recursion"
    seen.add(id(py))
    scope = getattr(py, "__globals__", {})
    names = [(n, _fingerprint(scope[n], seen)) for n in code.co_names if n in scope]
    cells = [_fingerprint(c.cell_contents, seen) for c in (py.__closure__ or ()) if _filled(c)]
    return repr((_fingerprint(code, seen), names, cells, type(obj).__name__))


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def global_name(k):
    """The name the generated module binds the function of key ``k`` to."""
    return "_ext_" + hashlib.sha256(k.encode()).hexdigest()[:12]


def function(k, target):
    """The function of key ``k`` for ``target`` (``python``, ``cpu``, ``cuda``); called by generated modules."""
    if (k, target) in _COMPILED:
        return _COMPILED[(k, target)]
    if k not in _TABLE:
        _register_by_name(k)
    if k not in _TABLE:
        raise LookupError(f"nestgrad: the generated module calls {k}, which this process has not registered: "
                          "differentiate the kernel (ad.differentiate) before importing its generated module")
    fn = _TABLE[k]
    py = python_function(fn)
    if target == "python":
        out = py
    elif target == "cpu":
        import numba
        from numba.core.registry import CPUDispatcher

        out = fn if isinstance(fn, CPUDispatcher) else numba.njit(cache=py.__module__.startswith(_OWN))(py)
    elif target == "cuda":
        from numba import cuda

        device = getattr(fn, "targetoptions", {}).get("device") and type(fn).__module__.startswith("numba.cuda")
        out = fn if device else cuda.jit(device=True)(py)
    else:
        raise ValueError(target)
    _COMPILED[(k, target)] = out
    return out


def _register_by_name(k):
    """Register the function of key ``k`` from its module when this process has not differentiated the kernel
    that calls it (the child process that compiles the sampler's kernel imports the generated module, with the
    modules the functions live in, but differentiates nothing): the module is taken from ``sys.modules`` or
    imported by name, and the function is registered only if its key (digest included) is ``k``."""
    import importlib
    import sys

    path = k.rpartition(":")[0]
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:cut])
        module = sys.modules.get(name)
        if module is None:
            try:
                module = importlib.import_module(name)
            except Exception:  # noqa: BLE001 - not a module by that name: a shorter prefix may be
                continue
        obj = module
        for attribute in parts[cut:]:
            obj = getattr(obj, attribute, None)
        if obj is not None and callable(obj) and key(obj) == k:
            return


def used_keys(*programs):
    """Keys of every function the programs call, in first-use order."""
    out = {}
    for stmts in programs:
        for s in walk(stmts):
            if isinstance(s, ExtCall):
                out.setdefault(s.fn, None)
    return list(out)


# ---- lowering ------------------------------------------------------------------------------------------

def lower_call(low, e, fn, rule, discard):
    """Lower the call ``e`` of ``fn`` (an ``rules.AdjointRule``): an ``ExtCall``; its result operand."""
    if len(e.args) != rule.nargs:
        raise low.err(e, f"{rule.name}() takes {rule.nargs} arguments, got {len(e.args)}")
    args = [_argument(low, a) for a in e.args]
    views = [(k, a) for k, a in enumerate(args) if isinstance(a, View)]
    written = [k for k, _ in views] if rule.writes is None else [k for k in rule.writes]
    for k in written:
        if not isinstance(args[k], View):
            raise low.unsupported(e.args[k], f"{rule.name} writes into its argument {k + 1}, which must then be a "
                                             "local array (`buf = np.zeros(n)`): inputs are never written")
    for k, a in views:
        if any(a.array == b.array for j, b in views if j != k) and (k in written):
            raise low.unsupported(e.args[k], f"the local array {e.args[k].id!r} is passed twice to {rule.name}, "
                                             "which writes into it: pass another array")
    results = [] if discard else [low.fresh(rule.name)]
    low.emit(ExtCall(key(rule.primal), args, results, rule, tuple(args[k].array for k in written),
                     pos=low.pos(e)))
    return results[0] if results else Const(0.0)


def primal_call(low, e, fn, args):
    """The statement calling a compiled primal whose partials are inlined (a scalar ``@ad.rule``); its result."""
    if any(not (is_var(a) or isinstance(a, Const)) for a in args):
        raise low.unsupported(e, f"the partials rule of {getattr(fn, '__name__', 'f')} takes numbers: for array "
                                 "arguments register an adjoint rule (docs/api.md, `ad.rule`)")
    dst = low.fresh(getattr(fn, "__name__", "f"))
    low.emit(ExtCall(key(fn), list(args), [dst], None, pos=low.pos(e)))
    return dst


def _argument(low, a):
    info = low.local_array(a)
    if info is not None:
        return View(info.name, info.offset, tuple(info.dims))
    if isinstance(a, ast.Name) and is_var(low.env.get(a.id)) and low.env[a.id] in low.ctx.arg_names:
        return low.env[a.id]  # a kernel argument: an array or a number, decided by resolve_arguments
    value = low.expr(a)
    if not is_var(value) and not isinstance(value, Const):
        raise low.unsupported(a, "pass local arrays, array arguments or numbers")
    return value


# ---- after lowering: which bare kernel arguments are arrays ---------------------------------------------

def resolve_arguments(body, array_ndim, arg_names, filename):
    """Decide for every kernel argument passed bare to a call whether it is an array (recorded in ``array_ndim``
    with an unknown rank, -1) or a number; check each adjoint's parameter count against its call."""
    numbers = set()
    for s in walk(body):
        if isinstance(s, ExtCall):
            continue
        read = uses(s)
        if isinstance(s, Assign) and s.op in ("index", "shape"):
            read = {a for a in s.args[1:] if is_var(a)}
        numbers |= {a for a in read if a in arg_names}
    for s in walk(body):
        if not isinstance(s, ExtCall) or s.reverse_only:
            continue
        bare = [a for a in s.args if is_var(a) and a in arg_names]
        known = sum(isinstance(a, View) or a in array_ndim for a in s.args)
        unknown = [a for a in bare if a not in array_ndim and a not in numbers]
        if not isinstance(s.rule, rules.AdjointRule):
            continue  # a compiled primal with inlined partials: numbers only
        want = s.rule.nparams - s.rule.nargs - 1
        if known == want:
            decided = []
        elif known + len(unknown) == want:
            decided = unknown
        else:
            raise error_at(s.pos, f"the adjoint rule of {s.rule.name} takes {s.rule.nparams} parameters: its "
                           f"{s.rule.nargs} arguments, g, and one adjoint per array argument -- so {want} of them "
                           f"should be arrays, but this call passes {known} array(s) and {len(unknown)} argument(s) "
                           f"({', '.join(unknown) or '-'}) used nowhere else, which could be either",
                           filename, UnsupportedError)
        for a in decided:
            array_ndim[a] = -1


def call_positions(s, types):
    """(positions of array arguments, positions of number arguments) of an ``ExtCall``."""
    arrays, numbers = [], []
    for k, a in enumerate(s.args):
        is_array = isinstance(a, View) or (is_var(a) and a in types.arrays)
        (arrays if is_array else numbers).append(k)
    return arrays, numbers


def top_level_first_touch(body, call, arrays):
    """True when ``call`` is a top-level statement of ``body`` and nothing before it reads or writes any of
    ``arrays`` (so their contents before the call matter to no one)."""
    names = set(arrays)
    for s in body:
        if s is call:
            return True
        for x in walk([s]):
            touched = set()
            if isinstance(x, Assign) and x.op == "aload":
                touched = {x.fn}
            elif isinstance(x, ExtCall):
                touched = {a.array for a in x.args if isinstance(a, View)}
            elif isinstance(x, AStore):
                touched = {x.array}
            if touched & names:
                return False
    return False
