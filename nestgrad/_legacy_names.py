"""The pre-package import names (``import ad``, ``from sampler.hmc import ...``) inside a source checkout.

They resolve to the very same module objects as ``nestgrad.ad``, ``nestgrad.sampler.hmc``, ... so that code
written against the old names and code using ``nestgrad.*`` share classes, registries (``ad.rule``) and compiled
kernels. Installed nestgrad never installs this: the names ``ad`` and ``sampler`` belong to other PyPI packages.
"""
import importlib
import importlib.abc
import importlib.util
import sys

OLD_NAMES = ("ad", "likelihoods", "sampler")


class _Alias(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass  # already executed under its nestgrad name


class _LegacyNames(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] not in OLD_NAMES:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias("nestgrad." + fullname))


def install():
    if not any(isinstance(f, _LegacyNames) for f in sys.meta_path):
        sys.meta_path.insert(0, _LegacyNames())


def alias_if_old_name(name):
    """Called by a subpackage's ``__init__`` when the path finder loaded it by its old top-level name."""
    import nestgrad  # noqa: F401  (installs the finder in a checkout)

    sys.modules[name] = importlib.import_module("nestgrad." + name)
