"""Checkpoint files: one ``.npz`` of plain arrays plus a JSON document (stored inside as uint8 bytes).

Written atomically (a temporary file ``.<name>.<pid>.<random>.tmp`` in the same folder, then ``os.replace``), so
a crash while writing leaves the previous checkpoint intact; temporary files left by a writer that was killed
are removed by the next write or read. A write that fails (disk full, file-size limit, permissions) removes its
temporary file and raises :class:`CheckpointWriteError` naming the file. No pickle:
``np.load(..., allow_pickle=False)`` reads it back.

Reading trusts nothing: :func:`read_checkpoint` turns damaged archives and metadata into one
:class:`CheckpointError` naming the file and the member, and :func:`validate_run_checkpoint` checks every array
of a :class:`~sampler.nested_sampler.NestedSampler` checkpoint against :data:`RUN_ARRAYS` (dtype, shape in named
sizes, values) and the metadata against :data:`RUN_META` before the sampler uses any of it.

Also: :class:`SignalGuard`, which turns SIGINT/SIGTERM during a run into a request to checkpoint at the next
iteration boundary (handlers are installed only while running and restored afterwards).
"""

import glob
import json
import math
import os
import signal
import tempfile
import threading
import zipfile
from typing import NamedTuple

import numpy as np

FORMAT = "nestgrad-checkpoint-1"
_META_KEY = "__meta_json__"


class CheckpointError(ValueError):
    """A checkpoint cannot be read or does not belong to this run; the message names the file and the field."""


# What a user can do about a damaged checkpoint; nestgrad never deletes one (it may be all that is left of a run).
DAMAGED = ("the checkpoint is damaged: restore it from a copy to resume the run, or delete it to start afresh "
           "(nestgrad leaves it as it is)")


def damaged(path, problem) -> CheckpointError:
    """The error for a checkpoint that cannot be used as it is: ``<path>: <field>: <problem>; <what to do>``."""
    return CheckpointError(f"{path}: {problem}; {DAMAGED}")


class CheckpointWriteError(CheckpointError):
    """A checkpoint could not be written (disk full, file-size limit, ...); the previous one is unchanged."""


# ------------------------------------------------------------------------------------------ writing / reading

class Stacked(NamedTuple):
    """Arrays written to a checkpoint as one array, their concatenation along the first axis, streamed part by
    part into the file: a run's millions of dead points are never joined in memory to be saved."""

    parts: tuple


def write_checkpoint(path, arrays: dict, meta: dict) -> None:
    """Atomically write ``arrays`` (name -> ndarray or :class:`Stacked`) and JSON-able ``meta`` to ``path`` (zip,
    stored)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    payload = {k: v if isinstance(v, Stacked) else np.asarray(v) for k, v in arrays.items()}
    doc = dict(meta, format=FORMAT)
    payload[_META_KEY] = np.frombuffer(json.dumps(doc).encode("utf-8"), dtype=np.uint8)
    tmp = None
    try:
        os.makedirs(folder, exist_ok=True)
        remove_stale_temporaries(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.{os.getpid()}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as fh:
            _write_npz(fh, payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        if not isinstance(exc, OSError):
            raise
        kept = "the previous checkpoint is unchanged" if os.path.exists(path) else "no checkpoint was written yet"
        error = CheckpointWriteError(f"{path}: cannot write the checkpoint ({exc.strerror or exc}); {kept}")
        error.path, error.errno = path, exc.errno  # for the advice that follows (sampler.write_errors)
        raise error from None


def _write_npz(handle, payload) -> None:
    """The archive's bytes, as ``np.savez`` writes them (``<name>.npy`` members, what ``np.load`` reads). Stored,
    not deflated: floats barely compress (157 vs 111 MB at 1.6M dead points) and deflating took 7.6 s where storing
    takes 0.3 s, paid by every large run for its final checkpoint."""
    with zipfile.ZipFile(handle, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in payload.items():
            with archive.open(f"{name}.npy", mode="w", force_zip64=True) as member:
                if isinstance(value, Stacked):
                    _write_stacked(member, value.parts)
                else:
                    np.lib.format.write_array(member, value, allow_pickle=False)


def _write_stacked(member, parts) -> None:
    """``np.concatenate(parts)`` in the ``.npy`` format, one part at a time."""
    parts = [np.asarray(p) for p in parts]
    dtype = np.result_type(*parts)
    header = np.lib.format.header_data_from_array_1_0(parts[0].astype(dtype, copy=False))
    header["shape"] = (sum(p.shape[0] for p in parts),) + parts[0].shape[1:]
    header["fortran_order"] = False
    np.lib.format.write_array_header_1_0(member, header)
    for part in parts:
        member.write(np.ascontiguousarray(part, dtype=dtype).data)


def remove_stale_temporaries(path) -> None:
    """Remove temporary files of ``path`` left by writers that no longer run (killed mid-write)."""
    path = os.fspath(path)
    pattern = os.path.join(os.path.dirname(os.path.abspath(path)), f".{glob.escape(os.path.basename(path))}.*.tmp")
    for tmp in glob.glob(pattern):
        pid = os.path.basename(tmp)[len(os.path.basename(path)) + 2:].split(".")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            try:
                os.unlink(tmp)
            except OSError:
                pass  # removed by someone else meanwhile, or not ours to remove


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by another user
    return True


def read_checkpoint(path) -> tuple[dict, dict]:
    """``(arrays, meta)`` from a file written by :func:`write_checkpoint`; damage is a :class:`CheckpointError`."""
    path = os.fspath(path)
    remove_stale_temporaries(path)
    archive = _open_archive(path)
    arrays = {}
    with archive:
        for name in archive.files:
            try:
                arrays[name] = archive[name]
            except ValueError as exc:
                if "allow_pickle" not in str(exc):
                    raise damaged(path, f"{name}: cannot be read ({type(exc).__name__}: {exc})") from None
                # numpy's own advice here is to unpickle the file, which nestgrad never does
                raise damaged(path, f"{name}: holds Python objects (pickled data), which a nestgrad checkpoint "
                                      f"never contains") from None
            except Exception as exc:  # truncated or corrupted member: CRC, zlib, short read, ...
                raise damaged(path, f"{name}: cannot be read ({type(exc).__name__}: {exc})") from None
    return arrays, _decoded_meta(path, arrays.pop(_META_KEY, None))


def _open_archive(path) -> np.lib.npyio.NpzFile:
    """The checkpoint ``path`` opened by numpy; what keeps it from being read is a :class:`CheckpointError`."""
    _check_kind(path)
    try:
        archive = np.load(path, allow_pickle=False)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read the checkpoint ({exc.strerror or exc})") from None
    except zipfile.BadZipFile as exc:  # begins as a zip, but its directory at the end is missing or garbled
        raise damaged(path, f"an incomplete checkpoint archive (its zip directory is missing or damaged: the "
                            f"file was cut short or overwritten in part)") from None
    except Exception as exc:  # whatever numpy's or zipfile's readers raise on garbage bytes
        why = ("it reads as pickled Python objects, which nestgrad never loads" if "allow_pickle" in str(exc)
               else f"{type(exc).__name__}: {exc}")  # numpy's own advice would be to unpickle it
        raise damaged(path, f"not a checkpoint archive ({why})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise damaged(path, "not a checkpoint archive (a single .npy array, not an .npz archive)")
    return archive


def _check_kind(path) -> None:
    """A :class:`CheckpointError` saying what the file is when it is not a zip (npz) archive, before numpy's own
    guess (it takes any other bytes for pickled objects)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read the checkpoint ({exc.strerror or exc})") from None
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return
    if head.startswith(b"\x93NUMPY"):
        why = "a single .npy array, not an .npz archive"
    elif head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        why = "it holds pickled Python objects, which nestgrad never loads"
    else:
        why = f"not a zip (.npz) archive: it begins with the bytes {head!r}" if head else "the file is empty"
    raise damaged(path, f"not a checkpoint archive ({why})")


def read_meta(path) -> dict:
    """The metadata of the checkpoint ``path`` without reading its arrays; damage is a :class:`CheckpointError`."""
    path = os.fspath(path)
    with _open_archive(path) as archive:
        try:
            raw = archive[_META_KEY] if _META_KEY in archive.files else None
        except Exception as exc:  # a damaged member: CRC, short read, ...
            raise damaged(path, f"{_META_KEY}: cannot be read ({type(exc).__name__}: {exc})") from None
    return _decoded_meta(path, raw)


def archive_names(path) -> list[str]:
    """The arrays the checkpoint ``path`` holds (its zip directory alone: nothing is read)."""
    with _open_archive(os.fspath(path)) as archive:
        return [name for name in archive.files if name != _META_KEY]


def _decoded_meta(path, raw) -> dict:
    if raw is None:
        raise damaged(path, "metadata: missing (not a nestgrad checkpoint)")
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise damaged(path, f"metadata: stored as {raw.dtype} of shape {raw.shape}, expected bytes")
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise damaged(path, f"metadata: not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise damaged(path, f"metadata: expected a JSON object, got {type(meta).__name__}")
    if meta.get("format") != FORMAT:
        raise damaged(path, f"format: unknown checkpoint format {meta.get('format')!r}, expected {FORMAT}")
    return meta


# ---------------------------------------------------------------------------------------------- validation

class Field(NamedTuple):
    """One array of a checkpoint.

    kinds: numpy dtype kinds accepted ("f" float, "i" signed, "u" unsigned integer, "b" bool).
    shape: ints and size names, e.g. ("n", "d"); a name not yet known takes its value from the first array
        that uses it, and every later use must agree. None: any shape.
    values: a key of :data:`VALUE_CHECKS`, or None.
    dtype: the one dtype nestgrad writes it with, or None (any of ``kinds``). A float32 ``state_logl`` would resume
        a different run (the float64 values are gone), and an int32 id array would meet kernels compiled for int64.
    """
    kinds: str
    shape: tuple | None
    values: str | None = None
    dtype: str | None = None


VALUE_CHECKS = {  # name -> (mask of acceptable values, what they must be)
    "unit": (lambda a: np.isfinite(a) & (a >= 0) & (a <= 1), "finite and in [0, 1]"),
    "finite": (np.isfinite, "finite"),
    "logl": (lambda a: ~np.isnan(a) & (a < np.inf), "a log-likelihood (finite or -inf)"),
    "positive": (lambda a: np.isfinite(a) & (a > 0), "finite and positive"),
    "count": (lambda a: a >= 0, "zero or more"),
    "parent": (lambda a: a >= -1, "-1 (none) or a point's id"),
}
_KIND_NAMES = {"f": "float", "i": "integer", "u": "unsigned integer", "b": "bool"}


def validate(path, arrays: dict, schema: dict, sizes: dict | None = None) -> dict:
    """Check ``arrays`` against ``schema`` (name -> :class:`Field`), in the schema's order.

    ``sizes`` gives named sizes known beforehand with where they come from, e.g. ``{"d": (4, "settings.params")}``;
    returns every size's value, with those the arrays bound. Raises :class:`CheckpointError`
    ``"<path>: <field>: <what is wrong>"`` at the first problem."""
    sizes, source = ({name: value for name, (value, _) in (sizes or {}).items()},
                     {name: origin for name, (_, origin) in (sizes or {}).items()})
    for name, field in schema.items():
        def fail(problem):
            return damaged(path, f"{name}: {problem}")

        if name not in arrays:
            raise fail("missing from the checkpoint")
        array = arrays[name]
        if array.dtype.kind not in field.kinds or (field.dtype is not None and array.dtype != field.dtype):
            raise fail(f"dtype {array.dtype}, expected "
                       f"{field.dtype or ' or '.join(_KIND_NAMES[k] for k in field.kinds)}")
        if field.shape is not None:
            if array.ndim != len(field.shape):
                raise fail(f"shape {array.shape}, expected {_shape_text(field.shape, sizes)}")
            for got, want in zip(array.shape, field.shape):
                if isinstance(want, str) and want not in sizes:
                    sizes[want], source[want] = got, name
                elif got != (sizes[want] if isinstance(want, str) else want):
                    raise fail(f"shape {array.shape} does not match {want} = {sizes[want]} (from {source[want]})"
                               if isinstance(want, str) else f"shape {array.shape}, expected {field.shape}")
        if field.values is not None and array.size:
            good, meaning = VALUE_CHECKS[field.values]
            bad = ~good(array)
            if bad.any():
                first = tuple(int(i) for i in np.argwhere(bad)[0])
                raise fail(f"{int(bad.sum())} value(s) not {meaning}, first {array[first].item()!r} at index "
                           f"{first if len(first) != 1 else first[0]}")
    return sizes


def _shape_text(shape, sizes) -> str:
    """``(n, d) = (40, 4)``: a field's shape in size names, with their values where the checkpoint has bound them."""
    named = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    if not any(isinstance(s, str) for s in shape) or not all(s in sizes for s in shape if isinstance(s, str)):
        return named
    return f"{named} = {tuple(sizes[s] if isinstance(s, str) else s for s in shape)}"


# A NestedSampler checkpoint: live state `state_*` (sampler.nested.NSState) and the run record `dead_*`, `diag_*`
# (sampler.run_state.RunRecord). Sizes: n live points, d parameters, k chains, ndead dead points, niter iterations,
# g ghost ellipsoids (sampler.ghosts).
# An array the sampler writes but this table does not list must still be present and numeric; `diag_*` arrays not
# listed hold one number per iteration. A new field is one line here.
RUN_ARRAYS = {
    "state_u": Field("f", ("n", "d"), "unit", "float64"),
    "state_theta": Field("f", ("n", "d"), "finite", "float64"),
    "state_logl": Field("f", ("n",), "logl", "float64"),
    "state_logl_birth": Field("f", ("n",), "logl", "float64"),
    "state_thread": Field("iu", ("n",), "count", "int64"),
    "state_uid": Field("iu", ("n",), "count", "int64"),
    "state_parent": Field("i", ("n",), "parent", "int64"),
    "state_labels": Field("iu", ("n",), "count", "int64"),
    "state_step_size": Field("f", (), "positive", "float64"),
    "state_n_steps": Field("iu", (), "positive", "int64"),
    "state_rho": Field("f", (2,), None, "float64"),  # start-end correlations (coordinates, logL); NaN: none
    "state_jumps": Field("iu", (), "count", "int64"),
    "state_chain_rng": Field("u", ("k", 2), None, "uint64"),
    "state_iteration": Field("iu", (), "count", "int64"),
    "state_next_thread": Field("iu", (), "count", "int64"),
    "state_next_uid": Field("iu", (), "count", "int64"),
    "state_ghost_mean": Field("f", ("g", "d"), "finite", "float64"),
    "state_ghost_cov": Field("f", ("g", "d", "d"), "finite", "float64"),
    "state_ghost_radius2": Field("f", ("g",), "positive", "float64"),
    "state_ghost_until": Field("iu", ("g",), "count", "int64"),
    "state_moments": Field("f", ("m", "d"), "finite", "float64"),  # m: 0 (not carried) or d + 2 (sampler.live_moments)
    "dead_logl": Field("f", ("ndead",), "logl", "float64"),
    "dead_u": Field("f", ("ndead", "d"), "unit", "float64"),
    "dead_theta": Field("f", ("ndead", "d"), "finite", "float64"),
    "dead_birth": Field("f", ("ndead",), "logl", "float64"),
    "dead_thread": Field("iu", ("ndead",), "count", "int64"),
    "dead_uid": Field("iu", ("ndead",), "count", "int64"),
    "dead_parent": Field("i", ("ndead",), "parent", "int64"),
    "dead_label": Field("iu", ("ndead",), "count", "int64"),
    "diag_reflections_per_chain": Field("iu", ("niter", "k"), "count", "int64"),
}
# Metadata: dotted key -> kind of JSON value (see `_META_KINDS`). Record entries apply to the scalars RunRecord
# writes; those not listed must be numbers or text.
RUN_META = {
    "settings": "object", "settings.nlive": "size", "settings.k": "size", "settings.params": "names",
    "settings.seed": "count", "settings.hmc": "object", "generator": "object", "record": "object",
    "record.ndim": "size", "record.k": "size", "record.niter": "count", "record.nlike": "count",
    "record.ngrad": "count", "record.initial_draws": "count", "record.initial_nan": "count",
    "record.wall_time": "seconds", "record.running_logz": "float_text", "record.running_log_x": "float_text",
    "record.log_volume_offset": "float_text",
}
_META_KINDS = {  # kind -> (test, what it must be)
    "object": (lambda v: isinstance(v, dict), "a JSON object"),
    "size": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    "count": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "names": (lambda v: isinstance(v, list) and v and all(isinstance(x, str) for x in v), "a list of names"),
    "seconds": (lambda v: _is_number(v) and math.isfinite(v) and v >= 0, "a finite number >= 0"),
    "float_text": (lambda v: isinstance(v, str) and _float_text(v), "a float written as text (not NaN)"),
    "scalar": (lambda v: _is_number(v) or isinstance(v, str), "a number or text"),
}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _float_text(text: str) -> bool:
    try:
        return not math.isnan(float(text))
    except ValueError:
        return False


def validate_meta(path, meta: dict, schema: dict) -> None:
    """Check the JSON metadata against ``schema`` (dotted key -> kind of :data:`_META_KINDS`), in order."""
    for key, kind in schema.items():
        value, parts = meta, key.split(".")
        for part in parts:
            if not isinstance(value, dict) or part not in value:
                raise damaged(path, f"{key}: missing from the metadata")
            value = value[part]
        test, meaning = _META_KINDS[kind]
        if not test(value):
            shown = repr(value) if len(repr(value)) < 60 else repr(value)[:57] + "..."
            raise damaged(path, f"{key}: expected {meaning}, got {shown}")


def add_family_ids(arrays: dict) -> dict:
    """A checkpoint written before points carried creation and parent ids (``state_uid``...) resumes with every
    earlier point a root of the family tree: ids in death order, then the live points, no parents. The ESS then
    counts no chain memory before the resume (``sampler.genealogy``); nothing else changes."""
    if "state_uid" in arrays or "state_logl" not in arrays or "dead_logl" not in arrays:
        return arrays
    ndead, n = arrays["dead_logl"].shape[0], arrays["state_logl"].shape[0]
    return dict(arrays, dead_uid=np.arange(ndead, dtype=np.int64), dead_parent=np.full(ndead, -1, np.int64),
                state_uid=ndead + np.arange(n, dtype=np.int64), state_parent=np.full(n, -1, np.int64),
                state_next_uid=np.array(ndead + n, dtype=np.int64))


def add_unknown_moments(arrays: dict) -> dict:
    """A checkpoint written before states carried the live set's moments resumes with them unknown: the first
    iteration recomputes them from the points (``sampler.live_moments``)."""
    if "state_moments" in arrays or "state_u" not in arrays:
        return arrays
    return dict(arrays, state_moments=np.empty((0,) + arrays["state_u"].shape[1:]))


def validate_run_checkpoint(path, arrays: dict, meta: dict) -> None:
    """Check a NestedSampler checkpoint read by :func:`read_checkpoint` before anything uses it; raises
    :class:`CheckpointError` naming the file and the field (array or metadata key) at the first problem."""
    from .nested import NSState  # late: the sampler imports this module
    from .run_state import RunRecord

    validate_meta(path, meta, {key: kind for key, kind in RUN_META.items() if not key.startswith("record.")})
    settings, record = meta["settings"], meta["record"]
    d, k = len(settings["params"]), settings["k"]
    blank = RunRecord(d, k)
    validate_meta(path, meta, {f"record.{key}": RUN_META.get(f"record.{key}", "scalar") for key in blank.scalars()})
    for key, want in (("ndim", d), ("k", k)):
        if record[key] != want:
            raise damaged(path, f"record.{key}: {record[key]} but the settings say {want}")
    try:
        restore_generator(meta["generator"])
    except Exception as exc:  # numpy's state setters raise TypeError, ValueError, KeyError, OverflowError, ...
        raise damaged(path, f"generator: not a random-generator state ({type(exc).__name__}: {exc})") from None
    expected = [f"state_{f}" for f in NSState._fields] + list(blank.arrays())
    schema = {name: field for name, field in RUN_ARRAYS.items() if name in expected}  # the table's order
    schema.update({name: Field("iuf", ("niter",)) if name.startswith("diag_") else Field("biuf", None)
                   for name in expected if name not in schema})
    validate(path, arrays, schema, sizes={"d": (d, "settings.params"), "k": (k, "settings.k"),
                                          "niter": (record["niter"], "record.niter")})


def generator_state_json(generator: np.random.Generator) -> dict:
    """The bit generator's state as JSON-able data (integers may exceed 64 bits: JSON keeps them exact)."""
    return generator.bit_generator.state


def restore_generator(state: dict) -> np.random.Generator:
    name = state.get("bit_generator") if isinstance(state, dict) else None
    bitgen_cls = getattr(np.random, name, None) if isinstance(name, str) else None
    if not (isinstance(bitgen_cls, type) and issubclass(bitgen_cls, np.random.BitGenerator)):
        raise CheckpointError(f"unknown bit generator {name!r} in checkpoint")
    bitgen = bitgen_cls()
    bitgen.state = state
    return np.random.Generator(bitgen)


class SignalGuard:
    """Context manager: while active, SIGINT/SIGTERM set ``requested`` instead of interrupting, so the run can
    write a checkpoint at the next iteration boundary and then stop (``KeyboardInterrupt`` for SIGINT,
    ``SystemExit(128 + 15)`` for SIGTERM). Inactive outside the main thread, where handlers cannot be set."""

    def __init__(self, enabled=True):
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.requested = None
        self._previous = {}

    def _handler(self, signum, frame):
        if self.requested is not None and signum == signal.SIGINT:
            # A second Ctrl-C while we are still computing: give up waiting for the boundary.
            raise KeyboardInterrupt
        self.requested = signum

    def __enter__(self):
        if self.enabled:
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        return False

    def raise_requested(self):
        """Stop the run the way the received signal asks."""
        if self.requested == signal.SIGINT:
            raise KeyboardInterrupt
        if self.requested == signal.SIGTERM:
            raise SystemExit(128 + signal.SIGTERM)
