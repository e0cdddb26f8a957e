"""YAML reading that remembers where every key came from, so config errors can name the line.

`parse_yaml(text, filename)` returns plain Python data (dicts, lists, scalars, as `yaml.safe_load` would) and
a `{key path: line}` map, e.g. `{("params", "sigma1", "low"): 12}` (1-based lines). Duplicate keys, which
PyYAML silently overwrites, are errors here: the second one is almost always a typo (a key beside a `<<: *anchor`
merge overrides the merged one, as YAML says). Plain numbers YAML 1.1 reads in base 60 (`1:30`) or octal (`010`)
are errors too: they ran as 90 and 8.

Hostile or runaway input is refused before any Python object is built (`check_limits`, a pass over the YAML
event stream): more than `MAX_BYTES` of text, nesting deeper than `MAX_DEPTH`, more than `MAX_NODES` values
once aliases are expanded ("billion laughs"), recursive or undefined aliases, and any tag other than the plain
YAML ones (`!!python/...` and `!custom` tags construct arbitrary objects). Each is one `file:line:col` message.
"""
from __future__ import annotations

import re

import yaml

from nestgrad.likelihoods.errors import did_you_mean, line_and_column

MAX_BYTES = 1_000_000     # a config holds settings; data belong in .npy/.csv files named under likelihood.data
MAX_DEPTH = 32            # configs nest 3-5 levels (params.mu.low, inline lists of lists)
MAX_NODES = 100_000       # values in the document after expanding aliases
_YAML_TAG = "tag:yaml.org,2002:"
_PLAIN_TAGS = {"!"} | {_YAML_TAG + name for name in ("str", "int", "float", "bool", "null", "seq", "map")}
# The libyaml event parser when PyYAML has it (20x faster on a large document), else the pure-Python one.
_EVENT_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ConfigError(Exception):
    """One clear message about a config file: `file:line: key.path: what is wrong`."""


def key_path(path) -> str:
    """("params", "sigma1", "low") -> "params.sigma1.low"; list indices as [i]."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


suggest = did_you_mean  # "' (did you mean 'x'?)'" for the closest valid choice, or ''


def check_limits(text: str, filename: str, event_loader=_EVENT_LOADER) -> None:
    """Refuse oversized, too deeply nested, alias-bomb or tagged documents; builds no Python objects.

    Syntax errors are left to the full parse, which reports them with PyYAML's own wording."""
    if len(text) > MAX_BYTES:
        raise ConfigError(too_large(filename, len(text.encode("utf-8", "replace"))))
    loader = event_loader(text)
    open_nodes = []       # (anchor, nodes counted before it) of the collections being read
    sizes = {}            # anchor -> nodes in the anchored value (aliases inside it expanded)
    total = 0
    try:
        while True:
            try:
                if not loader.check_event():
                    return
                event = loader.get_event()
            except yaml.YAMLError as error:
                # Newer libyaml stops at its own nesting limit while scanning ahead, before the events that
                # would show ours; the pure-Python event parser (a state machine, no recursion) finds where.
                if event_loader is not yaml.SafeLoader and "nesting depth" in str(error):
                    check_limits(text, filename, yaml.SafeLoader)
                return
            mark = event.start_mark
            where = f"{filename}:{mark.line + 1}:{mark.column + 1}"
            tag = getattr(event, "tag", None)
            if tag is not None and tag not in _PLAIN_TAGS:
                shown = "!!" + tag[len(_YAML_TAG):] if tag.startswith(_YAML_TAG) else tag
                raise ConfigError(f"{where}: the tag '{shown}' is not allowed: a config holds plain values "
                                  f"(text, numbers, true/false, lists and mappings)")
            if isinstance(event, yaml.AliasEvent):
                if event.anchor not in sizes:
                    recursive = any(anchor == event.anchor for anchor, _ in open_nodes)
                    raise ConfigError(f"{where}: alias '*{event.anchor}' " + (
                        "refers to a value that contains it (a recursive structure)" if recursive
                        else f"has no anchor '&{event.anchor}' before it"))
                total += sizes[event.anchor]
            elif isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
                total += 1
                if isinstance(event, yaml.ScalarEvent):
                    if event.anchor is not None:
                        sizes[event.anchor] = 1
                else:
                    open_nodes.append((event.anchor, total - 1))
                    if len(open_nodes) > MAX_DEPTH:
                        raise ConfigError(f"{where}: nested more than {MAX_DEPTH} levels deep; a config "
                                          f"needs a handful")
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, before = open_nodes.pop()
                if anchor is not None:
                    sizes[anchor] = total - before
            if total > MAX_NODES:
                raise ConfigError(f"{where}: more than {MAX_NODES} values (aliases expanded); a config holds "
                                  f"settings: put data in .npy/.csv files named under likelihood.data")
    finally:
        loader.dispose()


def too_large(filename: str, size: int) -> str:
    return (f"{filename}: {size / 1e6:.1f} MB is too large for a config (limit {MAX_BYTES / 1e6:g} MB); "
            f"put data in .npy/.csv files named under likelihood.data")


def parse_yaml(text: str, filename: str):
    unprintable = yaml.reader.Reader.NON_PRINTABLE.search(text)
    if unprintable:  # PyYAML's reader refuses these before any mark exists: a bare ReaderError traceback
        at = unprintable.start()
        line, column = line_and_column(text, at)
        raise ConfigError(f"{filename}:{line}:{column}: the character {ord(text[at]):#06x} is not allowed in YAML (a "
                          f"control character such as NUL: is this the config's text?)")
    check_limits(text, filename)
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
        try:
            return _convert(loader, root, (), lines, filename), lines
        except yaml.MarkedYAMLError as error:  # a value no constructor accepts, e.g. a bare `=`
            mark = error.problem_mark or error.context_mark
            where = f"{filename}:{mark.line + 1}:{mark.column + 1}" if mark else filename
            raise ConfigError(f"{where}: invalid YAML value: {error.problem or error}") from None
    finally:
        loader.dispose()


# Plain numbers YAML 1.1 reads in another base than the one they seem to be written in: `1:30` is 90 (base 60),
# `010` is 8 (octal). A config that meant 1:30 or 10 ran silently with 90 or 8.
_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?")
_OCTAL = re.compile(r"[-+]?0[0-7_]+")
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _convert(loader, node, path, lines, filename):
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        own = {id(key) for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge"}
        loader.flatten_mapping(node)  # resolves YAML merge keys (<<) the way safe_load does
        result, merged = {}, set()
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, (str, int, float, bool)):
                raise ConfigError(f"{filename}:{key_node.start_mark.line + 1}: {key_path(path)}: "
                                  f"a key must be a plain name, got {key!r}")
            if key in result and key in merged and id(key_node) in own:
                merged.discard(key)  # a key written beside `<<: *anchor` overrides the merged one, as in YAML
            elif key in result:
                if key in merged:  # of two merged mappings the first one's value stands, as in YAML
                    continue
                raise ConfigError(f"{filename}:{key_node.start_mark.line + 1}: {key_path(path + (key,))}: "
                                  f"duplicate key (first given on line {lines[path + (key,)]})")
            elif id(key_node) not in own:
                merged.add(key)
            lines[path + (key,)] = key_node.start_mark.line + 1
            result[key] = _convert(loader, value_node, path + (key,), lines, filename)
            lines[path + (key,)] = key_node.start_mark.line + 1
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(loader, item, path + (i,), lines, filename) for i, item in enumerate(node.value)]
    value = loader.construct_object(node, deep=True)
    if node.tag in _NUMBER_TAGS and node.style is None:
        base = ("base 60" if _SEXAGESIMAL.fullmatch(node.value) else
                "octal" if _OCTAL.fullmatch(node.value) else None)
        if base:
            where = f"{filename}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"
            raise ConfigError(f"{where}: {key_path(path)}: YAML reads {node.value} as {value:g} ({base}): write "
                              f"the number you mean without {'the colons' if base == 'base 60' else 'the leading 0'}"
                              f", or quote it to give text")
    return value
