"""Config checks that need the kernel file: syntax, the function, theta indexing vs `params`, data shapes.

Everything here reads the kernel's source with `ast` (nothing is compiled), so a config with a broken kernel
fails in milliseconds with `file:line:col` instead of deep inside numba. How the kernel uses its arguments,
helpers included, is `likelihoods.kernel_use` (the same analysis the Likelihood checks its data with). The
differentiator's own rejection (`ad.KernelError`) is checked in `sampler.config` because it needs the imported
function; reads out of bounds that need every data shape are checked when the Likelihood is built.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import numpy as np

from nestgrad.likelihoods import bounds, kernel_use
from nestgrad.likelihoods.data import shape_problem
from nestgrad.sampler.config_yaml import ConfigError, suggest


def parse_kernel(file: Path, function: str, where: str) -> tuple[ast.FunctionDef, kernel_use.KernelUse]:
    """Parse `file`, find `function`, and read how it (with the helpers of the same file) uses its arguments."""
    source = file.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source, filename=str(file))
    except SyntaxError as error:
        raise ConfigError(f"{where}: {file}:{error.lineno}:{(error.offset or 0)}: syntax error: {error.msg}") from None
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    if function not in functions:
        raise ConfigError(f"{where}: {file} has no top-level function '{function}'"
                          f"{suggest(function, functions)}; it defines: {', '.join(functions) or 'none'}")
    node = functions[function]
    if not node.args.args:
        raise ConfigError(f"{where}: {file}:{node.lineno}:{node.col_offset + 1}: '{function}' takes no "
                          f"arguments; a kernel is `def {function}(theta, <data>...)`")
    return node, kernel_use.analyse(node, str(file), functions)


def theta_count_problem(use: kernel_use.KernelUse, params: list[str]) -> str | None:
    """Why `params` is too short for the kernel's theta, or None. Too long is allowed: the Likelihood warns
    about parameters the kernel never reads (`kernel_use.unused_parameters`)."""
    theta, n = use.theta, len(params)
    if theta.unpack is not None and theta.unpack != n:
        return (f"the kernel unpacks theta into {theta.unpack} values ({kernel_use.describe(theta.unpack_at)}) "
                f"but params lists {n}: {', '.join(params)}")
    if theta.const_reads and max(theta.const_reads) >= n:
        index = max(theta.const_reads)
        return (f"the kernel reads theta[{index}] ({kernel_use.describe(theta.const_reads[index])}) but params "
                f"lists only {n}: {', '.join(params)}")
    return None


def data_shape_problem(use: kernel_use.KernelUse, name: str, array: np.ndarray) -> str | None:
    """Why `array` cannot be the kernel's argument `name`: its dimensions, or a read out of its bounds that this
    array's shape alone decides."""
    problem = shape_problem(name, array, use.uses[name])
    if problem:
        return problem
    problems, _ = bounds.static_problems(use, {name: array.shape}, only=name)
    if problems:
        access = problems[0].access
        return f"{access.filename}:{access.node.lineno}:{access.node.col_offset + 1}: {problems[0].message}"
    return None


def load_data(value) -> np.ndarray | float:
    """A resolved data entry (see config_schema._data_value) as a numpy array or a float."""
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return np.asarray(value, dtype=float)
    file, member = value.rsplit(":", 1) if ".npz:" in value else (value, "")
    path = Path(file)
    if path.suffix == ".npy":
        return np.load(path, allow_pickle=False)
    if path.suffix == ".npz":
        with np.load(path, allow_pickle=False) as npz:
            if member:
                if member not in npz.files:
                    raise ValueError(f"{path} has no array '{member}'{suggest(member, npz.files)}; "
                                     f"it holds: {', '.join(npz.files)}")
                return npz[member]
            if len(npz.files) != 1:
                raise ValueError(f"{path} holds {len(npz.files)} arrays ({', '.join(npz.files)}): "
                                 f"pick one with '{path.name}:NAME'")
            return npz[npz.files[0]]
    delimiter = "," if path.suffix == ".csv" else None
    try:
        return np.loadtxt(path, delimiter=delimiter)
    except ValueError:  # a header line: skip it once, then give up with numpy's message
        return np.loadtxt(path, delimiter=delimiter, skiprows=1)


def import_function(file: Path, function: str, where: str):
    """Import `function` from the user's file (a fresh module per file, named after its path)."""
    module_name = "nestgrad_user_" + "_".join(file.with_suffix("").parts[-3:]).replace("-", "_").replace(".", "_")
    spec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # inspect.getsource (used by the differentiator) needs it
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's module-level code failed: say where, not a traceback
        line = _user_line(error, file)
        raise ConfigError(f"{where}: importing {file}{':' + str(line) if line else ''} failed: "
                          f"{type(error).__name__}: {error}") from None
    fn = getattr(module, function, None)
    if not callable(fn):
        raise ConfigError(f"{where}: {file} has no function '{function}'")
    return fn


def _user_line(error: BaseException, file: Path) -> int | None:
    tb, line = error.__traceback__, None
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == file:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
