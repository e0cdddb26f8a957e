"""The fused CPU chain kernel on disk: compiled once per likelihood by a child process, loaded by every run.

Two numba behaviours tie a kernel's last bits to how it got into the process (``sampler/stable_jit.py``): code
JIT-compiled in a process and the same function loaded from numba's cache can differ under fast-math flags, and
a caller compiled against a cached callee cannot inline it. So the kernel is never JIT-compiled in the process
that samples with it. A child process imports the kernel module below, compiles ``advance_range`` and
``evaluate`` for the run's argument types (against fresh, uncached copies of the likelihood's functions, so
what it builds does not depend on the cache either) and exits; numba has then written them to its cache, and
every run, the first included, loads them from there. Cold, warm and resumed runs execute the same machine code.

The kernel module, ``$NESTGRAD_CACHE_DIR/hmc_kernel_<digest>.py``, holds the trajectory templates of
``sampler.hmc`` as source and imports the likelihood's functions from their modules. numba keys its cache by the
module file, so the digest covers everything the compiled code depends on: the templates, the nestgrad and numba
versions, and the code and global constants of every numba function the kernel calls (likelihood, prior
transform, RNG), with the source files of the modules they use. Any change gives a new file.

Likelihood functions a child cannot import (defined inside a function, with a closure, or in a module without a
file) are compiled in the calling process instead (``sampler.hmc_cpu._compiled_in_memory``); so is everything when
the child fails or numba cannot write its cache.
"""

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import pickle
import subprocess
import sys
import tempfile
import time
import types
import warnings

import numpy as np

from . import hmc_cpu, prior_families, rng

CHILD_TIMEOUT_S = 1800


class KernelCacheWarning(UserWarning):
    """The chain kernel could not be compiled into the cache by a child process (it is compiled in-process)."""


def cache_dir():
    """Where generated modules go: ``$NESTGRAD_CACHE_DIR``, default ``~/.cache/nestgrad`` (as ``ad``'s)."""
    from nestgrad.ad import cache

    return cache.cache_dir()


# --- what the kernel depends on ---------------------------------------------------------------------------------

def _importable(fn):
    """``(module name, function name)`` when a child process can import ``fn`` by its module, else None."""
    py = getattr(fn, "py_func", None)
    if py is None or py.__closure__ or "<locals>" in py.__qualname__:
        return None
    module = sys.modules.get(py.__module__)
    if module is None or not getattr(module, "__file__", None) or getattr(module, py.__name__, None) is not fn:
        return None
    return py.__module__, py.__name__


def _by_name(module):
    """Whether ``import <name>`` in a fresh process finds this very module (else a child loads it from its
    file): looked up on sys.path or the parent package's path, not in sys.modules."""
    name, path = module.__name__, getattr(module, "__file__", None)
    parent, _, last = name.rpartition(".")
    search = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    if path is None or (parent and search is None):
        return False
    try:
        spec = importlib.machinery.PathFinder.find_spec(last, search)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin is not None and os.path.exists(spec.origin) \
        and os.path.samefile(spec.origin, path)


def _module_plan(names):
    """``[(name, file, by_name)]``: the modules to import in a child, generated modules they reference first."""
    plan, seen = [], set()

    def visit(module):
        if module.__name__ in seen:
            return
        seen.add(module.__name__)
        by_name = _by_name(module)
        if not by_name:  # a module loaded from a file under its own name: what it looks up must come first
            for attribute, value in vars(module).items():
                if isinstance(value, types.ModuleType) and getattr(value, "__file__", None):
                    if value.__name__ in sys.modules and not _by_name(value):
                        visit(value)
                elif attribute.startswith("_ext_"):  # a function with an adjoint rule the generated code calls
                    home = sys.modules.get(getattr(getattr(value, "py_func", value), "__module__", None))
                    if home is not None and getattr(home, "__file__", None):
                        visit(home)  # imported first, so that the child finds it (ad.external.function)
        plan.append((module.__name__, module.__file__, by_name))

    for name in names:
        visit(sys.modules[name])
    return plan


def _value_digest(value, hasher, seen):
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        hasher.update(repr(value).encode())
    elif isinstance(value, tuple):
        for item in value:
            _value_digest(item, hasher, seen)
    elif isinstance(value, np.ndarray):
        hasher.update(repr((value.dtype.str, value.shape)).encode() + np.ascontiguousarray(value).tobytes())
    elif isinstance(value, types.ModuleType):
        hasher.update(value.__name__.encode())
        path = getattr(value, "__file__", None)
        if path and path.endswith(".py") and path not in seen:
            seen.add(path)
            with open(path, "rb") as handle:
                hasher.update(hashlib.sha256(handle.read()).digest())
    elif hasattr(value, "py_func"):
        _function_digest(value.py_func, hasher, seen)
    elif isinstance(value, types.FunctionType):
        _function_digest(value, hasher, seen)
    else:
        hasher.update(type(value).__qualname__.encode())


def _code_digest(code, hasher):
    hasher.update(code.co_code)
    hasher.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_digest(const, hasher)
        else:
            hasher.update(repr(const).encode())


def _function_digest(py, hasher, seen):
    if id(py) in seen:
        return
    seen.add(id(py))
    _code_digest(py.__code__, hasher)
    for name in py.__code__.co_names:
        if name in py.__globals__:
            hasher.update(name.encode())
            _value_digest(py.__globals__[name], hasher, seen)
    for cell in py.__closure__ or ():
        _value_digest(cell.cell_contents, hasher, seen)


def dependency_digest(functions):
    """A digest of the code and global constants of ``functions`` and of every numba function they call."""
    hasher, seen = hashlib.sha256(), set()
    for fn in functions:
        _value_digest(fn, hasher, seen)
    return hasher.hexdigest()[:20]


# --- the kernel module --------------------------------------------------------------------------------------------

def module_text(value, value_and_grad):
    """Source of the kernel module for these likelihood functions, or None when a child cannot import them."""
    import numba

    from nestgrad import __version__

    located = [_importable(value), _importable(value_and_grad)]
    if None in located:
        return None
    plan = _module_plan([module for module, _ in located])
    digest = dependency_digest([value, value_and_grad, prior_families.transform_one, rng.normal, rng.uniform])
    lines = [
        f"# Generated by nestgrad.sampler.hmc_cache (nestgrad {__version__}, numba {numba.__version__}): the fused",
        f"# chain kernel for {located[0][0]}.{located[0][1]} and {located[1][0]}.{located[1][1]}.",
        f"# Dependencies' digest {digest}. Safe to delete: it is written again when needed.",
        "import math",
        "",
        "import numba",
        "",
        "from nestgrad.sampler.hmc_cache import import_plan",
        "from nestgrad.sampler.prior_families import transform_one",
        "from nestgrad.sampler.rng import normal, uniform",
        "from nestgrad.sampler.stable_jit import fresh_dispatcher",
        "",
        f"_modules = import_plan({plan!r})",
        "_memo = {}",
        f"value = fresh_dispatcher(_modules[{located[0][0]!r}].{located[0][1]}, _memo)",
        f"value_and_grad = fresh_dispatcher(_modules[{located[1][0]!r}].{located[1][1]}, _memo)",
        "transform = fresh_dispatcher(transform_one, _memo)",
        "",
        "",
    ]
    return "\n".join(lines) + hmc_cpu.cpu_kernel_source(cache=True)


def import_plan(plan):
    """Import ``[(name, file, by_name)]`` in order (modules already imported are reused); returns name -> module."""
    modules = {}
    for name, path, by_name in plan:
        module = sys.modules.get(name)
        if module is None and by_name:
            module = importlib.import_module(name)
        elif module is None:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        modules[name] = module
    return modules


def kernel_module(text):
    """Write ``text`` to the cache folder (once; numba's cache is keyed by the file) and import it."""
    from nestgrad.ad import cache

    return cache.load_module("hmc_kernel", cache.text_digest(text), text)


# --- loading, and compiling in a child ------------------------------------------------------------------------

def _load_cached(dispatcher, signature):
    """Add ``signature``'s overload from numba's on-disk cache to ``dispatcher``; False when it is not there.
    (What ``Dispatcher.compile`` does on a cache hit, without compiling on a miss.)"""
    if tuple(signature) in dispatcher.overloads:
        return True
    result = dispatcher._cache.load_overload(signature, dispatcher.targetctx)
    if result is None:
        return False
    dispatcher.targetctx.insert_user_function(result.entry_point, result.fndesc, [result.library])
    dispatcher.add_overload(result)
    return True


def _load_all(module, signatures):
    return all(_load_cached(getattr(module, name), signature) for name, signature in signatures.items())


class CompileChild:
    """A child Python that imports the kernel module (by its file) and compiles ``signatures`` into numba's
    cache; it runs while the parent goes on (the CLI's gradient check, on the second core)."""

    def __init__(self, module, signatures):
        request = {"sys_path": list(sys.path), "name": module.__name__, "file": module.__file__,
                   "signatures": signatures}
        env = dict(os.environ)
        env.pop("NUMBA_DISABLE_JIT", None)
        self.started = time.perf_counter()
        self.seconds = None
        self._stderr = tempfile.TemporaryFile()  # a file, not a pipe: the parent may not read for a while
        self.error = None
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", "from nestgrad.sampler.hmc_cache import child_main; child_main()"],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._stderr, env=env)
            with self._process.stdin as stdin:
                stdin.write(pickle.dumps(request))
        except OSError as error:
            self._process, self.error = None, str(error)

    def cancel(self):
        """Stop the child (its work is not needed after all); nothing half-written stays in numba's cache,
        which writes each entry to a temporary file and renames it when complete."""
        if self._process is not None and self.seconds is None:
            self._process.kill()
            self._process.wait()
            self.seconds, self.error = time.perf_counter() - self.started, "cancelled"
            self._stderr.close()

    def wait(self):
        """The child's error text, or None once it has compiled everything."""
        if self._process is not None and self.seconds is None:
            try:
                status = self._process.wait(timeout=max(1.0, CHILD_TIMEOUT_S - (time.perf_counter() - self.started)))
            except subprocess.TimeoutExpired:
                self._process.kill()
                status = self._process.wait()
                self.error = f"no result after {CHILD_TIMEOUT_S} s"
            self.seconds = time.perf_counter() - self.started
            if status != 0 and self.error is None:
                self._stderr.seek(0)
                self.error = self._stderr.read().decode(errors="replace")[-2000:] or f"exit status {status}"
            self._stderr.close()
        return self.error


def child_main():
    """The child's side of :class:`CompileChild` (reads the request from stdin)."""
    request = pickle.loads(sys.stdin.buffer.read())  # written by our own parent process a moment ago
    sys.path[:] = request["sys_path"]
    module = import_plan([(request["name"], request["file"], False)])[request["name"]]
    for name, signature in request["signatures"].items():
        getattr(module, name).compile(signature)


class KernelRequest:
    """The kernel module's ``functions`` (name -> dispatcher) for ``signatures``: already loaded from the cache
    (``child`` None), or being compiled by ``child`` (a :class:`CompileChild`)."""

    def __init__(self, module, signatures, child):
        self.module, self.signatures, self.child = module, signatures, child
        self.functions = {name: getattr(module, name) for name in signatures}


def begin(value, value_and_grad, signatures, notify=None):
    """Load ``signatures`` ({"advance_range": ..., "evaluate": ...}) of this likelihood's kernel from numba's
    cache, or start a child process compiling them (``notify("compiling ...")`` is called then); None when the
    kernel cannot be cached (the caller compiles it in this process). :func:`finish` completes it."""
    import numba

    if numba.config.DISABLE_JIT:
        return None
    text = module_text(value, value_and_grad)
    if text is None:
        return None
    try:
        module = kernel_module(text)
    except (OSError, ImportError):
        return None
    if _load_all(module, signatures):
        return KernelRequest(module, signatures, None)
    if notify is not None:
        notify("compiling the sampler's chain kernel for this likelihood (once: later runs load it from the cache)")
    return KernelRequest(module, signatures, CompileChild(module, signatures))


def finish(request):
    """``({name: dispatcher}, origin)`` for a :func:`begin` request, origin "cache" or "compiled" (after waiting
    for the child); None, with a :class:`KernelCacheWarning`, when the child could not put it in the cache."""
    if request.child is None:
        return request.functions, "cache"
    error = request.child.wait()
    if error is None and _load_all(request.module, request.signatures):
        return request.functions, "compiled"
    reason = (error or "numba did not write it to its cache").strip().splitlines()[-1]
    warnings.warn(f"the sampler's chain kernel could not be cached ({reason}); it is compiled in this process, "
                  f"and runs started or resumed with a cached kernel may differ from this one in the last bits",
                  KernelCacheWarning, stacklevel=4)
    return None


def load(value, value_and_grad, signatures, notify=None):
    """:func:`begin` and :func:`finish` in one: ``({name: dispatcher}, origin)`` or None."""
    request = begin(value, value_and_grad, signatures, notify)
    return None if request is None else finish(request)
