"""Config checks that need the kernel file: syntax, the function, theta indexing vs `params`, data shapes.

Everything here reads the kernel's source with `ast` (nothing is compiled), so a config with a broken kernel
fails in milliseconds with `file:line:col` instead of deep inside numba. The differentiator's own rejection
(`ad.KernelError`) is checked in `sampler.config` because it needs the imported function.
"""
from __future__ import annotations

import ast
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sampler.config_yaml import ConfigError, suggest


@dataclass
class KernelUse:
    """How a kernel function uses its arguments, read from its syntax tree."""
    args: list[str]
    theta_max: int = -1                        # largest constant index theta[k] (-1: none)
    theta_max_at: str = ""                     # file:line:col of that index
    theta_dynamic: bool = False                # theta used other than by constant index (loop, len, call)
    theta_unpack: int | None = None            # `a, b, c = theta` -> 3
    arity: dict = field(default_factory=dict)  # data arg -> {number of indices: file:line:col}
    const_index: dict = field(default_factory=dict)  # data arg -> [(axis, index, file:line:col)]


def parse_kernel(file: Path, function: str, where: str) -> tuple[ast.FunctionDef, KernelUse]:
    """Parse `file`, find `function`, and read how it uses theta and its data arguments."""
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
    args = [a.arg for a in node.args.args]
    if not args:
        raise ConfigError(f"{where}: {file}:{node.lineno}:{node.col_offset + 1}: '{function}' takes no "
                          f"arguments; a kernel is `def {function}(theta, <data>...)`")
    use = KernelUse(args=args)
    _scan(node, use, str(file))
    return node, use


def _scan(function: ast.FunctionDef, use: KernelUse, filename: str) -> None:
    theta = use.args[0]
    data_args = set(use.args[1:])
    parents = {child: parent for parent in ast.walk(function) for child in ast.iter_child_nodes(parent)}
    for node in ast.walk(function):
        if not isinstance(node, ast.Name) or node.id not in use.args:
            continue
        at = f"{filename}:{node.lineno}:{node.col_offset + 1}"
        parent = parents.get(node)
        subscripted = isinstance(parent, ast.Subscript) and parent.value is node
        if node.id == theta:
            if subscripted and isinstance(parent.slice, ast.Constant) and isinstance(parent.slice.value, int):
                if parent.slice.value > use.theta_max:
                    use.theta_max, use.theta_max_at = parent.slice.value, at
            elif isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0], ast.Tuple):
                use.theta_unpack = len(parent.targets[0].elts)
                use.theta_max_at = at
            elif not isinstance(parent, ast.arguments):
                use.theta_dynamic = True
        elif node.id in data_args and subscripted:
            index = parent.slice.elts if isinstance(parent.slice, ast.Tuple) else [parent.slice]
            use.arity.setdefault(node.id, {}).setdefault(len(index), at)
            for axis, item in enumerate(index):
                if isinstance(item, ast.Constant) and isinstance(item.value, int) and item.value >= 0:
                    use.const_index.setdefault(node.id, []).append((axis, item.value, at))


def theta_count_problem(use: KernelUse, params: list[str]) -> str | None:
    """Why `params` cannot be the kernel's theta, or None when the count is consistent."""
    n = len(params)
    if use.theta_unpack is not None and use.theta_unpack != n:
        return (f"the kernel unpacks theta into {use.theta_unpack} values ({use.theta_max_at}) but params "
                f"lists {n}: {', '.join(params)}")
    if use.theta_max >= n:
        return (f"the kernel reads theta[{use.theta_max}] ({use.theta_max_at}) but params lists only {n}: "
                f"{', '.join(params)}")
    if use.theta_unpack is None and not use.theta_dynamic and use.theta_max + 1 < n:
        unused = ", ".join(params[use.theta_max + 1:])
        return (f"params lists {n} parameters but the kernel only reads theta[0]..theta[{use.theta_max}]"
                f"{' (' + use.theta_max_at + ')' if use.theta_max_at else ''}; unused: {unused}")
    return None


def data_shape_problem(use: KernelUse, name: str, array: np.ndarray) -> str | None:
    """Why `array` cannot be the kernel's argument `name`, judged from how the kernel indexes it."""
    arities = use.arity.get(name, {})
    if arities and array.ndim not in arities:
        wanted, at = next(iter(arities.items()))
        return (f"the kernel indexes '{name}' with {wanted} {'index' if wanted == 1 else 'indices'} ({at}) "
                f"but the data has shape {array.shape} ({array.ndim}-D)")
    for axis, index, at in use.const_index.get(name, []):
        if array.ndim in arities and axis < array.ndim and index >= array.shape[axis]:
            return (f"the kernel reads index {index} on axis {axis} of '{name}' ({at}) but the data has "
                    f"shape {array.shape}")
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
