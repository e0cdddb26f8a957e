"""What can name a parameter and what can label it, checked where they are given (a config's ``params:``,
``nestgrad.run``'s params, a ``Prior``): the run folder's tables, its getdist ``.paramnames`` (one ``name
label`` line per parameter) and the plots use them after the run is sampled, where a bad one cost the outputs.

Each function returns the reason a value is refused, or None: callers add the place (a config key, a
parameter) to it.
"""
from __future__ import annotations

from nestgrad.likelihoods.ranges import describe


def name_problem(name) -> str | None:
    """Why ``name`` cannot name a parameter: ``'mu 1'`` was written to ``.paramnames`` as the name ``mu`` with
    the label ``1  mu 1``; ``''`` or ``'a/b'`` are no column names either."""
    if not isinstance(name, str):
        return f"a parameter name must be text, got {describe(name)}"
    if not name.isidentifier():
        return ("a parameter name must be an identifier (letters, digits and _, not starting with a digit): it "
                "names a column of the run folder's tables and a line of its getdist .paramnames")
    return None


def label_problem(label) -> str | None:
    """Why ``label`` cannot be a parameter's LaTeX label: not text, empty, more than one line, or with unbalanced
    braces. These checks cost nothing; whether matplotlib can typeset it is :func:`typeset_problem`'s."""
    if not isinstance(label, str):
        return f"expected text (a LaTeX label such as '\\mu_1'), got {describe(label)}"
    if not label.strip("$ "):
        return "must not be empty (leave latex out to label the parameter by its name)"
    if "\n" in label or "\r" in label:
        return "must be one line (the run folder's .paramnames holds one parameter a line)"
    depth = 0
    for char in label.replace("\\{", "").replace("\\}", ""):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            break
    if depth:
        return f"unbalanced braces {{ }} in {label!r}"
    return None


def typeset_problem(label: str) -> str | None:
    """Why matplotlib's mathtext (which draws the plots' axis labels) cannot typeset ``label``, such as
    ``\\mux``. Asked only where plots will be drawn: importing matplotlib takes most of a second, more than a
    small run without plots takes."""
    try:
        from matplotlib.mathtext import MathTextParser
    except ImportError:  # no matplotlib, no plots to lose
        return None
    shown = f"${label.strip('$')}$"  # as sampler.plots.label writes it
    try:
        MathTextParser("path").parse(shown)
    except ValueError as error:
        # matplotlib's message: the text, a caret line, then "ParseXxxException: why (at char N), (line:1, col:M)"
        lines = [line for line in str(error).splitlines() if line.strip()]
        why = lines[-1].split(": ", 1)[-1] if lines else str(error)
        why = why.split(", (line:")[0].replace("  ", " ")
        return (f"matplotlib cannot typeset {shown} for the plots: {why}; check the braces {{ }} and the commands "
                f"(matplotlib's mathtext, a subset of LaTeX)")
    return None
