"""``NestedSampler``: the run loop around :func:`sampler.nested.step` — initial draws, termination,
diagnostics, checkpoints, progress and the final :class:`~sampler.results.Results`."""

import math
import numbers
import os
import time
import warnings

import numpy as np

from nestgrad.likelihoods import backends
from nestgrad.likelihoods.ranges import describe

from . import clustering, evidence, float_text, initial_live, live_rows, prior_families
from . import mpi_pool, precision, prior_draws, run_checkpoint
from .clustering import local_neighbours
from .checkpoint import CheckpointError, SignalGuard
from .interrupts import InterruptLatch
from . import geometry as geo
from .blas_threads import one_blas_thread
from .chain_backend import choose_backend
from .exit_gc import freeze_at_exit
from .hmc import CTRL_DENSE, CTRL_REFRESH, NCTRL
from .hmc_cpu import compiled_kernel
from .hmc_runtime import AdaptiveThreads, ChainWorkspace
from .hmc_settings import HMCSettings
from .kernel_failure import KernelFailed, guard
from . import kernel_failure
from .nested import AllLiveTied, InfiniteLikelihood, Proposal, step
from .priors import Prior
from .progress import LARGE_RUN, Progress
from .results import Results
from .run_results import NAN_WARNING_FRACTION, make_results
from .rng import seed_chain_states
from .run_state import RunRecord

# Default fraction of live points replaced per iteration, from measurements on this 2-core machine (busy, so
# wall times are indicative; nlive 500, 4-10 seeds each): 30-D Gaussian, fraction 0.01 / 0.05 / 0.1 / 0.25 / 0.5
# -> wall 7.5-15.6 / 4.8-6.9 / 0.19-1.6 / 0.16 / 0.13 s: small k is dominated by the per-iteration cost
# (Python step, kernel launch, thread wake-up), while at 0.5 the logZ pulls got worse (-3.6, -2.5 sigma) and
# the error larger, as chains start from half as many survivors. 0.1 and 0.25 were equally accurate on the
# seed 4-D posterior, 10-D Gaussian and 5-D shells (10 seeds, rms pulls 0.8-1.5) with 0.25 up to 1.5x faster;
# 0.1 is kept as the conservative choice (more distinct start points per chain).
DEFAULT_DELETE_FRACTION = 0.1


class NaNLikelihoodWarning(UserWarning):
    """More than a negligible share of likelihood evaluations returned NaN."""


class SamplerError(ValueError):
    """Invalid sampler settings or inputs; the message names the argument."""


def _check_run_limits(**limits):
    """``run``'s limits against the config's ranges for them (``sampler.max_iter`` and so on): a negative
    ``max_iter`` stopped a run after its first iteration, a float one was taken as given."""
    from .config_schema import NUMERIC, Range, range_problem

    for name, value in limits.items():
        if value is not None:
            # 0 seconds is allowed here: a checkpoint every iteration, or a run of the initial live points alone
            allowed = Range(float, 0, 1e9) if name in ("checkpoint_every", "max_time") else NUMERIC[f"sampler.{name}"]
            problem = range_problem(value, allowed)
            if problem:
                raise SamplerError(f"{name}: {problem}")


def _compile_helpers():
    """Compile (or load from numba's cache) the small numba functions a run calls between chain launches: with a
    cold cache they took 1.8 s of the first iterations (the prior transform over rows 0.74 s, the clustering's
    kNN and union-find 1.0 s), and the text tables' formatter 0.7 s of the output, which can instead overlap the
    child process compiling the chain kernel."""
    for dispatcher, signature in (prior_families.compiled_signatures() + clustering.compiled_signatures()
                                  + geo.compiled_signatures() + float_text.compiled_signatures()
                                  + evidence.compiled_signatures() + live_rows.compiled_signatures()):
        dispatcher.compile(signature)


class NestedSampler:
    """Nested sampling with constrained-HMC proposals over a likelihood exposing ``cpu_kernels()``.

    likelihood: object with ``params`` and ``cpu_kernels()`` (docs/internals.md §2).
    prior: :class:`~sampler.priors.Prior` (or a spec dict for :meth:`Prior.from_spec`) over the same params.
    nlive: live points; delete_fraction: share of them replaced per iteration (k = round(fraction * nlive)).
    hmc: :class:`~sampler.hmc.HMCSettings` or a dict of its fields. seed: int (None draws one and records it).
    backend: "cpu" (numba, prange over chains), "gpu" (numba.cuda, one thread per chain, via
        ``likelihood.cuda_kernels()``), "auto" (gpu when numba.cuda sees a device) or None (the likelihood's own
        ``backend`` attribute when that is "gpu", else cpu). "python" (a debugging backend of the likelihood)
        runs the chains on the CPU kernel: HMC needs compiled per-sample functions.
    """

    def __init__(self, likelihood, prior, nlive=500, delete_fraction=DEFAULT_DELETE_FRACTION, hmc=None, seed=None,
                 backend=None, name=None):
        if not isinstance(prior, Prior):
            prior = Prior.from_spec(prior)
        params = list(getattr(likelihood, "params", prior.names))
        if len(params) != prior.ndim:
            raise SamplerError(f"prior has {prior.ndim} parameters {prior.names} but the likelihood has "
                               f"{len(params)} {params}")
        if params != prior.names:
            raise SamplerError(f"prior parameters {prior.names} do not match the likelihood's {params} (same names, "
                               f"same order)")
        if int(nlive) != nlive or nlive < 2:
            raise SamplerError(f"nlive must be an integer >= 2, got {nlive!r}")
        if not 0.0 < float(delete_fraction) < 1.0:
            raise SamplerError(f"delete_fraction must be in (0, 1), got {delete_fraction!r}")
        if seed is not None and (isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer))
                                 or seed < 0):
            raise SamplerError(f"seed must be a non-negative integer (or None for a fresh one), got {seed!r}")
        if backend is not None and backend not in backends.NAMES:
            raise SamplerError(f"backend {backend!r}: expected one of {', '.join(backends.NAMES)} or None")
        self.likelihood = likelihood
        self.prior = prior
        self.params = params
        self.ndim = prior.ndim
        self.nlive = int(nlive)
        self.delete_fraction = float(delete_fraction)
        self.k = min(max(1, int(round(self.delete_fraction * self.nlive))), self.nlive - 1)
        self.hmc = HMCSettings.from_any(hmc)
        self.dense = self.hmc.dense_for(self.ndim)
        self.seed = int(np.random.SeedSequence().entropy if seed is None else seed)
        self.backend = choose_backend(backend, likelihood, self.k, self.ndim, self.nlive + self.k)
        self.name = name or getattr(likelihood, "name", None) or "nestgrad"
        self.kernels = likelihood.cuda_kernels() if self.backend == "gpu" else likelihood.cpu_kernels()
        self.sum_dtype = getattr(likelihood, "sum_dtype", None)  # "float64": a float32 kernel's loop sums
        self._proposal = self._request = self._warm = self._workspace = None
        self._prepare_seconds = 0.0
        self.compile_info = None

    # --- settings and compilation ----------------------------------------------------------------------------

    def settings(self, dlogz) -> dict:
        return {"nlive": self.nlive, "delete_fraction": self.delete_fraction, "k": self.k,
                "hmc": dict(self.hmc._asdict(), dense=self.dense), "seed": self.seed, "backend": self.backend,
                "dtype": str(np.dtype(self.kernels.dtype)), "sum_dtype": self.sum_dtype, "dlogz": dlogz,
                "params": self.params,
                "prior": {n: list(s) for n, s in self.prior.to_spec().items()},
                # the kernel's source and the data (likelihoods.Likelihood.fingerprint): a resume must not mix two
                "likelihood": getattr(self.likelihood, "fingerprint", None)}

    def compile(self, notify=None) -> "NestedSampler":
        """Get the chain kernel ready now (``run`` does it on first use; benchmarks call this to time runs
        alone). ``notify(text)`` is called before a compilation that is not a load from the cache."""
        self._build(notify)
        return self

    def prepare(self, notify=None) -> "NestedSampler":
        """Start getting the chain kernel ready without waiting: load it from the cache, or start the child
        process that compiles it (``notify("compiling ...")``), so that the caller's own work (the CLI's
        gradient check) overlaps the compilation; :meth:`compile` or :meth:`run` then wait for it."""
        pool = mpi_pool.world()
        if pool is not None and pool.rank != 0:
            return self  # a worker loads the kernel once rank 0 has it in the cache (_build)
        if self.backend != "gpu" and self._proposal is None and self._request is None:
            from . import hmc_cache

            start = time.perf_counter()
            kern = self.kernels
            advance_sig, evaluate_sig = self._signatures()
            self._request = hmc_cache.begin(kern.value, kern.value_and_grad,
                                            {"advance_range": advance_sig, "evaluate": evaluate_sig}, notify)
            self._prepare_seconds = time.perf_counter() - start
        return self

    def cancel(self) -> None:
        """Stop a compilation :meth:`prepare` started (the run will not happen)."""
        if self._request is not None and self._request.child is not None:
            self._request.child.cancel()
        self._request = None

    def _warm_up(self):
        """``(chain kernel arguments, batch evaluator arguments)`` for a zero-step warm-up call (nothing of the
        run's randomness is used); their types are the run's."""
        if self._warm is None:
            kern = self.kernels
            dtype = np.dtype(kern.dtype)
            self._workspace = ChainWorkspace(self.k, self.ndim, dtype, kern.scratch_size)
            u0 = np.full((self.k, self.ndim), 0.5)
            warm_geometry = geo.build(np.random.default_rng(0).random((4 * self.ndim + 4, self.ndim)),
                                      np.zeros(4 * self.ndim + 4, np.int64), self.dense)
            ctrl = np.zeros(NCTRL, np.int64)  # no steps, no jumps, no slice moves: compiles, runs nothing
            ctrl[CTRL_REFRESH], ctrl[CTRL_DENSE] = 1, int(self.dense)
            advance = (u0, np.zeros(self.k), -np.inf, np.full(self.k, 0.1), ctrl,
                       seed_chain_states(np.random.default_rng(0), self.k), kern.data, self.prior.codes,
                       self.prior.args, *warm_geometry.kernel_arrays(), *self._workspace.arrays())
            evaluate = (np.full((1, self.ndim), 0.5), kern.data, np.empty((1, self.ndim), dtype),
                        self._workspace.scratch[0], np.empty(1))
            self._warm = (advance, evaluate)
        return self._warm

    def _signatures(self):
        """numba signatures of the CPU kernel's ``advance_range(start, stride, ...)`` and ``evaluate``."""
        from numba import typeof

        advance, evaluate = self._warm_up()
        return tuple(typeof(a) for a in (0, 1) + advance), tuple(typeof(a) for a in evaluate)

    def _build(self, notify=None):
        """Load (or compile) the fused chain kernel and the batch evaluator once; the time it took (here and in
        :meth:`prepare`), where the kernel came from and how long a child process took to compile it go to
        ``self.compile_info``."""
        if self._proposal is not None:
            return self._proposal
        pool = mpi_pool.world()
        if pool is not None and pool.rank != 0:
            pool.wait_ready()  # rank 0 compiled the kernel into the cache: load it, never compile it R times
        self.prepare(notify)  # loads the kernel, or starts its child (its time is counted in prepare's)
        start = time.perf_counter()
        kern = self.kernels
        dtype = np.dtype(kern.dtype)
        codes, args = self.prior.codes, self.prior.args
        warm, warm_evaluate = self._warm_up()
        origin, child_seconds, live_store = "gpu", None, None
        if self.backend == "gpu":
            from .hmc_gpu import DeviceMemoryError, GpuChainKernel
            from . import live_device
            # The live set stays on the GPU (sampler.live_device) unless MPI ranks share the chains.
            device_rows = self.nlive + self.k if pool is None and live_device.ENABLED else 0
            try:
                advance = GpuChainKernel(kern, codes, args, self.k, self.ndim, device_rows)
            except DeviceMemoryError as error:
                raise SamplerError(f"backend gpu: {error}") from None
            live_store = live_device.DeviceLiveStore(device_rows, self.ndim) if device_rows else None
            like = self.likelihood

            def evaluate(thetas, data, theta_buf, scratch, out):
                out[:] = like.logl(np.ascontiguousarray(thetas, dtype=dtype))
        else:
            if self._request is not None and self._request.child is not None:
                _compile_helpers()  # on this core, while the child compiles the kernel on another
            advance_sig, evaluate_sig = self._signatures()
            kernel = compiled_kernel(kern.value, kern.value_and_grad, advance_sig=advance_sig,
                                     evaluate_sig=evaluate_sig, notify=notify, request=self._request)
            if pool is not None:  # R ranks on a node share its cores (timing only: results never depend on it)
                kernel.advance.max_threads = kernel.advance.threads = mpi_pool.default_threads_per_rank()
            advance, evaluate, origin = AdaptiveThreads(kernel.advance), kernel.evaluate, kernel.origin
            child_seconds = kernel.child_seconds
            # The live set in slots (sampler.live_rows) unless MPI ranks share the chains.
            if pool is None and live_rows.ENABLED:
                live_store = live_rows.HostLiveStore(self.nlive + self.k, self.ndim)
        getattr(advance, "advance", advance)(*warm)  # compiles here when the kernel was not loaded
        evaluate(*warm_evaluate)
        if self.backend == "gpu":  # "gpu cache" / "gpu compiled" (numba-cuda's disk cache), "gpu" (simulator)
            from nestgrad.likelihoods.backends.cuda_cache import origin as cuda_origin

            found = cuda_origin(advance.kernel)
            origin = "gpu" if found is None else f"gpu {found}"
        self._local = (advance, evaluate)
        advance, evaluate = guard(advance, "chains"), guard(evaluate, "evaluation")
        neighbours = local_neighbours
        if pool is not None and pool.rank == 0:
            advance, evaluate = pool.wrap(advance, evaluate)
            neighbours = pool.neighbours
            pool.announce_ready()
        elif pool is not None:
            pool.loaded()  # rank 0 waits for this in announce_ready
        self._evaluate = evaluate
        if isinstance(live_store, live_rows.HostLiveStore):
            advance = live_rows.SlotAdvance(advance, live_store)
        self._proposal = Proposal(advance, self._workspace, kern.data, codes, args, self.k, self.nlive, self.dense,
                                  self._logl_at, neighbours, live_store, self._theta_logl_at)
        self.compile_info = {"seconds": time.perf_counter() - start + self._prepare_seconds, "kernel": origin}
        if child_seconds is not None:
            self.compile_info["child"] = child_seconds
        return self._proposal

    def _logl_at(self, u):
        """Log-likelihoods of unit-cube points ``u`` (m, d) through the batch evaluator."""
        return self._theta_logl_at(u)[1]

    def _theta_logl_at(self, u):
        """``(theta, logl)`` of unit-cube points ``u`` (m, d): the prior's transform, the batch evaluator."""
        theta = self.prior.transform(u)
        out = np.empty(theta.shape[0])
        self._evaluate(theta, self.kernels.data, np.empty(theta.shape, np.dtype(self.kernels.dtype)),
                       self._workspace.scratch[0], out)
        return theta, out

    # --- initial live points ---------------------------------------------------------------------------------

    def _initial_state(self, generator):
        """``(state, draws, log_volume_offset, NaN draws)``: nlive prior draws with finite logL
        (``sampler.initial_live``); the log of the share of finite draws estimates the finite region's prior mass,
        added to logZ."""
        n, d = self.nlive, self.ndim
        dtype = np.dtype(self.kernels.dtype)

        def logl_of(theta):
            logl = np.empty(theta.shape[0])
            self._evaluate(theta, self.kernels.data, np.empty(theta.shape, dtype), self._workspace.scratch[0], logl)
            return logl

        try:
            u, theta, logl, drawn, finite, nan = initial_live.finite_prior_draws(generator, n, d,
                                                                                 self.prior.transform, logl_of)
        except initial_live.NoFiniteDraws as error:
            raise SamplerError(str(error) + self._python_failure(generator)) from None
        state = initial_live.first_state(u, theta, logl, self.hmc, self.k, generator)
        return state, drawn, math.log(finite / drawn), nan

    def _python_failure(self, generator):
        """'; <where the plain-Python kernel raises at a few prior draws>' (a division by zero, a math domain
        error: the compiled kernel gives inf or NaN there, and the message blamed the prior ranges), or ''."""
        find = getattr(self.likelihood, "python_failure", None)
        if find is None:
            return ""
        found = find(self.prior.transform(generator.random((16, self.ndim))), "no prior draw gave a finite value")
        return "" if found is None else f"; {found}"

    # --- the run ---------------------------------------------------------------------------------------------

    def run(self, dlogz=0.1, checkpoint=None, resume=False, progress=True, max_iter=None, max_nlike=None,
            max_time=None, checkpoint_every=60.0, callback=None) -> Results:
        """Run until the evidence left in the live points is below ``dlogz`` (log(Z + X max L_live) - log Z) or a
        limit (total ``max_iter`` iterations, ``max_nlike`` evaluations, ``max_time`` seconds of this call) is hit.

        checkpoint: path of ``checkpoint.npz`` written every ``checkpoint_every`` seconds at an iteration boundary,
        at the end and on SIGINT/SIGTERM; with ``resume=True`` an existing file is continued bit-identically.
        callback: ``callback(niter, state, info)`` after each iteration; returning True stops the run.
        """
        if isinstance(dlogz, (bool, np.bool_)) or not isinstance(dlogz, numbers.Real):  # '>' of text was a TypeError
            raise SamplerError(f"dlogz: expected a number > 0 (e.g. 0.1), got {describe(dlogz)}")
        if not dlogz > 0:
            raise SamplerError(f"dlogz must be > 0, got {dlogz!r}")
        _check_run_limits(max_iter=max_iter, max_nlike=max_nlike, max_time=max_time,
                          checkpoint_every=checkpoint_every)
        if callback is not None and not callable(callback):
            raise SamplerError(f"callback must be a function callback(niter, state, info) or None, got "
                               f"{type(callback).__name__} {callback!r}")
        freeze_at_exit()
        with one_blas_thread():
            return self._run_or_serve(dlogz, checkpoint, resume, progress, max_iter, max_nlike, max_time,
                                      checkpoint_every, callback)

    def _run_or_serve(self, dlogz, checkpoint, resume, progress, max_iter, max_nlike, max_time, checkpoint_every,
                      callback):
        pool = mpi_pool.world()
        if pool is not None and pool.rank != 0:
            return self._serve(pool)
        if pool is not None:
            try:
                results = self._run(dlogz, checkpoint, resume, progress, max_iter, max_nlike, max_time,
                                    checkpoint_every, callback, pool)
            except BaseException:
                pool.stop(None)
                raise
            pool.stop(results)
            return results
        return self._run(dlogz, checkpoint, resume, progress, max_iter, max_nlike, max_time, checkpoint_every,
                         callback, None)

    def _serve(self, pool):
        """A worker rank's part of :meth:`run`: run blocks of chains for rank 0 until it stops; returns rank 0's
        Results (None when rank 0 ended without any)."""
        try:
            self._build()
        except mpi_pool.RootStopped:
            return None
        advance, evaluate = self._local
        kern = self.kernels
        return pool.serve(advance, evaluate, self._workspace, kern.data, self.prior.codes, self.prior.args,
                          np.dtype(kern.dtype))

    def _run(self, dlogz, checkpoint, resume, progress, max_iter, max_nlike, max_time, checkpoint_every, callback,
             pool):
        if resume and checkpoint is not None and os.path.exists(checkpoint):
            self.check_resumable(checkpoint, dlogz)  # before compiling
        bar = Progress(progress, dlogz)
        try:
            with InterruptLatch():  # a Ctrl-C that a compiler's destructor swallowed still stops the run
                proposal = self._build(notify=bar.message)
        except BaseException:
            bar.close()
            raise
        settings = self.settings(dlogz)
        bar.start_clock()
        t_start = time.perf_counter()
        if pool is not None:
            pool.begin()
        if resume and checkpoint is not None and os.path.exists(checkpoint):
            state, generator, record = self._load(checkpoint, settings)
        else:
            generator = np.random.default_rng(self.seed)
            try:
                state, drawn, offset, nan = self._initial_state(generator)
            except KernelFailed as failure:
                raise SamplerError(kernel_failure.message(failure, self.likelihood, self.params,
                                                          "at the initial prior draws")) from None
            record = RunRecord.start(self.ndim, self.k, drawn, offset, nan)
        if proposal.live_store is not None:
            u, theta = proposal.live_store.adopt(state.u, state.theta)
            state = state._replace(u=u, theta=theta)
        running = evidence.RunningEvidence(record.running_logz, record.running_log_x)
        last_checkpoint = time.perf_counter()
        tied = None
        try:
            with SignalGuard(enabled=checkpoint is not None) as guard:
                while True:
                    remain = running.remaining(state.logl)
                    if remain < dlogz or self._limit_hit(record, max_iter, max_nlike, max_time, t_start):
                        break
                    before = generator.bit_generator.state if pool is not None else None
                    try:
                        state, info = step(state, generator, proposal, self.hmc,
                                           self._prior_acceptance(running, record))
                    except AllLiveTied:  # a plateau holds every live point: the final live points carry the rest
                        tied = (float(np.max(state.logl)), state.logl.size,
                                self._prior_acceptance(running, record) > 0)
                        break
                    except KernelFailed as failure:  # no checkpoint: the iteration may have reused the dead rows
                        kept = (f"; the last checkpoint ({checkpoint}) is kept" if checkpoint is not None
                                and os.path.exists(checkpoint) else "")
                        raise SamplerError(kernel_failure.message(
                            failure, self.likelihood, self.params,
                            f"in the {failure.where} of iteration {record.niter + 1}") + kept) from None
                    except InfiniteLikelihood as error:  # no checkpoint: the iteration has reused the dead rows
                        at = ", ".join(f"{p} = {v!r}" for p, v in zip(self.params, error.theta.tolist()))
                        kept = (f"; the last checkpoint ({checkpoint}) is kept" if checkpoint is not None
                                and os.path.exists(checkpoint) else "")
                        raise SamplerError(f"the log-likelihood returned +inf at {at} (iteration {record.niter + 1},"
                                           f" {error.count} of {self.k} new points): a log-likelihood must be finite "
                                           f"or -inf (zero likelihood); +inf makes the evidence infinite. Check the "
                                           f"kernel there (a log of a density that diverges, a division by "
                                           f"zero){kept}") from None
                    except mpi_pool.RankError:
                        if checkpoint is not None:  # the last whole iteration, exactly as it was
                            generator.bit_generator.state = before
                            self._save(checkpoint, state, generator, record, settings,
                                       time.perf_counter() - t_start)
                        raise
                    running.remove(info.dead_logl, info.nlive_before)
                    record.add(info, running.logz + record.log_volume_offset, running.remaining(state.logl))
                    record.running_logz, record.running_log_x = running.logz, running.log_x
                    bar.update(record.niter, info.logl_star, running.logz, record.last_remain(), record.nlike,
                               record.nnan)
                    try:
                        stop = callback is not None and callback(record.niter, state, info)
                    except BaseException as error:  # the user's bug: keep the run so far, then let it through
                        if checkpoint is not None:
                            self._save(checkpoint, state, generator, record, settings,
                                       time.perf_counter() - t_start)
                            error.add_note(f"nestgrad: the callback raised after iteration {record.niter}; the run "
                                           f"so far is saved in {checkpoint} (resume=True continues it)")
                        raise
                    now = time.perf_counter()
                    if checkpoint is not None and (guard.requested or now - last_checkpoint >= checkpoint_every):
                        self._save(checkpoint, state, generator, record, settings, now - t_start)
                        last_checkpoint = now
                    if guard.requested:
                        guard.raise_requested()
                    if stop:
                        break
                if checkpoint is not None:
                    self._save(checkpoint, state, generator, record, settings, time.perf_counter() - t_start)
        finally:
            bar.close()
        state = state._replace(u=np.asarray(state.u), theta=np.asarray(state.theta))  # from the GPU when kept there
        t_end = time.perf_counter()
        record.wall_time += t_end - t_start
        ranks = pool.statistics() if pool is not None else None
        points = record.dead.size + state.logl.size
        if points >= LARGE_RUN:
            bar.stage(f"computing the evidence, its errors and the effective sample size of {points} points")
        try:
            results = self._results(state, record, settings)
        except KernelFailed as failure:  # the modes' saddle search evaluates the likelihood between modes
            raise SamplerError(kernel_failure.message(failure, self.likelihood, self.params,
                                                      "while the posterior's modes were compared") + (
                f"; the checkpoint ({checkpoint}) holds the finished run" if checkpoint is not None else "")) from None
        # What the stop left, also where no iteration recorded it (a limit hit before the first one).
        results.settings["dlogz_left"] = float(running.remaining(state.logl))
        if tied is not None:
            results.settings["ended_on_plateau"] = True  # the rest of the evidence is the plateau's: not cut short
            warnings.warn(f"the run ended on a plateau: all {tied[1]} live points (the live set widened to find a "
                          f"higher one) have logL = {tied[0]!r}; a region above it holding less than about 1/{tied[1]} "
                          f"of the plateau's prior volume would be missed"
                          + ("" if tied[2] else ", and one that no chain from the plateau's points could reach "
                             "(cut off from them) of any size"), stacklevel=4)
        results.mpi = ranks
        results.timing = {"compile": self.compile_info["seconds"], "kernel": self.compile_info["kernel"],
                          **({"compile_child": self.compile_info["child"]} if "child" in self.compile_info else {}),
                          "sampling": t_end - t_start, "evidence": time.perf_counter() - t_end}
        return results

    def _prior_acceptance(self, running, record) -> float:
        """The share of prior draws expected above the contour while it is at least ``hmc.prior_draws``, else 0
        (the chains make the new points; ``sampler.prior_draws``)."""
        least = self.hmc.prior_draws
        expected = prior_draws.expected_acceptance(running.log_x, record.log_volume_offset)
        return expected if least > 0 and expected >= least else 0.0

    def _limit_hit(self, record, max_iter, max_nlike, max_time, t_start):
        return ((max_iter is not None and record.niter >= max_iter)
                or (max_nlike is not None and record.nlike >= max_nlike)
                or (max_time is not None and time.perf_counter() - t_start >= max_time))

    # --- checkpoints (sampler.run_checkpoint) ---------------------------------------------------------------

    def _save(self, path, state, generator, record, settings, elapsed):
        run_checkpoint.save(path, state, generator, record, settings, elapsed)

    def check_resumable(self, path, dlogz=None) -> None:
        """Raise :class:`CheckpointError` when the checkpoint ``path`` was written with other settings or another
        likelihood than this sampler's, reading only its metadata: before anything is compiled."""
        run_checkpoint.check_resumable(path, self.settings(dlogz))

    def _load(self, path, settings):
        return run_checkpoint.load(path, settings)

    # --- results ---------------------------------------------------------------------------------------------

    def _results(self, state, record, settings) -> Results:
        results = make_results(self, state, record, settings, self._logl_at)
        for level, survivors, live in evidence.thin_plateaus(results.dead.logl, results.dead.logl_birth):
            warnings.warn(f"only {survivors} of {live} live points lay above the plateau at logL = {level!r}: the "
                          f"evidence above it rests on them, so that region's share of the prior volume is uncertain "
                          f"by a factor of about {math.exp(1.0 / math.sqrt(survivors)):.1f} and logz_err (computed at "
                          f"the estimate) can understate the error; more live points (nlive) would see more of it",
                          stacklevel=3)
        if results.nan_fraction > NAN_WARNING_FRACTION:
            warnings.warn(f"{results.nnan} of {results.nlike} likelihood evaluations ({100 * results.nan_fraction:.2g}%) "
                          f"returned NaN; they count as zero likelihood (outside every contour). If the "
                          f"likelihood should be finite there, check the kernel and the prior ranges.",
                          NaNLikelihoodWarning, stacklevel=3)
        for message in precision.coarse_parameters(self.params, results.dead.theta, results.weights,
                                                   self.kernels.dtype):
            warnings.warn(message, precision.Float32ResolutionWarning, stacklevel=3)
        for message in precision.beyond_reach(self.prior, results.dead.theta, results.weights):
            warnings.warn(message, precision.PriorReachWarning, stacklevel=3)
        return results
