"""One corpus entry: a kernel, how to build its arguments, and what to check about it.

Kernels are plain Python functions ``f(theta, *data)`` written in the subset the differentiator accepts; they
live in real files next to this one so error positions and ``inspect.getsource`` refer to real lines.
"""
from dataclasses import dataclass, field
from typing import Callable, Optional, Tuple

import numpy as np


@dataclass(frozen=True)
class Case:
    """A kernel of the corpus.

    name      -- unique id used in test ids
    fn        -- the kernel (a module-level function of a file in this folder)
    make_args -- ``make_args() -> tuple`` of all kernel arguments in kernel order, float64 floats; the active
                 ones (named in ``wrt``) are 1-D float arrays at a well-conditioned point
    wrt       -- active argument name(s)
    analytic  -- optional hand-written gradient ``analytic(*args) -> tuple of arrays`` (one per active argument)
    float32   -- whether the float32 comparison is meaningful at this point (False where float32 rounding is
                 amplified beyond its tolerance, e.g. long recursions; say why at the case)
    cuda      -- part of the CUDA-simulator subset
    tags      -- free-form labels naming the constructs covered (for reading, and for picking subsets)
    """

    name: str
    fn: Callable
    make_args: Callable[[], tuple]
    wrt: Tuple[str, ...] = ("theta",)
    analytic: Optional[Callable] = None
    float32: bool = True
    cuda: bool = False
    tags: Tuple[str, ...] = field(default_factory=tuple)

    def args(self):
        """Fresh float64 arguments (a new tuple each call, so tests cannot leak state into each other)."""
        return tuple(self.make_args())


def rng(seed):
    """The corpus' random source: explicit and seeded, so every run sees the same data."""
    return np.random.default_rng(seed)
