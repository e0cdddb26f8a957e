"""Generated modules on disk: written to the cache directory and imported from there, so numba's
``cache=True`` can reuse machine code in a later process.

Directory: ``$NESTGRAD_CACHE_DIR``, default ``~/.cache/nestgrad``.  File: ``<kernel>_<hash>.py`` where the hash
covers the kernel source, helper and rule sources, the nestgrad version, dtype, target, fastmath flags and the
generated text itself (so a change in the differentiator also changes the key).
"""
import hashlib
import importlib.util
import os
import pathlib
import sys
import tempfile

from nestgrad import __version__ as VERSION


def cache_dir():
    d = os.environ.get("NESTGRAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "nestgrad")
    p = pathlib.Path(d)
    try:
        p.mkdir(parents=True, exist_ok=True)
        if os.access(p, os.W_OK):
            return p
    except OSError:
        pass
    # read-only home (some clusters): fall back to a per-user temporary folder rather than failing
    p = pathlib.Path(tempfile.gettempdir()) / f"nestgrad-cache-{os.getuid() if hasattr(os, 'getuid') else 0}"
    p.mkdir(parents=True, exist_ok=True)
    return p


def key(*parts):
    h = hashlib.sha256()
    h.update(VERSION.encode())
    for part in parts:
        h.update(b"\0")
        h.update(repr(part).encode())
    return h.hexdigest()[:20]


def module_path(kernel_name, digest):
    safe = "".join(c if c.isalnum() or c == "_" else "_" for c in kernel_name)
    return cache_dir() / f"{safe}_{digest}.py"


def text_digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def load_module(kernel_name, digest, text):
    """Write ``text`` (if the file is missing or differs) and import it under a unique module name.

    The one writer of generated modules: ad's per-sample functions, likelihoods' batch drivers and the sampler's
    chain kernel all come through here (``digest=text_digest(text)`` when the text is its own key)."""
    path = module_path(kernel_name, digest)
    modname = f"nestgrad_generated_{path.stem}"
    if modname in sys.modules:
        return sys.modules[modname]
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # atomic: a concurrent process never imports a half-written file
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[modname]  # a later call tries again rather than getting a half-initialised module
        raise
    return module
