"""Compatibility of the CUDA stack with newer NumPy, applied when ``nestgrad`` is imported.

numba-cuda (0.30 at least) registers an overload for ``np.row_stack`` when it compiles its first kernel, and NumPy
2.5 removed that alias of ``np.vstack``: without it every CUDA compile fails with "module 'numpy' has no attribute
'row_stack'" (seen on a GPU machine with NumPy 2.5.2 and numba-cuda 0.30.4). Restoring the alias changes nothing for
code that never used it.
"""
import numpy as np


def install():
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
