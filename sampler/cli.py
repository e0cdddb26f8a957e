"""The `nestgrad` command line: run, check, plot, list.

Exit status: 0 success; 2 a mistake in the config or the command line, a damaged checkpoint, or an output or
checkpoint that cannot be written (disk full, file-size limit): one message naming the file and key or field,
no traceback, nothing computed lost (the last checkpoint stays resumable); 3 the gradient cross-check failed
(`run` refuses to sample with a wrong gradient); 4 an MPI rank failed (docs/mpi.md; the checkpoint is kept); 130 interrupted by Ctrl-C (a checkpoint was written: `--resume`
continues); 143 terminated by SIGTERM (likewise).
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import shlex
import signal
import sys
import warnings
from pathlib import Path

from .exit_gc import freeze_at_exit
from .write_errors import WRITE_ERRNOS, remedy

EXIT_CONFIG, EXIT_GRADIENT, EXIT_RANK, EXIT_INTERRUPTED = 2, 3, 4, 130
QUICK_CHECK_POINTS = 4
# Prior draws searched for points with a finite logL to check the gradient at (a likelihood that is -inf on most
# of the prior, e.g. a model defined on a small region, has none among the first few draws).
CHECK_SEARCH_DRAWS = 100_000


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    # The command line's own process (not a test calling main([...])), which ends after this command: objects
    # that live until exit can be moved out of the garbage collector's sight (`_freeze`).
    args.own_process = argv is None
    freeze_at_exit()
    if args.command is None:
        parser.print_help()
        return EXIT_CONFIG
    if hasattr(signal, "SIGXFSZ"):
        try:  # a file-size limit (ulimit -f) then fails the write with EFBIG, reported below, instead of killing us
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass
    with warnings.catch_warnings():
        # Warnings (an unused parameter, NaN likelihood values) are one plain line each, not a source excerpt.
        warnings.showwarning = _show_warning
        status = _dispatch(args)
    return status


def _freeze(args) -> None:
    """In the command's own process, move every object that exists now into the garbage collector's permanent
    generation (``gc.freeze``): the imported modules, numba's compiled kernels and typing caches, the sampler's
    state. They live until the process exits anyway, and each full collection would otherwise walk all of them
    again (measured on the seed config: collections took 0.46 s of a run with its four plots, 0.20 s once
    frozen). Objects made later (figures, sampling buffers) are collected as usual; at exit everything is frozen
    (``sampler.exit_gc``). Not in a test process calling ``main([...])``, whose garbage must stay collectable."""
    if getattr(args, "own_process", False):
        gc.freeze()


def _plot_processes(args, pool):
    """Processes to draw the plots in: in the command's own process, one more per idle core ("auto",
    `sampler.plots_parallel`); one under MPI (forking an MPI rank is unsafe) and in a test calling
    ``main([...])``."""
    return "auto" if getattr(args, "own_process", False) and pool is None else 1


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"nestgrad: warning: {message}", file=sys.stderr)


def _dispatch(args):
    from nestgrad.likelihoods.errors import LikelihoodError
    from nestgrad.sampler.checkpoint import CheckpointError
    from nestgrad.sampler.config_yaml import ConfigError
    from nestgrad.sampler.nested_sampler import SamplerError
    from nestgrad.sampler.run_folder import RunFolderError

    try:
        return args.handler(args)
    except (ConfigError, RunFolderError, CheckpointError, SamplerError, LikelihoodError) as error:
        # a checkpoint from other settings, a likelihood that is -inf everywhere on the prior, ...: the
        # message says what and where; a traceback would only bury it
        print(f"nestgrad: error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:  # before or after sampling (compiling, plotting): nothing to resume yet
        print("\nnestgrad: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `nestgrad list | head`
        sys.stderr.close()
        return 0
    except OSError as error:  # `nestgrad plot` on a full disk, ...; `run` reports its own with a resume hint
        if error.errno not in WRITE_ERRNOS:
            raise
        print(f"nestgrad: error: {error.filename or 'output'}: cannot write ({error.strerror})", file=sys.stderr)
        return EXIT_CONFIG


def _parser() -> argparse.ArgumentParser:
    from nestgrad.likelihoods.backends import NAMES as BACKENDS
    from nestgrad.sampler.config_schema import PLOT_FORMATS

    parser = argparse.ArgumentParser(prog="nestgrad", description="Nested sampling with constrained-HMC "
                                     "proposals driven by automatically differentiated likelihood kernels.")
    from nestgrad import __version__

    parser.add_argument("--version", action="version", version=f"nestgrad {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="sample a config and write its run folder and plots")
    run.add_argument("config", nargs="?", help="YAML config (default: the embedded seed 4-D Gaussian)")
    run.add_argument("--out", metavar="DIR", help="output folder (default: output.dir of the config)")
    run.add_argument("--backend", choices=BACKENDS, help="override `backend`")
    run.add_argument("--seed", type=int, help="override `sampler.seed`")
    run.add_argument("--resume", action="store_true", help="continue from <out>/checkpoint.npz")
    run.add_argument("--quiet", action="store_true", help="no progress bar and no summary")
    run.add_argument("--no-check", action="store_true", help="skip the gradient cross-check before sampling")
    run.set_defaults(handler=cmd_run)

    check = commands.add_parser("check", help="cross-check the kernel's gradient (AD vs analytic vs finite "
                                "differences)")
    check.add_argument("config")
    check.add_argument("-n", type=int, default=16, help="number of points drawn from the prior (default 16)")
    check.add_argument("--backend", choices=BACKENDS, help="override `backend`")
    check.add_argument("--seed", type=int, default=0, help="seed of the prior draws (default 0)")
    check.set_defaults(handler=cmd_check)

    plot = commands.add_parser("plot", help="(re)make the plots of a run folder")
    plot.add_argument("outdir")
    plot.add_argument("--kinds", nargs="+", metavar="KIND", help="subset of: corner run trace hmc gradient")
    plot.add_argument("--formats", nargs="+", choices=PLOT_FORMATS, default=["png"], metavar="FORMAT",
                      help="files written per plot: png, pdf (default png)")
    plot.set_defaults(handler=cmd_plot)

    listing = commands.add_parser("list", help="list the built-in likelihoods with parameters and priors")
    listing.set_defaults(handler=cmd_list)
    return parser


# --------------------------------------------------------------------------------------------------- run

def cmd_run(args) -> int:
    from nestgrad.sampler.timing import StageClock

    clock = StageClock()  # "startup": process start to here
    from nestgrad.sampler import config as cfg
    from nestgrad.likelihoods.errors import LikelihoodError
    from nestgrad.sampler.checkpoint import CheckpointWriteError
    from nestgrad.sampler.progress import LARGE_RUN
    from nestgrad.sampler.run_folder import (RESULTS_JSON, RunFolderError, make_folder, refuse_unfinished,
                                             write_results_json, write_run_folder)

    config = _with_overrides(cfg.load(args.config), args)
    from nestgrad.sampler import mpi_pool

    pool = mpi_pool.world()  # None unless launched over several MPI ranks (docs/mpi.md)
    if pool is not None and pool.rank != 0:
        return _mpi_worker(config)
    outdir = config.output.dir
    checkpoint = outdir / "checkpoint.npz"
    if args.resume and not checkpoint.is_file():
        raise cfg.ConfigError(f"--resume: no checkpoint at {checkpoint}; run without --resume to start")
    if args.resume:
        stored = finished_run(outdir, config, _fingerprint(config))
        if stored is not None:  # nothing left to sample: its stored results, without compiling anything
            status = _missing_plots(stored, config, args)  # e.g. a file was in the way of plots/ last time
            if status:
                return status
            if not args.quiet:
                print(stored.summary())
                print(f"  output: {outdir} (stored results of this finished run; nothing was recomputed)")
            return 0
    else:
        refuse_unfinished(outdir)
    problem = cfg.build(config)
    sampler = cfg.make_sampler(config, problem)
    if args.resume:  # other settings or another likelihood: said before anything compiles
        sampler.check_resumable(checkpoint)
    _freeze(args)  # the modules imported so far, the likelihood and its compiled functions
    clock.lap("setup")
    # a kernel missing from the cache compiles in a child process while the gradient check runs
    sampler.prepare(notify=None if args.quiet else _compiling)
    clock.skip()  # the sampler counts this as compile time
    report = None
    if not args.no_check:
        try:
            report = gradient_check(problem, QUICK_CHECK_POINTS, seed=0)
        except LikelihoodError:  # a kernel that raises (likelihoods.KernelRaisedError): said by _dispatch
            sampler.cancel()
            raise
        if report is None:  # sampling says what to do when too few draws are finite
            print(f"nestgrad: note: the log-likelihood is not finite at any of {CHECK_SEARCH_DRAWS} prior draws, "
                  f"so the gradient could not be checked", file=sys.stderr)
        elif not report.ok:
            print(str(report), file=sys.stderr)
            if report.ad_ok:  # only the cross-check function is off: say so, not that the kernel is
                print(f"nestgrad: error: the hand-written gradient {_kernel_name(config, 'gradient')} (likelihood."
                      f"gradient) disagrees with finite differences or with nestgrad's gradient of "
                      f"{_kernel_name(config)}, which the sampler uses and which agrees with finite differences "
                      f"(table above); fix or remove "
                      f"likelihood.gradient, or pass --no-check to sample anyway", file=sys.stderr)
            else:
                print(f"nestgrad: error: the gradient of {_kernel_name(config)} disagrees with finite differences "
                      f"(table above); fix the kernel, or pass --no-check to sample anyway", file=sys.stderr)
            sampler.cancel()
            return EXIT_GRADIENT
    _, run_args = cfg.sampler_arguments(config)
    resume_hint = _resume_command(args, config)
    if pool is not None:
        resume_hint = f"mpiexec -n R {resume_hint}   (any number of ranks R, or none)"
    make_folder(outdir)
    clock.lap("setup")
    sampler.compile(notify=None if args.quiet else _compiling)
    _freeze(args)  # the chain kernel, loaded or compiled
    try:
        results = sampler.run(checkpoint=str(checkpoint), resume=args.resume,
                              progress=not args.quiet and sys.stderr.isatty(), **run_args)
    except CheckpointWriteError as error:
        then = f"resume with: {resume_hint}" if checkpoint.is_file() else "run again"
        print(f"nestgrad: error: {error}\n  {remedy(getattr(error, 'errno', None), getattr(error, 'path', None))}, "
              f"then {then}", file=sys.stderr)
        return EXIT_CONFIG
    except mpi_pool.RankError as error:
        then = f"resume with: {resume_hint}" if checkpoint.is_file() else "run again"
        print(f"nestgrad: error: {error}\n  the checkpoint holds the last whole iteration; {then}", file=sys.stderr)
        return EXIT_RANK
    except KeyboardInterrupt:
        print(f"\nnestgrad: interrupted; checkpoint written to {checkpoint}\n  resume with: {resume_hint}",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except SystemExit as stop:
        print(f"\nnestgrad: terminated; checkpoint written to {checkpoint}\n  resume with: {resume_hint}",
              file=sys.stderr)
        return int(stop.code) if isinstance(stop.code, int) else 1
    clock.skip()  # compile, sampling and evidence are timed by the sampler (results.timing)
    cfg.finish_results(results, config, problem)
    results.settings["config_digest"] = config_digest(config)
    if not args.quiet and sys.stderr.isatty() and results.dead.logl.size >= LARGE_RUN:
        print(f"nestgrad: writing the run folder {outdir} ({results.dead.logl.size} points) ...", file=sys.stderr)
    try:
        write_run_folder(results, outdir)
        if report is not None:
            from nestgrad.sampler.plots_gradient import write_gradient_check

            write_gradient_check(report, problem.params, outdir)
        clock.lap("output")
        if config.output.plots:
            _freeze(args)  # the run's results: the plots below allocate (and collect) many small objects
            try:
                from nestgrad.sampler.plots import make_plots
            except ValueError as error:  # plots.PlotBackendError: the outputs above are written
                print(f"nestgrad: error: {error}\n  the run folder {outdir} is written; draw its plots with: "
                      f"nestgrad plot {outdir}", file=sys.stderr)
                return EXIT_CONFIG

            make_plots(results, outdir, kinds=config.output.plots, processes=_plot_processes(args, pool),
                       formats=config.output.plot_formats, on_skip=None if args.quiet else _skipped_plot)
            clock.lap("plots")
        results.timing = clock.merged(results.timing)
        write_results_json(results, outdir / RESULTS_JSON)  # again, now with the output and plot times
    except (RunFolderError, OSError) as error:
        if isinstance(error, OSError) and error.errno not in WRITE_ERRNOS:
            raise
        what = error if isinstance(error, RunFolderError) else \
            f"{error.filename or outdir}: cannot write the outputs ({error.strerror or error})"
        fix = remedy(error.errno, error.path if isinstance(error, RunFolderError) else error.filename)
        print(f"nestgrad: error: {what}\n  the finished run is saved in {checkpoint}: {fix}, then write "
              f"the outputs with: {resume_hint}", file=sys.stderr)
        return EXIT_CONFIG
    if not args.quiet:
        print(results.summary())
        print(f"  output: {outdir}")
    return 0


def _mpi_worker(config) -> int:
    """Ranks 1..R-1 of `mpiexec -n R nestgrad run`: the same likelihood and sampler as rank 0, running the
    chains rank 0 hands out; rank 0 alone checks the gradient, checkpoints, writes the output and prints."""
    from nestgrad.sampler import config as cfg

    problem = cfg.build(config)
    sampler = cfg.make_sampler(config, problem)
    sampler.run(dlogz=config.sampler.dlogz, progress=False)
    return 0


def _compiling(text) -> None:
    """"nestgrad: compiling ..." on stderr, terminal or not (the wait that follows is then explained)."""
    print(f"nestgrad: {text} ...", file=sys.stderr, flush=True)


def config_digest(config) -> str:
    """A digest of everything in the config that sampling depends on (the output section left out)."""
    import dataclasses
    import hashlib

    return hashlib.sha256(repr(dataclasses.replace(config, output=None)).encode()).hexdigest()[:20]


def _fingerprint(config):
    """The likelihood's fingerprint (kernel sources and data), built on the plain-Python backend: no device is
    chosen and nothing compiles, so a finished GPU run's results can be shown where no GPU is."""
    from nestgrad.sampler import config as cfg

    return getattr(cfg.build(dataclasses.replace(config, backend="python")).likelihood, "fingerprint", None)


def finished_run(outdir, config, fingerprint=None):
    """The stored :class:`Results` of ``outdir`` when it holds a finished run of this same config and likelihood
    (its results.json and checkpoint agree, the run stopped because dlogz was reached, and it recorded this
    ``fingerprint`` of the kernel and data), else None. Resuming such a run would load the checkpoint and stop at
    once with these results; this gives them without compiling."""
    from nestgrad.sampler.checkpoint import CheckpointError, read_checkpoint
    from nestgrad.sampler.run_folder import RESULTS_JSON, RunFolderError
    from nestgrad.sampler.run_folder_read import read_run_folder

    outdir = Path(outdir)
    checkpoint, results_json = outdir / "checkpoint.npz", outdir / RESULTS_JSON
    if not (checkpoint.is_file() and results_json.is_file()):
        return None
    try:
        if results_json.stat().st_mtime < checkpoint.stat().st_mtime:
            return None  # the checkpoint moved on after the outputs were written
        stored = read_run_folder(outdir)
        _, meta = read_checkpoint(checkpoint)
    except (OSError, ValueError, KeyError, RunFolderError, CheckpointError):
        return None  # the ordinary resume reports what is wrong
    settings = stored.settings or {}
    remain = (stored.diagnostics or {}).get("logz_remain")
    if (settings.get("config_digest") != config_digest(config) or remain is None or len(remain) == 0
            or settings.get("likelihood") != fingerprint
            or int(meta.get("record", {}).get("niter", -1)) != stored.niter
            or not float(remain[-1]) < float(settings.get("dlogz", 0.0))):
        return None
    return stored


def _with_overrides(config, args):
    """Apply --out/--backend/--seed on top of the config (the config file itself is not changed)."""
    if getattr(args, "out", None) is not None:
        if not args.out.strip():  # an empty --out '' was ignored: the run went to output.dir
            from nestgrad.sampler.config_yaml import ConfigError
            raise ConfigError("--out: an empty path; name the output folder, or leave --out out to use output.dir")
        config = config.overridden(("output", "dir"), f"--out {args.out}",
                                   output=dataclasses.replace(config.output,
                                                              dir=Path(args.out).expanduser().resolve()))
    if getattr(args, "backend", None):
        config = config.overridden(("backend",), f"--backend {args.backend}", backend=args.backend)
    if getattr(args, "seed", None) is not None and args.command == "run":
        _check_option("--seed", args.seed)
        config = config.overridden(("sampler", "seed"), f"--seed {args.seed}",
                                   sampler=dataclasses.replace(config.sampler, seed=args.seed))
    return config


def _check_option(name, value) -> None:
    """A numeric command-line option against its range in `config_schema.NUMERIC`."""
    from nestgrad.sampler.config_schema import NUMERIC, range_problem
    from nestgrad.sampler.config_yaml import ConfigError

    problem = range_problem(value, NUMERIC[name])
    if problem:
        raise ConfigError(f"{name}: {problem}")


def _resume_command(args, config) -> str:
    parts = ["nestgrad", "run"] + ([args.config] if args.config else [])
    if args.out:
        parts += ["--out", args.out]
    if args.backend:
        parts += ["--backend", args.backend]
    if args.seed is not None:
        parts += ["--seed", str(args.seed)]
    return shlex.join(parts + ["--resume"])  # quoted: a path with spaces must paste back as one argument


def _kernel_name(config, what="kernel") -> str:
    """The config's kernel (or its hand-written ``gradient``) as the user named it."""
    spec = config.likelihood
    ref = spec.kernel if what == "kernel" else spec.gradient
    return f"built-in '{spec.builtin}'" if spec.builtin or ref is None else f"{ref[0].name}:{ref[1]}"


def gradient_check(problem, n: int, seed: int):
    """`Likelihood.check_gradient` at the first n draws from the config's prior (not the built-in default) where
    the log-likelihood is finite, searched among up to ``CHECK_SEARCH_DRAWS`` draws; None when there is none."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ndim = len(problem.params)
    found, drawn, batch = [], 0, n
    while sum(len(f) for f in found) < n and drawn < CHECK_SEARCH_DRAWS:
        thetas = problem.prior.transform(rng.uniform(size=(batch, ndim)))
        finite = np.isfinite(problem.likelihood.logl(thetas))
        found.append(thetas[finite])
        drawn += batch
        batch = min(max(4 * batch, 1024), CHECK_SEARCH_DRAWS - drawn)
    thetas = np.concatenate(found)[:n]
    if thetas.shape[0] == 0:
        return None
    return problem.likelihood.check_gradient(thetas=thetas, n=thetas.shape[0])


# ------------------------------------------------------------------------------------------ check / plot

def cmd_check(args) -> int:
    from nestgrad.sampler import config as cfg

    _check_option("-n", args.n)
    _check_option("--seed", args.seed)
    config = _with_overrides(cfg.load(args.config), args)
    problem = cfg.build(config)
    report = gradient_check(problem, args.n, seed=args.seed)
    if report is None:
        print(f"nestgrad: error: the log-likelihood of {_kernel_name(config)} is not finite (NaN or +-inf) at any of "
              f"{CHECK_SEARCH_DRAWS} draws from the prior: there is no point to check the gradient at; check the "
              f"kernel and the prior ranges against the likelihood's support", file=sys.stderr)
        return EXIT_GRADIENT
    print(str(report))
    print(f"gradient check of {_kernel_name(config)}: {'OK' if report.ok else 'FAILED'}")
    return 0 if report.ok else EXIT_GRADIENT


def cmd_plot(args) -> int:
    from nestgrad.sampler.config_schema import PLOTS as PLOT_KINDS
    from nestgrad.sampler.run_folder_read import read_run_folder

    kinds = args.kinds or PLOT_KINDS
    unknown = [k for k in kinds if k not in PLOT_KINDS]
    if unknown:
        print(f"nestgrad: error: --kinds: unknown plot '{unknown[0]}'; choose from {' '.join(PLOT_KINDS)}",
              file=sys.stderr)
        return EXIT_CONFIG
    results = read_run_folder(args.outdir)
    _freeze(args)
    return _draw_plots(results, Path(args.outdir), kinds, tuple(dict.fromkeys(args.formats)), args, show=True)


def _missing_plots(results, config, args) -> int:
    """Draw the config's plots that the finished run folder lacks (the run that wrote it could not, or they were
    removed): `--resume` is what a failed plot write advises. The exit status (0, or EXIT_CONFIG said)."""
    outdir, formats = config.output.dir, config.output.plot_formats
    missing = [kind for kind in config.output.plots
               if not all((outdir / "plots" / f"{results.name}_{kind}.{fmt}").is_file() for fmt in formats)]
    return _draw_plots(results, outdir, missing, formats, args) if missing else 0


def _draw_plots(results, outdir, kinds, formats, args, show=False) -> int:
    """`make_plots` for `plot` and a finished run's `--resume`, printing each path when ``show``: 0, or
    EXIT_CONFIG when a plot cannot be written (said with its remedy: a file in the way, a full disk, ...)."""
    from nestgrad.sampler.run_folder import RunFolderError

    try:
        from nestgrad.sampler.plots import make_plots
    except ValueError as error:  # plots.PlotBackendError: an MPLBACKEND matplotlib does not know
        print(f"nestgrad: error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        for path in make_plots(results, outdir, kinds=kinds, processes=_plot_processes(args, None),
                               formats=formats, on_skip=None if getattr(args, "quiet", False) else _skipped_plot):
            if show:
                print(path)
    except (RunFolderError, OSError) as error:
        if isinstance(error, OSError) and error.errno not in WRITE_ERRNOS:
            raise
        what = error if isinstance(error, RunFolderError) else \
            f"{error.filename or outdir / 'plots'}: cannot write the plots ({error.strerror or error})"
        path = error.path if isinstance(error, RunFolderError) else error.filename
        print(f"nestgrad: error: {what}\n  {remedy(error.errno, path)}, then run this command again", file=sys.stderr)
        return EXIT_CONFIG
    return 0


def _skipped_plot(kind, why) -> None:
    """A requested plot these results cannot draw: one line on stderr, the other plots are still made."""
    print(f"nestgrad: note: no {kind} plot: {why}", file=sys.stderr)


def cmd_list(args) -> int:
    from nestgrad.likelihoods import builtin
    from nestgrad.sampler.priors import Distribution

    for name in builtin.names():
        model = builtin.get(name)
        print(f"{name}: {model.description}")
        if model.options:
            print("    options: " + ", ".join(f"{key}={value!r}" for key, value in model.options.items()))
        for param in model.params:
            print(f"    {param:<10} {Distribution.from_spec(model.priors[param]).describe()}")
        if model.reference_logz is not None:
            print(f"    reference logZ = {model.reference_logz:.4f} ({model.reference_method})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
