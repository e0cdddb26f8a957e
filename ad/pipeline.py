"""The pass pipeline: parse → fence → lower → types → activity → loops/reverse → dce → (emit).

``compile_kernel`` returns a ``Compiled`` record holding the IR of every generated function; ``module_source``
prints it for one float width and target.
"""
from dataclasses import dataclass, replace

from . import activity as activity_pass
from . import dce, external, fence, intrange, local_arrays, loops, names, types
from .emit import function_source
from .errors import NO_POS, KernelError, Pos
from .fusion import strip_effects
from .hoist import hoist
from .ir import Assign, Return, is_var, rename, walk
from .lower import lower_function
from .optimise import NameSource, allows, optimise
from .nested_rows import DEFAULT_BUDGET
from .reverse import Reverse


@dataclass
class Compiled:
    name: str
    filename: str
    line: int
    arg_names: tuple  # as the kernel spells them
    wrt: tuple
    ir_args: tuple    # as the IR and the generated code spell them (names.py)
    ir_wrt: tuple
    grad_names: tuple
    scratch: str
    value_ir: list
    vg_ir: list
    grad_ir: list
    size_ir: list
    size_ret: object
    types: object
    activity: object
    loops: list
    helpers: list
    sources: list

    arrays: list = ()
    store_budget: int = 0  # nested_rows.py

    @property
    def rows_loops(self):
        return [i for i in self.loops if i.rows_of >= 0]

    @property
    def needs_scratch(self):
        return any(i.stored or i.snapshots for i in self.loops) or bool(self.arrays)


def _as_tuple(wrt):
    return (wrt,) if isinstance(wrt, str) else tuple(wrt)


def compile_kernel(src, wrt="theta", store_budget=DEFAULT_BUDGET):
    wrt = _as_tuple(wrt)
    fence.check_signature(src.node, src.filename)  # before `wrt` is looked up among the plain arguments
    for w in wrt:
        if w not in src.arg_names:
            raise KernelError(f"wrt names {w!r}, which is not an argument of {src.name}{src.arg_names}",
                              src.filename, src.node.lineno, src.node.col_offset + 1)
    fence.check_kernel(src)
    ir_of = names.ir_names(src.arg_names)
    try:
        c = _compile(src, tuple(ir_of[w] for w in wrt), store_budget)
    except KernelError as e:  # the passes after the fence name the arguments as the IR does
        text = names.user_text(e.message, ir_of)
        if text == e.message:
            raise
        raise type(e)(text, e.filename, e.lineno, e.col) from None
    return replace(c, arg_names=src.arg_names, wrt=wrt)


def _compile(src, wrt, store_budget):
    """``compile_kernel`` after the fence, on the arguments as the IR names them (``Compiled.ir_args``)."""
    where_line = src.node.lineno
    body, ret, ctx = lower_function(src)
    arg_names = ctx.arg_names
    external.resolve_arguments(body, ctx.array_ndim, arg_names, src.filename)
    # local arrays' places in scratch, computed from the arguments first in every generated function
    producers = {}
    for s in walk(body):
        if isinstance(s, Assign):
            producers.setdefault(s.dst, s)
    layout, arrays_end = local_arrays.layout(ctx.local_arrays, producers, loops.assignment_counts(body),
                                             src.filename, arg_names, wrt)
    tinfo = types.infer(layout + body, arg_names, ctx.array_ndim, src.filename, wrt)
    types.check_bool_arithmetic(body, tinfo, src.filename)
    int_ranges = intrange.check(layout + body, tinfo, arg_names, src.filename)
    if is_var(ret) and ret in tinfo.arrays or (ret in wrt):
        line, col = ctx.returns[-1][:2] if ctx.returns else (where_line, 1)
        raise KernelError(f"the kernel returns the array {ret!r}: a kernel returns one scalar (e.g. a sum over "
                          "its elements)", src.filename, line, col)
    _check_active_arguments(src, body, tinfo, wrt)
    # scalar float arguments: convert once at entry, so an int passed for a float (or a float64 in float32 mode)
    # does not change the arithmetic
    prologue, mapping = [], {}
    for a in arg_names:
        if a not in tinfo.arrays and a not in tinfo.int_scalars:
            mapping[a] = f"{a}__f"
            prologue.append(Assign(mapping[a], "tofloat", [a]))
    body = prologue + rename(body, mapping)
    if is_var(ret):
        ret = mapping.get(ret, ret)
    body = dce.eliminate(body, {ret} if is_var(ret) else set())
    body = hoist(body, wrt)
    tinfo = types.infer(layout + body, arg_names, tinfo.arrays, src.filename)
    act = activity_pass.analyse(body, ret, wrt, tinfo)

    rev = Reverse(body, ret, act, tinfo, ctx, wrt, src.filename, int_ranges, layout, arrays_end, store_budget)
    ret_pos = ctx.returns[-1] if ctx.returns else NO_POS
    vg = rev.program(with_value=True)
    vg = dce.eliminate(vg + [Return(rev.value_name or ret, pos=ret_pos)], set())
    gr = dce.eliminate(rev.program(with_value=False), set())
    size_ir, size_ret = rev.scratch_size_program()
    value_ir = layout + body + [Return(ret, pos=ret_pos)]
    all_ir = value_ir + vg + gr + size_ir
    gtypes = types.infer(all_ir, arg_names, tinfo.arrays, src.filename)
    gtypes.int_scalars |= tinfo.int_scalars
    gtypes.int_arrays |= tinfo.int_arrays
    return Compiled(src.name, src.filename, where_line, arg_names, wrt, arg_names, wrt,
                    tuple(rev.grad_names[w] for w in wrt), rev.scratch, value_ir, vg, gr, size_ir, size_ret,
                    gtypes, act, [rev.info[k] for k in sorted(rev.info)], list(ctx.helpers), list(ctx.sources),
                    list(ctx.local_arrays), store_budget)


def _optimised(c, fastmath):
    """A copy of ``c`` with ``optimise.optimise`` applied to its three generated functions."""
    arcp, reassoc = allows(fastmath, "arcp"), allows(fastmath, "reassoc")
    fresh = NameSource(c.value_ir, c.vg_ir, c.grad_ir, c.size_ir)
    vg_ir, grad_ir = (optimise(ir, c.types, fresh, arcp, reassoc) for ir in (c.vg_ir, c.grad_ir))
    # ``value`` is ``value_and_grad`` without its gradient work, so both return the same bits: the passes may
    # reassociate the primal's sums differently depending on what the adjoint shares with them
    value_ir = dce.eliminate(strip_effects(vg_ir, primal=True), set())
    return replace(c, value_ir=value_ir, vg_ir=vg_ir, grad_ir=grad_ir)


def _check_active_arguments(src, body, tinfo, wrt):
    """Active arguments are 1-D float arrays (an unused one is allowed: its gradient is zero)."""
    where_line = src.node.lineno
    for w in wrt:
        nd = tinfo.arrays.get(w)
        if nd is None:
            used = any(is_var(a) and a == w for s in walk(body) if isinstance(s, Assign) for a in s.args)
            if used:
                raise KernelError(f"active argument {w!r} must be a 1-D float array indexed as {w}[i]",
                                  src.filename, where_line, src.node.col_offset + 1)
            tinfo.arrays[w] = 1
        elif nd == -1:
            tinfo.arrays[w] = 1
        elif nd != 1:
            raise KernelError(f"active argument {w!r} must be a 1-D array, but it is indexed with {nd} indices",
                              src.filename, where_line, src.node.col_offset + 1)
        if w in tinfo.int_arrays:
            raise KernelError(f"active argument {w!r} is used as an integer index array", src.filename,
                              where_line, src.node.col_offset + 1)


def module_source(c, dtype="float64", target="python", fastmath=True, wide_sums=False):
    """The generated module: plain functions (``target='python'``), or with numba wrappers added by the
    caller for ``cpu``/``cuda``.  CUDA modules leave out the allocating wrappers.

    ``fastmath``: the flags the module is compiled with (a set of LLVM flag names, or a bool); they decide which
    of ``optimise.py``'s passes may run (reciprocals need ``arcp``, factoring needs ``reassoc``).  The python
    and CUDA modules take the default (all passes): their results differ from the unoptimised code by rounding
    only, and the CUDA device functions must not divide in their inner loops (``div.rn`` is slow).

    ``wide_sums``: a float32 module keeps the sums its loops accumulate (values and adjoints) in float64
    (``emit.loop_sums``); the rest of its arithmetic stays float32."""
    c = _optimised(c, fastmath)
    wide_sums = bool(wide_sums) and dtype == "float32"
    args = list(c.ir_args)
    grads = list(c.grad_names)
    np_dtype = "np.float32" if dtype == "float32" else "np.float64"
    sums = ", sums float64" if wide_sums else ""
    parts = [f"# generated by nestgrad's differentiator from {c.filename}:{c.line} ({c.name}); dtype {dtype}{sums}\n"
             "import math\n\nimport numpy as np\n\nfrom nestgrad.ad import selects\n\n"
             f"_nz_mul, _nz_div = selects.for_target({target!r})\n" + _external_header(c, target)]
    origin = Pos(c.line, 0, c.filename)
    fs = lambda name, params, ir, doc: function_source(name, params, ir, c.types, dtype, c.scratch, doc, origin,
                                                       c.ir_wrt, wide_sums)
    # Every kernel has raw_value(..., scratch), the primal the batch drivers and samplers call with the sample's
    # scratch row, so that no call allocates; local arrays live in that row. value() without scratch is for
    # callers holding none: it allocates when the kernel has local arrays, and is absent on CUDA then.
    parts.append(fs("raw_value", args + [c.scratch], c.value_ir, "primal value; scratch: per-sample buffer "
                    "of scratch_size(*args) elements (the local arrays live there)"))
    if c.arrays:
        if target != "cuda":
            parts.append(f"def value({', '.join(args)}):\n"
                         f"    {c.scratch} = np.empty(scratch_size({', '.join(args)}), {np_dtype})\n"
                         f"    return raw_value({', '.join(args + [c.scratch])})\n")
    else:
        parts.append(fs("value", args, c.value_ir, "primal value"))
    parts.append(fs("raw_value_and_grad", args + grads + [c.scratch], c.vg_ir,
                    "value and gradient; scratch: per-sample buffer of scratch_size(*args) elements"))
    parts.append(fs("raw_grad", args + grads + [c.scratch], c.grad_ir, "gradient only (value not needed)"))
    if target != "cuda":
        parts.append(fs("scratch_size", args, c.size_ir + [Return(c.size_ret, as_int=True)],
                        "scratch elements per sample"))
        if c.needs_scratch:
            call = ", ".join(args)
            parts.append(f"def value_and_grad({', '.join(args + grads)}):\n"
                         f"    {c.scratch} = np.empty(scratch_size({call}), {np_dtype})\n"
                         f"    return raw_value_and_grad({', '.join(args + grads + [c.scratch])})\n")
            parts.append(f"def grad({', '.join(args + grads)}):\n"
                         f"    {c.scratch} = np.empty(scratch_size({call}), {np_dtype})\n"
                         f"    raw_grad({', '.join(args + grads + [c.scratch])})\n")
        else:
            parts.append(fs("value_and_grad", args + grads, c.vg_ir, "value and gradient"))
            parts.append(fs("grad", args + grads, c.grad_ir, "gradient only (value not needed)"))
    if target == "python":  # for report(): what each nested loop's rows need (nested_rows.py)
        for info in c.rows_loops:
            parts.append(fs(f"rows_need{info.loop_id}", args,
                            c.size_ir + [Return(info.rows_names["rows_need"], as_int=True)],
                            "scratch elements the rows of one nested loop need"))
    return "\n\n".join(parts)


def _external_header(c, target):
    """Bindings of the functions the module calls without inlining them (external.py), compiled for ``target``."""
    keys = external.used_keys(c.value_ir, c.vg_ir, c.grad_ir)
    if not keys:
        return ""
    lines = ["from nestgrad.ad import external as _external"]
    lines += [f"{external.global_name(k)} = _external.function({k!r}, {target!r})" for k in keys]
    return "\n".join(lines) + "\n"
