"""A kernel's arguments are plain positional names: every other form of argument is refused at its own
``file:line:col`` with the ``def`` line to write instead, whichever way the kernel reaches the differentiator
(``ad.differentiate``, ``ng.Likelihood``, a config's ``likelihood.kernel``)."""
import numpy as np
import pytest

import nestgrad as ng
from nestgrad import ad
from nestgrad.sampler import config as config_module
from nestgrad.sampler.config import ConfigError

# (id, def line, 1-based column of the offending spot, words the message must hold)
SIGNATURES = [
    ("vararg", "def k(theta, *data):", 14, ["`*data` is not supported", "`def k(theta, x, y)`"]),
    ("kwarg", "def k(theta, **data):", 14, ["`**data` is not supported", "`def k(theta, x, y)`"]),
    ("keyword_only", "def k(theta, *, x):", 17, ["keyword-only argument 'x'", "drop the `*`", "`def k(theta, x)`"]),
    ("default", "def k(theta, x, s=1.0):", 19, ["default values are not supported", "`s=1.0`",
                                                "`def k(theta, x, s)`", "'s' its value in `data`"]),
    ("positional_only", "def k(theta, x, /):", 14, ["positional-only marker `/`", "`def k(theta, x)`"]),
]


def _text(def_line):
    return f"import math\n\n{def_line}\n    return -0.5 * theta[0] ** 2\n"


@pytest.mark.parametrize("name, def_line, col, words", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_each_argument_form_is_named_at_its_position(name, def_line, col, words):
    with pytest.raises(ad.UnsupportedError) as info:
        ad.differentiate_source(_text(def_line), "k", filename="sig.py")
    err = info.value
    assert (err.filename, err.lineno, err.col) == ("sig.py", 3, col), str(err)
    for w in words:
        assert w in str(err), str(err)


def test_positional_only_is_not_mistaken_for_a_wrong_wrt():
    """``def k(theta, x, /)`` was answered "wrt names 'theta', which is not an argument of k()"."""
    with pytest.raises(ad.UnsupportedError, match="positional-only"):
        ad.differentiate_source(_text("def k(theta, x, /):"), "k", filename="sig.py")


@pytest.mark.parametrize("name, def_line, col, words", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_likelihood_and_config_get_the_same_message(tmp_path, name, def_line, col, words):
    """Before: `ng.Likelihood` said "takes no arguments" for `/`, and `nestgrad check` said "'x' is not an argument
    of kernel 'k'" for `*data`, `**data` and keyword-only arguments (and an IndexError for `/`)."""
    kernel = tmp_path / "sig_kernel.py"
    kernel.write_text(_text(def_line))
    with pytest.raises(ng.likelihoods.LikelihoodError) as info:
        ng.Likelihood(f"{kernel}:k", ["a"], {"x": np.ones(3)}, backend="python")
    assert str(info.value).startswith(f"{kernel}:3:{col}: "), str(info.value)
    assert all(w in str(info.value) for w in words), str(info.value)

    np.save(tmp_path / "x.npy", np.ones(3))
    config = tmp_path / "run.yaml"
    config.write_text(f"name: t\nlikelihood:\n  kernel: sig_kernel.py:k\n  data:\n    x: x.npy\nparams:\n"
                      f"  a: {{prior: uniform, low: 0.0, high: 1.0}}\nbackend: python\n")
    with pytest.raises(ConfigError) as info:
        config_module.load(config)
    text = str(info.value)
    assert "likelihood.kernel" in text and f"{kernel}:3:{col}: " in text and words[0] in text, text
