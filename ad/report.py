"""``Derivative.report()``: activity, each loop's class, what is recomputed or stored, scratch per sample.

Phrases are fixed so tests and users can search for them: ``independent-iteration reduction``,
``loop-carried state``, ``nothing stored``, ``stored in scratch``, ``scratch: N bytes per sample``.
"""
import re

from .ir import Assign, ExtCall, walk
from .loops import CARRIED, render
from .names import SUFFIX, user_text


def user_name(ir_name):
    """``y__12`` → ``y`` (the kernel's own spelling of an IR variable); ``np__arg__3`` → ``np``."""
    return re.sub(r"__\d+$", "", ir_name.replace("__f", "")).removesuffix(SUFFIX)


def make_report(c, scratch_elements=None, itemsize=8, dtype="float64", rows_need=None):
    """``rows_need``: loop id -> the elements its rows need for the example arguments (nested_rows.py)."""
    lines = [f"kernel {c.name} ({c.filename}:{c.line})"]
    data = [a for a in c.arg_names if a not in c.wrt]
    lines.append(f"active arguments: {', '.join(c.wrt)}")
    zero = [w for w, ir in zip(c.wrt, c.ir_wrt) if ir not in c.activity.active_args]
    if zero:
        lines.append(f"  (the result does not depend on: {', '.join(zero)}; their gradient is zero)")
    lines.append(f"data arguments (no shadow): {', '.join(data) if data else '-'}")
    if c.helpers:
        lines.append(f"inlined functions: {', '.join(dict.fromkeys(c.helpers))}")
    if not c.loops:
        lines.append("loops: none (straight-line code: every value is recomputed in the reverse sweep, "
                     "nothing stored)")
    terms = []
    arrays = {a.name: a for a in c.arrays}
    producers = {s.dst: s for s in walk(c.value_ir) if isinstance(s, Assign)}
    size_of = lambda a: _size(a, producers, c.ir_args)  # noqa: E731
    for a in c.arrays:
        active = c.activity.is_active(a.name)
        lines.append(f"local array {a.user_name} (line {a.line}): {size_of(a)} elements in scratch"
                     + (f", and its adjoint ({size_of(a)} more)" if active else " (no derivative flows through it)"))
        terms.append(f"{'2*' if active else ''}{size_of(a)}")
    for call in (x for x in walk(c.value_ir) if isinstance(x, ExtCall)):
        lines.append(_call_line(call, arrays, size_of, terms))
    by_id = {i.loop_id: i for i in c.loops}
    for info in c.loops:
        indent = "  " * (info.depth + 1)
        rows = _rows_lines(info, by_id, arrays, size_of, (c.store_budget, itemsize), rows_need, indent)
        times = f" x rows{info.line}" if rows else ""
        where = f"loop at line {info.line}"
        if info.exits_early:
            where += (" (may break: the iterations that ran are counted, the reverse sweep runs only those; "
                      "scratch is sized for the full range)")
        if info.klass == CARRIED:
            names = ", ".join(dict.fromkeys(user_name(v) for v in info.stored))
            m = info.slots_per_iteration
            if m:
                lines.append(f"{indent}{where}: {CARRIED}; the values carried into each iteration ({names}) are "
                             f"stored in scratch ({m} per iteration x {info.trip_formula} iterations{times}) and "
                             f"read back in the reverse sweep")
                terms.append((f"{m}*{info.trip_formula}" if m != 1 else info.trip_formula) + times.replace(" x ", "*"))
            else:
                lines.append(f"{indent}{where}: {CARRIED} (local arrays only); its scalars are recomputed")
            lines.extend(rows)
            for name in info.snapshots:
                a = arrays[name]
                lines.append(f"{indent}  local array {a.user_name}: stored in scratch, a copy per iteration "
                             f"({size_of(a)} per iteration x {info.trip_formula} iterations{times}), read back "
                             "before the iteration is replayed; overwritten elements are restored from values "
                             "recomputed in the replay")
                terms.append(f"{size_of(a)}*{info.trip_formula}" + times.replace(" x ", "*"))
        else:
            how = "fused with the forward pass" if info.fused else "replayed in reverse order"
            lines.append(f"{indent}{where}: {info.klass}; nothing stored per iteration: each iteration's "
                         f"intermediates are recomputed from the inputs ({how})")
        for name in info.entry_copies:
            a = arrays[name]
            lines.append(f"{indent}  local array {a.user_name}: one copy per run of the loop ({size_of(a)}{times}), "
                         "put back before its reverse sweep; no copy per iteration (no iteration reads an element "
                         "another one wrote)")
            terms.append(size_of(a) + times.replace(" x ", "*"))
        for name in info.exit_copies:
            a = arrays[name]
            lines.append(f"{indent}  local array {a.user_name}: a copy after the loop ({size_of(a)}{times}), put "
                         f"back by the replay of the loop at line {by_id[info.rows_of].line} in place of running "
                         "this loop again")
            terms.append(size_of(a) + times.replace(" x ", "*"))
    if scratch_elements is not None:
        lines.append(f"scratch: {int(scratch_elements) * itemsize} bytes per sample ({dtype})")
    elif terms:
        lines.append(f"scratch: {itemsize}*({' + '.join(terms)}) bytes per sample ({dtype}; pass example "
                     "arguments to report() for a number)")
    else:
        lines.append("scratch: 0 bytes per sample")
    # formulas name the arguments as the IR does
    return user_text("\n".join(lines) + "\n", dict(zip(c.arg_names, c.ir_args)))


def _rows_lines(info, by_id, arrays, size_of, budget_itemsize, rows_need, indent):
    """What the report says about a loop's rows (nested_rows.py): the condition, and how it went."""
    if info.rows_of < 0:
        return []
    budget, itemsize = budget_itemsize
    outer = by_id[info.rows_of]
    per = [str(info.slots_per_iteration)] if info.slots_per_iteration else []
    per += [size_of(arrays[n]) for n in info.snapshots]
    once = [size_of(arrays[n]) for n in info.entry_copies + info.exit_copies]
    need = f"{outer.trip_formula} x ({info.trip_formula} x ({' + '.join(per) or '0'})"
    need += "".join(f" + {x}" for x in once) + ")"
    text = (f"{indent}  rows{info.line} = {outer.trip_formula} when {need} <= {budget} elements (the budget), "
            f"else 1: with rows, the forward run of the loop at line {outer.line} stores this loop's values for "
            f"every one of its iterations, and that loop's replay skips this loop (each iteration of this loop "
            "runs twice forwards, not three times); else each replay runs this loop again to refill the one row")
    lines = [text]
    if rows_need is not None and info.loop_id in rows_need:
        n = rows_need[info.loop_id]
        how = (f"<= {budget}: rows{info.line} = {outer.trip_formula}" if n <= budget else
               f"> {budget}: rows{info.line} = 1, this loop is replayed")
        lines.append(f"{indent}  for these arguments: {n} elements ({n * itemsize} bytes) {how}")
    return lines


def _size(a, producers, arg_names):
    """An array's element count as a formula of the arguments."""
    return " x ".join(render(d, producers, arg_names) for d in a.dims)


def _call_line(call, arrays, size_of, terms):
    """What the report says about one call of a function with an adjoint rule (external.py)."""
    name = call.rule.name if call.rule is not None else call.fn.split(":")[0].rsplit(".", 1)[-1]
    how = ("its adjoint rule runs in the reverse sweep" if call.rule is not None else
           "compiled elsewhere, its partials are inlined")
    text = f"call to {name} (line {call.pos.line}): called, not differentiated; {how}"
    if call.writes:
        names = ", ".join(arrays[w].user_name for w in call.writes)
        assumed = call.rule.writes is None
        text += (f"; writes {names}" + (" (assumed: every local array passed; declare writes= in @ad.rule)"
                                        if assumed else ""))
        if call.saved:
            sizes = [size_of(arrays[w]) for w in call.writes]
            text += f"; a copy of what it overwrites is stored in scratch ({' + '.join(sizes)})"
            terms.extend(sizes)
        else:
            text += "; nothing stored (the call is the first statement to touch them)"
    return text
