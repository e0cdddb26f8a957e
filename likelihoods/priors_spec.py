"""Default priors as plain data, and draws from them for gradient checks.

A prior is a tuple naming its family and its numbers, e.g. ``("uniform", 0.0, 1.0)``,
``("loguniform", 0.01, 0.5)``, ``("normal", mu, sigma)`` or ``("truncnormal", mu, sigma, low, high)``.
The ``sampler`` package turns these into its prior objects; ``likelihoods`` only needs to draw points from
them (to choose where ``check_gradient`` looks), so it keeps no prior classes of its own.
"""

import math

import numpy as np

FAMILIES = {"uniform": 2, "loguniform": 2, "normal": 2, "truncnormal": 4}


def validate(priors, params):
    """Check a ``{name: (family, *numbers)}`` dict against the parameter names; raise ValueError naming the key."""
    if priors is None:
        return None
    missing = [p for p in params if p not in priors]
    if missing:
        raise ValueError(f"priors: no prior for parameter(s) {', '.join(missing)}")
    extra = [k for k in priors if k not in params]
    if extra:
        raise ValueError(f"priors: {', '.join(extra)} is not a parameter (parameters: {', '.join(params)})")
    checked = {}
    for name in params:
        spec = tuple(priors[name])
        family = spec[0] if spec else None
        if family not in FAMILIES:
            raise ValueError(f"priors.{name}: unknown prior family {family!r} (known: {', '.join(FAMILIES)})")
        numbers = spec[1:]
        if len(numbers) != FAMILIES[family]:
            raise ValueError(f"priors.{name}: {family} takes {FAMILIES[family]} numbers, got {len(numbers)}")
        numbers = tuple(float(v) for v in numbers)
        _check_numbers(name, family, numbers)
        checked[name] = (family,) + numbers
    return checked


def _check_numbers(name, family, numbers):
    if family in ("uniform", "loguniform") and not numbers[0] < numbers[1]:
        raise ValueError(f"priors.{name}: {family} needs low < high, got {numbers}")
    if family == "loguniform" and numbers[0] <= 0.0:
        raise ValueError(f"priors.{name}: loguniform needs low > 0, got {numbers[0]}")
    if family in ("normal", "truncnormal") and not numbers[1] > 0.0:
        raise ValueError(f"priors.{name}: {family} needs sigma > 0, got {numbers[1]}")
    if family == "truncnormal" and not numbers[2] < numbers[3]:
        raise ValueError(f"priors.{name}: truncnormal needs low < high, got {numbers[2:]}")


def draw(priors, params, rng, n):
    """``n`` independent draws, shape ``(n, len(params))``, in float64."""
    out = np.empty((n, len(params)))
    for j, name in enumerate(params):
        family, *v = priors[name]
        if family == "uniform":
            out[:, j] = rng.uniform(v[0], v[1], n)
        elif family == "loguniform":
            out[:, j] = np.exp(rng.uniform(math.log(v[0]), math.log(v[1]), n))
        elif family == "normal":
            out[:, j] = rng.normal(v[0], v[1], n)
        else:
            from scipy.stats import truncnorm

            a, b = (v[2] - v[0]) / v[1], (v[3] - v[0]) / v[1]
            out[:, j] = truncnorm.rvs(a, b, loc=v[0], scale=v[1], size=n, random_state=rng)
    return out


def log_volume(priors, params):
    """log of the prior box volume when every prior is uniform (for normalising evidences); else None."""
    total = 0.0
    for name in params:
        family, *v = priors[name]
        if family != "uniform":
            return None
        total += math.log(v[1] - v[0])
    return total
