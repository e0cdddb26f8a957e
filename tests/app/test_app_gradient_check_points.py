"""Where `nestgrad check` and `nestgrad run` check the gradient: at prior draws with a finite logL. A kernel that is
-inf outside a small region (a model defined only there) was refused by `run` as "disagrees with finite
differences" because its first four prior draws were all -inf; one that is never finite gets a message saying so."""
import math

import numpy as np
import pytest

from nestgrad.sampler.cli import EXIT_GRADIENT, main

from test_app_config_errors import GOOD, folder, write  # noqa: F401  (folder is a fixture)

SMALL_SUPPORT = '''\
import math


def model(theta, x):
    mu, sigma = theta[0], theta[1]
    if abs(mu - 0.5) > 0.004:
        return -math.inf
    total = 0.0
    for i in range(x.shape[1]):
        d = (x[0, i] - mu) / sigma
        total += -0.5 * d * d - math.log(sigma)
    return total
'''

NEVER_FINITE = SMALL_SUPPORT.replace("    return total\n", "    return total * math.nan\n")


def test_check_finds_the_small_region_where_the_likelihood_is_finite(folder, capsys):
    (folder / "kernel.py").write_text(SMALL_SUPPORT)  # finite on 0.8% of the prior: P(one of 4 draws) ~ 3%
    assert main(["check", str(write(folder, GOOD))]) == 0
    out = capsys.readouterr().out
    assert "OK: worst relative error per parameter over 16 point(s)" in out and "skipped" not in out, out


def test_run_samples_a_likelihood_finite_on_a_small_region(folder, capsys):
    (folder / "kernel.py").write_text(SMALL_SUPPORT)
    config = write(folder, GOOD + "output:\n  plots: []\n")
    assert main(["run", str(config), "--quiet", "--out", str(folder / "run")]) == 0
    err = capsys.readouterr().err
    assert "disagrees" not in err and "NaN" not in err, err
    check = (folder / "run" / "gradient_check.json").read_text()
    assert '"ok": true' in check and '"skipped": 0' in check


def test_a_likelihood_never_finite_is_named_not_blamed_on_the_gradient(folder, capsys):
    (folder / "kernel.py").write_text(NEVER_FINITE)
    config = write(folder, GOOD)
    assert main(["check", str(config)]) == EXIT_GRADIENT
    err = capsys.readouterr().err
    assert err.count("nestgrad: error:") == 1 and "is not finite (NaN or +-inf) at any of" in err, err
    assert main(["run", str(config), "--quiet", "--out", str(folder / "run")]) != 0
    err = capsys.readouterr().err
    assert "disagrees" not in err and "could not be checked" in err and "have a finite log-likelihood" in err, err
    assert "of them NaN: check the kernel, and the data for NaN" in err, err
    assert "Traceback" not in err
