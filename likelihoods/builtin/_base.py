"""The shape every built-in likelihood shares: one frozen record, built by each module's ``get(**options)``."""

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

# Relative spread of the points that :meth:`Builtin.draw` scatters around the truths.
SPREAD = 0.1


@dataclass(frozen=True)
class Builtin:
    """A ready-to-run test problem.

    name            registry name (``likelihoods.builtin.get(name)``)
    kernel          per-sample ``kernel(theta, *data) -> float`` in the kernel subset (differentiated by ``ad``)
    gradient        analytic ``gradient(theta, *data, out) -> None`` used to cross-check the AD gradient
    params          parameter names, in the order of ``theta``
    priors          default priors as plain data, ``{name: ("uniform", low, high), ...}``; the sampler turns
                    them into its prior objects (``sampler.priors.Prior.from_spec``): this package draws nothing
                    from them
    data            kernel argument name -> array or scalar (generated with the seeded numpy Generator)
    reference_logz  log-evidence of this data under the default priors, or None when none is known
    reference_method how ``reference_logz`` was obtained (analytic, quadrature, literature value, ...)
    truths          parameter values the data were generated from (or the modes), or None
    description     one line for ``nestgrad list``
    options         the options this instance was built with
    check_centre    where :meth:`draw` scatters points when there are no truths (a point where the
                    likelihood and its gradient are worth checking), else None
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
    check_centre: Optional[dict] = None

    @property
    def ndim(self):
        return len(self.params)

    def likelihood(self, backend="cpu", dtype=None, draws=None, sum_dtype=None):
        """The batched :class:`likelihoods.Likelihood` of this problem (analytic gradient kept for checks).

        ``draws(rng, n)``: where ``check_gradient()`` looks by default; the sampler passes draws from its prior
        (``Prior.draw``), and without it the points come from :meth:`draw`, near the truths."""
        from ..likelihood import Likelihood

        return Likelihood(self.kernel, self.params, self.data, backend=backend, dtype=dtype,
                          gradient=self.gradient, draws=self.draw if draws is None else draws, sum_dtype=sum_dtype)

    def draw(self, rng, n):
        """``n`` points, shape ``(n, ndim)``, scattered around the truths (or ``check_centre``): each coordinate
        ``t`` becomes ``t * exp(SPREAD * z)`` with ``z`` standard normal, so signs are kept and scales and
        rates stay positive; a zero coordinate becomes ``SPREAD * z``. These are points for gradient checks
        and tests, not prior draws: those come from the sampler's priors."""
        point = self.truths if self.truths is not None else self.check_centre
        if point is None:
            raise ValueError(f"built-in {self.name!r} has neither truths nor a check_centre to draw points around")
        t = np.array([point[p] for p in self.params], dtype=np.float64)
        z = rng.standard_normal((n, self.ndim))
        return np.where(t == 0.0, SPREAD * z, t * np.exp(SPREAD * z))
