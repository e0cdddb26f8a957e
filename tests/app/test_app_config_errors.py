"""Every class of config mistake gives ONE message naming the key (and YAML line), exit status 2, no traceback."""
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from nestgrad.sampler.cli import main
from nestgrad.sampler.config import ConfigError, load

REPO = Path(__file__).resolve().parents[2]

KERNEL = '''\
import math


def model(theta, x):
    mu, sigma = theta[0], theta[1]
    total = 0.0
    for i in range(x.shape[1]):
        d = (x[0, i] - mu) / sigma
        total += -0.5 * d * d - math.log(sigma)
    return total
'''

GOOD = '''\
name: demo
likelihood:
  kernel: kernel.py:model
  data:
    x: x.npy
params:
  mu: {prior: uniform, low: 0.0, high: 1.0}
  sigma: {prior: loguniform, low: 0.01, high: 1.0}
sampler:
  nlive: 50
  seed: 1
backend: cpu
'''


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL)
    np.save(tmp_path / "x.npy", np.random.default_rng(0).normal(0.5, 0.1, (1, 20)))
    return tmp_path


def write(folder, text, name="config.yaml"):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def line_of(text, marker):
    return next(i for i, line in enumerate(text.splitlines(), 1) if marker in line)


def test_good_config_loads(folder):
    config = load(write(folder, GOOD))
    assert [p.name for p in config.params] == ["mu", "sigma"]
    assert config.likelihood.kernel == ((folder / "kernel.py").resolve(), "model")
    assert config.output.dir == (folder / "runs" / "demo").resolve()


# (description, edit of GOOD: (old, new), key path in the message, marker of the line, extra text expected)
CASES = [
    ("unknown top-level key", ("sampler:", "samplr:"), "samplr", "samplr:", "did you mean 'sampler'"),
    ("unknown sampler key", ("nlive: 50", "nlife: 50"), "sampler.nlife", "nlife", "did you mean 'nlive'"),
    ("wrong type", ("nlive: 50", "nlive: many"), "sampler.nlive", "nlive", "expected an integer"),
    ("negative number", ("nlive: 50", "nlive: -5"), "sampler.nlive", "nlive", "must be positive"),
    ("prior argument type", ("high: 1.0}\n  sigma", "high: abc}\n  sigma"), "params.mu.high", "mu:", "number"),
    ("prior argument name", ("low: 0.01, high", "lo: 0.01, high"), "params.sigma.lo", "sigma:", "did you mean 'low'"),
    ("prior bounds", ("low: 0.0, high: 1.0", "low: 2.0, high: 1.0"), "params.mu.high", "mu:", "greater than low"),
    ("prior family", ("prior: uniform", "prior: unifrom"), "params.mu.prior", "mu:", "did you mean 'uniform'"),
    ("missing kernel file", ("kernel.py:model", "nokernel.py:model"), "likelihood.kernel", "kernel:", "not found"),
    ("missing kernel function", ("kernel.py:model", "kernel.py:modle"), "likelihood.kernel", "kernel:",
     "did you mean 'model'"),
    ("kernel reference form", ("kernel.py:model", "kernel.py"), "likelihood.kernel", "kernel:", "file.py:function"),
    ("missing data file", ("x: x.npy", "x: y.npy"), "likelihood.data.x", "x: ", "not found"),
    ("data key not an argument", ("x: x.npy", "x: x.npy\n    z: 1.0"), "likelihood.data.z", "z: 1.0",
     "not an argument"),
    ("data missing for an argument", ("  data:\n    x: x.npy\n", ""), "likelihood.data", "likelihood:",
     "no data given for the kernel argument 'x'"),
    ("too few params", ("  sigma: {prior: loguniform, low: 0.01, high: 1.0}\n", ""), "params", "params:",
     "theta[1]"),
    ("duplicate key", ("  seed: 1", "  seed: 1\n  seed: 2"), "sampler.seed", "seed: 2", "duplicate"),
    # YAML 1.1 reads these plain numbers in another base: they ran silently as 60 and 8
    ("base 60 number", ("nlive: 50", "nlive: 1:00"), "sampler.nlive", "nlive:", "YAML reads 1:00 as 60 (base 60)"),
    ("octal number", ("seed: 1", "seed: 010"), "sampler.seed", "seed:", "YAML reads 010 as 8 (octal)"),
    ("number beyond float64", ("nlive: 50", "nlive: 1e400"), "sampler.nlive", "nlive:", "beyond the largest number"),
    # the cap below the floor: the cap won silently
    ("step cap below the floor", ("nlive: 50", "nlive: 50\n  hmc: {min_steps: 500, max_steps_per_dim: 1}"),
     "sampler.hmc.max_steps_per_dim", "hmc:", "must be at least steps_per_dim (2.0)"),
    ("bound met by a default", ("mu: {prior: uniform, low: 0.0, high: 1.0}", "mu: {prior: beta, a: 2, b: 2, low: 2}"),
     "params.mu.low", "mu:", "low (2.0) must be below high, which defaults to 1.0: give high too"),
    ("duplicate key beside a merge", ("  seed: 1", "  <<: {seed: 3}\n  seed: 1\n  seed: 2"), "sampler.seed",
     "seed: 2", "duplicate"),
    ("unknown plot", ("backend: cpu", "backend: cpu\noutput: {plots: [corner, trace, cornr]}"),
     "output.plots[2]", "output:", "did you mean 'corner'"),
    ("unknown plot format", ("backend: cpu", "backend: cpu\noutput: {plot_formats: [png, svg]}"),
     "output.plot_formats[1]", "output:", "png, pdf"),
    ("bad backend", ("backend: cpu", "backend: cuda"), "backend", "backend:", "auto, cpu, gpu, python"),
    ("sum_dtype narrower than dtype", ("backend: cpu", "backend: cpu\nsum_dtype: float32"), "sum_dtype",
     "sum_dtype:", "sums can only be kept wider"),
    ("bad sum_dtype", ("backend: cpu", "backend: cpu\nsum_dtype: double"), "sum_dtype", "sum_dtype:",
     "not one of float64, float32"),
    ("unknown hmc setting", ("  seed: 1", "  seed: 1\n  hmc: {n_step: 10}"), "sampler.hmc.n_step", "hmc:",
     "did you mean 'n_steps'"),
    ("kernel and builtin", ("  kernel: kernel.py:model", "  builtin: gaussian4d\n  kernel: kernel.py:model"),
     "likelihood", "likelihood:", "exactly one"),
    ("yaml syntax", ("  nlive: 50", "  nlive: [50"), None, None, "invalid YAML"),
    ("empty name", ("name: demo", 'name: ""'), "name", "name:", "must not be empty"),  # said: expected text, got text
    ("empty output dir", ("backend: cpu", 'backend: cpu\noutput: {dir: " "}'), "output.dir", "output:",
     "must not be empty"),
    # a label matplotlib cannot typeset failed in the plots after the run (the plots lost), a traceback
    ("unbalanced latex brace", ("high: 1.0}\n  sigma", "high: 1.0, latex: '\\mu_{1'}\n  sigma"),
     "params.mu.latex", "mu:", "unbalanced braces { } in '\\\\mu_{1'"),
    ("unknown latex command", ("high: 1.0}\n  sigma", "high: 1.0, latex: '\\mux'}\n  sigma"),
     "params.mu.latex", "mu:", "Unknown symbol: \\mux"),
    ("latex a number", ("high: 1.0}\n  sigma", "high: 1.0, latex: 5}\n  sigma"), "params.mu.latex", "mu:",
     "expected text, got int 5"),
    ("latex a list", ("high: 1.0}\n  sigma", "high: 1.0, latex: [a, b]}\n  sigma"), "params.mu.latex", "mu:",
     "expected text, got a list"),
    ("parameter name with a space", ("  mu: {", "  'mu 1': {"), "params.mu 1", "mu 1", "must be an identifier"),
    ("parameter name with a slash", ("  mu: {", "  a/b: {"), "params.a/b", "a/b", "must be an identifier"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_config_error_names_key_and_line(folder, case, capsys):
    _, (old, new), key, marker, expected = case
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    path = write(folder, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    assert expected in message, message
    if key is not None:
        assert f": {key}:" in message, message
        assert f"{path}:{line_of(text, marker)}:" in message, message
    # the CLI prints the same single message and exits with status 2
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err and expected in err


def test_a_key_beside_a_merge_overrides_the_merged_one(folder):
    """`<<: *anchor` then `low: 0.1`: YAML's override, which was refused as a duplicate key; of two merged
    mappings the first one's value stands; a quoted 1:30 or 010 is text, not a number in another base."""
    from nestgrad.sampler.config_yaml import parse_yaml

    text = ("base: &u {prior: uniform, low: 0.0, high: 1.0}\n"
            "mu: {<<: *u, low: 0.1}\n"
            "both: {<<: [{low: 1}, {low: 2, high: 3}]}\n"
            "quoted: ['1:30', '010']\n")
    data, lines = parse_yaml(text, "merge.yaml")
    assert data["mu"] == {"prior": "uniform", "low": 0.1, "high": 1.0}
    assert data["both"] == {"low": 1, "high": 3}
    assert data["quoted"] == ["1:30", "010"]
    assert lines[("mu", "low")] == 2


def test_a_label_is_typeset_only_where_plots_are_drawn(folder):
    """Whether matplotlib can typeset a label is asked only when the config draws plots (importing matplotlib
    takes most of a second); without plots the label is kept for a later Results.plot."""
    text = GOOD.replace("high: 1.0}\n  sigma", "high: 1.0, latex: '\\mux'}\n  sigma", 1)
    with pytest.raises(ConfigError, match=r"params\.mu\.latex: matplotlib cannot typeset"):
        load(write(folder, text))
    config = load(write(folder, text + "output: {plots: []}\n"))
    assert config.params[0].latex == "\\mux"


def test_a_parameter_the_kernel_never_reads_is_a_warning_not_an_error(folder, capsys):
    path = write(folder, GOOD.replace("sampler:", "  tau: {prior: uniform, low: 0, high: 1}\nsampler:", 1))
    assert main(["check", str(path)]) == 0
    err = capsys.readouterr().err
    assert "nestgrad: warning:" in err and "tau" in err and "Traceback" not in err


def test_kernel_syntax_error_names_kernel_line(folder):
    (folder / "kernel.py").write_text(KERNEL.replace("total = 0.0", "total = = 0.0"))
    with pytest.raises(ConfigError) as info:
        load(write(folder, GOOD))
    assert "likelihood.kernel" in str(info.value)
    assert f"{(folder / 'kernel.py').resolve()}:6:" in str(info.value)
    assert "syntax error" in str(info.value)


def test_kernel_module_code_that_fails_names_the_users_line(folder, capsys):
    """The kernel file's module-level code raises: one message at likelihood.kernel naming file:line."""
    (folder / "kernel.py").write_text(KERNEL.replace("import math\n", "import math\nSCALE = 1.0 / 0.0\n", 1))
    path = write(folder, GOOD)
    with pytest.raises(ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: likelihood.kernel: "), message
    assert f"importing {(folder / 'kernel.py').resolve()}:2 failed: ZeroDivisionError" in message, message
    assert main(["check", str(path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_config_reads_data_with_the_likelihoods_loader(folder, monkeypatch):
    """One loader: the config's checks and the Likelihood that `build` makes both read `likelihood.data` with
    likelihoods.data.load_value (the same reader, the same arrays)."""
    from nestgrad.likelihoods import data
    from nestgrad.sampler.config import build

    seen, real = [], data.load_value  # file reads (arrays already read pass through load_value too)
    monkeypatch.setattr(data, "load_value", lambda key, value, base_dir=None: (
        isinstance(value, str) and seen.append((key, value))) or real(key, value, base_dir))
    np.savez(folder / "d.npz", obs=np.arange(5.0).reshape(1, 5))
    config = load(write(folder, GOOD.replace("x: x.npy", "x: d.npz:obs")))
    assert seen == [("x", f"{(folder / 'd.npz').resolve()}:obs")]
    problem = build(config)
    assert seen == 2 * [("x", f"{(folder / 'd.npz').resolve()}:obs")]
    assert np.array_equal(problem.likelihood.data[0], np.arange(5.0).reshape(1, 5))


def test_kernel_the_differentiator_rejects(folder, capsys):
    """ad.KernelError's file:line:col passes through, under the config key, at load time."""
    (folder / "kernel.py").write_text(KERNEL.replace("    return total", "    while total > 0.0:\n"
                                                     "        total -= 1.0\n    return total"))
    path = write(folder, GOOD)
    with pytest.raises(ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: likelihood.kernel: the differentiator rejects this kernel"), message
    assert f"{(folder / 'kernel.py').resolve()}:10:5:" in message and "while" in message, message
    assert main(["check", str(path)]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_gradient_signature(folder):
    (folder / "kernel.py").write_text(KERNEL + "\n\ndef grad(theta, x):\n    return 0.0\n")
    with pytest.raises(ConfigError, match=r"likelihood.gradient: .*kernel.py:13:1: the gradient must take"):
        load(write(folder, GOOD.replace("  data:", "  gradient: kernel.py:grad\n  data:")))


BUILTIN = """\
likelihood:
  builtin: gaussian_shells
  options: {ndim: 3}
params:
  x3: {prior: uniform, low: -5.0, high: 5.0}
"""


@pytest.mark.parametrize("old, new, key, expected", [
    ("gaussian_shells", "gaussian_shell", "likelihood.builtin", "did you mean 'gaussian_shells'"),
    ("ndim: 3", "ndims: 3", "likelihood.options.ndims", "unknown option"),
    ("x3:", "x4:", "params.x4", "not a parameter of built-in 'gaussian_shells'"),
    ("low: -5.0", "low: 6.0", "params.x3.high", "greater than low"),
])
def test_builtin_config_errors(folder, old, new, key, expected):
    with pytest.raises(ConfigError) as info:
        load(write(folder, BUILTIN.replace(old, new)))
    assert f": {key}: " in str(info.value) and expected in str(info.value), str(info.value)


def test_builtin_params_override_priors(folder):
    from nestgrad.sampler.config import build

    problem = build(load(write(folder, BUILTIN)))
    assert problem.params == ["x1", "x2", "x3"]
    assert problem.prior.to_spec()["x3"] == ("uniform", -5.0, 5.0)
    assert problem.prior.to_spec()["x1"] == ("uniform", -6.0, 6.0)
    assert problem.reference_logz is None  # the built-in's evidence holds for its own priors only
    assert build(load(write(folder, BUILTIN.split("params:")[0]))).reference_logz is not None


def test_gpu_backend_without_a_usable_gpu_names_backend(folder, nestgrad, app_env):
    """`--backend gpu` (or `backend: gpu` in the file) where no GPU is usable: one message naming the option (or
    the file's line and key), exit 2; where one is (the likelihood and the sampler's chains both run on it), the
    run succeeds and records the backend. Subprocesses, so a failed CUDA driver initialisation stays out of this
    process."""
    usable = subprocess.run([sys.executable, "-c", "from nestgrad.likelihoods.backends import gpu_usable; "
                             "print(gpu_usable())"], cwd=REPO, env=app_env, capture_output=True, text=True,
                            timeout=120)
    assert usable.returncode == 0, usable.stderr
    proc = nestgrad("run", write(folder, GOOD), "--backend", "gpu", "--quiet")
    assert "Traceback" not in proc.stderr, proc.stderr
    if usable.stdout.strip() == "True":
        assert proc.returncode == 0, proc.stderr
        assert json.loads((folder / "runs" / "demo" / "results.json").read_text())["settings"]["backend"] == "gpu"
    else:  # the message names where gpu was asked for: the option, or the file's line and key
        assert proc.returncode == 2, proc.stderr
        assert "--backend gpu (command line): " in proc.stderr and "not usable" in proc.stderr, proc.stderr
        assert "driver" in proc.stderr  # numba's reason, joined from its several lines
        gpu_config = GOOD.replace("backend: cpu", "backend: gpu")
        in_file = nestgrad("run", write(folder, gpu_config), "--quiet")
        assert in_file.returncode == 2 and "Traceback" not in in_file.stderr, in_file.stderr
        line = line_of(gpu_config, "backend: gpu")
        assert f"config.yaml:{line}: backend: the GPU backend is not usable" in in_file.stderr, in_file.stderr


@pytest.mark.parametrize("data, expected", [
    (np.zeros(20), "indexes 'x' with 2 indices"),
])
def test_data_shape_errors_name_data_key_and_kernel_line(folder, data, expected):
    np.save(folder / "x.npy", data)
    with pytest.raises(ConfigError) as info:
        load(write(folder, GOOD))
    message = str(info.value)
    assert "likelihood.data.x" in message and expected in message, message
    assert f"{(folder / 'kernel.py').resolve()}:8:" in message, message


@pytest.mark.parametrize("data", [b"", np.zeros(0), np.zeros((0, 20))])
def test_an_empty_data_file_names_the_data_key_and_the_file(folder, data):
    """A 0-byte x.npy ended in numpy's EOFError traceback; one of shape (0,) named neither the file nor why."""
    if isinstance(data, bytes):
        (folder / "x.npy").write_bytes(data)
    else:
        np.save(folder / "x.npy", data)
    text = GOOD
    with pytest.raises(ConfigError) as info:
        load(write(folder, text))
    shown = "is empty (0 bytes)" if isinstance(data, bytes) else f"holds no values (an array of shape {data.shape})"
    expected = f"config.yaml:{line_of(text, 'x: x.npy')}: likelihood.data.x: file '{(folder / 'x.npy').resolve()}' "
    assert str(info.value).endswith(expected + shown + ": write the data into it, or name another file"), info.value


def test_npz_member_and_text_data(folder):
    np.savez(folder / "d.npz", obs=np.ones((1, 5)))
    load(write(folder, GOOD.replace("x: x.npy", "x: d.npz:obs")))
    with pytest.raises(ConfigError, match="no array 'ob'.*did you mean 'obs'"):
        load(write(folder, GOOD.replace("x: x.npy", "x: d.npz:ob")))
    (folder / "x.csv").write_text("1.0,2.0,3.0\n")
    with pytest.raises(ConfigError, match="indexes 'x' with 2 indices"):
        load(write(folder, GOOD.replace("x: x.npy", "x: x.csv")))  # one csv row reads as 1-D


def test_missing_config_file_exits_2_without_traceback(tmp_path):
    """Through the real entry point (python -m nestgrad), as a user would see it."""
    proc = subprocess.run([sys.executable, "-m", "nestgrad", "run", str(tmp_path / "nope.yaml")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "nope.yaml: config file not found" in proc.stderr and "Traceback" not in proc.stderr


def test_a_directory_given_as_the_config_is_named_a_directory(folder, capsys):
    """It said "config file not found" of a folder that exists."""
    write(folder, GOOD)
    with pytest.raises(ConfigError, match=r": is a directory, not a config file; .*\(config.yaml in it\)"):
        load(folder)
    assert main(["run", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("nestgrad: error:") == 1 and "is a directory" in err and "Traceback" not in err


def test_subprocess_config_error_exit_2(folder):
    path = write(folder, GOOD.replace("nlive: 50", "nlive: fifty"))
    proc = subprocess.run([sys.executable, "-m", "nestgrad", "check", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert f"{path}:{line_of(GOOD, 'nlive')}: sampler.nlive: expected an integer" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_embedded_default_config_is_the_seed_gaussian(tmp_path, monkeypatch):
    """`nestgrad run` without CONFIG: the packaged default, resolved against the working directory."""
    monkeypatch.chdir(tmp_path)
    default, shipped = load(None), load(REPO / "configs" / "gaussian4d.yaml")
    assert default.likelihood.builtin == shipped.likelihood.builtin == "gaussian4d"
    assert default.sampler == shipped.sampler and default.backend == "cpu"
    assert default.output.dir == (tmp_path / "runs" / "gaussian4d").resolve()


@pytest.mark.parametrize("options, key, expected", [
    ("{ndim: 0}", "likelihood.options.ndim", "must be positive"),
    ("{ndim: three}", "likelihood.options.ndim", "expected an integer, got text 'three'"),
    ("{ndim: 2, sigma: -0.1}", "likelihood.options.sigma", "must be positive"),
    ("{ndim: 2, sigma: 0}", "likelihood.options.sigma", "must be positive"),
    ("{ndim: 2, rho: 1.5}", "likelihood.options.rho", "must be a number in (-1, 1)"),
])
def test_builtin_options_are_checked_and_named(folder, options, key, expected):
    """Outsider's findings: each was a traceback, Python's own wording, a silent run or blamed on ndim."""
    with pytest.raises(ConfigError) as info:
        load(write(folder, f"likelihood:\n  builtin: gaussian\n  options: {options}\n"))
    assert f"config.yaml:3: {key}: {expected}" in str(info.value), str(info.value)


def test_output_dir_starting_with_a_tilde_is_in_the_home_folder(folder, monkeypatch):
    """`dir: ~/runs/demo` wrote into a folder named "~" beside the config."""
    monkeypatch.setenv("HOME", str(folder / "home"))
    config = load(write(folder, GOOD + "output: {dir: ~/runs/demo}\n"))
    assert config.output.dir == (folder / "home" / "runs" / "demo").resolve()


def test_an_empty_out_option_is_refused(folder, capsys):
    """`--out ''` was ignored: the run went to output.dir."""
    assert main(["run", str(write(folder, GOOD)), "--out", "", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--out: an empty path" in err and err.count("nestgrad: error:") == 1 and "Traceback" not in err
    assert not (folder / "runs").exists()


@pytest.mark.parametrize("name, content, change, expected", [
    # each ended in a traceback (BadZipFile, UnicodeDecodeError) or a silent exit with the module's status
    ("bad.npz", b"PK\x03\x04garbage", ("x: x.npy", "x: bad.npz:a"), "not a readable .npz (zip) archive"),
    ("latin1.py", b"# \xff\xfe\ndef model(theta, x):\n    return -theta[0] ** 2\n",
     ("kernel.py:model", "latin1.py:model"), "latin1.py:1:3: the kernel file is not UTF-8 text (byte 0xff)"),
    (None, None, ("kernel.py:model", "x.npy:model"), "x.npy:1:1: the kernel file is a numpy array file, not Python"),
    ("exits.py", b"import sys\nsys.exit(7)\n" + KERNEL.encode(), ("kernel.py:model", "exits.py:model"),
     "importing {folder}/exits.py:2 failed: SystemExit: 7"),
    (None, None, ("backend: cpu", "backend: cpu\noutput: {plots: [corner], plot_formats: []}"),
     "output.plot_formats: must not be empty"),
    (None, None, ("name: demo", "name: de\x00mo"), "config.yaml:1:9: the character 0x0000 is not allowed in YAML"),
    ("nul.py", KERNEL.replace("total = 0.0", "total = 0.0\x00").encode(), ("kernel.py:model", "nul.py:model"),
     "nul.py:6:16: syntax error"),
    ("lam.py", b"model = lambda theta, x: -theta[0] ** 2\n", ("kernel.py:model", "lam.py:model"),
     "lam.py:1: 'model' is a lambda, not a function defined with def"),
    (None, None, ("x: x.npy", "x: x.npy:a"), "':a' picks an array of an .npz archive, and x.npy is not one"),
    (None, None, ("kernel.py:model", "kernel.py:model:extra"), "'kernel.py:model:extra' has more than one ':'"),
    (None, None, ("x: x.npy", "x: [[1, 2], [3]]"), "a ragged list (rows of lengths 1, 2)"),
])
def test_files_and_settings_that_ended_in_a_traceback_get_one_message(folder, capsys, name, content, change,
                                                                      expected):
    if name is not None:
        (folder / name).write_bytes(content)
    path = write(folder, GOOD.replace(*change, 1))
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert expected.format(folder=folder) in err, err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err, err
