"""``ad.differentiate`` / ``ad.differentiate_source`` and the ``Derivative`` object they return."""
import ast
import functools

import numpy as np

from . import cache, ieee, parse
from .emit import function_source
from .errors import Pos, Where
from .ir import uses, walk
from .nested_rows import DEFAULT_BUDGET
from .pipeline import compile_kernel, module_source
from .report import make_report
from .sugar import whole_array_advice

DEFAULT_FASTMATH = frozenset({"reassoc", "contract", "arcp", "nsz", "afn"})
_DTYPES = {"float64": np.float64, "float32": np.float32}
_CPU_FUNCS = ("value", "raw_value_and_grad", "raw_grad", "scratch_size", "value_and_grad", "grad", "raw_value")
_CUDA_FUNCS = ("value", "raw_value_and_grad", "raw_grad", "raw_value")  # no value where the kernel has local arrays


def differentiate(fn, wrt="theta", store_budget=DEFAULT_BUDGET):
    """Differentiate the per-sample kernel ``fn`` with respect to the argument(s) named in ``wrt``.

    ``store_budget``: scratch elements per sample that a storing loop nested in another may take to keep its
    stored values for every iteration of the outer loop, instead of recomputing them (ad/nested_rows.py); it
    changes speed and scratch size, never results."""
    return Derivative(parse.from_function(fn), wrt, store_budget)


def differentiate_source(text, name, wrt="theta", filename="<string>", store_budget=DEFAULT_BUDGET):
    """Differentiate function ``name`` defined in the source ``text`` (helpers in the same text are found)."""
    return Derivative(parse.from_text(text, name, filename), wrt, store_budget)


def _dtype_name(dtype, what="dtype"):
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = repr(dtype)
    if name not in _DTYPES:
        raise ValueError(f"{what} must be float32 or float64, got {name}")
    return name


def wide_sums(dtype, sum_dtype):
    """Whether a build of ``dtype`` keeps its loops' sums in float64: ``sum_dtype`` None (the sums in
    ``dtype``) or a float dtype at least as wide as ``dtype``."""
    if sum_dtype is None:
        return False
    name = _dtype_name(sum_dtype, "sum_dtype")
    if np.dtype(name).itemsize < np.dtype(dtype).itemsize:
        raise ValueError(f"sum_dtype {name} is narrower than dtype {dtype}: sums can only be kept wider")
    return name != dtype


class Kernels:
    """Compiled per-sample functions of one target and dtype (attributes named as in docs/internals.md, section "ad")."""

    def __init__(self, module, names, source, dtype, needs_scratch):
        self.source = source
        self.dtype = dtype
        self.module = module
        for n in names:
            if hasattr(module, n):  # a CUDA module of a kernel with local arrays has no value (it would allocate)
                setattr(self, n, getattr(module, n))
        self.python = {n: getattr(module, "py_" + n) for n in names if hasattr(module, "py_" + n)}
        if not hasattr(self, "value_and_grad") and not needs_scratch:
            self.value_and_grad = self.raw_value_and_grad
            self.grad = self.raw_grad


class Derivative:
    """The generated primal and adjoint of one kernel; docs/internals.md, section "ad"."""

    def __init__(self, src, wrt="theta", store_budget=DEFAULT_BUDGET):
        self._src = src
        self._c = compile_kernel(src, wrt, store_budget)
        c = self._c
        self.name = c.name
        self.arg_names = c.arg_names
        self.wrt = c.wrt
        self.needs_scratch = c.needs_scratch
        self.source = module_source(c, "float64", "python")
        self.primal_source = module_source_primal(c)
        self._key_parts = (src.text, tuple(c.sources), tuple(c.wrt))
        digest = cache.key(*self._key_parts, "python", self.source)
        self._py = cache.load_module(c.name + "_py", digest, self.source)
        self._ieee_twin = None
        # plain Python, and where it raises for inf or NaN arithmetic, the compiled code's IEEE answer (ad/ieee.py)
        for name in ("value", "raw_value", "value_and_grad", "grad", "raw_value_and_grad", "raw_grad"):
            setattr(self, name, self._diagnosed(ieee.with_twin(getattr(self._py, name), self._twin)))
        self._compiled = {}

    def _diagnosed(self, fn):
        """``fn`` whose failure on an array passed for an argument the kernel uses as a number is that
        :meth:`argument_problem` (the generated code's ``float(x)`` said "only 0-dimensional arrays can be
        converted to Python scalars"); the check runs only once the call has failed."""
        @functools.wraps(fn)
        def call(*args):
            try:
                return fn(*args)
            except (TypeError, ValueError):
                problem = self.argument_problem(args)
                if problem is None:
                    raise
                raise problem from None
        return call

    def argument_problem(self, args):
        """A ``KernelError`` for the first argument that the kernel reads as a number but that ``args`` gives as
        an array of more than one element (whole-array arithmetic such as ``x * theta[0]`` makes ``x`` a number),
        else None."""
        c = self._c
        read = set().union(*(uses(s) for s in walk(c.value_ir)))  # (an argument never read may be anything)
        for name, ir_name, value in zip(c.arg_names, c.ir_args, args):
            if name in c.wrt or ir_name in c.types.arrays or ir_name not in read or np.size(value) == 1:
                continue
            where = Where(self._src.filename)
            reads = [n for n in ast.walk(self._src.node) if isinstance(n, ast.Name) and n.id == name
                     and isinstance(n.ctx, ast.Load)]
            node = min(reads, key=lambda n: (n.lineno, n.col_offset), default=self._src.node)  # the first read
            return where.error(node, f"{c.name}() uses its argument {name!r} as a number here (it never indexes "
                                     f"it), but an array of shape {np.shape(value)} was passed: pass a "
                                     f"number, or, if {name!r} is an array, index it -- whole-array arithmetic "
                                     f"such as `{name} * theta[0]` is not supported; "
                                     + whole_array_advice(name))
        return None

    def _twin(self):
        """The Python module with IEEE arithmetic (``ad.ieee.twin_source``), made on first use."""
        if self._ieee_twin is None:
            text = ieee.twin_source(self.source)
            digest = cache.key(*self._key_parts, "python ieee", text)
            self._ieee_twin = cache.load_module(self.name + "_ieee", digest, text)
        return self._ieee_twin

    def scratch_size(self, *args):
        """Scratch elements per sample for these kernel arguments (0 when nothing is stored)."""
        if not self.needs_scratch:
            return 0
        return int(self._py.scratch_size(*args))

    def report(self, *args, dtype="float64"):
        dtype = _dtype_name(dtype)
        n = self.scratch_size(*args) if args else (0 if not self.needs_scratch else None)
        need = {i.loop_id: int(getattr(self._py, f"rows_need{i.loop_id}")(*args)) for i in self._c.rows_loops} \
            if args else None
        return make_report(self._c, n, np.dtype(dtype).itemsize, dtype, need)

    def jit(self, fastmath=DEFAULT_FASTMATH, dtype="float64", sum_dtype=None):
        """numba-compiled ``value``, ``raw_value``, ``value_and_grad``, ``grad``, ``raw_value_and_grad``,
        ``raw_grad``; ``sum_dtype="float64"`` keeps a float32 build's loop sums in float64."""
        dtype = _dtype_name(dtype)
        wide = wide_sums(dtype, sum_dtype)
        flags = sorted(fastmath) if not isinstance(fastmath, bool) else fastmath
        k = ("cpu", dtype, repr(flags)) + (("sums float64",) if wide else ())
        if k not in self._compiled:
            text = module_source(self._c, dtype, "cpu", fastmath, wide) + _cpu_footer(flags)
            digest = cache.key(*self._key_parts, *k, text)
            module = cache.load_module(self.name + "_cpu", digest, text)
            self._compiled[k] = Kernels(module, _CPU_FUNCS, text, dtype, self.needs_scratch)
        return self._compiled[k]

    def cuda(self, dtype="float32", sum_dtype=None):
        """numba.cuda device functions ``raw_value``, ``raw_value_and_grad``, ``raw_grad`` and, for kernels
        without local arrays, ``value`` (self-contained); ``sum_dtype="float64"``: as in :meth:`jit`."""
        dtype = _dtype_name(dtype)
        wide = wide_sums(dtype, sum_dtype)
        k = ("cuda", dtype) + (("sums float64",) if wide else ())
        if k not in self._compiled:
            text = module_source(self._c, dtype, "cuda", wide_sums=wide) + _cuda_footer()
            digest = cache.key(*self._key_parts, *k, text)
            module = cache.load_module(self.name + "_cuda", digest, text)
            self._compiled[k] = Kernels(module, _CUDA_FUNCS, text, dtype, self.needs_scratch)
        return self._compiled[k]

    @property
    def cache_files(self):
        """Paths of the generated modules written so far (python, and any jit/cuda variants)."""
        files = [self._py.__file__] + [k.module.__file__ for k in self._compiled.values()]
        return files


def module_source_primal(c):
    return function_source(c.name, list(c.ir_args), c.value_ir, c.types, "float64", c.scratch,
                           origin=Pos(c.line, 0, c.filename))


def _cpu_footer(flags):
    fm = repr(flags) if isinstance(flags, bool) else "{" + ", ".join(repr(f) for f in flags) + "}"
    if fm == "{}":
        fm = "False"
    lines = ["", "", "import numba", "", f"_OPTIONS = dict(fastmath={fm}, error_model='numpy', cache=True)"]
    for n in _CPU_FUNCS:
        lines.append(f"py_{n} = {n}")
    for n in _CPU_FUNCS:
        lines.append(f"{n} = numba.njit(**_OPTIONS)({n})")
    return "\n".join(lines) + "\n"


def _cuda_footer():
    lines = ["", "", "from numba import cuda", ""]
    for n in _CUDA_FUNCS:  # a kernel with local arrays has no value on CUDA
        lines.append(f"if {n!r} in globals():\n    py_{n} = {n}\n    {n} = cuda.jit(device=True)({n})")
    return "\n".join(lines) + "\n"
