"""YAML config in, validated `Config` out; `run_config` turns a config into a finished run folder.

    config = load("configs/gaussian4d.yaml")     # every check that needs no compilation; ConfigError if bad
    problem = build(config)                      # Likelihood + Prior (+ truths, reference logZ, LaTeX)
    results = run_config(config)                 # sample, write the run folder and the plots

Every mistake in a config is ONE `ConfigError` whose message starts `file:line: key.path:` (the CLI prints it
and exits with status 2). The embedded default config (`load(None)`) is the seed 4-D Gaussian on the CPU.
"""
from __future__ import annotations

import dataclasses
import re
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from nestgrad.likelihoods.errors import line_and_column
from nestgrad.sampler.config_kernel import check_kernel, user_function
from nestgrad.sampler.config_schema import Config, number_problem, validate
from nestgrad.sampler.config_yaml import MAX_BYTES, ConfigError, parse_yaml, suggest, too_large

__all__ = ["ConfigError", "Config", "Problem", "load", "build", "run_config", "default_config_text"]

DEFAULT_CONFIG = "default_config.yaml"


class Problem(NamedTuple):
    """What a config builds: the objects the sampler needs plus what the plots and summary show."""
    likelihood: object            # likelihoods.Likelihood
    prior: object                 # sampler.priors.Prior
    params: list
    latex: dict
    truths: dict | None
    reference_logz: float | None


def default_config_text() -> str:
    return resources.files(__package__).joinpath(DEFAULT_CONFIG).read_text(encoding="utf-8")


def load(path=None) -> Config:
    """Read and validate a config file (`None`: the embedded default). Raises `ConfigError`."""
    if path is None:
        # The embedded default resolves relative paths (its output folder) against the working directory.
        text, config_path = default_config_text(), Path.cwd() / "nestgrad-default.yaml"
        display = f"<default config {DEFAULT_CONFIG}>"
    else:
        config_path = Path(path).resolve()
        display = str(path)
        if config_path.is_dir():
            inside = sorted(p.name for p in config_path.glob("*.y*ml"))[:5]
            hint = f" ({', '.join(inside)} in it)" if inside else ""
            raise ConfigError(f"{path}: is a directory, not a config file; give the YAML file itself{hint}")
        if not config_path.is_file():
            raise ConfigError(f"{path}: config file not found")
        text = _read_text(config_path, display)
    data, lines = parse_yaml(text, display)
    config = validate(data, lines, config_path)
    config = dataclasses.replace(config, path=Path(display) if path is None else config_path)
    config = _check_hmc(config)
    _check_likelihood(config)
    return config


def _read_text(path: Path, display: str) -> str:
    """The config's text; too large, unreadable or not UTF-8 is one message (the size before reading it)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise ConfigError(too_large(display, path.stat().st_size))
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{display}: cannot read the config: {error.strerror or error}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line, column = line_and_column(raw, error.start)
        raise ConfigError(f"{display}:{line}:{column}: not UTF-8 text (byte 0x{raw[error.start]:02x})") from None


def _check_hmc(config: Config) -> Config:
    """`sampler.hmc`: unknown keys and value types here, at the YAML line; the ranges are `HMCSettings`' own
    (its `from_any` names the setting, which becomes the key path). Integer settings written 50.0 become 50."""
    from nestgrad.sampler.hmc import HMCSettings

    values = dict(config.sampler.hmc)
    for key, value in values.items():
        where = ("sampler", "hmc", key)
        if key not in HMCSettings._fields:
            raise config.error(where, f"unknown HMC setting '{key}'"
                               f"{suggest(key, HMCSettings._fields)}; settings: {', '.join(HMCSettings._fields)}")
        default = HMCSettings._field_defaults[key]
        if isinstance(default, bool) or isinstance(default, str):
            if not isinstance(value, type(default)):
                raise config.error(where, f"expected {'true or false' if isinstance(default, bool) else 'text'}, "
                                          f"got {value!r}")
        elif not (value is None and default is None):
            problem = number_problem(value, int if isinstance(default, int) else float)
            if problem:
                raise config.error(where, problem)
            if isinstance(default, int):
                values[key] = int(value)
    try:
        HMCSettings.from_any(values)
    except (TypeError, ValueError, OverflowError) as error:
        named = re.match(r"hmc\.(\w+) (.*)", str(error), re.S)
        if named and named.group(1) in values:
            raise config.error(("sampler", "hmc", named.group(1)), named.group(2)) from None
        raise config.error(("sampler", "hmc"), str(error)) from None
    return dataclasses.replace(config, sampler=dataclasses.replace(config.sampler, hmc=values))


def _check_likelihood(config: Config) -> None:
    """Checks that need the kernel or the built-in but no compilation."""
    spec = config.likelihood
    if spec.builtin is not None:
        model = _builtin(config)  # name, options and parameter names
        _prior(config, defaults=dict(model.priors))
        return
    check_kernel(config)
    _prior(config)


def _builtin(config: Config):
    from nestgrad.likelihoods import builtin

    spec = config.likelihood
    names = list(builtin.names())
    if spec.builtin not in names:
        raise config.error(("likelihood", "builtin"),
                           f"no built-in '{spec.builtin}'{suggest(spec.builtin, names)}; "
                           f"built-ins: {', '.join(names)}")
    try:
        model = builtin.get(spec.builtin, **spec.options)
    except builtin.OptionError as error:  # types and ranges: each built-in lists its options' (builtin._options)
        raise config.error(("likelihood", "options", error.option), error.detail) from None
    except (TypeError, ValueError, OverflowError, MemoryError) as error:
        # name the offending option's key when the message mentions one, else the largest number given
        named = [key for key in spec.options if re.search(rf"\b{re.escape(key)}\b", str(error))]
        sizes = sorted((abs(v), k) for k, v in spec.options.items() if isinstance(v, (int, float)))
        if not named and isinstance(error, MemoryError) and sizes:
            named = [sizes[-1][1]]
        text = str(error) if isinstance(error, (TypeError, ValueError)) else f"{type(error).__name__}: {error}"
        raise config.error(("likelihood", "options", *named[:1]), text) from None
    for param in config.params:
        if param.name not in model.params:
            raise config.error(("params", param.name),
                               f"'{param.name}' is not a parameter of built-in '{spec.builtin}'"
                               f"{suggest(param.name, model.params)}; its parameters: {', '.join(model.params)}")
    return model


def _prior(config: Config, defaults: dict | None = None):
    """The sampler's Prior; params without a prior take the built-in's default from `defaults`."""
    from nestgrad.sampler import priors

    distributions = {}
    order = list(defaults) if defaults is not None else [p.name for p in config.params]
    given = {p.name: p for p in config.params}
    for name in order:
        param = given.get(name)
        try:
            if param is None or param.family is None:
                if defaults is None:
                    raise config.error(("params", name, "prior"), "missing: e.g. `prior: uniform`")
                distributions[name] = priors.make(*defaults[name])
            else:  # family and arguments were checked against the registry by config_schema
                distributions[name] = priors.make(param.family, **param.args)
        except priors.PriorError as error:
            raise config.error(("params", name, "prior"), str(error)) from None
    return priors.Prior(distributions)


def build(config: Config) -> Problem:
    """Construct the likelihood (compiles nothing yet: numba compiles on first call) and the prior."""
    from nestgrad.likelihoods import Likelihood

    spec = config.likelihood
    if spec.builtin is not None:
        model = _builtin(config)
        prior = _prior(config, defaults=dict(model.priors))
        overridden = any(p.family is not None and prior.to_spec()[p.name] != tuple(model.priors[p.name])
                         for p in config.params)
        # the built-in's reference evidence holds for its default priors only
        reference = None if overridden else model.reference_logz
        likelihood = _construct(config, lambda: model.likelihood(backend=config.backend, dtype=config.dtype,
                                                                 draws=prior.draw, sum_dtype=config.sum_dtype))
        params, truths = list(model.params), model.truths
    else:
        kernel = user_function(config)  # the KernelSource `load` checked: the file runs once per process
        gradient = user_function(config, "gradient").function if spec.gradient is not None else None
        prior = _prior(config)
        params = [p.name for p in config.params]
        likelihood = _construct(config, lambda: Likelihood(kernel, params, dict(spec.data),
                                                           backend=config.backend, dtype=config.dtype,
                                                           gradient=gradient, draws=prior.draw,
                                                           sum_dtype=config.sum_dtype))
        reference, truths = None, None
    latex = {name: default_latex(name) for name in params}
    latex.update({p.name: p.latex for p in config.params if p.latex})
    return Problem(likelihood, prior, params, latex, truths, reference)


def _construct(config: Config, make):
    """Call a likelihood constructor; what it rejects becomes a config error at the key responsible."""
    from nestgrad import ad

    try:
        return make()
    except ad.KernelError as error:
        raise config.error(("likelihood", "kernel"), f"the differentiator rejects this kernel:\n  {error}") from None
    except Exception as error:
        if getattr(error, "config_key", None):  # likelihoods.KernelIndexError, ParamsError: message names the line
            raise config.error(error.config_key, str(error)) from None
        if config.backend == "gpu":  # no driver, no device, no CuPy: say so at the key that asked for it
            # numba's driver errors spread their reason over several lines ("Error at driver init:", "", "CUDA
            # driver library cannot be found.", ...): one line of the non-empty ones
            reason = " ".join(line.strip() for line in str(error).splitlines() if line.strip(" :"))
            raise config.error(("backend",), f"the GPU backend is not usable on this machine "
                                             f"({type(error).__name__}: {reason[:300]}); use cpu or auto") from None
        if not isinstance(error, (ValueError, TypeError, KeyError)):
            raise
        # likelihoods.DataError carries the data key it is about; other complaints concern the likelihood
        data_key = getattr(error, "key", None)
        key = ("likelihood", "data", data_key) if data_key in config.likelihood.data else ("likelihood",)
        raise config.error(key, str(error).strip("'\"")) from None


_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi pi rho sigma tau upsilon "
          "phi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega").split()


def default_latex(name: str) -> str:
    """A LaTeX label from a parameter name: sigma1 -> \\sigma_{1}, log_A -> \\log A, x_3 -> x_{3}."""
    match = re.fullmatch(r"([A-Za-z]+?)_?(\d+)?", name)
    if not match:
        return name.replace("_", r"\_")
    stem, index = match.groups()
    body = "\\" + stem if stem in _GREEK else stem
    return f"{body}_{{{index}}}" if index else body


def sampler_arguments(config: Config) -> tuple[dict, dict]:
    """(NestedSampler keyword arguments, run keyword arguments) for the settings the config gives."""
    s = config.sampler
    init = {key: getattr(s, key) for key in ("nlive", "delete_fraction", "seed") if getattr(s, key) is not None}
    if s.hmc:
        init["hmc"] = dict(s.hmc)
    run = {key: getattr(s, key) for key in ("dlogz", "max_iter", "max_nlike", "max_time", "checkpoint_every")
           if getattr(s, key) is not None}
    return init, run


def run_config(path_or_config=None, *, outdir=None, resume=False, progress=False, plots=True):
    """Run a config end to end: sample (checkpointing into the output folder), write the run folder and plots."""
    from nestgrad.sampler.run_folder import make_folder, refuse_unfinished, write_run_folder

    config = path_or_config if isinstance(path_or_config, Config) else load(path_or_config)
    outdir = Path(outdir) if outdir is not None else config.output.dir
    if not resume:
        refuse_unfinished(outdir, resume="resume=True", out="out")
    problem = build(config)
    sampler = make_sampler(config, problem)
    _, run = sampler_arguments(config)
    make_folder(outdir)
    results = sampler.run(checkpoint=str(outdir / "checkpoint.npz"), resume=resume, progress=progress, **run)
    finish_results(results, config, problem)
    write_run_folder(results, outdir)
    if plots and config.output.plots:
        from nestgrad.sampler.plots import make_plots

        make_plots(results, outdir, kinds=config.output.plots, formats=config.output.plot_formats)
    return results


def make_sampler(config: Config, problem: Problem):
    from nestgrad.sampler import NestedSampler

    init, _ = sampler_arguments(config)
    try:
        return NestedSampler(problem.likelihood, problem.prior, backend=config.backend, name=config.name, **init)
    except (TypeError, ValueError) as error:
        text = str(error)
        key = next(((k,) if k == "backend" else ("sampler", k) for k in ("backend", "hmc", "nlive",
                    "delete_fraction", "seed") if k in text), ("sampler",))
        raise config.error(key, text) from None


def finish_results(results, config: Config, problem: Problem) -> None:
    """Name, labels, truths and reference evidence from the config onto the sampler's Results."""
    results.name = config.name
    results.latex = dict(problem.latex)  # the config's labels (or ones derived from the names) win
    if results.truths is None and problem.truths is not None:
        results.truths = dict(problem.truths)
    if results.reference_logz is None and problem.reference_logz is not None:
        results.reference_logz = float(problem.reference_logz)
    # (the sampler's own settings, spread last, record the precision the likelihood was built with: dtype, sum_dtype)
    results.settings = {"config": str(config.path), "backend": config.backend, **(results.settings or {})}
