"""YAML reading that remembers where every key came from, so config errors can name the line.

`parse_yaml(text, filename)` returns plain Python data (dicts, lists, scalars, as `yaml.safe_load` would) and
a `{key path: line}` map, e.g. `{("params", "sigma1", "low"): 12}` (1-based lines). Duplicate keys, which
PyYAML silently overwrites, are errors here: the second one is almost always a typo.
"""
from __future__ import annotations

import difflib

import yaml


class ConfigError(Exception):
    """One clear message about a config file: `file:line: key.path: what is wrong`."""


def key_path(path) -> str:
    """("params", "sigma1", "low") -> "params.sigma1.low"; list indices as [i]."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def suggest(word, choices) -> str:
    """' (did you mean 'x'?)' for the closest valid choice, or '' when nothing is close."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def parse_yaml(text: str, filename: str):
    loader = yaml.SafeLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            where = f"{filename}:{mark.line + 1}:{mark.column + 1}" if mark else filename
            raise ConfigError(f"{where}: invalid YAML: {error.problem or error}") from None
        except yaml.YAMLError as error:
            raise ConfigError(f"{filename}: invalid YAML: {error}") from None
        lines: dict[tuple, int] = {}
        if root is None:
            return {}, lines
        return _convert(loader, root, (), lines, filename), lines
    finally:
        loader.dispose()


def _convert(loader, node, path, lines, filename):
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves YAML merge keys (<<) the way safe_load does
        result = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                raise ConfigError(f"{filename}:{key_node.start_mark.line + 1}: {key_path(path)}: "
                                  f"a key must be a plain name, got {key!r}")
            if key in result:
                raise ConfigError(f"{filename}:{key_node.start_mark.line + 1}: {key_path(path + (key,))}: "
                                  f"duplicate key (first given on line {lines[path + (key,)]})")
            lines[path + (key,)] = key_node.start_mark.line + 1
            result[key] = _convert(loader, value_node, path + (key,), lines, filename)
            lines[path + (key,)] = key_node.start_mark.line + 1
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(loader, item, path + (i,), lines, filename) for i, item in enumerate(node.value)]
    return loader.construct_object(node, deep=True)
