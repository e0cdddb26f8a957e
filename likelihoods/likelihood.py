"""``Likelihood``: a per-sample kernel, its data and a backend, evaluated on batches of parameter vectors."""

import numpy as np

from . import backends, derivatives, gradcheck, kernel_source, priors_spec
from .data import argument_uses, load_all, prepare
from .errors import LikelihoodError

GPU_DEFAULT_DTYPE = "float32"


class Likelihood:
    """Batched log-likelihood ``fn(theta, *data)`` with per-sample gradients.

    fn        the per-sample kernel: a function, ``(path, name)`` or ``"path.py:name"``
    params    parameter names in the order of ``theta``
    data      kernel argument name -> array, number, list or file name (see likelihoods/data.py)
    backend   "cpu" | "gpu" | "python" | "auto"
    dtype     "float64" or "float32"; None: float32 on the GPU, float64 elsewhere
    gradient  optional analytic ``gradient(theta, *data, out)`` (function or file reference), used only by
              :meth:`check_gradient`
    priors    optional default priors as plain data (``{name: ("uniform", low, high)}``): where
              :meth:`check_gradient` looks when no points are given
    data_dir  folder that relative data/kernel file names are relative to (a config file's folder)

    Returned arrays are buffers owned by the likelihood, reused by the next call with the same batch size:
    copy them to keep them, or pass ``out``/``grad_out``. ``nbad`` is the number of bad samples (NaN, +inf,
    math domain error, or a non-finite gradient) in the last call; they come back as NaN.
    """

    def __init__(self, fn, params, data=None, backend="cpu", dtype=None, gradient=None, *, priors=None,
                 data_dir=None):
        kernel = kernel_source.resolve(fn, base_dir=data_dir)
        derivative = derivatives.from_kernel(kernel)
        self._setup(kernel, derivative, params, data, backend, dtype, gradient, priors, data_dir)

    @classmethod
    def from_derivative(cls, derivative, fn, params, data=None, backend="cpu", dtype=None, gradient=None, *,
                        priors=None, data_dir=None):
        """As the constructor, with per-sample functions from ``derivative`` (any object with the
        interface of docs/internals.md §1, e.g. :class:`likelihoods.derivatives.AnalyticDerivative`)."""
        self = cls.__new__(cls)
        self._setup(kernel_source.resolve(fn, base_dir=data_dir), derivative, params, data, backend, dtype,
                    gradient, priors, data_dir)
        return self

    def _setup(self, kernel, derivative, params, data, backend, dtype, gradient, priors, data_dir):
        self.kernel, self.derivative = kernel, derivative
        if isinstance(params, str) or not all(isinstance(p, str) for p in params):
            raise LikelihoodError(f"params: expected a list of parameter names, got {params!r}")
        self.params = tuple(params)
        if not self.params:
            raise LikelihoodError("params: at least one parameter name is needed")
        if not kernel.arg_names:
            raise LikelihoodError(f"{kernel.filename}:{kernel.node.lineno}: kernel {kernel.name!r} takes no "
                                  "arguments; the first must be the parameter vector")
        self._check_theta_use()
        self.backend = backends.resolve(backend)
        if dtype is None:
            dtype = GPU_DEFAULT_DTYPE if self.backend == "gpu" else "float64"
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            raise LikelihoodError(f"dtype must be 'float32' or 'float64', got {dtype!r}") from None
        if self.dtype not in (np.float32, np.float64):
            raise LikelihoodError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
        self.priors = priors_spec.validate(priors, self.params)
        self.gradient = gradient
        if gradient is not None and not callable(gradient):  # a file reference
            self.gradient = kernel_source.resolve(gradient, base_dir=data_dir, what="gradient").function
        loaded = load_all(data, data_dir)
        self.data = prepare(kernel, loaded, self.dtype)
        self._data64 = prepare(kernel, loaded, np.float64)  # for check_gradient, always in float64
        probe = np.zeros(self.ndim, dtype=self.dtype)
        self.scratch_size = int(derivative.scratch_size(probe, *self.data)) if derivative.needs_scratch else 0
        self._impl = backends.backend_class(self.backend)(derivative, self.data, self.dtype, self.ndim,
                                                          self.scratch_size)
        self.nbad = 0

    def _check_theta_use(self):
        use = argument_uses(self.kernel.node)[self.kernel.arg_names[0]]
        if use.max_index >= len(self.params):
            raise LikelihoodError(f"{self.kernel.filename}:{use.line}:{use.col}: the kernel reads "
                                  f"{self.kernel.arg_names[0]}[{use.max_index}] but params names only "
                                  f"{len(self.params)} parameter(s): {', '.join(self.params)}")

    @property
    def ndim(self):
        return len(self.params)

    def logl(self, thetas, out=None):
        """Log-likelihood of each row of ``thetas`` (B, ndim) -> (B,)."""
        out, self.nbad = self._impl.logl(thetas, out)
        return out

    def logl_and_grad(self, thetas, out=None, grad_out=None):
        """Values (B,) and gradients (B, ndim)."""
        (out, grad_out), self.nbad = self._impl.logl_and_grad(thetas, out, grad_out)
        return out, grad_out

    def grad(self, thetas, grad_out=None):
        """Gradients (B, ndim) only (the value's own work is skipped where it is not needed)."""
        grad_out, self.nbad = self._impl.grad(thetas, grad_out)
        return grad_out

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
        """AD vs analytic (when given) vs finite differences in float64 at ``n`` points.

        ``thetas``: an array (n, ndim); a callable ``thetas(rng, n)``; or None to draw from the default priors.
        """
        thetas = self._check_points(thetas, n, seed)
        values = np.empty(thetas.shape[0])
        ad_grad = np.empty_like(thetas)
        fd_grad = np.empty_like(thetas)
        analytic = None if self.gradient is None else np.empty_like(thetas)
        row = np.empty(self.ndim)
        with np.errstate(all="ignore"):
            for i, theta in enumerate(thetas):
                try:
                    values[i] = self.derivative.value_and_grad(theta, *self._data64, row)
                except (ValueError, OverflowError, ZeroDivisionError):
                    values[i] = np.nan
                ad_grad[i] = row
                if not np.isfinite(values[i]):
                    continue
                fd_grad[i] = gradcheck.finite_difference(self.kernel.function, theta, self._data64)
                if analytic is not None:
                    self.gradient(theta, *self._data64, analytic[i])
        return gradcheck.GradientReport.build(self.params, thetas, values, ad_grad, fd_grad, analytic)

    def _check_points(self, thetas, n, seed):
        rng = np.random.default_rng(seed)
        if thetas is None:
            if self.priors is None:
                raise LikelihoodError("check_gradient: this likelihood has no default priors; pass thetas "
                                      "(an array (n, ndim) or a callable thetas(rng, n))")
            thetas = priors_spec.draw(self.priors, self.params, rng, n)
        elif callable(thetas):
            thetas = thetas(rng, n)
        thetas = np.array(thetas, dtype=np.float64, ndmin=2)
        if thetas.ndim != 2 or thetas.shape[1] != self.ndim:
            raise LikelihoodError(f"check_gradient: thetas must have shape (n, {self.ndim}), got {thetas.shape}")
        return thetas

    def __repr__(self):
        return (f"Likelihood({self.kernel.name}, params={list(self.params)}, backend={self.backend!r}, "
                f"dtype={self.dtype.name!r})")
