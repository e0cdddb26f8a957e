"""The names a kernel's arguments take in the IR and the generated module.

The generated module uses the kernel's arguments under their own names (readable code), next to names of its
own: module globals (``np``, ``math``, the generated functions), builtins, loop variables (``zero_k``) and IR
temporaries, which all contain ``__`` (``y__12``, ``t__3_b``, ``a__f``, ``p__o1``).  An argument spelled like
one of those would be the same variable as the module's own, so such an argument is renamed: ``np`` becomes
``np__arg``.  No other generated name ends in ``__arg`` (temporaries end in ``__<digits>``, ``__o<digits>``,
``__f`` or a suffix after those), and an argument kept as it is contains no ``__``, so the renaming is
injective and collides with nothing.  Messages and reports translate back (:func:`user_text`).
"""
import builtins
import re

SUFFIX = "__arg"

# Names of the generated module (emit.py, pipeline.module_source, derivative's footers, ieee.twin_source) that
# are not IR variables; the prefixes cover families (py_value, rows_need0, _ext_<hash>, _nz_mul, _ieee_div).
# tests/ad/test_argument_names.py checks every generated module against this list.
MODULE_NAMES = frozenset({"np", "math", "numba", "cuda", "selects", "zero_k", "copy_k", "raw_value", "value",
                          "raw_value_and_grad", "raw_grad", "scratch_size", "value_and_grad", "grad"})
PREFIXES = ("_", "py_", "rows_need")
RESERVED = MODULE_NAMES | frozenset(dir(builtins))


def needs_renaming(name):
    """Whether the argument ``name`` could be one of the generated module's own names."""
    return "__" in name or name in RESERVED or name.startswith(PREFIXES)


def ir_names(arg_names):
    """``{argument: its name in the IR and the generated code}``."""
    return {a: a + SUFFIX if needs_renaming(a) else a for a in arg_names}


def user_text(text, ir_of):
    """``text`` (a message, a report line) with the renamed arguments' IR names spelled as in the kernel."""
    for user, ir in ir_of.items():
        if ir != user:
            text = re.sub(rf"(?<!\w){re.escape(ir)}(?!\w)", user, text)
    return text
