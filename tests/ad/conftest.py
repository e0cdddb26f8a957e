"""Shared set-up for the differentiator tests.

The kernel corpus in ``kernels/`` is imported as the package ``ad_test_kernels`` (by file location, so the name
cannot collide with another test folder's ``kernels``); test modules then ``import ad_test_kernels``.
"""
import importlib.util
import pathlib
import sys

KERNELS_DIR = pathlib.Path(__file__).resolve().parent / "kernels"


def _load_corpus_package():
    if "ad_test_kernels" in sys.modules:
        return sys.modules["ad_test_kernels"]
    spec = importlib.util.spec_from_file_location(
        "ad_test_kernels", KERNELS_DIR / "__init__.py", submodule_search_locations=[str(KERNELS_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["ad_test_kernels"] = module
    spec.loader.exec_module(module)
    return module


_load_corpus_package()
