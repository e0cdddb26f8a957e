"""Reading a run folder back (``Results.load``, ``nestgrad plot``): each file of ``sampler.run_folder``'s layout
by its own small reader, and the damage a reader finds (a truncated table, a file from another run, an archive
that is not one) as one :class:`~sampler.run_folder.RunFolderError` naming the file and what to do."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from nestgrad.sampler.run_folder import (DIAGNOSTICS_NPZ, RESULTS_JSON, _DIAG_PREFIX, RunFolderError, _with_suffix,
                                         damaged_file)


def read_run_folder(outdir):
    """Read a run folder written by `write_run_folder` back into a `sampler.results.Results`."""
    from nestgrad.sampler.results import DeadPoints, Results  # the sampler owns the class; imported late, no cycle

    outdir = Path(outdir)
    info = read_results_json(outdir / RESULTS_JSON)
    name, params = info["name"], info["params"]
    root = outdir / name
    dead_birth = _with_suffix(root, "_dead-birth.txt")
    theta, logl, logl_birth = read_dead_birth(dead_birth, len(params))
    ndead = info.get("ndead")
    if isinstance(ndead, int) and not isinstance(ndead, bool) and ndead != len(logl):
        raise damaged_file(dead_birth, f"{len(logl)} rows, but results.json says ndead = {ndead} (truncated, or "
                                       f"from another run)")
    arrays, diagnostics = read_diagnostics(outdir / DIAGNOSTICS_NPZ)
    dead_u = arrays.get("dead_u", np.full_like(theta, np.nan))
    if dead_u.shape != theta.shape:
        raise RunFolderError(f"{outdir / DIAGNOSTICS_NPZ}: dead_u has shape {dead_u.shape} but "
                             f"{root}_dead-birth.txt has {theta.shape}; the files come from different runs")
    weights = arrays.get("weights")
    if weights is None:  # text-only folder: recover the normalised weights from the weighted chain
        weights = read_weighted_chain(_with_suffix(root, ".txt"), len(params))[0]
        weights = weights / weights.sum()
    samples, sample_logl = arrays.get("samples"), arrays.get("sample_logl")
    if samples is None:
        sample_logl, samples = read_equal_weights(_with_suffix(root, "_equal_weights.txt"), len(params))
    return Results(
        name=name, params=list(params), latex=dict(info.get("latex") or {}),
        logz=info["logz"], logz_err=info["logz_err"], information=info["information"],
        niter=info["niter"], nlike=info["nlike"], ngrad=info["ngrad"], wall_time=info["wall_time"],
        dead=DeadPoints(u=dead_u, theta=theta, logl=logl, logl_birth=logl_birth),
        weights=weights, samples=samples, diagnostics=diagnostics, settings=info.get("settings") or {},
        truths=info.get("truths"), reference_logz=info.get("reference_logz"),
        logz_err_shrinkage=info.get("logz_err_shrinkage"), logz_err_bootstrap=info.get("logz_err_bootstrap"),
        logz_err_prior_share=info.get("logz_err_prior_share"),
        ess=info.get("ess"), ess_params=info.get("ess_params"), nnan=int(info.get("nnan", 0)), clusters=list(info.get("clusters") or []),
        timing=dict(info.get("timing") or {}), mpi=info.get("mpi"), insertion=info.get("insertion"),
        sample_logl=sample_logl, folder=outdir,
    )


_REQUIRED = {"name": str, "params": list, "logz": (int, float), "logz_err": (int, float),
             "information": (int, float), "niter": int, "nlike": int, "ngrad": int, "wall_time": (int, float)}


def read_results_json(path) -> dict:
    """The fields of a run folder's results.json; a missing, damaged or incomplete file is a
    :class:`RunFolderError` naming the file and the field."""
    if not Path(path).exists():
        if (Path(path).parent / "checkpoint.npz").is_file():  # a run interrupted before it wrote its results
            raise RunFolderError(f"{path}: not found: the run in this folder has not finished, or its results were "
                                 f"removed (its checkpoint.npz is there); `nestgrad run CONFIG --out "
                                 f"{Path(path).parent} --resume` finishes it or writes them again")
        raise RunFolderError(f"{path}: not found; is this a nestgrad run folder?")
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except OSError as error:  # a folder of that name, no permission: a read, not a write, failed
        raise RunFolderError(f"{path}: cannot read ({error.strerror or error})") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise RunFolderError(f"{path}: not valid JSON ({error}); the file is damaged") from None
    if not isinstance(info, dict):
        raise RunFolderError(f"{path}: expected a JSON object of results, found a {type(info).__name__}")
    for field, kinds in _REQUIRED.items():
        if field not in info:
            raise RunFolderError(f"{path}: field {field!r} is missing; the file is damaged or not a nestgrad "
                                 f"results file")
        if not isinstance(info[field], kinds) or isinstance(info[field], bool):
            raise RunFolderError(f"{path}: field {field!r} holds {info[field]!r}, not a "
                                 f"{'list' if kinds is list else 'string' if kinds is str else 'number'}")
    if not all(isinstance(p, str) for p in info["params"]):
        raise RunFolderError(f"{path}: field 'params' must list parameter names, found {info['params']!r}")
    return info


def read_dead_birth(path, ndim: int):
    table = _loadtxt(path, ndim + 2)
    return table[:, :ndim], table[:, ndim], table[:, ndim + 1]


def read_weighted_chain(path, ndim: int):
    table = _loadtxt(path, ndim + 2)
    return table[:, 0], table[:, 2:], -0.5 * table[:, 1]


def read_equal_weights(path, ndim: int):
    table = _loadtxt(path, ndim + 2)
    return -0.5 * table[:, 1], table[:, 2:]


def read_paramnames(path) -> tuple[list[str], dict[str, str]]:
    names, latex = [], {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        name, _, label = line.strip().partition(" ")
        names.append(name)
        latex[name] = label.strip() or name
    return names, latex


def read_diagnostics(path) -> tuple[dict, dict]:
    """(stored arrays, diagnostics dict); both empty when the file is absent (text-only folder)."""
    if not Path(path).exists():
        return {}, {}
    arrays, diagnostics = {}, {}
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
        if not head.startswith((b"PK\x03\x04", b"PK\x05\x06")):  # else numpy takes the bytes for a pickle
            raise damaged_file(path, "not an .npz (zip) archive" + ("" if head else ": the file is empty"))
        with np.load(path, allow_pickle=False) as npz:
            for key in npz.files:
                try:
                    value = npz[key]
                except Exception as error:  # truncated member, CRC, pickled objects: numpy's and zipfile's errors
                    raise damaged_file(path, f"member {key}: cannot be read ({_why(error)})") from None
                if key.startswith(_DIAG_PREFIX):
                    diagnostics[key[len(_DIAG_PREFIX):]] = value
                else:
                    arrays[key] = value
    except RunFolderError:
        raise
    except OSError as error:
        raise RunFolderError(f"{path}: cannot read ({error.strerror or error})") from None
    except Exception as error:  # zipfile.BadZipFile of a truncated archive, ...
        raise damaged_file(path, f"not a readable .npz archive ({_why(error)})") from None
    return arrays, diagnostics


def _why(error) -> str:
    """An exception's text without numpy's advice to select columns or to unpickle the file."""
    text = str(error).split("; use `usecols`")[0]
    return text if "allow_pickle" not in text else "it holds pickled Python objects, which nestgrad never loads"


def _loadtxt(path, ncols: int) -> np.ndarray:
    if not Path(path).exists():
        raise damaged_file(path, "not found", "the run folder is incomplete")
    try:
        table = np.loadtxt(path, ndmin=2)
    except OSError as error:
        raise RunFolderError(f"{path}: cannot read ({error.strerror or error})") from None
    except ValueError as error:  # a truncated last line, text among the numbers, bytes that are not text
        raise damaged_file(path, f"not a table of {ncols} numbers per line ({_why(error)})") from None
    if table.size == 0:
        return np.zeros((0, ncols))
    if table.shape[1] != ncols:
        raise damaged_file(path, f"{table.shape[1]} columns, expected {ncols}")
    return table
