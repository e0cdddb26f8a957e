"""The config schema: which keys exist, their types, their defaults, and the frozen dataclass tree.

Structure only: this module checks keys and types and resolves relative paths; priors are checked against the
registry of prior families in `sampler.priors` (family, argument names, values). What needs the kernel or the
built-in (parameter counts, data shapes, the differentiator) is checked in `sampler.config_kernel`.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace
from pathlib import Path
from nestgrad.likelihoods import backends, data as kernel_data
# the numeric checks live below the sampler, where the built-ins' options use them too (imports run one way)
from nestgrad.likelihoods.ranges import Range, describe as _kind, number_problem, range_problem  # noqa: F401
from nestgrad.sampler import priors
from nestgrad.sampler.parameter_names import label_problem, name_problem, typeset_problem
from nestgrad.sampler.config_yaml import ConfigError, key_path, suggest

DTYPES = ("float64", "float32")
PLOTS = ("corner", "run", "trace", "hmc", "gradient")  # the plot kinds (sampler.plots makes them)
PLOT_FORMATS = ("png", "pdf")  # files written per plot; PNG alone by default (a PDF doubles the drawing time)

TOP_KEYS = ("name", "likelihood", "params", "sampler", "backend", "dtype", "sum_dtype", "output")
LIKELIHOOD_KEYS = ("kernel", "builtin", "options", "gradient", "data")


# Every numeric setting of the sampler, one line each (the HMC settings `sampler.hmc.*` are checked by
# `HMCSettings.from_any`, next to their meaning). Bounds are generous sanity limits, not tuning advice.
NUMERIC = {
    "sampler.nlive": Range(int, 2, 1_000_000),
    "sampler.dlogz": Range(float, 0, 1e6, open_low=True),
    "sampler.seed": Range(int, 0, 2**63 - 1),
    "sampler.delete_fraction": Range(float, 0, 1, open_low=True, open_high=True),
    "sampler.max_iter": Range(int, 1, 10**12),
    "sampler.max_nlike": Range(int, 1, 10**15),
    "sampler.max_time": Range(float, 0, 1e9, open_low=True),             # seconds
    "sampler.checkpoint_every": Range(float, 0, 1e9, open_low=True),      # seconds
    "--seed": Range(int, 0, 2**63 - 1),                                    # command-line options
    "-n": Range(int, 1, 100_000),
}
SAMPLER_KEYS = ("nlive", "dlogz", "seed", "delete_fraction", "hmc", "max_iter", "max_nlike", "max_time",
                "checkpoint_every")
OUTPUT_KEYS = ("dir", "plots", "plot_formats")


@dataclass(frozen=True)
class ParamSpec:
    name: str
    family: str | None          # None: the built-in's default prior
    args: dict                  # prior arguments by name, e.g. {"low": 0.0, "high": 1.0}
    latex: str | None = None


@dataclass(frozen=True)
class LikelihoodSpec:
    kernel: tuple[Path, str] | None = None     # (file, function)
    builtin: str | None = None
    options: dict = field(default_factory=dict)
    gradient: tuple[Path, str] | None = None
    data: dict = field(default_factory=dict)   # argument name -> str path (resolved) | number | list


@dataclass(frozen=True)
class SamplerSpec:
    nlive: int | None = None                   # None everywhere: the sampler's own default
    dlogz: float | None = None
    seed: int | None = None
    delete_fraction: float | None = None
    hmc: dict = field(default_factory=dict)
    max_iter: int | None = None
    max_nlike: int | None = None
    max_time: float | None = None
    checkpoint_every: float | None = None


@dataclass(frozen=True)
class OutputSpec:
    dir: Path
    plots: tuple[str, ...] = PLOTS
    plot_formats: tuple[str, ...] = ("png",)


@dataclass(frozen=True)
class Config:
    path: Path                                 # the config file (or "<default>" for the embedded one)
    name: str
    likelihood: LikelihoodSpec
    params: tuple[ParamSpec, ...]
    sampler: SamplerSpec
    backend: str = "auto"
    dtype: str | None = None                   # None: float32 on the GPU (float64 sums), float64 elsewhere
    output: OutputSpec | None = None
    sum_dtype: str | None = None               # float64: a float32 kernel's loop sums kept in float64
    lines: dict = field(default_factory=dict, compare=False, repr=False)  # key path -> YAML line
    # key path -> the command-line option that replaced the file's value (e.g. ("backend",) -> "--backend gpu")
    overrides: dict = field(default_factory=dict, compare=False, repr=False)

    def overridden(self, path, option, **changes) -> "Config":
        """This config with ``changes`` applied by the command-line ``option``: messages about ``path`` then name
        the option, not the file's line it replaced."""
        return replace(self, overrides={**self.overrides, tuple(path): option}, **changes)

    @property
    def folder(self) -> Path:
        return self.path.parent

    def where(self, *path) -> str:
        """`file:line: key.path` for messages about a key (nearest enclosing key with a known line), or the
        command-line option that set it."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.overrides:
                return f"{self.overrides[path[:end]]} (command line)"
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return f"{self.path}:{self.lines[path[:end]]}: {key_path(path)}"
        return f"{self.path}: {key_path(path)}"

    def error(self, path, message) -> ConfigError:
        return ConfigError(f"{self.where(*path)}: {message}")


class _Checker:
    """Key/type checks that all report `file:line: key.path: message`."""

    def __init__(self, filename, lines):
        self.filename, self.lines = filename, lines

    def error(self, path, message) -> ConfigError:
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return ConfigError(f"{self.filename}:{self.lines[path[:end]]}: {key_path(path)}: {message}")
        return ConfigError(f"{self.filename}: {key_path(path)}: {message}")

    def mapping(self, value, path, allowed=None) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(path, f"expected a mapping (key: value lines), got {_kind(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.error(path + (key,), "keys must be names (text)")
            if allowed is not None and key not in allowed:
                raise self.error(path + (key,), f"unknown key '{key}'{suggest(key, allowed)}; "
                                               f"valid keys: {', '.join(allowed)}")
        return value

    def text(self, value, path, choices=None) -> str:
        if isinstance(value, str) and not value.strip():  # '' or blanks: "expected text, got text ''" read oddly
            raise self.error(path, "must not be empty")
        if not isinstance(value, str):
            raise self.error(path, f"expected text, got {_kind(value)}")
        if choices is not None and value not in choices:
            raise self.error(path, f"'{value}' is not one of {', '.join(choices)}{suggest(value, choices)}")
        return value

    def number(self, value, path, kind=float, positive=False) -> float | int:
        """A finite number (or an integer, also written 50.0), else an error naming the key."""
        problem = number_problem(value, kind)
        if problem:
            raise self.error(path, problem)
        if positive and not value > 0:
            raise self.error(path, f"must be positive, got {value}")
        return kind(value)

    def in_range(self, value, path) -> float | int:
        """A setting listed in `NUMERIC`, checked for type, finiteness and range."""
        problem = range_problem(value, NUMERIC[key_path(path)])
        if problem:
            raise self.error(path, problem)
        return NUMERIC[key_path(path)].kind(value)

    def file_ref(self, value, path, folder: Path) -> tuple[Path, str]:
        """'file.py:function' resolved against the config folder; the file must exist."""
        text = self.text(value, path)
        file_part, sep, function = text.rpartition(":")
        if not sep or not file_part or not function.isidentifier():
            raise self.error(path, f"expected 'file.py:function', got '{text}'")
        file = (folder / file_part).resolve()
        if not file.is_file():
            head, _, tail = file_part.rpartition(":")
            if head and (folder / head).is_file():  # `k.py:gauss:extra`: one colon too many
                raise self.error(path, f"'{text}' has more than one ':'; write 'file.py:function', e.g. "
                                       f"'{head}:{tail}'")
            raise self.error(path, f"kernel file not found: {file}")
        return file, function


def validate(data, lines, path: Path) -> Config:
    """Structural validation of parsed YAML into a `Config` (paths resolved against the config's folder)."""
    check = _Checker(str(path), lines)
    top = check.mapping(data, (), TOP_KEYS)
    folder = path.parent
    name = check.text(top.get("name", path.stem), ("name",))
    if any(c in name for c in "/\\ ") or name.startswith("."):
        raise check.error(("name",), f"'{name}' is used as a file stem: no spaces, slashes or leading dot")

    if "likelihood" not in top:
        raise check.error(("likelihood",), "missing: give `kernel: file.py:function` or `builtin: name`")
    lik = check.mapping(top["likelihood"], ("likelihood",), LIKELIHOOD_KEYS)
    if ("kernel" in lik) == ("builtin" in lik):
        raise check.error(("likelihood",), "give exactly one of `kernel: file.py:function` or `builtin: name`")
    if "builtin" in lik and ("gradient" in lik or "data" in lik):
        key = "gradient" if "gradient" in lik else "data"
        raise check.error(("likelihood", key), "a built-in brings its own; use `options:` to configure it")
    if "kernel" in lik and "options" in lik:
        raise check.error(("likelihood", "options"), "`options` configure a built-in; a kernel takes `data`")
    likelihood = LikelihoodSpec(
        kernel=check.file_ref(lik["kernel"], ("likelihood", "kernel"), folder) if "kernel" in lik else None,
        builtin=check.text(lik["builtin"], ("likelihood", "builtin")) if "builtin" in lik else None,
        options=dict(check.mapping(lik.get("options"), ("likelihood", "options"))),
        gradient=(check.file_ref(lik["gradient"], ("likelihood", "gradient"), folder)
                  if "gradient" in lik else None),
        data={key: _data_value(check, value, ("likelihood", "data", key), folder)
              for key, value in check.mapping(lik.get("data"), ("likelihood", "data")).items()},
    )

    params_map = check.mapping(top.get("params"), ("params",))
    if likelihood.kernel is not None and not params_map:
        raise check.error(("params",), "missing: a kernel needs its parameters listed in theta order")
    params = tuple(_param(check, key, value) for key, value in params_map.items())

    sampler_map = check.mapping(top.get("sampler"), ("sampler",), SAMPLER_KEYS)
    sampler_args = {key: dict(check.mapping(value, ("sampler", key))) if key == "hmc"
                    else check.in_range(value, ("sampler", key)) for key, value in sampler_map.items()}

    out = check.mapping(top.get("output"), ("output",), OUTPUT_KEYS)
    # ~ is the home folder, as in a shell (it was a folder named "~" beside the config)
    out_dir = ((folder / Path(check.text(out["dir"], ("output", "dir"))).expanduser()) if "dir" in out
               else (folder / "runs" / name))
    plots = out.get("plots", list(PLOTS))
    if not isinstance(plots, list):
        raise check.error(("output", "plots"), f"expected a list such as [corner, run], got {_kind(plots)}")
    plots = tuple(check.text(p, ("output", "plots", i), PLOTS) for i, p in enumerate(plots))
    for param in params if plots else ():  # here, not in the plots after the run
        problem = typeset_problem(param.latex) if param.latex is not None else None
        if problem:
            raise check.error(("params", param.name, "latex"), problem)
    formats = out.get("plot_formats", ["png"])
    if isinstance(formats, list) and not formats:
        raise check.error(("output", "plot_formats"), "must not be empty: give [png], [pdf] or both (for no plots "
                          "at all, plots: [])")
    if not isinstance(formats, list):
        raise check.error(("output", "plot_formats"), f"expected a list such as [png, pdf], got {_kind(formats)}")
    formats = tuple(dict.fromkeys(check.text(f, ("output", "plot_formats", i), PLOT_FORMATS)
                                  for i, f in enumerate(formats)))

    dtype = None if top.get("dtype") is None else check.text(top["dtype"], ("dtype",), DTYPES)
    sum_dtype = None if top.get("sum_dtype") is None else check.text(top["sum_dtype"], ("sum_dtype",), DTYPES)
    if sum_dtype == "float32" and dtype != "float32":
        raise check.error(("sum_dtype",), "float32 sums belong to a float32 kernel (dtype: float32; without dtype the "
                          "kernel is float64 on the CPU, and float32 with float64 sums on the GPU): sums can only be "
                          "kept wider than dtype (sum_dtype: float64 with dtype: float32)")
    if sum_dtype == "float32":
        sum_dtype = None  # the sums in the kernel's own dtype
    return Config(
        path=path, name=name, likelihood=likelihood, params=params, sampler=SamplerSpec(**sampler_args),
        backend=check.text(top.get("backend", "auto"), ("backend",), backends.NAMES), dtype=dtype,
        output=OutputSpec(dir=out_dir.resolve(), plots=plots, plot_formats=formats), lines=dict(lines),
        sum_dtype=sum_dtype,
    )


def _param(check: _Checker, name, spec) -> ParamSpec:
    path = ("params", name)
    problem = name_problem(name)
    if problem:
        raise check.error(path, problem)
    spec = check.mapping(spec, path)
    latex = check.text(spec["latex"], path + ("latex",)) if "latex" in spec else None
    problem = label_problem(latex) if latex is not None else None
    if problem:
        raise check.error(path + ("latex",), problem)
    if "prior" not in spec:
        if set(spec) - {"latex"}:
            raise check.error(path + ("prior",), "missing: e.g. `prior: uniform` with `low:` and `high:`")
        return ParamSpec(name=name, family=None, args={}, latex=latex)
    family = check.text(spec["prior"], path + ("prior",)).lower()
    args = {}
    for key, value in spec.items():
        if key not in ("prior", "latex"):
            args[key] = value
    return ParamSpec(name=name, family=_prior_family(check, path, family, args), args=args, latex=latex)


def _prior_family(check: _Checker, path, family: str, args: dict) -> str:
    """Check a prior against the registry in `sampler.priors`: the family, its argument names, each value a
    finite number (converted in `args`), then the family's own conditions (low < high, sigma > 0, ...), each
    error at the key responsible. Returns the family's registered name (aliases resolved)."""
    cls = priors.FAMILIES.get(family)
    if cls is None:
        names = priors.families()
        raise check.error(path + ("prior",), f"unknown prior family '{family}'{suggest(family, names)}; "
                                            f"families: {', '.join(names)}")
    allowed = cls.argument_names()
    for key, value in args.items():
        if key not in allowed:
            raise check.error(path + (key,), f"unknown argument '{key}' for a {cls.family} prior"
                                            f"{suggest(key, allowed)}; it takes {cls.signature()}")
        args[key] = check.number(value, path + (key,))
    missing = [a for a in cls.required_arguments() if a not in args]
    if missing:
        raise check.error(path + (missing[0],), f"missing: a {cls.family} prior needs {cls.signature()}")
    try:
        cls(**args)
    except priors.PriorError as error:
        key = (error.argument,) if error.argument in allowed else ("prior",)
        raise check.error(path + key, error.detail or str(error)) from None
    return cls.family


def _data_value(check: _Checker, value, path, folder: Path):
    """A data entry: a file path (resolved, must exist; 'file.npz:key' picks an array) or a number/list."""
    if isinstance(value, bool):
        raise check.error(path, "expected a file path, a number or a list of numbers, got a boolean")
    if isinstance(value, numbers.Real) or isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise check.error(path, f"expected a file path, a number or a list, got {_kind(value)}")
    file_part, member = kernel_data.split_spec(value)  # likelihoods.data reads it: its own spelling
    file = folder / file_part
    if not file.is_file():
        head, _, tail = value.rpartition(":")
        if head and (folder / head).is_file():  # `x.npy:a`: a member named for a file that has none
            raise check.error(path, f"'{value}': ':{tail}' picks an array of an .npz archive, and {head} is not one; "
                                    f"name the file alone ('{head}')")
        raise check.error(path, f"data file not found: {file.resolve()}")
    if file.suffix.lower() not in kernel_data.FILE_TYPES:
        raise check.error(path, f"unsupported data file type '{file.suffix}': use "
                                f"{', '.join(kernel_data.FILE_TYPES)}")
    return f"{file.resolve()}:{member}" if member else str(file.resolve())
