"""The differentiator's test corpus: every kernel of every theme module, as ``Case`` objects.

This folder is loaded by ``tests/ad/conftest.py`` under the unique package name ``ad_test_kernels`` (a plain
``kernels`` would collide with other test folders on ``sys.path``).
"""
from . import (array_entry, control_flow, distributions, early_exit, edge_cases, helpers, local_arrays, math_functions,
               nested_rows, recursions, reductions, seeds, special_functions, syntax)
from .case import Case

THEMES = (seeds, distributions, math_functions, special_functions, control_flow, helpers, syntax, recursions,
          edge_cases, early_exit, reductions, local_arrays, array_entry, nested_rows)

CASES = tuple(case for theme in THEMES for case in theme.CASES)
BY_NAME = {case.name: case for case in CASES}

assert len(BY_NAME) == len(CASES), "corpus case names must be unique"
