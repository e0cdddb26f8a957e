"""The per-sample kernel bundles handed to fused samplers (docs/internals.md, section "likelihoods")."""

from typing import Any, NamedTuple

import numpy as np


class CpuKernels(NamedTuple):
    """value: njit ``value(theta, data, scratch) -> float``; value_and_grad: njit
    ``value_and_grad(theta, data, grad_out, scratch) -> float``; neither allocates (local arrays live in
    ``scratch``); data: the tuple of constant arguments (already cast); scratch_size: elements per sample (0:
    pass an empty array); dtype."""

    value: Any
    value_and_grad: Any
    data: tuple
    scratch_size: int
    dtype: np.dtype


class CudaKernels(NamedTuple):
    """As :class:`CpuKernels` with numba.cuda device functions and device arrays in ``data``."""

    value: Any
    value_and_grad: Any
    data: tuple
    scratch_size: int
    dtype: np.dtype
