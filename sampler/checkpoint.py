"""Checkpoint files: one ``.npz`` of plain arrays plus a JSON document (stored inside as a uint8 array).

Written atomically (temporary file in the same folder, then ``os.replace``), so a crash while writing leaves the
previous checkpoint intact. No pickle: ``np.load(..., allow_pickle=False)`` reads it back.
Also: :class:`SignalGuard`, which turns SIGINT/SIGTERM during a run into a request to checkpoint at the next
iteration boundary (handlers are installed only while running and restored afterwards).
"""

import json
import os
import signal
import tempfile
import threading

import numpy as np

FORMAT = "nestgrad-checkpoint-1"
_META_KEY = "__meta_json__"


class CheckpointError(ValueError):
    """A checkpoint cannot be read or does not belong to this run; the message names the file."""


def write_checkpoint(path, arrays: dict, meta: dict) -> None:
    """Atomically write ``arrays`` (name -> ndarray) and JSON-able ``meta`` to ``path``."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    payload = {k: np.asarray(v) for k, v in arrays.items()}
    doc = dict(meta, format=FORMAT)
    payload[_META_KEY] = np.frombuffer(json.dumps(doc).encode("utf-8"), dtype=np.uint8)
    fd, tmp = tempfile.mkstemp(prefix=".checkpoint-", suffix=".npz.tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_checkpoint(path) -> tuple[dict, dict]:
    """``(arrays, meta)`` from a file written by :func:`write_checkpoint`."""
    path = os.fspath(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}: not a readable checkpoint ({exc})") from None
    if _META_KEY not in arrays:
        raise CheckpointError(f"{path}: not a nestgrad checkpoint (no metadata)")
    meta = json.loads(arrays.pop(_META_KEY).tobytes().decode("utf-8"))
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: unknown checkpoint format {meta.get('format')!r}, expected {FORMAT}")
    return arrays, meta


def generator_state_json(generator: np.random.Generator) -> dict:
    """The bit generator's state as JSON-able data (integers may exceed 64 bits: JSON keeps them exact)."""
    return generator.bit_generator.state


def restore_generator(state: dict) -> np.random.Generator:
    name = state["bit_generator"]
    bitgen_cls = getattr(np.random, name, None)
    if bitgen_cls is None:
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
