"""The issue-9 example configs sampled end to end with `nestgrad run`: each finishes, and the posterior finds the
parameters the shipped data were generated from (configs/*/data/make_data.py) within 4 posterior standard
deviations. The run settings are the configs' own except a smaller nlive and no plots (CI time)."""
import json
import math
import pathlib

import numpy as np
import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
TRUTHS = {
    "mvn3d/mvn3d.yaml": {"log_l00": math.log(1.2), "l10": 0.5, "log_l11": math.log(0.8), "l20": -0.3, "l21": 0.4,
                         "log_l22": math.log(0.6)},
    "kepler/kepler.yaml": {"period": 57.0, "k": 30.0, "e": 0.35, "omega": 1.2, "phase": 0.7, "v0": -3.0},
    "lotka_volterra/lotka_volterra.yaml": {"a": 1.0, "b": 0.6, "c": 0.8, "d": 0.5, "sigma": 0.05},
}
ANGLES = {"omega", "phase"}


def _copy_with_absolute_paths(config, folder, out):
    """The config with its kernel and data paths made absolute, so that it can be written anywhere."""
    spec = yaml.safe_load(config.read_text())
    here = config.parent
    kernel_file, name = spec["likelihood"]["kernel"].split(":")
    spec["likelihood"]["kernel"] = f"{here / kernel_file}:{name}"
    spec["likelihood"]["data"] = {k: str(here / v) if isinstance(v, str) else v
                                  for k, v in spec["likelihood"]["data"].items()}
    spec["sampler"]["nlive"] = 150
    spec["output"] = {"dir": str(out), "plots": []}
    path = folder / config.name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))  # the order of params is the order of theta
    return path


@pytest.mark.parametrize("config", sorted(TRUTHS))
def test_example_config_runs_and_finds_the_generating_parameters(config, nestgrad_inprocess, tmp_path):
    out = tmp_path / "run"
    path = _copy_with_absolute_paths(REPO / "configs" / config, tmp_path, out)
    status, stdout, stderr = nestgrad_inprocess("run", str(path), "--quiet")
    assert status == 0, stdout + stderr
    results = json.loads((out / "results.json").read_text())
    assert math.isfinite(results["logz"]) and 0.0 < results["logz_err"] < 1.0
    names = [line.split()[0] for line in (out / f"{path.stem}.paramnames").read_text().splitlines()]
    assert sorted(names) == sorted(TRUTHS[config])
    samples = np.loadtxt(out / f"{path.stem}_equal_weights.txt", ndmin=2)[:, 2:]  # weight, -2 logL, params
    assert samples.shape[1] == len(names) and samples.shape[0] > 100
    for i, name in enumerate(names):
        truth, column = TRUTHS[config][name], samples[:, i]
        if name in ANGLES:  # distance on the circle from the truth
            offset = np.angle(np.exp(1j * (column - truth)))
            mean, spread = float(np.mean(offset)), float(np.std(offset))
            assert abs(mean) < 4 * spread, (name, mean, spread)
        else:
            mean, spread = float(np.mean(column)), float(np.std(column))
            assert abs(mean - truth) < 4 * spread, (name, mean, truth, spread)
