"""Which loops keep a copy of a local array per iteration, and which one per run (ad/array_entry.py).

The gradients of these kernels are checked with the rest of the corpus (kernels/array_entry.py); here, that the
analysis tells the kinds apart: a wrong "once per run" gives wrong gradients, a needless "per iteration" costs
time and scratch (the RK4 fit's stages were copied at every step)."""
import re

import pytest

from nestgrad import ad
import ad_test_kernels as corpus
from ad_test_kernels import array_entry

CASES = array_entry.CASES


def _copies(text):
    once = set(re.findall(r"local array (\w+): one copy per run of the loop", text))
    per_iteration = set(re.findall(r"local array (\w+): stored in scratch, a copy per iteration", text))
    return once, per_iteration


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_arrays_get_the_copies_their_reads_need(case):
    once, per_iteration = _copies(ad.differentiate(case.fn).report())
    assert once == array_entry.ENTRY.get(case.name, set())
    assert per_iteration == array_entry.PER_ITERATION.get(case.name, set())


def test_rk4_stages_are_copied_once_per_loop_and_only_the_state_per_step():
    d = ad.differentiate(corpus.BY_NAME["lotka_volterra_rk4"].fn)
    once, per_iteration = _copies(d.report())
    assert per_iteration == {"y"}
    assert {"k1", "k2", "k3", "k4", "tmp"} <= once
