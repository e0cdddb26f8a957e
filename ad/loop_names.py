"""Loop variables read after their loop: kernels do not carry a loop variable past its loop (Python leaves the
last index in it), so lowering refuses the read.  This module words that refusal: the loop, and when the loop
variable reused the name of something defined before it (an argument, a variable, an enclosing loop's
variable), that it shadowed it -- "name 'i' is not defined here: assign it before" misled when it was."""


class EndedLoops:
    """The loop variables of the loops lowered so far whose names nothing has bound again since."""

    def __init__(self):
        self._loops = {}  # name -> (the loop's ast node, what the name meant before the loop, or None)

    def ended(self, name, loop, shadowed):
        """The loop ``loop`` over ``name`` has ended; ``shadowed``: "kernel argument", "variable", ... or None."""
        self._loops[name] = (loop, shadowed)

    def rebound(self, name):
        self._loops.pop(name, None)

    def explain(self, name):
        """Why ``name`` cannot be read here and what to write instead, or None when it is no ended loop's."""
        if name not in self._loops:
            return None
        loop, shadowed = self._loops[name]
        at = f"{loop.lineno}:{loop.col_offset + 1}"
        if shadowed:
            return (f"{name!r} is read after the loop at {at}, whose loop variable reuses the name of the {shadowed} "
                    f"{name!r}: in Python the loop replaced it (with the loop's last index), which kernels do not "
                    f"support; give that loop its own variable (`for k in range(...)`) so that {name!r} keeps "
                    f"meaning the {shadowed}")
        return (f"{name!r} is the loop variable of the loop at {at} and cannot be read after it (kernels do not "
                f"keep a loop variable past its loop): keep what you need in a variable assigned before the loop "
                f"and updated inside it, e.g. `last = 0` before it and `last = {name}` in its body")
