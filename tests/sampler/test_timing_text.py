"""The summary's wall-time line names where the chain kernel came from, for every origin a run records."""

import pytest

from nestgrad.sampler.timing import describe


@pytest.mark.parametrize("origin, words", [
    ("cache", "loaded from the cache"), ("compiled", "compiled, now cached"),
    ("in-process", "compiled in this process"), ("gpu", "GPU kernel compiled"),
    # on a real device numba-cuda's disk cache reports these two (a run on an H200 printed neither before)
    ("gpu cache", "GPU kernel loaded from the cache"), ("gpu compiled", "GPU kernel compiled, now cached"),
])
def test_the_compile_stage_says_where_the_kernel_came_from(origin, words):
    line = describe({"setup": 0.5, "compile": 1.25, "kernel": origin, "sampling": 2.0, "total": 4.0})
    assert line.startswith("wall time 4.00 s:")
    assert f"compile 1.25 ({words}" in line
