"""``Likelihood``: a per-sample kernel, its data and a backend, evaluated on batches of parameter vectors."""

import functools
import hashlib
import warnings

import numpy as np

from . import backends, bounds, derivatives, gradcheck, kernel_raised, kernel_source, kernel_use, parameters_read
from .data import load_all, nonfinite_messages, prepare
from .errors import LikelihoodError, ParamsError


# Per-sample scratch above this cannot be a likelihood anyone samples (a batch of chains needs it many times over)
MAX_SCRATCH_BYTES = 2 ** 30


class UnusedParameterWarning(UserWarning):
    """``params`` names a parameter the kernel never reads (its posterior will just be its prior)."""


class NonFiniteDataWarning(UserWarning):
    """A data array holds NaN or inf (a kernel that reads one returns NaN: zero likelihood there)."""


GPU_DEFAULT_DTYPE = "float32"


def default_precision(backend, dtype, sum_dtype, widenable):
    """``(dtype, sum_dtype)`` of a likelihood asked for ``dtype`` and ``sum_dtype`` (None: the default) on the
    resolved ``backend``. Defaults: float64 off the GPU; on the GPU float32 arithmetic with the sums its loops
    accumulate over the data in float64, where the kernel has such loops and nestgrad differentiated it
    (``widenable``; a hand-written derivative's sums cannot be widened) -- a sum of 1000 float32 terms loses
    about three digits, a float64 one nothing, for 0.04 ms of a 0.23 ms call on an H200 (docs/benchmarks.md). An
    explicit ``dtype`` is taken as it is: ``dtype="float32"`` alone keeps the sums in float32."""
    if dtype is not None:
        return dtype, sum_dtype
    if backend != "gpu":
        return "float64", sum_dtype
    return GPU_DEFAULT_DTYPE, ("float64" if sum_dtype is None and widenable else sum_dtype)


def _sum_dtype(sum_dtype, dtype):
    """None when the sums are in ``dtype`` anyway; "float64" for float64 sums of a float32 kernel (the rule is
    ad's ``wide_sums``; its refusals become LikelihoodErrors)."""
    from nestgrad.ad.derivative import wide_sums

    try:
        return "float64" if wide_sums(np.dtype(dtype).name, sum_dtype) else None
    except ValueError as error:
        raise LikelihoodError(str(error)) from None


class Likelihood:
    """Batched log-likelihood ``fn(theta, *data)`` with per-sample gradients.

    fn        the per-sample kernel: a function, ``(path, name)``, ``"path.py:name"`` or a resolved
              :class:`~likelihoods.kernel_source.KernelSource`
    params    parameter names in the order of ``theta``
    data      kernel argument name -> array, number, list or file name (see likelihoods/data.py)
    backend   one of ``backends.NAMES``: "auto" | "cpu" | "gpu" | "python"
    dtype     "float64" or "float32"; None: float32 on the GPU (with float64 sums, below), float64 elsewhere
    sum_dtype None, or "float64" with dtype "float32": the sums the kernel's loops accumulate (over its data,
              and their gradients) are kept in float64, the rest of its arithmetic in float32 -- for long data
              loops, whose float32 sums lose digits as they grow (ad/emit.py ``loop_sums``); with ``dtype``
              None on the GPU float64 sums are the default (:func:`default_precision`)
    gradient  optional analytic ``gradient(theta, *data, out)`` (function or file reference), used only by
              :meth:`check_gradient`
    draws     optional ``draws(rng, n) -> (n, ndim)`` parameter points (e.g. ``Prior.draw`` of the sampler's
              prior, or a built-in's points near its truths): where :meth:`check_gradient` looks when no
              points are given, and more points for the bounds check below. This package knows no prior
              families; whoever knows the prior passes its draws.
    data_dir  folder that relative data/kernel file names are relative to (a config file's folder)

    Returned arrays are buffers owned by the likelihood, reused by the next call with the same batch size:
    copy them to keep them, or pass ``out``/``grad_out``. ``nbad`` is the number of bad samples (NaN, +inf,
    math domain error, or a non-finite gradient) in the last call; they come back as NaN; ``nbad_total`` and
    ``ncalls_total`` (samples evaluated) accumulate over every batched call since construction.

    The constructor refuses, before anything is compiled, a kernel that reads theta beyond ``params``
    (:class:`ParamsError`) or reads data out of bounds (:class:`KernelIndexError`, likelihoods/bounds.py), and
    warns (:class:`UnusedParameterWarning`, also kept as text in ``warnings``) about parameters the kernel
    never reads.
    """

    def __init__(self, fn, params, data=None, backend="cpu", dtype=None, gradient=None, *, data_dir=None,
                 draws=None, sum_dtype=None):
        kernel = kernel_source.resolve(fn, base_dir=data_dir)
        derivative = derivatives.from_kernel(kernel)
        self._setup(kernel, derivative, params, data, backend, dtype, gradient, data_dir, draws, sum_dtype)

    @classmethod
    def from_derivative(cls, derivative, fn, params, data=None, backend="cpu", dtype=None, gradient=None, *,
                        data_dir=None, draws=None):
        """As the constructor, with per-sample functions from ``derivative`` (any object with the
        interface of docs/internals.md, section "ad", e.g. :class:`likelihoods.derivatives.AnalyticDerivative`)."""
        self = cls.__new__(cls)
        self._setup(kernel_source.resolve(fn, base_dir=data_dir), derivative, params, data, backend, dtype,
                    gradient, data_dir, draws)
        return self

    def _setup(self, kernel, derivative, params, data, backend, dtype, gradient, data_dir, draws=None,
               sum_dtype=None):
        self.kernel = kernel
        if isinstance(params, str) or not all(isinstance(p, str) for p in params):
            raise LikelihoodError(f"params: expected a list of parameter names, got {params!r}")
        self.params = tuple(params)
        if not self.params:
            raise LikelihoodError("params: at least one parameter name is needed")
        self.use = kernel.use  # analysed once per kernel (likelihoods/kernel_use.py)
        self._check_theta_use()
        self.backend = backends.resolve(backend)
        dtype, sum_dtype = default_precision(self.backend, dtype, sum_dtype, derivatives.widenable(derivative))
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            raise LikelihoodError(f"dtype must be 'float32' or 'float64', got {dtype!r}") from None
        if self.dtype not in (np.float32, np.float64):
            raise LikelihoodError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
        self.sum_dtype = _sum_dtype(sum_dtype, self.dtype)
        self.derivative = derivatives.with_sum_dtype(derivative, self.sum_dtype)
        # the sources, and the generated code: it holds the module-level constants the kernel reads (``SCALE =
        # 2.0`` beside it), inlined; its comments (the files' paths) left out, so a moved folder keeps its digest
        generated = "\n".join(line for line in str(getattr(derivative, "source", "")).splitlines()
                               if not line.lstrip().startswith("#"))
        self._source_key = (getattr(derivative, "_key_parts", None) or kernel.text, generated)
        if draws is not None and not callable(draws):
            raise LikelihoodError(f"draws: expected a callable draws(rng, n) -> (n, {len(self.params)}), got "
                                  f"{type(draws).__name__}")
        self.draws = draws
        self.gradient = gradient
        if gradient is not None and not callable(gradient):  # a file reference
            self.gradient = kernel_source.resolve(gradient, base_dir=data_dir, what="gradient").function
        loaded = load_all(data, data_dir)
        self.data = prepare(kernel, loaded, self.dtype, use=self.use)
        self._data64 = prepare(kernel, loaded, np.float64, use=self.use)  # for checks, always in float64
        for message in nonfinite_messages(kernel, self._data64):
            self.warnings.append(message)
            warnings.warn(message, NonFiniteDataWarning, stacklevel=4)
        bounds.check(kernel, self.use, self._data64, self.params, self._probe_points)
        self._warn_unused_parameters()
        probe = np.zeros(self.ndim, dtype=self.dtype)
        self.scratch_size = int(derivative.scratch_size(probe, *self.data)) if derivative.needs_scratch else 0
        scratch_bytes = self.scratch_size * self.dtype.itemsize
        if scratch_bytes > MAX_SCRATCH_BYTES:
            at = f"{kernel.filename}:{kernel.node.lineno}:{kernel.node.col_offset + 1}"
            raise LikelihoodError(
                f"{at}: kernel {kernel.name!r} keeps {self.scratch_size:,} values ({scratch_bytes / 2 ** 30:.1f} GiB) "
                f"per sample for this data: its local arrays and the values its loops store for the reverse sweep "
                f"(a loop that writes a local array an iteration later reads keeps a copy of the array per "
                f"iteration). `nestgrad.differentiate(f).report(theta, *data)` says which loop stores what; keep a "
                f"recursion's state in scalar variables (s = s * b + x[i]) instead of an array the size of the data")
        self._impl = backends.backend_class(self.backend)(self.derivative, self.data, self.dtype, self.ndim,
                                                          self.scratch_size)
        self.nbad = self.nbad_total = self.ncalls_total = 0

    @functools.cached_property
    def fingerprint(self) -> str:
        """A digest of what the log-likelihood's values depend on: the kernel's source with the helpers the
        differentiator read (nestgrad's own special functions among them), the data (as float64) and the parameter
        names; not the backend or the precision, which a run's settings record on their own. A run records it, so
        that a resumed run cannot continue with another likelihood (an edited kernel, changed data) than it began
        with."""
        digest = hashlib.sha256()
        for part in (self._source_key, self.params):
            digest.update(repr(part).encode() + b"\0")
        for name, value in zip(self.use.args[1:], self._data64):
            array = np.ascontiguousarray(value)
            digest.update(f"{name} {array.dtype.str} {array.shape}".encode() + b"\0")
            digest.update(array.tobytes() if array.dtype != object else repr(value).encode())
        return digest.hexdigest()[:20]

    def _check_theta_use(self):
        """Too few params: an error at the read (too many: :meth:`_warn_unused_parameters`, once the data are in)."""
        problem = kernel_use.theta_problem(self.use, self.params)
        if problem:
            at, message = problem
            raise ParamsError(*at, message, array=self.use.args[0])
        self.warnings = []

    def _warn_unused_parameters(self):
        """A warning naming the parameters the kernel never reads (with the data's shapes, for reads through a
        loop over the data: ``theta[j]`` for ``j`` in ``range(x.shape[1])``)."""
        unused = parameters_read.unused_parameters(self.use, self.params,
                                                   *bounds.data_sizes(self.use, self._data64, self.ndim))
        if unused:
            self.warnings.append(
                f"{self.kernel.filename}:{self.kernel.node.lineno}:{self.kernel.node.col_offset + 1}: params: the "
                f"kernel {self.kernel.name!r} never reads {', '.join(unused)} (theta indices "
                f"{', '.join(str(self.params.index(p)) for p in unused)}): its posterior will be its prior")
            warnings.warn(self.warnings[-1], UnusedParameterWarning, stacklevel=4)

    def _probe_points(self, n=4):
        """Parameter points for the bounds-checked evaluation: from ``draws`` when given, and a few fixed
        ones that need no prior."""
        rng = np.random.default_rng(0)
        fixed = [np.full(self.ndim, 0.5), np.ones(self.ndim), rng.uniform(0.1, 2.0, self.ndim)]
        if self.draws is None:
            return fixed
        return list(self._check_points(None, n, 0)) + fixed

    def _count(self, thetas, nbad):
        self.nbad = nbad
        self.nbad_total += nbad
        self.ncalls_total += int(np.shape(thetas)[0])

    @property
    def ndim(self):
        return len(self.params)

    def logl(self, thetas, out=None):
        """Log-likelihood of each row of ``thetas`` (B, ndim) -> (B,)."""
        out, nbad = self._batch(self._impl.logl, thetas, out)
        self._count(thetas, nbad)
        return out

    def logl_and_grad(self, thetas, out=None, grad_out=None):
        """Values (B,) and gradients (B, ndim)."""
        (out, grad_out), nbad = self._batch(self._impl.logl_and_grad, thetas, out, grad_out)
        self._count(thetas, nbad)
        return out, grad_out

    def grad(self, thetas, grad_out=None):
        """Gradients (B, ndim) only (the value's own work is skipped where it is not needed)."""
        grad_out, nbad = self._batch(self._impl.grad, thetas, grad_out)
        self._count(thetas, nbad)
        return grad_out

    def _batch(self, call, thetas, *outputs):
        """``call(thetas, *outputs)``; an exception the kernel raised becomes a :class:`KernelRaisedError` at the
        kernel's line (:meth:`diagnose`)."""
        try:
            return call(thetas, *outputs)
        except LikelihoodError:
            raise
        except Exception as error:  # noqa: BLE001 - diagnosed, then re-raised as the user's mistake
            if np.shape(thetas)[-1:] != (self.ndim,):
                raise
            raise self.diagnose(thetas, error) from None

    def diagnose(self, thetas, error):
        """A :class:`KernelRaisedError` for ``error``, raised by the compiled kernel over the rows of ``thetas``:
        the kernel's line and the parameters where its plain-Python version raises (likelihoods/kernel_raised.py)."""
        return kernel_raised.diagnose(self.kernel, self.use, self._data64, thetas, error)

    def python_failure(self, thetas, why):
        """Where the plain-Python kernel raises at the rows of ``thetas`` (a :class:`KernelRaisedError` at the
        kernel's line), or None: why a compiled kernel that raises nothing returns no finite value."""
        return kernel_raised.python_failure(self.kernel, self.use, self._data64, thetas, why)

    def cpu_kernels(self):
        """:class:`CpuKernels` for fused samplers in numba (compiled for this likelihood's dtype)."""
        impl = self._impl
        if self.backend != "cpu":
            from .backends.cpu import CpuBackend

            impl = CpuBackend(self.derivative, self.data, self.dtype, self.ndim, self.scratch_size)
        return impl.kernels()

    def cuda_kernels(self):
        """:class:`CudaKernels` (device functions and device data) for fused samplers on the GPU."""
        impl = self._impl
        if self.backend != "gpu":
            from .backends.gpu import GpuBackend

            impl = GpuBackend(self.derivative, self.data, self.dtype, self.ndim, self.scratch_size)
        return impl.kernels()

    def check_gradient(self, thetas=None, n=16, seed=0):
        """AD vs analytic (when given) vs finite differences in float64 at ``n`` points (ad/check.py's
        adaptive-step differences; see likelihoods/gradcheck.py for the tolerances).

        ``thetas``: an array (n, ndim); a callable ``thetas(rng, n)``; or None for ``draws`` given at
        construction (a built-in's ``likelihood()`` gives points near its truths; a config's, draws from its
        prior). Without either, an error asks for ``thetas``.
        """
        thetas = self._check_points(thetas, n, seed)
        bounds.checked_evaluation(self.kernel, self.use, self._data64, thetas, self.params)
        return gradcheck.check_points(self.kernel.function, self.derivative, self.params, thetas, self._data64,
                                      self.gradient)

    def _check_points(self, thetas, n, seed):
        rng = np.random.default_rng(seed)
        if thetas is None:
            if self.draws is None:
                raise LikelihoodError("check_gradient: no points to check at; pass thetas (an array (n, ndim) or "
                                      "a callable thetas(rng, n)), or construct the Likelihood with draws=")
            thetas = self.draws(rng, n)
        elif callable(thetas):
            thetas = thetas(rng, n)
        thetas = np.array(thetas, dtype=np.float64, ndmin=2)
        if thetas.ndim != 2 or thetas.shape[1] != self.ndim:
            raise LikelihoodError(f"check_gradient: thetas must have shape (n, {self.ndim}), got {thetas.shape}")
        return thetas

    def __repr__(self):
        return (f"Likelihood({self.kernel.name}, params={list(self.params)}, backend={self.backend!r}, "
                f"dtype={self.dtype.name!r})")
