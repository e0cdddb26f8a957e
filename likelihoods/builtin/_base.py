"""The shape every built-in likelihood shares: one frozen record, built by each module's ``get(**options)``."""

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .. import priors_spec


@dataclass(frozen=True)
class Builtin:
    """A ready-to-run test problem.

    name            registry name (``likelihoods.builtin.get(name)``)
    kernel          per-sample ``kernel(theta, *data) -> float`` in the kernel subset (differentiated by ``ad``)
    gradient        analytic ``gradient(theta, *data, out) -> None`` used to cross-check the AD gradient
    params          parameter names, in the order of ``theta``
    priors          default priors as plain data, ``{name: ("uniform", low, high), ...}``
    data            kernel argument name -> array or scalar (generated with the seeded numpy Generator)
    reference_logz  log-evidence of this data under the default priors, or None when none is known
    reference_method how ``reference_logz`` was obtained (analytic, quadrature, literature value, ...)
    truths          parameter values the data were generated from (or the modes), or None
    description     one line for ``nestgrad list``
    options         the options this instance was built with
    """

    name: str
    kernel: Callable
    gradient: Callable
    params: tuple
    priors: dict
    data: dict
    reference_logz: Optional[float]
    reference_method: str
    truths: Optional[dict]
    description: str
    options: dict = field(default_factory=dict)

    @property
    def ndim(self):
        return len(self.params)

    def likelihood(self, backend="cpu", dtype=None):
        """The batched :class:`likelihoods.Likelihood` of this problem (analytic gradient kept for checks)."""
        from ..likelihood import Likelihood

        return Likelihood(self.kernel, self.params, self.data, backend=backend, dtype=dtype,
                          gradient=self.gradient, priors=self.priors)

    def sample_prior(self, n, rng=None):
        """``n`` draws from the default priors, shape ``(n, ndim)``."""
        rng = np.random.default_rng(0) if rng is None else rng
        return priors_spec.draw(self.priors, self.params, rng, n)
