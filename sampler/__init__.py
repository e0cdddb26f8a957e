"""nestgrad's nested sampler: priors as unit-cube transforms, batched constrained-HMC proposals and an
evidence computed from the dead points' (logl, logl_birth) alone."""

if __name__ == "sampler":  # imported by its pre-package name from a source checkout: become nestgrad.sampler
    from nestgrad._legacy_names import alias_if_old_name

    alias_if_old_name(__name__)


from . import evidence, priors
from .nested_sampler import NestedSampler
from .priors import Prior
from .results import DeadPoints, Results

__all__ = ["NestedSampler", "Results", "DeadPoints", "Prior", "priors", "evidence", "run_config"]


def run_config(cfg):
    """Run a config file or ``sampler.config.Config`` (see ``sampler.config``)."""
    from .config import run_config as _run_config
    return _run_config(cfg)
