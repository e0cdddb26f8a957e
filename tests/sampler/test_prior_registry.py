"""One registry of prior families (sampler/priors.py): what it declares reaches every user of it.

Config validation accepts exactly each family's arguments, the run folder's `.ranges` and the plots take its
bounds, transforms and draws respect them; a family registered here (a toy one, in the test only) becomes
accepted everywhere at once; the README lists what the registry holds.
"""
import re
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nestgrad.likelihoods import builtin
from nestgrad.sampler import prior_families as pf
from nestgrad.sampler import priors
from nestgrad.sampler.config import ConfigError, build, load
from nestgrad.sampler.run_folder import write_ranges

REPO = Path(__file__).resolve().parents[2]
FAMILIES = priors.families()


def example_arguments(cls):
    """Valid arguments of a family: required ones 1, 2, 3, ... in order (so low < high), optional ones left out."""
    return {name: float(i + 1) for i, name in enumerate(cls.required_arguments())}


def config_with(tmp_path, prior_line):
    """A config on the 2-d built-in Gaussian whose parameter x1 has the prior given as YAML flow mapping."""
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(f"""\
        likelihood:
          builtin: gaussian
          options: {{ndim: 2}}
        params:
          x1: {prior_line}
        backend: python
        """))
    return path


def flow(family, arguments):
    return "{" + ", ".join([f"prior: {family}"] + [f"{k}: {v!r}" for k, v in arguments.items()]) + "}"


def test_registry_holds_every_family_once_with_a_branch_of_the_numba_transform():
    assert FAMILIES == ["uniform", "loguniform", "normal", "truncnormal", "lognormal", "halfnormal",
                        "exponential", "cauchy", "beta"]
    for name, cls in priors.FAMILIES.items():
        assert name in (cls.family, *cls.aliases)
        assert 0 <= cls.code < pf.BRANCHES


@pytest.mark.parametrize("family", FAMILIES)
def test_config_accepts_exactly_the_registry_arguments(tmp_path, family):
    cls = priors.lookup(family)
    arguments = example_arguments(cls)
    config = load(config_with(tmp_path, flow(family, arguments)))
    assert config.params[0].family == family and config.params[0].args == arguments
    for alias in cls.aliases:
        assert load(config_with(tmp_path, flow(alias, arguments))).params[0].family == family
    for arg in cls.ARGUMENTS:  # each optional argument may be given too
        if arg.default is not None:
            given = dict(arguments, **{arg.name: arg.default})
            assert load(config_with(tmp_path, flow(family, given))).params[0].args == given
    for missing in cls.required_arguments():
        text = flow(family, {k: v for k, v in arguments.items() if k != missing})
        with pytest.raises(ConfigError, match=rf"config.yaml:5: params.x1.{missing}: missing: a {family} prior"):
            load(config_with(tmp_path, text))
    with pytest.raises(ConfigError, match=rf"params.x1.bogus: unknown argument 'bogus' for a {family} prior; "
                                          rf"it takes {re.escape(cls.signature())}"):
        load(config_with(tmp_path, flow(family, dict(arguments, bogus=1.0))))


@pytest.mark.parametrize("family", FAMILIES)
def test_bounds_hold_every_transformed_and_drawn_point(family):
    dist = priors.make(family, **example_arguments(priors.lookup(family)))
    low, high = dist.bounds()
    theta = np.concatenate([dist.transform(np.linspace(0.0, 1.0, 1001)[1:-1]),
                            dist.draw(np.random.default_rng(0), 1000)])
    assert np.all(np.isfinite(theta))
    assert low is None or theta.min() >= low
    assert high is None or theta.max() <= high
    ends = dist.transform([0.0, 1.0])  # a bounded side is the transform's end, an unbounded one goes far
    assert ends[0] < -1e12 if low is None else abs(ends[0] - low) < 1e-12
    assert ends[1] > 1e12 if high is None else abs(ends[1] - high) < 1e-12
    assert priors.bounds_of(list(dist.to_spec())) == (low, high)  # as the run folder reads the settings


@pytest.mark.parametrize("family", FAMILIES)
def test_spec_round_trips_and_descriptions_format(family):
    dist = priors.make(family, **example_arguments(priors.lookup(family)))
    assert priors.Distribution.from_spec(dist.to_spec()) == dist
    assert priors.Distribution.from_spec(dist.to_dict()) == dist
    assert dist.describe().startswith(f"{family}(")
    assert dist.latex and dist.describe(latex=True)  # every template names only the family's arguments


def test_descriptions():
    assert priors.Uniform(0, 1).describe() == "uniform(low=0, high=1)"
    assert priors.Uniform(0, 1).describe(latex=True) == r"\mathcal{U}(0, 1)"
    assert priors.Normal(0.5, 0.1).describe(latex=True) == r"\mathcal{N}(0.5, 0.1^2)"


def test_value_errors_name_the_argument_for_the_config():
    with pytest.raises(priors.PriorError) as info:
        priors.make("loguniform", low=0.0, high=1.0)
    assert info.value.argument == "low" and info.value.detail == "a loguniform prior needs low > 0, got 0.0"
    with pytest.raises(priors.PriorError) as info:
        priors.make("beta", 2.0, 3.0, low=1.0, high=0.5)
    assert info.value.argument == "high" and "greater than low" in info.value.detail


def test_builtin_default_priors_are_registry_specs():
    for name in builtin.names():
        b = builtin.get(name)
        prior = priors.Prior.from_spec(b.priors)
        assert prior.names == list(b.params) and prior.to_spec() == {p: tuple(s) for p, s in b.priors.items()}


def test_readme_lists_the_registry():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    sentence = re.search(r"Prior families: (.*?)\. ", text, re.S).group(1)
    listed = re.findall(r"`([^`]+)`", sentence)
    assert listed == [f"{f}({priors.lookup(f).signature()})" for f in FAMILIES]


# --- a family added in one place -------------------------------------------------------------------------------

class Box(priors.Distribution):
    """Toy family for these tests only: uniform on [centre - half_width, centre + half_width], through the
    numba transform's uniform branch."""

    family, aliases, code = "box", ("tophat",), pf.UNIFORM
    ARGUMENTS = (priors.Arg("centre"), priors.Arg("half_width", positive=True))
    latex = r"\mathrm{{Box}}({centre} \pm {half_width})"

    def row(self):
        return np.array([self.centre - self.half_width, self.centre + self.half_width, 0.0, 0.0])

    def bounds(self):
        return self.centre - self.half_width, self.centre + self.half_width


@pytest.fixture
def box(monkeypatch):
    """Box registered for one test (the registry is restored afterwards)."""
    monkeypatch.setattr(priors, "FAMILIES", dict(priors.FAMILIES))
    return priors.register(Box)


def test_a_registered_family_is_accepted_by_the_config_and_transforms(tmp_path, box):
    problem = build(load(config_with(tmp_path, "{prior: box, centre: 0.5, half_width: 0.25}")))
    assert problem.prior.distributions["x1"] == Box(0.5, 0.25)
    assert problem.prior.to_spec()["x1"] == ("box", 0.5, 0.25)
    u = np.array([[0.0, 0.5], [0.5, 0.5], [1.0, 0.5]])
    np.testing.assert_allclose(problem.prior.transform(u)[:, 0], [0.25, 0.5, 0.75])
    np.testing.assert_allclose(problem.prior.transform_jacobian(u)[:, 0], 0.5)
    points = problem.prior.draw(np.random.default_rng(0), 500)
    assert points[:, 0].min() >= 0.25 and points[:, 0].max() <= 0.75
    assert problem.likelihood.check_gradient(n=4).ok  # the config passes draws from the registry's prior
    assert load(config_with(tmp_path, "{prior: tophat, centre: 0.5, half_width: 0.25}")).params[0].family == "box"


@pytest.mark.parametrize("prior_line, key, words", [
    ("{prior: box, centre: 0.5}", "params.x1.half_width", "missing: a box prior needs centre, half_width"),
    ("{prior: box, centre: 0.5, half_width: -1.0}", "params.x1.half_width", "a box prior needs half_width > 0"),
    ("{prior: box, centre: 0.5, half_widht: 1.0}", "params.x1.half_widht", "did you mean 'half_width'"),
    ("{prior: bx, centre: 0.5, half_width: 1.0}", "params.x1.prior", "did you mean 'box'"),
])
def test_a_registered_family_gets_the_config_error_messages(tmp_path, box, prior_line, key, words):
    with pytest.raises(ConfigError) as info:
        load(config_with(tmp_path, prior_line))
    assert f"config.yaml:5: {key}: " in str(info.value) and words in str(info.value), str(info.value)


def test_a_registered_family_gets_bounds_in_the_run_folder(tmp_path, box):
    results = SimpleNamespace(params=["x1", "x2", "x3"],
                              settings={"prior": {"x1": ["box", 0.5, 0.25], "x2": ["normal", 0.0, 1.0]}})
    write_ranges(results, tmp_path / "run.ranges")
    assert (tmp_path / "run.ranges").read_text() == "x1  0.25  0.75\nx2  N  N\nx3  N  N\n"
    assert Box(1.0, 2.0).describe(latex=True) == r"\mathrm{Box}(1 \pm 2)"


def test_registering_refuses_a_taken_name_or_a_missing_branch(box):
    class Flat(priors.Uniform):
        family, aliases = "flat", ()

    class Nowhere(Box):
        family, aliases, code = "nowhere", (), pf.BRANCHES

    for cls in (Flat, Nowhere):
        with pytest.raises(ValueError):
            priors.register(cls)
    assert "box" in priors.families() and "nowhere" not in priors.FAMILIES
