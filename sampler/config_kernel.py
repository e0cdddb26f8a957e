"""Config checks that need the kernel file, through likelihoods' own functions, each failure one `ConfigError`
at the config key responsible.

The config reads, imports and analyses nothing itself: the kernel (and an analytic gradient) come from
`likelihoods.kernel_source.from_file`, which parses the file and runs its module-level code once per process
(the Likelihood that `sampler.config.build` makes later gets the very same `KernelSource`); how the kernel uses
its arguments is that KernelSource's `use` (`likelihoods.kernel_use`, analysed once); data values go through
`likelihoods.data`. Reads out of bounds that need every data shape at once, or a run of the kernel, are
checked when the Likelihood is built.
"""
from __future__ import annotations

from nestgrad.likelihoods import data, derivatives, kernel_source, kernel_use
from nestgrad.likelihoods.errors import DataError, LikelihoodError
from nestgrad.sampler.config_schema import Config


def user_function(config: Config, key: str = "kernel") -> kernel_source.KernelSource:
    """The `KernelSource` of `likelihood.kernel` (or `likelihood.gradient`); a ConfigError at that key for a
    syntax error, a missing function or module-level code that fails (with the user's file:line)."""
    file, function = getattr(config.likelihood, key)
    try:
        return kernel_source.from_file(file, function, what=key)
    except LikelihoodError as error:
        raise config.error(("likelihood", key), str(error)) from None


def check_kernel(config: Config) -> None:
    """Everything about `likelihood.kernel`, `.gradient`, `.data` and `params` that needs no compilation."""
    spec = config.likelihood
    kernel = user_function(config)
    use = kernel.use
    problem = kernel_use.theta_problem(use, [p.name for p in config.params])
    if problem:
        at, message = problem
        raise config.error(("params",), f"{kernel_use.describe(at)}: {message}")
    problem = data.key_problem(kernel, spec.data)
    if problem:
        key, message = problem
        raise config.error(("likelihood", "data", key) if key in spec.data else ("likelihood", "data"), message)
    for key, value in spec.data.items():
        try:
            array = data.load_value(key, value)
        except DataError as error:
            raise config.error(("likelihood", "data", key), error.reason) from None
        problem = data.array_problem(use, key, array)
        if problem:
            raise config.error(("likelihood", "data", key), problem)
    differentiate(config, kernel)
    if spec.gradient is not None:
        gradient = user_function(config, "gradient")
        if len(gradient.arg_names) != len(kernel.arg_names) + 1:
            node = gradient.node
            raise config.error(("likelihood", "gradient"),
                               f"{gradient.filename}:{node.lineno}:{node.col_offset + 1}: the gradient must take "
                               f"the kernel's arguments and an output array, def {gradient.name}("
                               f"{', '.join(kernel.arg_names)}, out); it takes ({', '.join(gradient.arg_names)})")


def differentiate(config: Config, kernel: kernel_source.KernelSource) -> None:
    """Run the differentiator now (milliseconds), as the Likelihood will, so a kernel it rejects fails at load
    with file:line:col."""
    from nestgrad import ad

    try:
        derivatives.from_kernel(kernel)
    except ad.KernelError as error:
        raise config.error(("likelihood", "kernel"), f"the differentiator rejects this kernel:\n  {error}") from None
