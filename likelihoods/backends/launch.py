"""Kernel launch configuration shared by the GPU backend and the GPU chain kernel."""

import warnings


def configured(kernel, blocks, threads):
    """``kernel[blocks, threads]`` without numba-cuda's low-occupancy warning ("Grid size N will likely result in
    GPU under-utilization"), which it raises when the grid is configured: nestgrad sizes its grids itself (one
    thread per sample or chain), so a small batch or few chains is the run's size, not a mistake to report to the
    user on every small launch. Other warnings pass."""
    with warnings.catch_warnings():
        # numba colours its warnings where colorama is installed, so the text may start with ANSI escapes
        warnings.filterwarnings("ignore", message=r"(\x1b\[[0-9;]*m)*Grid size \d+ will likely result in GPU "
                                                  r"under-utilization")
        return kernel[blocks, threads]
