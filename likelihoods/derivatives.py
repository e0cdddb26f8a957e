"""Where the per-sample functions come from.

``from_kernel`` asks ``ad`` to differentiate the user's kernel (the normal path). ``AnalyticDerivative``
offers the same interface (docs/internals.md, section "ad") built from a kernel and a hand-written gradient instead; the
benchmark uses it as the hand-written baseline and the backend tests use it to exercise the batch drivers
independently of ``ad``.
"""

import inspect
import types

from .errors import LikelihoodError

# fastmath without nnan/ninf, so bad samples stay visible as NaN/inf
FASTMATH = frozenset({"reassoc", "contract", "arcp", "nsz", "afn"})


def from_kernel(kernel):
    """``ad`` Derivative of a :class:`KernelSource` with respect to its first argument."""
    try:
        from nestgrad import ad
    except ImportError as err:  # pragma: no cover - only while ad/ is being written
        raise LikelihoodError(f"the differentiator package 'ad' cannot be imported ({err})") from None
    wrt = kernel.arg_names[0] if kernel.arg_names else "theta"
    function = getattr(kernel.function, "py_func", kernel.function)  # under a numba decorator: the Python one
    if isinstance(function, types.FunctionType):
        # the function kernel_source already imported: differentiating the text instead would run the user's
        # module-level code a second time
        return ad.differentiate(function, wrt=wrt)
    return ad.differentiate_source(kernel.text, kernel.name, wrt=wrt, filename=kernel.filename)


def widenable(derivative) -> bool:
    """Whether ``derivative``'s builds can keep their loop sums in float64: only the differentiator's own code."""
    from nestgrad import ad

    return isinstance(derivative, ad.Derivative)


def with_sum_dtype(derivative, sum_dtype):
    """``derivative``, or a view of it whose float32 builds keep the kernel's loop sums in float64
    (``sum_dtype="float64"``; ad/emit.py ``loop_sums``). Only the differentiator's own code can be widened."""
    if sum_dtype is None:
        return derivative
    if not widenable(derivative):
        raise LikelihoodError("sum_dtype: float64 sums need a kernel differentiated by nestgrad, not "
                              f"{type(derivative).__name__}")
    return _WideSums(derivative)


class _WideSums:
    """A Derivative whose compiled builds are asked for float64 sums; everything else is the Derivative's."""

    def __init__(self, derivative):
        self._derivative = derivative

    def __getattr__(self, name):
        return getattr(self._derivative, name)

    def jit(self, fastmath=FASTMATH, dtype="float64"):
        return self._derivative.jit(fastmath=fastmath, dtype=dtype, sum_dtype="float64")

    def cuda(self, dtype="float32"):
        return self._derivative.cuda(dtype=dtype, sum_dtype="float64")


class AnalyticDerivative:
    """Per-sample functions from ``kernel(theta, *data)`` and ``gradient(theta, *data, out)``."""

    needs_scratch = False

    def __init__(self, kernel, gradient):
        self.kernel, self.gradient = kernel, gradient
        self.arg_names = tuple(inspect.signature(kernel).parameters)
        self.wrt = self.arg_names[:1]
        self._jit, self._cuda = {}, {}

    def scratch_size(self, *args):
        return 0

    def value(self, theta, *consts):
        return self.kernel(theta, *consts)

    def value_and_grad(self, theta, *consts):
        *consts, grad_out = consts
        self.gradient(theta, *consts, grad_out)
        return self.kernel(theta, *consts)

    def grad(self, theta, *consts):
        *consts, grad_out = consts
        self.gradient(theta, *consts, grad_out)

    def _wrappers(self, decorate):
        """raw_* wrappers with the data arguments spelled out (numba has no ``*args``)."""
        data = ", ".join(self.arg_names[1:])
        data = data + ", " if data else ""
        source = (f"def raw_value(theta, {data}scratch):\n"
                  f"    return kernel_fn(theta, {data[:-2]})\n\n"
                  f"def raw_value_and_grad(theta, {data}grad_out, scratch):\n"
                  f"    gradient_fn(theta, {data}grad_out)\n"
                  f"    return kernel_fn(theta, {data[:-2]})\n\n"
                  f"def raw_grad(theta, {data}grad_out, scratch):\n"
                  f"    gradient_fn(theta, {data}grad_out)\n")
        source = source.replace("(theta, )", "(theta)")
        namespace = {"kernel_fn": decorate(self.kernel), "gradient_fn": decorate(self.gradient)}
        exec(compile(source, f"<analytic {self.kernel.__name__}>", "exec"), namespace)
        return _Functions(namespace["kernel_fn"], decorate(namespace["raw_value"]),
                          decorate(namespace["raw_value_and_grad"]), decorate(namespace["raw_grad"]))

    def jit(self, fastmath=FASTMATH, dtype="float64"):
        import numba

        flags = fastmath if isinstance(fastmath, bool) else frozenset(fastmath)
        if flags not in self._jit:  # the same machine code serves every dtype (numba specialises on call)
            option = flags if isinstance(flags, bool) else set(flags)
            self._jit[flags] = self._wrappers(lambda f: numba.njit(f, fastmath=option))
        return self._jit[flags]

    def cuda(self, dtype="float32"):
        from numba import cuda

        if "device" not in self._cuda:
            self._cuda["device"] = self._wrappers(lambda f: cuda.jit(f, device=True))
        return self._cuda["device"]


class _Functions:
    def __init__(self, value, raw_value, raw_value_and_grad, raw_grad):
        self.value = value
        self.raw_value = raw_value
        self.raw_value_and_grad = raw_value_and_grad
        self.raw_grad = raw_grad
