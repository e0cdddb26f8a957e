"""Batched per-sample log-likelihood kernels on CPU (numba) and GPU (numba-cuda), with built-in test problems.

``Likelihood(fn, params, data, backend="cpu", dtype=None, gradient=None)`` wraps a per-sample kernel
``fn(theta, *data)``; ``likelihoods.builtin`` holds ready-made problems. See docs/internals.md, section "likelihoods".
"""

if __name__ == "likelihoods":  # imported by its pre-package name from a source checkout: become nestgrad.likelihoods
    from nestgrad._legacy_names import alias_if_old_name

    alias_if_old_name(__name__)


from . import builtin
from .errors import DataError, KernelIndexError, KernelRaisedError, LikelihoodError, ParamsError
from .gradcheck import GradientReport
from .kernels import CpuKernels, CudaKernels
from .likelihood import Likelihood, NonFiniteDataWarning, UnusedParameterWarning

__all__ = ["CpuKernels", "CudaKernels", "DataError", "GradientReport", "KernelIndexError", "KernelRaisedError",
           "Likelihood", "LikelihoodError", "NonFiniteDataWarning", "ParamsError", "UnusedParameterWarning", "builtin"]
