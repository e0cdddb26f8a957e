"""Batched per-sample log-likelihood kernels on CPU (numba) and GPU (numba-cuda), with built-in test problems.

``Likelihood(fn, params, data, backend="cpu", dtype=None, gradient=None)`` wraps a per-sample kernel
``fn(theta, *data)``; ``likelihoods.builtin`` holds ready-made problems. See docs/internals.md §2.
"""

from . import builtin
from .errors import DataError, KernelIndexError, LikelihoodError, ParamsError
from .gradcheck import GradientReport
from .kernels import CpuKernels, CudaKernels
from .likelihood import Likelihood, UnusedParameterWarning

__all__ = ["CpuKernels", "CudaKernels", "DataError", "GradientReport", "KernelIndexError", "Likelihood",
           "LikelihoodError", "ParamsError", "UnusedParameterWarning", "builtin"]
