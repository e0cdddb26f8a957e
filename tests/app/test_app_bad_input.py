"""Hostile or nonsensical input is ONE message naming the place (file:line:col or key path), exit status 2, at
once: YAML bombs and tags, and every numeric setting checked for type, finiteness and range."""
import time

import pytest

from nestgrad.sampler.cli import main
from nestgrad.sampler.config import ConfigError, load
from nestgrad.sampler.config_schema import NUMERIC
from nestgrad.sampler.config_yaml import MAX_BYTES, MAX_DEPTH, MAX_NODES
from nestgrad.sampler.hmc import HMCSettings

from test_app_config_errors import GOOD, folder, line_of, write  # noqa: F401  (folder is a fixture)


def with_setting(setting: str) -> str:
    """GOOD with `setting` ("key: value" under `sampler:`) replacing the key's line or added to the section."""
    key = setting.split(":")[0]
    lines = [line for line in GOOD.splitlines() if not line.startswith(f"  {key}:")]
    at = lines.index("sampler:") + 1
    return "\n".join(lines[:at] + [f"  {setting}"] + lines[at:]) + "\n"


def laughs(levels=10, width=9):
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


# (id, document, line:col of the message, text expected in it)
YAML_CASES = [
    ("python tag", GOOD.replace("seed: 1", "seed: !!python/name:os.system"), "11:9",
     "the tag '!!python/name:os.system' is not allowed"),
    ("python object tag", GOOD + "x: !!python/object/apply:os.system [echo hi]\n", "13:4",
     "the tag '!!python/object/apply:os.system' is not allowed"),
    ("custom tag", GOOD.replace("nlive: 50", "nlive: !big 50"), "10:10", "the tag '!big' is not allowed"),
    ("binary tag", GOOD + "x: !!binary aGk=\n", "13:4", "the tag '!!binary' is not allowed"),
    ("1000-deep flow nesting", GOOD + "x: " + "[" * 1000 + "]" * 1000 + "\n", f"13:{3 + MAX_DEPTH}",
     f"nested more than {MAX_DEPTH} levels deep"),
    ("deep block nesting", GOOD + "x:\n" + "".join(" " * i + "- \n" for i in range(1, 60)), None,
     f"nested more than {MAX_DEPTH} levels deep"),
    ("billion laughs", laughs(), "6:", f"more than {MAX_NODES} values (aliases expanded)"),
    ("merge-key laughs", laughs().replace("a9: &a9 [", "a9: &a9 {<<: [") + "", None, "more than"),
    ("recursive alias", GOOD + "x: &loop [1, *loop]\n", "13:14", "refers to a value that contains it"),
    ("undefined alias", GOOD + "x: *nowhere\n", "13:4", "has no anchor '&nowhere' before it"),
    ("half a megabyte list", "x: [" + ", ".join(["1"] * 150_000) + "]\n", "1:", f"more than {MAX_NODES} values"),
    ("bare '=' value", GOOD + "x: =\n", "13:4", "invalid YAML value"),
]


@pytest.mark.parametrize("case", YAML_CASES, ids=[c[0] for c in YAML_CASES])
def test_yaml_bombs_and_tags_are_refused_before_building_objects(folder, capsys, case):
    _, text, position, expected = case
    path = write(folder, text)
    start = time.perf_counter()
    assert main(["check", str(path)]) == 2
    elapsed = time.perf_counter() - start
    err = capsys.readouterr().err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err, err
    assert expected in err, err
    if position is not None:
        assert f"{path}:{position}" in err, err
    assert elapsed < 5, f"took {elapsed:.1f} s"


def test_oversized_config_is_refused_by_its_size(folder, capsys):
    path = folder / "big.yaml"
    with open(path, "w") as handle:  # 10 MB: a list nobody should inline
        handle.write("x: [" + "1, " * 3_333_333 + "1]\n")
    start = time.perf_counter()
    assert main(["run", str(path)]) == 2
    assert time.perf_counter() - start < 5
    err = capsys.readouterr().err
    assert f"{path}: 10.0 MB is too large for a config (limit {MAX_BYTES / 1e6:g} MB)" in err, err
    assert "likelihood.data" in err and "Traceback" not in err


def test_config_that_is_not_utf8(folder):
    path = folder / "latin1.yaml"
    path.write_bytes(GOOD.replace("name: demo", "name: d\xe9mo").encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1.yaml:1:8: not UTF-8 text \(byte 0xe9\)"):
        load(path)


# (setting as written under `sampler:`, key path, expected text)
NUMBER_CASES = [
    ("nlive: 0", "sampler.nlive", "must be positive (an integer in [2, 1000000]), got 0"),
    ("nlive: 2000000", "sampler.nlive", "must be an integer in [2, 1000000]"),
    ("nlive: 50.5", "sampler.nlive", "expected an integer, got 50.5"),
    ("nlive: 1e3", "sampler.nlive", "got text '1e3' (YAML reads this as text; write 1.0e+3)"),
    ("dlogz: .nan", "sampler.dlogz", "must be a finite number, got nan"),
    ("dlogz: 0", "sampler.dlogz", "must be positive"),
    ("seed: -3", "sampler.seed", "must be zero or more"),
    ("seed: 18446744073709551616", "sampler.seed", "must be an integer in [0, 9223372036854775807]"),
    ("seed: true", "sampler.seed", "expected an integer, got a boolean"),
    ("delete_fraction: 1.0", "sampler.delete_fraction", "must be a number in (0, 1)"),
    ("max_iter: 0", "sampler.max_iter", "must be positive"),
    ("max_nlike: .inf", "sampler.max_nlike", "must be a finite number"),
    ("max_time: -5", "sampler.max_time", "must be positive"),
    ("checkpoint_every: 1.0e+300", "sampler.checkpoint_every", "must be a number in (0, 1e+09]"),
    ("hmc: {steps_per_dim: .inf}", "sampler.hmc.steps_per_dim", "must be a finite number"),
    ("hmc: {min_steps: 1000000000000}", "sampler.hmc.min_steps", "got 1000000000000"),
    ("hmc: {min_steps: 1e12}", "sampler.hmc.min_steps", "write 1.0e+12"),
    ("hmc: {n_steps: 0}", "sampler.hmc.n_steps", "got 0"),
    ("hmc: {target_outside: 1.5}", "sampler.hmc.target_outside", "got 1.5"),
    ("hmc: {metric: dens}", "sampler.hmc.metric", "got 'dens'"),
    ("hmc: {clustering: 1}", "sampler.hmc.clustering", "expected true or false"),
]


@pytest.mark.parametrize("setting, key, expected", NUMBER_CASES, ids=[c[0] for c in NUMBER_CASES])
def test_numeric_setting_checked_at_its_key(folder, capsys, setting, key, expected):
    text = with_setting(setting)
    path = write(folder, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line_of(text, setting.split(':')[0] + ':')}: {key}: "), message
    assert expected in message, message
    assert main(["run", str(path), "--quiet"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_every_numeric_setting_refuses_infinity_and_nan(folder):
    """Table-driven: every `sampler.*` entry of NUMERIC and every numeric HMCSettings field (a new field
    needs no new test)."""
    keys = [key.split(".", 1)[1] for key in NUMERIC if key.startswith("sampler.")]
    keys += [f"hmc.{name}" for name, default in HMCSettings._field_defaults.items()
             if default is None or (isinstance(default, (int, float)) and not isinstance(default, bool))]
    assert "hmc.min_steps" in keys and "nlive" in keys
    for key in keys:
        for bad in (".inf", "-.inf", ".nan"):
            setting = f"{key}: {bad}" if "." not in key else f"hmc: {{{key.split('.')[1]}: {bad}}}"
            path = write(folder, with_setting(setting))
            with pytest.raises(ConfigError, match=rf": sampler\.{key}: ") as info:
                load(path)
            assert "finite" in str(info.value) or "positive" in str(info.value), str(info.value)


def test_integer_settings_written_as_floats_are_integers(folder):
    config = load(write(folder, GOOD.replace("nlive: 50", "nlive: 50.0\n  hmc: {min_steps: 30.0}")))
    assert config.sampler.nlive == 50 and isinstance(config.sampler.nlive, int)
    assert config.sampler.hmc == {"min_steps": 30} and isinstance(config.sampler.hmc["min_steps"], int)


@pytest.mark.parametrize("old, new, key", [
    ("low: 0.0, high: 1.0", "low: -.inf, high: 1.0", "params.mu.low"),
    ("low: 0.01, high: 1.0", "low: 0.01, high: .nan", "params.sigma.high"),
])
def test_prior_arguments_must_be_finite(folder, old, new, key):
    with pytest.raises(ConfigError, match=rf": {key}: must be a finite number"):
        load(write(folder, GOOD.replace(old, new)))


def test_builtin_options_must_be_finite(folder):
    text = "likelihood:\n  builtin: gaussian\n  options: {ndim: .inf}\n"
    with pytest.raises(ConfigError, match=r"config.yaml:3: likelihood.options.ndim: must be a finite number"):
        load(write(folder, text))


@pytest.mark.parametrize("argv, expected", [
    (["run", "{config}", "--seed", "-1"], "--seed: must be zero or more"),
    (["check", "{config}", "-n", "0"], "-n: must be positive"),
    (["check", "{config}", "-n", "10000000"], "-n: must be an integer in [1, 100000]"),
    (["check", "{config}", "--seed", "-5"], "--seed: must be zero or more"),
], ids=["run --seed -1", "check -n 0", "check -n huge", "check --seed -5"])
def test_numeric_command_line_options(folder, capsys, argv, expected):
    path = write(folder, GOOD)
    assert main([a.format(config=path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert f"nestgrad: error: {expected}" in err and "Traceback" not in err, err
