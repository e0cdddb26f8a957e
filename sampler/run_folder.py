"""The run folder: the files a finished (or resumed) run leaves behind.

One small writer per format here and one small reader in `sampler.run_folder_read`, so that each file can be
checked on its own:

    <name>.txt                 PolyChord/getdist weighted chain: weight, -2 logL, params (max weight = 1)
    <name>_dead-birth.txt      PolyChord dead points: params, logL, logL_birth (what anesthetic reads)
    <name>_equal_weights.txt   equal-weight posterior samples: 1, -2 logL, params
    <name>.paramnames          "name  latex" per line (getdist and anesthetic labels)
    <name>.ranges              "name  low  high" hard prior bounds (N: none), so getdist's densities respect them
    results.json               scalars, settings, package versions, params, latex, truths, reference logZ
    diagnostics.npz            per-iteration diagnostics plus the arrays text cannot hold exactly
                               (unit-cube coordinates, normalised weights, equal-weight samples)

Floats are written as `%.17e` (18 significant digits, `sampler.text_tables`), so reading the text back gives the
same float64 values.
No pickle anywhere: `np.load(..., allow_pickle=False)`. Every file is written to `<file>.tmp` and renamed, so a
failed write (disk full, file-size limit) leaves no partial file: it removes the temporary file and raises one
`RunFolderError` naming the file.
"""
from __future__ import annotations

import json
import os
import platform
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

from nestgrad.sampler import text_tables
from nestgrad.sampler.priors import bounds_of

RESULTS_JSON = "results.json"
DIAGNOSTICS_NPZ = "diagnostics.npz"
# Arrays stored in diagnostics.npz next to the per-iteration diagnostics; diagnostics keys get a prefix so
# that a diagnostic can never shadow one of these.
_DIAG_PREFIX = "diag__"


class RunFolderError(Exception):
    """A run folder that is missing files, whose files disagree with each other, or that cannot be written (then
    ``path`` is the file and ``errno`` the OSError's code, when known: `write_errors.remedy` advises from them)."""

    def __init__(self, message, path=None, errno=None):
        super().__init__(message)
        self.path, self.errno = path, errno


# ----------------------------------------------------------------------------------------------- writing

def write_run_folder(results, outdir) -> Path:
    """Write every file of the run folder for `results` into `outdir` (created if needed); returns the folder."""
    outdir = Path(outdir)
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunFolderError(f"{outdir}: cannot create the output folder ({error.strerror or error})") from None
    root = outdir / results.name
    _write_tables([(_with_suffix(root, ".txt"), weighted_chain_table(results)),
                   (_with_suffix(root, "_dead-birth.txt"), dead_birth_table(results)),
                   (_with_suffix(root, "_equal_weights.txt"), equal_weights_table(results))])
    write_paramnames(results, _with_suffix(root, ".paramnames"))
    write_ranges(results, _with_suffix(root, ".ranges"))
    write_results_json(results, outdir / RESULTS_JSON)
    write_diagnostics(results, outdir / DIAGNOSTICS_NPZ)
    others = sorted(p.name[:-len("_dead-birth.txt")] for p in outdir.glob("*_dead-birth.txt")
                    if p.name != f"{results.name}_dead-birth.txt")
    if others:  # a second config's run into the same folder left the first one's tables beside its results.json
        warnings.warn(f"{outdir} also holds the tables of another run ({', '.join(others)}: {others[0]}.txt, ...); "
                      f"results.json and diagnostics.npz are this run's ({results.name}): remove those files, or give "
                      f"each run an output folder of its own", MixedRunFolderWarning, stacklevel=2)
    return outdir


class MixedRunFolderWarning(UserWarning):
    """The run folder holds another run's tables beside this run's results."""


def weighted_chain_table(results) -> text_tables.Columns:
    """getdist/PolyChord `<name>.txt`: weight (scaled so the largest is 1), -2 logL, params."""
    weights = np.asarray(results.weights, dtype=float)
    scaled = weights / weights.max() if weights.size and weights.max() > 0 else weights
    return text_tables.Columns(scaled, -2.0 * results.dead.logl, results.dead.theta)


def dead_birth_table(results) -> text_tables.Columns:
    """PolyChord `<name>_dead-birth.txt`: params, logL, logL_birth (-inf for the initial prior draws)."""
    dead = results.dead
    return text_tables.Columns(dead.theta, dead.logl, dead.logl_birth)


def equal_weights_table(results) -> text_tables.Columns:
    """PolyChord `<name>_equal_weights.txt`: 1, -2 logL, params for each equal-weight sample."""
    samples = np.asarray(results.samples, dtype=float).reshape(-1, len(results.params))
    known = results.sample_logl
    logl = (np.asarray(known, dtype=float) if known is not None and len(known) == len(samples)
            else _logl_of_samples(samples, results.dead.theta, results.dead.logl))
    return text_tables.Columns(np.ones(len(samples)), -2.0 * logl, samples)


def _write_tables(jobs) -> None:
    """Each ``(path, table)`` written atomically, the large ones in parallel (``sampler.text_tables``)."""
    def task(path, table):
        def write():
            try:
                _atomic_write(path, lambda handle: text_tables.write_rows(handle, table))
            except RunFolderError as error:
                return str(error)
            return None
        return write

    messages = text_tables.run_all([task(path, table) for path, table in jobs], sum(t.size for _, t in jobs))
    for (path, _), message in zip(jobs, messages):
        if message:  # a forked writer's error arrives as text: its errno is lost, its path is known
            raise RunFolderError(message, path=path)


def write_paramnames(results, path) -> None:
    """getdist `.paramnames`: one `name  latex` line per parameter, latex without dollar signs."""
    lines = []
    for name in results.params:
        label = (results.latex or {}).get(name) or name
        lines.append(f"{name}  {label.strip().strip('$')}\n")
    _atomic_write_text(path, "".join(lines))


def write_ranges(results, path) -> None:
    """getdist `.ranges` from the prior spec in the settings (`{name: [family, *arguments]}`), when present."""
    spec = (results.settings or {}).get("prior") or {}
    lines = []
    for name in results.params:
        low, high = bounds_of(spec.get(name))  # the registry's support of the family; N where unbounded
        lines.append(f"{name}  {_bound(low)}  {_bound(high)}\n")
    _atomic_write_text(path, "".join(lines))


def _bound(value) -> str:
    return "N" if value is None else repr(float(value))


def _maybe_float(value):
    return None if value is None else float(value)


def write_results_json(results, path) -> None:
    """`results.json`: every scalar of Results, the settings, and the versions that produced them."""
    document = {
        "name": results.name,
        "logz": float(results.logz),
        "logz_err": float(results.logz_err),
        "converged": results.converged,  # false: a limit, a callback or a plateau ended it before dlogz
        "dlogz_left": results.dlogz_left,
        "information": float(results.information),
        "niter": int(results.niter),
        "nlike": int(results.nlike),
        "ngrad": int(results.ngrad),
        "wall_time": float(results.wall_time),
        "timing": {key: value if isinstance(value, str) else float(value)
                   for key, value in (getattr(results, "timing", None) or {}).items()},
        "logz_err_shrinkage": _maybe_float(results.logz_err_shrinkage),
        "logz_err_bootstrap": _maybe_float(results.logz_err_bootstrap),
        "logz_err_prior_share": _maybe_float(results.logz_err_prior_share),
        "ess": _maybe_float(results.ess),
        "ess_params": None if results.ess_params is None else {k: float(v) for k, v in results.ess_params.items()},
        "nnan": int(results.nnan),
        "nan_fraction": float(results.nnan / max(results.nlike, 1)),
        "clusters": list(results.clusters or []),
        "ndead": int(len(results.dead.logl)),
        "nsamples": int(len(results.samples)),
        "params": list(results.params),
        "latex": dict(results.latex or {}),
        "truths": None if results.truths is None else {k: float(v) for k, v in results.truths.items()},
        "reference_logz": None if results.reference_logz is None else float(results.reference_logz),
        "settings": results.settings,
        "mpi": getattr(results, "mpi", None),
        "insertion": getattr(results, "insertion", None),
        "versions": package_versions(),
    }
    _atomic_write_text(path, json.dumps(_jsonable(document), indent=2, allow_nan=True) + "\n")


def write_diagnostics(results, path) -> None:
    """`diagnostics.npz`: per-iteration diagnostics and the arrays the text files cannot hold exactly."""
    arrays = {
        "dead_u": np.asarray(results.dead.u, dtype=float),
        "weights": np.asarray(results.weights, dtype=float),
        "samples": np.asarray(results.samples, dtype=float),
    }
    if results.sample_logl is not None:
        arrays["sample_logl"] = np.asarray(results.sample_logl, dtype=float)
    for key, value in (results.diagnostics or {}).items():
        arrays[_DIAG_PREFIX + key] = np.asarray(value)
    _atomic_write(path, lambda handle: np.savez(handle, **arrays))


def package_versions() -> dict:
    """Versions of nestgrad and of the packages whose numerics it depends on."""
    versions = {"python": platform.python_version()}
    for package in ("nestgrad", "numpy", "scipy", "numba", "numba-cuda", "cupy-cuda12x"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


# ------------------------------------------------------------------------------------- the folder itself


def unfinished_checkpoint(outdir) -> bool:
    """Whether ``outdir`` holds a checkpoint that its written results do not finish (a run interrupted, or stopped
    before writing its outputs): what a fresh run into the same folder would overwrite. Judged by the iterations
    the two record (a folder copied without its files' times reads the same), and by the files' times when
    either cannot be read."""
    from nestgrad.sampler.checkpoint import CheckpointError, read_meta

    checkpoint, results_json = Path(outdir) / "checkpoint.npz", Path(outdir) / RESULTS_JSON
    if not checkpoint.is_file():
        return False
    if not results_json.is_file():
        return True
    try:
        with open(results_json, encoding="utf-8") as handle:
            written = json.load(handle)["niter"]
        return int(read_meta(checkpoint)["record"]["niter"]) != int(written)
    except (OSError, ValueError, KeyError, TypeError, CheckpointError):
        try:
            return results_json.stat().st_mtime < checkpoint.stat().st_mtime
        except OSError:
            return False


def make_folder(outdir) -> Path:
    """Create the output folder ``outdir`` (and its parents); a :class:`RunFolderError` saying why it cannot be
    (a file of that name, a file on the way, no permission, a full disk)."""
    outdir = Path(outdir)
    blocking = next((p for p in (outdir, *outdir.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        where = "is" if blocking == outdir else f"lies under {blocking}, which is"
        raise RunFolderError(f"{outdir}: cannot be the output folder: it {where} a file, not a folder")
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunFolderError(f"{outdir}: cannot create the output folder ({error.strerror or error})") from None
    return outdir


def refuse_unfinished(outdir, resume="--resume", out="--out") -> None:
    """Raise :class:`RunFolderError` when a fresh run into ``outdir`` would overwrite an unfinished run's
    checkpoint; ``resume``, ``out``: how the caller's user resumes or picks another folder."""
    if not unfinished_checkpoint(outdir):
        return
    from nestgrad.sampler.checkpoint import CheckpointError
    from nestgrad.sampler.run_checkpoint import diagnose

    try:  # a damaged one was called "an unfinished run", and resuming it as advised then failed
        diagnose(Path(outdir) / "checkpoint.npz")
    except CheckpointError as error:
        raise RunFolderError(f"{error}; a fresh run here would overwrite it, so none is started (or choose another "
                             f"{out})") from None
    raise RunFolderError(f"{Path(outdir) / 'checkpoint.npz'} holds an unfinished run (interrupted, or stopped "
                         f"before writing its outputs): continue it with {resume}, or remove the file (or choose "
                         f"another {out}) to start again; starting afresh here would overwrite it")


def damaged_file(path, problem, state="the file is damaged") -> RunFolderError:
    """The error for a run-folder file that is damaged (or missing): what is wrong, and what to do."""
    checkpoint = Path(path).parent / "checkpoint.npz"
    fix = (f"restore it, or write the run folder again from its checkpoint with `nestgrad run CONFIG --out "
           f"{Path(path).parent} --resume`" if checkpoint.is_file() else "restore it from a copy, or run again")
    return RunFolderError(f"{path}: {problem}; {state}: {fix}", path)


# ----------------------------------------------------------------------------------------------- helpers

def _with_suffix(root: Path, suffix: str) -> Path:
    return root.parent / (root.name + suffix)


def _logl_of_samples(samples: np.ndarray, theta: np.ndarray, logl: np.ndarray) -> np.ndarray:
    """logL of each equal-weight sample: samples are resampled dead points, so each row is looked up exactly among
    the dead points, by a hash of its bits (sorted once, searched for every sample; the row itself is then
    compared). A row found nowhere (no dead point has its bits) gets NaN. A Python dictionary of rows took 1.7 s
    at 1.6M dead points and 0.5M samples."""
    theta = np.ascontiguousarray(theta, dtype=float)
    samples = np.ascontiguousarray(samples, dtype=float)
    out = np.full(len(samples), np.nan)
    if theta.size == 0 or samples.size == 0:
        return out
    dead_hash, sample_hash = _row_hashes(theta), _row_hashes(samples)
    order = np.argsort(dead_hash, kind="stable")
    sorted_hash = dead_hash[order]
    # Searched in increasing order, each search starts where the last one ended (numpy's binary search keeps its
    # lower bound for increasing keys): 0.59 -> 0.09 s for 0.5M samples among 1.64M dead points.
    by_hash = np.argsort(sample_hash)
    first, last = np.empty(len(samples), np.int64), np.empty(len(samples), np.int64)
    first[by_hash] = np.searchsorted(sorted_hash, sample_hash[by_hash], side="left")
    last[by_hash] = np.searchsorted(sorted_hash, sample_hash[by_hash], side="right")
    pending = np.flatnonzero(first < last)
    while pending.size:  # each sample's candidates with its hash, first to last (one, but for a collision)
        rows = order[first[pending]]
        same = np.all(theta[rows] == samples[pending], axis=1)
        out[pending[same]] = logl[rows[same]]
        first[pending] += 1
        pending = pending[~same & (first[pending] < last[pending])]
    return out


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _row_hashes(rows: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's bits: the words mixed column by column, each multiplied by its own odd constant
    (wrapping); -0.0 and 0.0 differ, as their bits do."""
    words = rows.view(np.uint64)
    odd = np.arange(1, 2 * words.shape[1], 2, dtype=np.uint64) * _GOLDEN
    hashes = np.zeros(words.shape[0], dtype=np.uint64)
    for column in range(words.shape[1]):
        hashes = (hashes ^ (hashes >> np.uint64(29))) + words[:, column] * odd[column]
    return hashes


def _atomic_write(path, write) -> None:
    """`write(binary file handle)` into `<path>.tmp`, then rename it to `path`; on failure remove the temporary
    file and raise one RunFolderError naming `path`."""
    tmp = Path(str(path) + ".tmp")
    try:
        with open(tmp, "wb") as handle:
            write(handle)
        os.replace(tmp, path)
    except BaseException as error:
        if tmp.exists():
            tmp.unlink()
        if isinstance(error, OSError):
            raise RunFolderError(f"{path}: cannot write ({error.strerror or error})", path, error.errno) from None
        raise


def _atomic_write_text(path, text: str) -> None:
    _atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def _jsonable(value):
    """numpy scalars/arrays and tuples to plain JSON types; non-finite floats stay (JSON NaN/Infinity)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return value
