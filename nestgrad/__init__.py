"""nestgrad: nested sampling with constrained-HMC proposals, driven by batched per-sample likelihood kernels
whose gradients come from nestgrad's own source-to-source differentiator.

    import nestgrad as ng

    r = ng.run(kernel, {"mu": {"prior": "uniform", "low": -5, "high": 5}}, data={"x": x}, seed=1)
    print(r.summary())

=================  ===========================================================================
``run``            one call: kernel, params (name -> prior spec or a ``Prior``), data -> ``Results``
``run_config``     a YAML config file, as ``nestgrad run CONFIG``
``Likelihood``     a batched per-sample kernel on the cpu / gpu / python backend
``NestedSampler``  the sampler itself, for control beyond ``run``
``Results``        evidence, samples, ``summary()``, ``plot()``, ``save()`` / ``Results.load()``
``priors``         prior families: ``Uniform``, ``LogUniform``, ``Normal``, ... and ``Prior``
``differentiate``  the kernel differentiator (``nestgrad.ad``)
``rule``           register the derivative of a function: partials of a scalar function, or an adjoint
                   for one with array arguments or compiled elsewhere (a numba ``@njit`` function)
``check_gradient`` AD gradient against finite differences (and an analytic gradient)
``special``        special functions with rules (digamma, logaddexp, ...), numba and CUDA compatible
=================  ===========================================================================

The subpackages are ``nestgrad.ad`` (differentiator), ``nestgrad.likelihoods`` (batched kernels) and
``nestgrad.sampler`` (nested sampling); imports run one way, sampler -> likelihoods -> ad.
"""
import importlib
from pathlib import Path

from ._numpy_compat import install as _install_numpy_compat

__version__ = "0.2.0"
_install_numpy_compat()

# In a source checkout the subpackages are the folders ad/, likelihoods/, sampler/ beside this one (an installed
# copy has them inside nestgrad/, mapped there by pyproject.toml's package-dir).
_HERE = Path(__file__).resolve().parent
_CHECKOUT = _HERE.parent
if not (_HERE / "ad").is_dir() and (_CHECKOUT / "ad" / "__init__.py").is_file():
    __path__.append(str(_CHECKOUT))
    from ._legacy_names import install as _install_legacy_names

    _install_legacy_names()

_EXPORTS = {
    "run": ("nestgrad.sampler.api", "run"),
    "run_config": ("nestgrad.sampler.api", "run_config"),
    "Likelihood": ("nestgrad.likelihoods", "Likelihood"),
    "NestedSampler": ("nestgrad.sampler", "NestedSampler"),
    "Results": ("nestgrad.sampler", "Results"),
    "Prior": ("nestgrad.sampler.priors", "Prior"),
    "priors": ("nestgrad.sampler.priors", None),
    "differentiate": ("nestgrad.ad", "differentiate"),
    "rule": ("nestgrad.ad", "rule"),
    "check_gradient": ("nestgrad.ad", "check_gradient"),
    "special": ("nestgrad.ad.special", None),
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name):
    # Lazy, so that `import nestgrad.ad` does not import numba-heavy sampling code it never uses.
    if name not in _EXPORTS:
        raise AttributeError(f"module 'nestgrad' has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
