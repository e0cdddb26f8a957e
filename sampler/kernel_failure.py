"""An exception raised inside the compiled likelihood, told apart from the sampler's own errors.

The chain kernel and the batch evaluator are numba code around the user's kernel; nestgrad's part of them raises
nothing, so an exception coming out of a call to either is the kernel's (a loop step of zero, an integer
division by zero, a ``raise`` in the kernel). :func:`guard` marks such exceptions as :class:`KernelFailed`, and
the run turns them into one ``SamplerError`` naming the kernel, where the run was, what numba said and, for the
evaluator, the line and parameters where the plain-Python kernel raises (``Likelihood.diagnose``)."""


class KernelFailed(Exception):
    """``error`` raised by the compiled likelihood in ``where`` ("chains" or "evaluation"); ``thetas``: the
    parameter rows being evaluated (None for the chains)."""

    def __init__(self, error, where, thetas=None):
        super().__init__(f"{type(error).__name__}: {error}")
        self.error, self.where, self.thetas = error, where, thetas


class _Guarded:
    def __init__(self, call, where):
        self.call, self.where = call, where

    def __call__(self, *args, **kwargs):
        try:
            return self.call(*args, **kwargs)
        except (KernelFailed, MemoryError):
            raise
        except Exception as error:  # noqa: BLE001 - re-raised, marked as the kernel's
            raise KernelFailed(error, self.where, args[0] if self.where == "evaluation" else None) from error

    def __getattr__(self, name):  # the wrapped object's attributes (AdaptiveThreads' threads, ...)
        return getattr(self.call, name)


def guard(call, where):
    """``call`` with its exceptions raised as :class:`KernelFailed`."""
    return _Guarded(call, where)


def message(failure, likelihood, params, context):
    """The text of the ``SamplerError`` for ``failure`` (a :class:`KernelFailed`) during ``context``."""
    error = failure.error
    said = str(error).splitlines()[0] if str(error) else ""
    kernel = getattr(likelihood, "kernel", None)
    name = f" {kernel.name!r} ({kernel.filename}:{kernel.node.lineno})" if kernel is not None else ""
    text = f"the likelihood kernel{name} raised {type(error).__name__}{': ' + said if said else ''} {context}"
    diagnose = getattr(likelihood, "diagnose", None)
    if failure.thetas is not None and diagnose is not None:
        found = diagnose(failure.thetas, error)
        if "found by running it in Python" in str(found):
            return f"{found}, {context}"
    where = ("numba does not say at which line; look for a loop step that can be 0, an integer division that "
             "can be by 0, or a raise, and run the kernel in Python at such parameters")
    return f"{text} ({where})"
