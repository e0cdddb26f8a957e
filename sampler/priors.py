"""Priors as unit-cube transforms: ``theta = F^-1(u)`` per parameter, with the diagonal derivative ``dtheta/du``.

Every family is a small class with the same shape (``family``, ``arguments``, ``row()`` for the numba argument
table). ``Prior`` collects them in parameter order and exposes both a numpy API (``transform``,
``transform_jacobian``) and the numba encoding (``codes``, ``args``) read by
:func:`sampler.prior_families.transform_one`; the two share one implementation.

Construct a prior in any of three ways::

    Prior({"mu": Uniform(0, 1), "sigma": LogUniform(0.01, 0.5)})
    Prior({"mu": make("uniform", low=0, high=1), ...})
    Prior.from_spec({"mu": ("uniform", 0.0, 1.0), "sigma": ("loguniform", 0.01, 0.5)})
"""

import math

import numpy as np

from . import prior_families as pf


class PriorError(ValueError):
    """A prior was specified wrongly; the message names the parameter, family and argument."""


def _finite(family, name, value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise PriorError(f"{family}: argument {name!r} must be a number, got {value!r}") from None
    if not math.isfinite(value):
        raise PriorError(f"{family}: argument {name!r} must be finite, got {value!r}")
    return value


def _positive(family, name, value):
    value = _finite(family, name, value)
    if value <= 0.0:
        raise PriorError(f"{family}: argument {name!r} must be > 0, got {value!r}")
    return value


def _ordered(family, low, high):
    if not low < high:
        raise PriorError(f"{family}: needs low < high, got low={low!r}, high={high!r}")


class Distribution:
    """Base class: a one-dimensional prior given by its quantile function."""

    family = ""
    code = -1

    def arguments(self) -> dict:
        """The constructor arguments by name (JSON-able)."""
        raise NotImplementedError

    def row(self) -> np.ndarray:
        """This family's row of the numba argument table (length 4, or longer for tabulated families)."""
        raise NotImplementedError

    def to_spec(self) -> tuple:
        return (self.family, *self.arguments().values())

    def transform(self, u):
        """``theta`` for unit-cube values ``u`` (array-like)."""
        u = np.atleast_1d(np.asarray(u, dtype=np.float64))
        return Prior({"x": self}).transform(u[:, None])[:, 0]

    def __repr__(self):
        inner = ", ".join(f"{k}={v!r}" for k, v in self.arguments().items())
        return f"{type(self).__name__}({inner})"

    def __eq__(self, other):
        return type(self) is type(other) and self.arguments() == other.arguments()

    def __hash__(self):
        return hash((type(self).__name__, tuple(self.arguments().items())))


def _row(*values):
    out = np.zeros(pf.TABLE_START)
    out[: len(values)] = values
    return out


class Uniform(Distribution):
    family, code = "uniform", pf.UNIFORM

    def __init__(self, low, high):
        self.low, self.high = _finite("uniform", "low", low), _finite("uniform", "high", high)
        _ordered("uniform", self.low, self.high)

    def arguments(self):
        return {"low": self.low, "high": self.high}

    def row(self):
        return _row(self.low, self.high)


class LogUniform(Distribution):
    """Uniform in log(theta) on [low, high] (Jeffreys prior for a scale)."""

    family, code = "loguniform", pf.LOGUNIFORM

    def __init__(self, low, high):
        self.low, self.high = _positive("loguniform", "low", low), _positive("loguniform", "high", high)
        _ordered("loguniform", self.low, self.high)

    def arguments(self):
        return {"low": self.low, "high": self.high}

    def row(self):
        return _row(self.low, self.high, math.log(self.high / self.low))


class Normal(Distribution):
    family, code = "normal", pf.NORMAL

    def __init__(self, mu, sigma):
        self.mu, self.sigma = _finite("normal", "mu", mu), _positive("normal", "sigma", sigma)

    def arguments(self):
        return {"mu": self.mu, "sigma": self.sigma}

    def row(self):
        return _row(self.mu, self.sigma)


class TruncatedNormal(Distribution):
    """Normal(mu, sigma) restricted to [low, high]."""

    family, code = "truncnormal", pf.TRUNCNORMAL

    def __init__(self, mu, sigma, low, high):
        f = "truncnormal"
        self.mu, self.sigma = _finite(f, "mu", mu), _positive(f, "sigma", sigma)
        self.low, self.high = _finite(f, "low", low), _finite(f, "high", high)
        _ordered(f, self.low, self.high)
        self._cdf_low = pf.ndtr((self.low - self.mu) / self.sigma)
        self._mass = pf.ndtr((self.high - self.mu) / self.sigma) - self._cdf_low
        if not self._mass > 1e-300:
            raise PriorError(f"{f}: [low, high] = [{self.low}, {self.high}] holds no probability of "
                             f"Normal({self.mu}, {self.sigma})")

    def arguments(self):
        return {"mu": self.mu, "sigma": self.sigma, "low": self.low, "high": self.high}

    def row(self):
        return _row(self.mu, self.sigma, self._cdf_low, self._mass)


class LogNormal(Distribution):
    """log(theta) ~ Normal(mu, sigma)."""

    family, code = "lognormal", pf.LOGNORMAL

    def __init__(self, mu, sigma):
        self.mu, self.sigma = _finite("lognormal", "mu", mu), _positive("lognormal", "sigma", sigma)

    def arguments(self):
        return {"mu": self.mu, "sigma": self.sigma}

    def row(self):
        return _row(self.mu, self.sigma)


class HalfNormal(Distribution):
    """|Normal(0, sigma)|."""

    family, code = "halfnormal", pf.HALFNORMAL

    def __init__(self, sigma):
        self.sigma = _positive("halfnormal", "sigma", sigma)

    def arguments(self):
        return {"sigma": self.sigma}

    def row(self):
        return _row(self.sigma)


class Exponential(Distribution):
    family, code = "exponential", pf.EXPONENTIAL

    def __init__(self, scale):
        self.scale = _positive("exponential", "scale", scale)

    def arguments(self):
        return {"scale": self.scale}

    def row(self):
        return _row(self.scale)


class Cauchy(Distribution):
    family, code = "cauchy", pf.CAUCHY

    def __init__(self, loc, scale):
        self.loc, self.scale = _finite("cauchy", "loc", loc), _positive("cauchy", "scale", scale)

    def arguments(self):
        return {"loc": self.loc, "scale": self.scale}

    def row(self):
        return _row(self.loc, self.scale)


class Beta(Distribution):
    """Beta(a, b) on [low, high] (default [0, 1]).

    The Beta quantile has no closed form, so it is tabulated once (scipy) on ``TABLE_SIZE`` = 4097 knots
    with exact endpoints, uniform in ``s = acos(1 - 2u) / pi`` (crowded towards both ends), and interpolated
    linearly in ``s`` inside numba; ``dtheta/du`` is that segment's slope times ``ds/du``. This is an
    approximation (error ~1e-6 in theta for moderate a, b); where a < 1 or b < 1 the quantile is very flat at
    an end and the table resolves theta there only to about a knot spacing.
    """

    family, code = "beta", pf.TABLE

    def __init__(self, a, b, low=0.0, high=1.0):
        self.a, self.b = _positive("beta", "a", a), _positive("beta", "b", b)
        self.low, self.high = _finite("beta", "low", low), _finite("beta", "high", high)
        _ordered("beta", self.low, self.high)
        from scipy import stats
        table = pf.quantile_table(stats.beta(self.a, self.b).ppf)
        table[0], table[-1] = 0.0, 1.0  # exact endpoints
        self._table = self.low + (self.high - self.low) * table

    def arguments(self):
        return {"a": self.a, "b": self.b, "low": self.low, "high": self.high}

    def row(self):
        return np.concatenate([_row(self.a, self.b), self._table])


FAMILIES = {
    "uniform": Uniform, "flat": Uniform,
    "loguniform": LogUniform, "log-uniform": LogUniform, "log_uniform": LogUniform, "jeffreys": LogUniform,
    "normal": Normal, "gaussian": Normal, "norm": Normal,
    "truncnormal": TruncatedNormal, "truncated_normal": TruncatedNormal, "truncatednormal": TruncatedNormal,
    "lognormal": LogNormal, "log-normal": LogNormal,
    "halfnormal": HalfNormal, "half_normal": HalfNormal,
    "exponential": Exponential, "expon": Exponential,
    "cauchy": Cauchy,
    "beta": Beta,
}


def _family_class(family):
    key = str(family).strip().lower()
    if key not in FAMILIES:
        known = ", ".join(sorted({c.family for c in FAMILIES.values()}))
        raise PriorError(f"unknown prior family {family!r}; known families: {known}")
    return FAMILIES[key]


def make(family: str, *args, **kwargs) -> Distribution:
    """Build a distribution from its family name and arguments, e.g. ``make("uniform", low=0, high=1)``.

    Errors name the family and the argument (missing, unexpected or out of range).
    """
    cls = _family_class(family)
    import inspect
    sig = inspect.signature(cls.__init__)
    try:
        bound = sig.bind(None, *args, **kwargs)
    except TypeError as exc:
        wanted = ", ".join(p for p in sig.parameters if p != "self")
        raise PriorError(f"{cls.family}: {exc} (arguments: {wanted})") from None
    return cls(*bound.args[1:], **bound.kwargs)


class Prior:
    """Independent priors of named parameters, in theta order.

    ``transform(u)`` and ``transform_jacobian(u)`` accept one point (d,) or a batch (B, d). ``codes`` (int64, d)
    and ``args`` (float64, (d, width)) encode the prior for the njit :func:`transform_one`.
    """

    def __init__(self, distributions, latex=None):
        if not isinstance(distributions, dict) or not distributions:
            raise PriorError("Prior needs a non-empty dict: parameter name -> distribution")
        for name, dist in distributions.items():
            if not isinstance(dist, Distribution):
                raise PriorError(f"parameter {name!r}: expected a sampler.priors distribution, got {dist!r}")
        self.distributions = dict(distributions)
        self.names = list(self.distributions)
        self.ndim = len(self.names)
        self.latex = dict(latex or {})
        rows = [d.row() for d in self.distributions.values()]
        width = max(len(r) for r in rows)
        self.codes = np.array([d.code for d in self.distributions.values()], dtype=np.int64)
        self.args = np.zeros((self.ndim, width))
        for i, r in enumerate(rows):
            self.args[i, : len(r)] = r

    @classmethod
    def from_spec(cls, spec, latex=None) -> "Prior":
        """``{name: (family, *args)}``, ``{name: {"prior": f, **kwargs}}`` (as in the YAML; ``"family"`` is
        accepted for ``"prior"``, and a ``"latex"`` label is kept) or ``{name: Distribution}``."""
        dists, labels = {}, dict(latex or {})
        for name, item in dict(spec).items():
            try:
                if isinstance(item, Distribution):
                    dists[name] = item
                elif isinstance(item, dict):
                    kw = dict(item)
                    family = kw.pop("prior", None) or kw.pop("family", None)
                    if family is None:
                        raise PriorError("a dict spec needs a 'prior' key, e.g. {'prior': 'uniform', 'low': 0, "
                                         "'high': 1}")
                    if "latex" in kw:
                        labels.setdefault(name, str(kw.pop("latex")))
                    dists[name] = make(family, **kw)
                elif isinstance(item, (tuple, list)) and item:
                    dists[name] = make(item[0], *item[1:])
                else:
                    raise PriorError(f"expected (family, *args), got {item!r}")
            except PriorError as exc:
                raise PriorError(f"parameter {name!r}: {exc}") from None
        return cls(dists, latex=labels)

    def to_spec(self) -> dict:
        return {name: d.to_spec() for name, d in self.distributions.items()}

    def _apply(self, u):
        u = np.asarray(u, dtype=np.float64)
        single = u.ndim == 1
        batch = np.ascontiguousarray(u.reshape(1, -1) if single else u)
        if batch.ndim != 2 or batch.shape[1] != self.ndim:
            raise ValueError(f"Prior.transform: expected shape ({self.ndim},) or (B, {self.ndim}), got {u.shape}")
        theta = np.empty_like(batch)
        jac = np.empty_like(batch)
        pf.transform_batch(self.codes, self.args, batch, theta, jac)
        return (theta[0], jac[0]) if single else (theta, jac)

    def transform(self, u):
        """Physical parameters for unit-cube points."""
        return self._apply(u)[0]

    def transform_jacobian(self, u):
        """Diagonal ``dtheta/du`` at unit-cube points (same shape as ``u``)."""
        return self._apply(u)[1]

    def __repr__(self):
        inner = ", ".join(f"{n!r}: {d!r}" for n, d in self.distributions.items())
        return f"Prior({{{inner}}})"
