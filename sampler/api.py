"""The one-call API, ``nestgrad.run`` and ``nestgrad.run_config`` (docs/api.md)."""
import os
from pathlib import Path

import numpy as np

from nestgrad.likelihoods import Likelihood
from nestgrad.sampler.nested_sampler import NestedSampler
from nestgrad.sampler.priors import Distribution, Prior, PriorError
from nestgrad.sampler.results import check_path
from nestgrad.likelihoods.errors import did_you_mean
from nestgrad.likelihoods.ranges import describe
from nestgrad.sampler.config_schema import PLOTS
from nestgrad.sampler.parameter_names import typeset_problem
from nestgrad.sampler.run_folder import make_folder, refuse_unfinished

__all__ = ["run", "run_config"]

_SAMPLER_KEYS = ("delete_fraction", "hmc")
_RUN_KEYS = ("max_iter", "max_nlike", "max_time", "checkpoint_every", "callback", "resume")
_NAMED = ("nlive", "dlogz", "seed", "backend", "dtype", "out", "progress", "plots", "plot_formats", "sum_dtype")


def run(kernel, params, data=None, *, nlive=500, dlogz=0.1, seed=None, backend="auto", dtype=None, out=None,
        progress=True, plots=None, plot_formats=("png",), sum_dtype=None, **sampler):
    """Sample ``kernel(theta, *data)`` under the priors ``params`` and return :class:`~nestgrad.Results`.

    kernel    the per-sample log-likelihood: a function, ``"file.py:name"``, or a ready ``Likelihood``
    params    ordered dict name -> prior spec as in the YAML (``{"prior": "uniform", "low": 0, "high": 1}``,
              optionally with ``latex``) or a distribution (``nestgrad.priors.Uniform(0, 1)``); or a ``Prior``
    data      dict kernel-argument name -> array, number, list or file name (.npy, .npz, .csv, .txt)
    nlive, dlogz, seed, backend ("auto" | "cpu" | "gpu" | "python"), dtype ("float64" | "float32")
    sum_dtype "float64" with dtype "float32": the kernel's loop sums (over its data) kept in float64
    out       a folder: the run folder (chains, results.json, checkpoint.npz) is written there, and a run
              interrupted there continues with ``resume=True``
    plots     plot kinds to write into ``out/plots`` (e.g. ``["corner", "run"]``); default none
    plot_formats  files written per plot: ``("png",)`` (default) or ``("png", "pdf")``
    sampler   further settings: ``delete_fraction``, ``hmc`` (dict of HMC settings), ``max_iter``,
              ``max_nlike``, ``max_time``, ``checkpoint_every``, ``callback``, ``resume``

    Under ``mpiexec -n R`` (docs/mpi.md) every rank calls this; rank 0 samples and writes ``out``, the others
    run chains for it, and all of them return the same Results.
    """
    unknown = sorted(set(sampler) - set(_SAMPLER_KEYS) - set(_RUN_KEYS))
    if unknown:
        named = _NAMED + _SAMPLER_KEYS + _RUN_KEYS
        hints = "".join(did_you_mean(word, named) for word in unknown)
        raise TypeError(f"nestgrad.run: unknown setting(s) {', '.join(unknown)}{hints}; the settings: "
                        f"{', '.join(named)}")
    _folder_argument("run", "out", out)
    _flag_argument("run", "progress", progress)
    _flag_argument("run", "resume", sampler.get("resume", False))
    prior = _prior(params)
    plots = _plot_kinds(plots, plot_formats, out)
    for name, label in (prior.latex.items() if plots else ()):  # before the run, not in its plots
        problem = typeset_problem(label)
        if problem:
            raise PriorError(f"parameter {name!r}: latex: {problem}", "latex", problem)
    if out is None and sampler.get("resume"):
        raise TypeError("nestgrad.run: resume=True needs out= (the folder whose checkpoint.npz to continue)")
    if out is not None:
        if not sampler.get("resume"):
            refuse_unfinished(out, resume="resume=True", out="out")
        out = make_folder(out)  # before anything is compiled: a file in its place is refused at once
    if isinstance(kernel, Likelihood):
        likelihood = kernel
        if data is not None:
            raise TypeError("nestgrad.run: data belongs to the Likelihood already; pass data=None")
    else:
        likelihood = Likelihood(kernel, prior.names, data, backend=backend, dtype=dtype, draws=prior.draw,
                                sum_dtype=sum_dtype)
    init = {key: sampler[key] for key in _SAMPLER_KEYS if key in sampler}
    ns = NestedSampler(likelihood, prior, nlive=nlive, seed=seed, backend=backend, **init)
    options = {key: sampler[key] for key in _RUN_KEYS if key in sampler}
    checkpoint = None
    if out is not None:
        checkpoint = str(out / "checkpoint.npz")
    results = ns.run(dlogz=dlogz, checkpoint=checkpoint, progress=progress, **options)
    from nestgrad.sampler import mpi_pool

    pool = mpi_pool.world()
    if pool is not None and pool.rank != 0:  # under mpiexec: every rank gets rank 0's Results, rank 0 writes
        return results
    if prior.latex:
        results.latex = {**(results.latex or {}), **prior.latex}
    if out is not None:
        results.save(out)
        if plots:
            from nestgrad.sampler.plots import make_plots

            make_plots(results, out, kinds=list(plots), formats=tuple(plot_formats))
    return results


def _plot_kinds(plots, formats, out):
    """``plots`` checked before anything runs (a mistake found after the run lost its plots): a list of the kinds
    in ``config_schema.PLOTS``, with ``out`` to write them into; ``formats`` from png and pdf."""
    if not plots:
        return []
    if isinstance(plots, str) or not isinstance(plots, (list, tuple)):
        raise TypeError(f"nestgrad.run: plots: expected a list such as ['corner', 'run'], got {plots!r}")
    for kind in plots:
        if kind not in PLOTS:
            raise ValueError(f"nestgrad.run: plots: unknown kind {kind!r}{did_you_mean(str(kind), PLOTS)}; the "
                             f"kinds: {', '.join(PLOTS)}")
    if isinstance(formats, str) or not all(f in ("png", "pdf") for f in formats):
        raise ValueError(f"nestgrad.run: plot_formats: expected a tuple of 'png' and/or 'pdf', got {formats!r}")
    if out is None:
        raise TypeError("nestgrad.run: plots need out= (the run folder they are written into)")
    return list(plots)


def _prior(params) -> Prior:
    if isinstance(params, Prior):
        return params
    if not isinstance(params, dict) or not params:
        raise TypeError("nestgrad.run: params must be a non-empty dict name -> prior spec "
                        "(e.g. {'mu': {'prior': 'uniform', 'low': 0, 'high': 1}}) or a nestgrad.priors.Prior")
    for name, spec in params.items():
        if not isinstance(spec, (dict, Distribution, tuple, list)):
            raise PriorError(f"parameter {name!r}: expected a prior spec dict like {{'prior': 'uniform', "
                             f"'low': 0, 'high': 1}} or a distribution, got {spec!r}")
    return Prior.from_spec(params)


def run_config(path=None, *, out=None, resume=False, progress=False, plots=True):
    """Run a YAML config as ``nestgrad run CONFIG`` does (``None``: the embedded default) -> ``Results``."""
    from nestgrad.sampler.config import run_config as _run_config

    if path is not None and not isinstance(path, (str, os.PathLike)):
        hint = "; settings in a dict run with nestgrad.run(kernel, params, ...)" if isinstance(path, dict) else ""
        raise TypeError(f"nestgrad.run_config: path: expected the YAML config file's path (text or a "
                        f"pathlib.Path) or None for the default config, got {describe(path)}{hint}")
    _folder_argument("run_config", "out", out)
    for name, value in (("resume", resume), ("progress", progress), ("plots", plots)):
        _flag_argument("run_config", name, value)
    return _run_config(path, outdir=out, resume=resume, progress=progress, plots=plots)


# The argument checks below run before anything else: a wrong type was found deep inside (pathlib's "expected
# str, bytes or os.PathLike object, not int"), or not at all (progress="no", resume="no" read as true).

def _folder_argument(function, name, value):
    if value is not None:
        check_path(f"nestgrad.{function}", name, value, "a folder path")


def _flag_argument(function, name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"nestgrad.{function}: {name}: expected True or False, got {describe(value)}")

