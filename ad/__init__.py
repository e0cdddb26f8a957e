"""nestgrad's differentiator: source-to-source reverse mode for per-sample Python kernels (CPU and CUDA).

``ad.differentiate(fn, wrt="theta")`` → ``ad.Derivative`` (docs/api.md; the passes in docs/internals.md).
"""

if __name__ == "ad":  # imported by its pre-package name from a source checkout: become nestgrad.ad
    from nestgrad._legacy_names import alias_if_old_name

    alias_if_old_name(__name__)

from . import linalg, special
from .check import GradientCheck, check_gradient
from .derivative import Derivative, differentiate, differentiate_source
from .emit import source_line
from .errors import KernelError, UnsupportedError
from .rules import rule

__all__ = ["differentiate", "differentiate_source", "Derivative", "rule", "special", "linalg", "check_gradient",
           "GradientCheck", "KernelError", "UnsupportedError", "source_line"]
