"""The built-ins' options are checked before a built-in is built (``builtin._options``): a wrong type or range is
one OptionError naming the option, never numpy's warnings, an empty parameter list or Python's wording."""
import inspect

import pytest

from nestgrad.likelihoods import builtin
from nestgrad.likelihoods.builtin import _MODULES, OptionError


@pytest.mark.parametrize("name", builtin.names())
def test_every_option_has_a_rule(name):
    module = _MODULES[name]
    assert list(module.OPTIONS) == list(inspect.signature(module.get).parameters)


@pytest.mark.parametrize("name, options, option, expected", [
    ("gaussian", {"ndim": 0}, "ndim", "must be positive"),                    # was: an empty Prior's error
    ("gaussian", {"ndim": "three"}, "ndim", "expected an integer, got text 'three'"),  # was: '>' not supported
    ("gaussian", {"ndim": 2.5}, "ndim", "expected an integer, got 2.5"),
    ("gaussian", {"sigma": -0.1}, "sigma", "must be positive"),              # was: accepted silently
    ("gaussian", {"sigma": 0}, "sigma", "must be positive"),                 # was: divide-by-zero warnings
    ("gaussian", {"rho": 1.5}, "rho", "must be a number in (-1, 1)"),        # was: blamed on ndim
    ("gaussian", {"ndim": 3, "rho": -0.6}, "rho", "positive-definite"),
    ("gaussian", {"centre": float("nan")}, "centre", "must be a finite number"),
    ("gaussian_shells", {"width": 0}, "width", "must be positive"),
    ("gaussian4d", {"n": 0}, "n", "must be positive"),
    ("student_t", {"seed": -1}, "seed", "must be zero or more"),
    ("rosenbrock", {"half_width": True}, "half_width", "got a boolean"),
    ("poisson_rates", {"prior": "loguniform_"}, "prior", "did you mean 'loguniform'"),
    ("poisson_rates", {"prior": "loguniform", "low": 0}, "low", "needs low > 0"),
    ("poisson_rates", {"low": 60}, "low", "must be less than high (50.0)"),
    ("poisson_rates", {"high": -1}, "high", "must be positive"),
])
def test_a_bad_option_is_named(name, options, option, expected):
    with pytest.raises(OptionError) as info:
        builtin.get(name, **options)
    assert info.value.option == option and expected in info.value.detail, str(info.value)
    assert str(info.value).startswith(f"built-in {name!r}: option {option}: ")


def test_integers_written_as_floats_are_integers():
    model = builtin.get("gaussian", ndim=3.0)
    assert model.ndim == 3 and model.options["ndim"] == 3 and isinstance(model.options["ndim"], int)
    assert builtin.get("poisson_rates", low=None).options["low"] == 0.0  # None: the module's own default
