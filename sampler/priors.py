"""Priors as unit-cube transforms: ``theta = F^-1(u)`` per parameter, with the diagonal derivative ``dtheta/du``.

This module is the one registry of prior families. A family is one :class:`Distribution` subclass, decorated
with :func:`register`, that declares

    family, aliases   its name in specs and in the YAML (``prior: uniform``), and other accepted names
    ARGUMENTS         its arguments in order (:class:`Arg`: finite or positive, required or with a default);
                      config validation (sampler/config_schema.py) reads the accepted names from here
    code, row()       its branch of the numba transform (:func:`sampler.prior_families.transform_one`) and that
                      branch's row of arguments (default: the arguments in order)
    support           its support when that is fixed (None: unbounded); a family with ``low`` and ``high``
                      arguments is supported on [low, high]. :meth:`Distribution.bounds` gives it to the run
                      folder's ``.ranges`` file and to the plot ranges
    check()           conditions between arguments (default: low < high where both exist)
    latex             a LaTeX template of the distribution, e.g. ``\\mathcal{U}({low}, {high})``

and inherits the rest: ``transform`` and ``jacobian`` (through the one numba implementation), ``draw``,
``to_spec`` / ``from_spec``, ``describe``, argument checking with errors that name the family and argument.
Adding a family is one class here, plus one branch in ``prior_families.transform_one`` when no existing branch
computes its quantile.

``Prior`` collects distributions in parameter order and exposes the numpy API (``transform``,
``transform_jacobian``, ``draw``) and the numba encoding (``codes``, ``args``). Construct one in any of three
ways::

    Prior({"mu": Uniform(0, 1), "sigma": LogUniform(0.01, 0.5)})
    Prior({"mu": make("uniform", low=0, high=1), ...})
    Prior.from_spec({"mu": ("uniform", 0.0, 1.0), "sigma": {"prior": "loguniform", "low": 0.01, "high": 0.5}})
"""

import inspect
import math
from typing import NamedTuple, Optional

import numpy as np

from . import prior_families as pf
from .parameter_names import label_problem, name_problem


class PriorError(ValueError):
    """A prior was specified wrongly; the message names the parameter, family and argument.

    ``argument``: the argument the error is about (None: the family or the spec as a whole); ``detail``: the
    same complaint phrased for a message that already names the argument (a config key), else None.
    """

    def __init__(self, message, argument=None, detail=None):
        super().__init__(message)
        self.argument, self.detail = argument, detail


class Arg(NamedTuple):
    """One argument of a family: a finite number, or a positive one; ``default`` None means required."""

    name: str
    positive: bool = False
    default: Optional[float] = None


def _number(family, arg, value):
    """``value`` as a float that satisfies ``arg``, else a PriorError naming family and argument."""
    name = arg.name
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PriorError(f"{family}: argument {name!r} must be a number, got {value!r}", name,
                         f"expected a number, got {value!r}") from None
    if not math.isfinite(number):
        raise PriorError(f"{family}: argument {name!r} must be finite, got {value!r}", name,
                         f"must be a finite number, got {value!r}")
    if arg.positive and not number > 0.0:
        raise PriorError(f"{family}: argument {name!r} must be > 0, got {value!r}", name,
                         f"a {family} prior needs {name} > 0, got {value!r}")
    return number


class Distribution:
    """Base class of the prior families: a one-dimensional prior given by its quantile function.

    Construct with the family's arguments, by position or name (``Uniform(0, 1)``, ``Beta(2, 3, low=-1)``).
    """

    family = ""
    aliases = ()
    code = -1
    ARGUMENTS = ()
    support = (None, None)
    latex = ""

    def __init__(self, *values, **named):
        names = self.argument_names()
        if len(values) > len(names):
            raise PriorError(f"{self.family}: takes {len(names)} arguments ({self.signature()}), got "
                             f"{len(values)}")
        given = dict(zip(names, values))
        for key, value in named.items():
            if key not in names:
                raise PriorError(f"{self.family}: unexpected argument {key!r} (arguments: {self.signature()})",
                                 key)
            if key in given:
                raise PriorError(f"{self.family}: argument {key!r} given twice", key)
            given[key] = value
        for arg in self.ARGUMENTS:
            if arg.name not in given and arg.default is None:
                raise PriorError(f"{self.family}: missing argument {arg.name!r} (arguments: {self.signature()})",
                                 arg.name, f"missing: a {self.family} prior needs {self.signature()}")
            setattr(self, arg.name, _number(self.family, arg, given.get(arg.name, arg.default)))
        self.defaulted = frozenset(arg.name for arg in self.ARGUMENTS if arg.name not in given)
        self.check()

    # --- what a family may override -------------------------------------------------------------------------

    def check(self):
        """Conditions between arguments; raise PriorError naming the argument. Default: low < high."""
        if hasattr(self, "low") and hasattr(self, "high") and not self.low < self.high:
            given, default = (("low", "high") if "high" in getattr(self, "defaulted", ()) else
                              ("high", "low") if "low" in getattr(self, "defaulted", ()) else (None, None))
            if given:  # the key the user wrote, and the default it met (a beta with low: 2 named high)
                detail = (f"{given} ({getattr(self, given)!r}) must be {'below' if given == 'low' else 'above'} "
                          f"{default}, which defaults to {getattr(self, default)!r}: give {default} too")
                raise PriorError(f"{self.family}: {detail}", given, detail)
            raise PriorError(f"{self.family}: needs low < high, got low={self.low!r}, high={self.high!r}", "high",
                             f"high ({self.high!r}) must be greater than low ({self.low!r})")
        if hasattr(self, "low") and hasattr(self, "high") and not math.isfinite(self.high - self.low):
            raise PriorError(f"{self.family}: high - low = {self.high!r} - {self.low!r} overflows float64 (about "
                             f"1.8e308)", "high", f"high - low must be below about 1.8e308 (float64's largest "
                             f"number); got low={self.low!r}, high={self.high!r}")

    def row(self) -> np.ndarray:
        """This family's row of the numba argument table (length ``TABLE_START``, longer for tables)."""
        return _row(*self.arguments().values())

    def bounds(self) -> tuple:
        """Hard support ``(low, high)``; None on an unbounded side."""
        low, high = self.support
        return getattr(self, "low", low), getattr(self, "high", high)

    # --- shared by every family -----------------------------------------------------------------------------

    @classmethod
    def argument_names(cls) -> tuple:
        return tuple(arg.name for arg in cls.ARGUMENTS)

    @classmethod
    def required_arguments(cls) -> tuple:
        return tuple(arg.name for arg in cls.ARGUMENTS if arg.default is None)

    @classmethod
    def signature(cls) -> str:
        """The arguments as text, optional ones in brackets: ``a, b[, low, high]``."""
        required = ", ".join(cls.required_arguments())
        optional = ", ".join(arg.name for arg in cls.ARGUMENTS if arg.default is not None)
        if not optional:
            return required
        return f"{required}[, {optional}]" if required else f"[{optional}]"

    def arguments(self) -> dict:
        """The arguments by name (JSON-able)."""
        return {arg.name: getattr(self, arg.name) for arg in self.ARGUMENTS}

    def to_spec(self) -> tuple:
        """``(family, *arguments)``, as ``Results.settings["prior"]`` stores it."""
        return (self.family, *self.arguments().values())

    def to_dict(self) -> dict:
        """The YAML form, ``{"prior": family, **arguments}``."""
        return {"prior": self.family, **self.arguments()}

    @staticmethod
    def from_spec(spec) -> "Distribution":
        """A distribution from ``(family, *arguments)``, ``{"prior": family, **arguments}`` (``"family"`` is
        accepted for ``"prior"``) or a distribution (returned as it is)."""
        if isinstance(spec, Distribution):
            return spec
        if isinstance(spec, dict):
            named = dict(spec)
            family = named.pop("prior", None) or named.pop("family", None)
            if family is None:
                raise PriorError("a dict spec needs a 'prior' key, e.g. {'prior': 'uniform', 'low': 0, 'high': 1}")
            return make(family, **named)
        if isinstance(spec, (tuple, list)) and spec:
            return make(spec[0], *spec[1:])
        raise PriorError(f"expected (family, *arguments) or {{'prior': family, ...}}, got {spec!r}")

    def transform(self, u):
        """``theta`` for unit-cube values ``u`` (array-like)."""
        return self._single(u)[0]

    def jacobian(self, u):
        """``dtheta/du`` at unit-cube values ``u`` (array-like)."""
        return self._single(u)[1]

    def _single(self, u):
        u = np.atleast_1d(np.asarray(u, dtype=np.float64))
        theta, jac = Prior({"x": self})._apply(u[:, None])
        return theta[:, 0], jac[:, 0]

    def draw(self, rng, n):
        """``n`` independent draws (uniform ``u`` through the transform)."""
        return self.transform(rng.uniform(size=n))

    def describe(self, latex=False) -> str:
        """``uniform(low=0, high=1)``, or with ``latex=True`` the family's LaTeX form, ``\\mathcal{U}(0, 1)``
        (the readable form where the family has no LaTeX template)."""
        if latex and self.latex:
            return self.latex.format(**{k: f"{v:g}" for k, v in self.arguments().items()})
        return f"{self.family}({', '.join(f'{k}={v:g}' for k, v in self.arguments().items())})"

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


# --- the registry ---------------------------------------------------------------------------------------------

FAMILIES = {}  # every accepted name (the family's and its aliases, lower case) -> its Distribution class


def register(cls):
    """Class decorator: add a family to :data:`FAMILIES` under its name and aliases."""
    names = (cls.family, *cls.aliases)
    for name in names:
        if not name or name != name.lower() or name in FAMILIES:
            raise ValueError(f"prior family name {name!r} of {cls.__name__} is empty, not lower case, or taken")
    if not 0 <= cls.code < pf.BRANCHES:
        raise ValueError(f"{cls.__name__}: code {cls.code!r} is no branch of prior_families.transform_one")
    for arg in cls.ARGUMENTS:
        if hasattr(Distribution, arg.name):
            raise ValueError(f"{cls.__name__}: argument name {arg.name!r} shadows a Distribution attribute")
    cls.__signature__ = inspect.Signature([
        inspect.Parameter(arg.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=inspect.Parameter.empty if arg.default is None else arg.default)
        for arg in cls.ARGUMENTS])
    FAMILIES.update(dict.fromkeys(names, cls))
    return cls


def families() -> list:
    """The registered family names (without aliases), in registration order."""
    return list(dict.fromkeys(cls.family for cls in FAMILIES.values()))


def lookup(family) -> type:
    """The class of a family name or alias (case-insensitive); PriorError listing the families if unknown."""
    cls = FAMILIES.get(str(family).strip().lower())
    if cls is None:
        raise PriorError(f"unknown prior family {family!r}; known families: {', '.join(families())}")
    return cls


def make(family: str, *args, **kwargs) -> Distribution:
    """Build a distribution from its family name and arguments, e.g. ``make("uniform", low=0, high=1)``.

    Errors name the family and the argument (missing, unexpected or out of range).
    """
    return lookup(family)(*args, **kwargs)


def bounds_of(spec) -> tuple:
    """Hard support ``(low, high)`` (None: unbounded) of a stored spec such as ``["uniform", 0.0, 1.0]``;
    ``(None, None)`` for a missing spec or one the registry does not accept."""
    if not spec:
        return None, None
    try:
        return Distribution.from_spec(spec).bounds()
    except PriorError:
        return None, None


# --- the families ---------------------------------------------------------------------------------------------

@register
class Uniform(Distribution):
    """Uniform on [low, high]: theta = low + (high - low) u."""

    family, aliases, code = "uniform", ("flat",), pf.UNIFORM
    ARGUMENTS = (Arg("low"), Arg("high"))
    latex = r"\mathcal{{U}}({low}, {high})"


@register
class LogUniform(Distribution):
    """Uniform in log(theta) on [low, high] (Jeffreys prior for a scale): theta = low (high / low)^u."""

    family, aliases, code = "loguniform", ("log-uniform", "log_uniform", "jeffreys"), pf.LOGUNIFORM
    ARGUMENTS = (Arg("low", positive=True), Arg("high", positive=True))
    latex = r"\log\mathcal{{U}}({low}, {high})"

    def row(self):
        ratio = self.high / self.low  # above 1.8e308 (bounds 1e-300 and 1e300) the ratio overflows; its log does not
        return _row(self.low, self.high, math.log(ratio) if math.isfinite(ratio) else
                    math.log(self.high) - math.log(self.low))


@register
class Normal(Distribution):
    """theta = mu + sigma Phi^-1(u), Phi^-1 the standard normal quantile (``prior_families.ndtri``)."""

    family, aliases, code = "normal", ("gaussian", "norm"), pf.NORMAL
    ARGUMENTS = (Arg("mu"), Arg("sigma", positive=True))
    latex = r"\mathcal{{N}}({mu}, {sigma}^2)"


@register
class TruncatedNormal(Distribution):
    """Normal(mu, sigma) restricted to [low, high]: Phi^-1 of u mapped onto [Phi(a), Phi(b)], with
    a = (low - mu) / sigma and b = (high - mu) / sigma precomputed in the row.

    An interval above the mean (a > 0) is mapped through the mirror image, the normal's lower tail [-b, -a]:
    Phi(a) rounds to 1 beyond a = 8.3, where float64 resolves Phi(-a) to hundreds of digits (to a = 37). The row
    says which with the sign of its sigma (negative: mirrored, ``prior_families.transform_one``)."""

    family, aliases, code = "truncnormal", ("truncated_normal", "truncatednormal"), pf.TRUNCNORMAL
    ARGUMENTS = (Arg("mu"), Arg("sigma", positive=True), Arg("low"), Arg("high"))
    latex = r"\mathcal{{N}}({mu}, {sigma}^2)_{{[{low}, {high}]}}"

    def check(self):
        super().check()
        a, b = (self.low - self.mu) / self.sigma, (self.high - self.mu) / self.sigma
        self._mirrored = a > 0.0
        if self._mirrored:  # [a, b] through [-b, -a]: theta = mu - sigma Phi^-1(Phi(-b) + mass (1 - u))
            self._cdf_start, self._mass = pf.ndtr(-b), pf.ndtr(-a) - pf.ndtr(-b)
        else:
            self._cdf_start, self._mass = pf.ndtr(a), pf.ndtr(b) - pf.ndtr(a)
        if not self._mass > 1e-300:
            raise PriorError(f"truncnormal: [low, high] = [{self.low}, {self.high}] holds no probability of "
                             f"Normal({self.mu}, {self.sigma})")

    def row(self):
        return _row(self.mu, -self.sigma if self._mirrored else self.sigma, self._cdf_start, self._mass)


@register
class LogNormal(Distribution):
    """log(theta) ~ Normal(mu, sigma): theta = exp(mu + sigma Phi^-1(u))."""

    family, aliases, code = "lognormal", ("log-normal",), pf.LOGNORMAL
    ARGUMENTS = (Arg("mu"), Arg("sigma", positive=True))
    support = (0.0, None)
    latex = r"\log\mathcal{{N}}({mu}, {sigma}^2)"


@register
class HalfNormal(Distribution):
    """|Normal(0, sigma)|: theta = sigma Phi^-1((1 + u) / 2)."""

    family, aliases, code = "halfnormal", ("half_normal",), pf.HALFNORMAL
    ARGUMENTS = (Arg("sigma", positive=True),)
    support = (0.0, None)
    latex = r"|\mathcal{{N}}(0, {sigma}^2)|"


@register
class Exponential(Distribution):
    """Density exp(-theta / scale) / scale on theta >= 0: theta = -scale log(1 - u)."""

    family, aliases, code = "exponential", ("expon",), pf.EXPONENTIAL
    ARGUMENTS = (Arg("scale", positive=True),)
    support = (0.0, None)
    latex = r"\mathrm{{Exp}}(\lambda = 1/{scale})"


@register
class Cauchy(Distribution):
    """theta = loc + scale tan(pi (u - 1/2))."""

    family, aliases, code = "cauchy", (), pf.CAUCHY
    ARGUMENTS = (Arg("loc"), Arg("scale", positive=True))
    latex = r"\mathrm{{Cauchy}}({loc}, {scale})"


@register
class Beta(Distribution):
    """Beta(a, b) on [low, high] (default [0, 1]).

    The Beta quantile has no closed form, so it is tabulated (scipy, on first use) on ``TABLE_SIZE`` = 4097
    knots with exact endpoints, uniform in ``s = acos(1 - 2u) / pi`` (crowded towards both ends), and
    interpolated linearly in ``s`` inside numba; ``dtheta/du`` is that segment's slope times ``ds/du``. This is
    an approximation (error ~1e-6 in theta for moderate a, b); where a < 1 or b < 1 the quantile is very flat at
    an end and the table resolves theta there only to about a knot spacing.
    """

    family, aliases, code = "beta", (), pf.TABLE
    ARGUMENTS = (Arg("a", positive=True), Arg("b", positive=True), Arg("low", default=0.0),
                 Arg("high", default=1.0))
    latex = r"\mathrm{{Beta}}({a}, {b})_{{[{low}, {high}]}}"

    def row(self):
        if getattr(self, "_table", None) is None:
            from scipy import stats

            table = pf.quantile_table(stats.beta(self.a, self.b).ppf)
            table[0], table[-1] = 0.0, 1.0  # exact endpoints
            self._table = self.low + (self.high - self.low) * table
        return np.concatenate([_row(self.a, self.b), self._table])


# --- the joint prior ------------------------------------------------------------------------------------------

class Prior:
    """Independent priors of named parameters, in theta order.

    ``transform(u)`` and ``transform_jacobian(u)`` accept one point (d,) or a batch (B, d). ``codes`` (int64, d)
    and ``args`` (float64, (d, width)) encode the prior for the njit :func:`transform_one`.
    """

    def __init__(self, distributions, latex=None):
        if not isinstance(distributions, dict) or not distributions:
            raise PriorError("Prior needs a non-empty dict: parameter name -> distribution")
        for name, dist in distributions.items():
            problem = name_problem(name)
            if problem:
                raise PriorError(f"parameter {name!r}: {problem}")
            if not isinstance(dist, Distribution):
                raise PriorError(f"parameter {name!r}: expected a sampler.priors distribution, got {dist!r}")
        for name, text in (latex or {}).items():
            problem = label_problem(text)
            if problem:
                raise PriorError(f"parameter {name!r}: latex: {problem}", "latex", problem)
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
        """``{name: spec}`` with every spec as :meth:`Distribution.from_spec` takes it; a dict spec may carry a
        ``"latex"`` label (as in the YAML), which is kept."""
        dists, labels = {}, dict(latex or {})
        for name, item in dict(spec).items():
            try:
                if isinstance(item, dict) and "latex" in item:
                    item = dict(item)
                    labels.setdefault(name, item.pop("latex"))  # text, checked by the Prior (str(5) hid a 5)
                dists[name] = Distribution.from_spec(item)
            except PriorError as exc:
                raise PriorError(f"parameter {name!r}: {exc}", exc.argument, exc.detail) from None
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
        pf.transform_many(self.codes, self.args, batch, theta, jac)
        return (theta[0], jac[0]) if single else (theta, jac)

    def transform(self, u):
        """Physical parameters for unit-cube points."""
        return self._apply(u)[0]

    def transform_jacobian(self, u):
        """Diagonal ``dtheta/du`` at unit-cube points (same shape as ``u``)."""
        return self._apply(u)[1]

    def draw(self, rng, n):
        """``n`` independent draws, shape ``(n, ndim)``: the ``draws(rng, n)`` a ``Likelihood`` takes."""
        return self.transform(rng.uniform(size=(n, self.ndim)))

    def __repr__(self):
        inner = ", ".join(f"{n!r}: {d!r}" for n, d in self.distributions.items())
        return f"Prior({{{inner}}})"
