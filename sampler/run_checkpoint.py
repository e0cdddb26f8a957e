"""A run's checkpoint: the state, the generator and the record written to ``checkpoint.npz`` at an iteration
boundary, read back bit for bit, and refused when it was written with other settings or another likelihood
(``sampler.checkpoint`` holds the file format and its validation)."""

import numpy as np

from .checkpoint import (RUN_ARRAYS, RUN_META, CheckpointError, add_family_ids, add_unknown_moments,
                         archive_names, damaged, generator_state_json, read_checkpoint, read_meta, restore_generator,
                         validate_meta, validate_run_checkpoint, write_checkpoint)
from .nested import NSState
from .run_state import RunRecord

# Settings a resumed run must share with the checkpoint's (the likelihood's digest is checked apart).
SAME_SETTINGS = ("nlive", "delete_fraction", "k", "hmc", "seed", "params", "prior", "dtype")


def save(path, state, generator, record, settings, elapsed) -> None:
    """Write the run after ``elapsed`` seconds of this session (added to the record's earlier wall time)."""
    # in the dtypes the checkpoint's table requires (a Python int is int32 under numpy 1.x on Windows)
    arrays = {name: np.asarray(getattr(state, f), dtype=RUN_ARRAYS[name].dtype if name in RUN_ARRAYS else None)
              for f in NSState._fields for name in [f"state_{f}"]}
    arrays.update(record.arrays())
    scalars = dict(record.scalars(), wall_time=record.wall_time + elapsed)
    meta = {"settings": settings, "generator": generator_state_json(generator), "record": scalars}
    write_checkpoint(path, arrays, meta)


def check_resumable(path, settings) -> None:
    """Raise :class:`CheckpointError` when ``path`` was written with other ``settings``, from its metadata alone
    (before anything is compiled); a damaged file passes here and is named by :func:`load`."""
    try:
        meta = read_meta(path)
        validate_meta(path, meta, {key: kind for key, kind in RUN_META.items() if key.startswith("settings")})
    except CheckpointError:
        return
    check_settings(path, meta["settings"], settings)


# Arrays a checkpoint may lack, written before they existed (`add_family_ids`, `add_unknown_moments` supply them).
OPTIONAL_ARRAYS = ("state_uid", "state_parent", "state_next_uid", "dead_uid", "dead_parent", "state_moments")


def diagnose(path) -> None:
    """Raise :class:`CheckpointError` when ``path`` is damaged as far as its zip directory and metadata tell
    (nothing large is read): what a fresh run into its folder says instead of calling it an unfinished run."""
    meta = read_meta(path)
    validate_meta(path, meta, RUN_META)
    names = set(archive_names(path))
    missing = [name for name in RUN_ARRAYS if name not in names and name not in OPTIONAL_ARRAYS]
    if missing:
        raise damaged(path, f"{missing[0]}: missing from the checkpoint")


def check_settings(path, saved, settings) -> None:
    for key in SAME_SETTINGS:
        if saved.get(key) != settings.get(key):
            raise CheckpointError(f"{path}: checkpoint was written with {_difference(key, saved.get(key), settings.get(key))}; "
                                  f"remove the file or use the same settings")
    if saved.get("likelihood") not in (None, settings.get("likelihood")):  # None: not recorded (older runs)
        raise CheckpointError(f"{path}: checkpoint was written with another likelihood (field settings."
                              f"likelihood: the kernel's source, its helpers -- nestgrad's own among them, after an upgrade -- or the "
                              f"data differ from this run's); "
                              f"resuming would mix the two: remove the file, or use the kernel and data it was "
                              f"written with")


def load(path, settings):
    """``(state, generator, record)`` of the checkpoint ``path``, validated against ``settings``."""
    arrays, meta = read_checkpoint(path)
    arrays = add_unknown_moments(add_family_ids(arrays))
    validate_run_checkpoint(path, arrays, meta)
    check_settings(path, meta["settings"], settings)
    state = NSState(*(arrays[f"state_{f}"] for f in NSState._fields))
    state = state._replace(step_size=float(state.step_size), n_steps=int(state.n_steps),
                           rho=np.asarray(state.rho, dtype=np.float64), jumps=int(state.jumps),
                           iteration=int(state.iteration), next_thread=int(state.next_thread),
                           next_uid=int(state.next_uid), ghost_until=state.ghost_until.astype(np.int64),
                           moments=np.asarray(state.moments, dtype=np.float64))
    return state, restore_generator(meta["generator"]), RunRecord.from_saved(arrays, meta["record"])


def _difference(key, saved, now) -> str:
    """``key = saved``, this run's value, naming the entries that differ when both are mappings (a prior of many
    parameters in which one changed)."""
    if isinstance(saved, dict) and isinstance(now, dict):
        names = [n for n in dict.fromkeys([*saved, *now]) if saved.get(n) != now.get(n)]
        return "; ".join(f"{key}[{n!r}] = {saved.get(n)!r}, this run has {now.get(n)!r}" for n in names)
    return f"{key} = {saved!r}, this run has {now!r}"
