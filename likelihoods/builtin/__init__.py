"""Built-in likelihoods: ``names()`` lists them, ``get(name, **options)`` builds one (a :class:`Builtin`)."""

import inspect

from . import (eggbox, gaussian, gaussian4d, gaussian_shells, linear_regression, negative_binomial,
               poisson_rates, rosenbrock, student_t)
from ._base import Builtin
from ._options import OptionError, check

_MODULES = {m.NAME: m for m in (gaussian4d, gaussian, gaussian_shells, rosenbrock, eggbox, poisson_rates,
                                linear_regression, student_t, negative_binomial)}


def names():
    """Registry names, in a stable order."""
    return list(_MODULES)


def get(name, **options):
    """Build the built-in ``name``; unknown names or options give one message listing what is accepted, an option
    of the wrong type or range an :class:`OptionError` naming it."""
    module = _MODULES.get(name)
    if module is None:
        raise ValueError(f"unknown built-in likelihood {name!r}; known: {', '.join(_MODULES)}")
    accepted = inspect.signature(module.get).parameters
    unknown = [k for k in options if k not in accepted]
    if unknown:
        raise ValueError(f"built-in {name!r}: unknown option(s) {', '.join(unknown)}; "
                         f"accepted: {', '.join(accepted) or 'none'}")
    return module.get(**check(name, module.OPTIONS, options))


__all__ = ["Builtin", "OptionError", "get", "names"]
