"""One fuzz case: generate, import, differentiate, evaluate three ways, compare (see the package docstring)."""
import dataclasses
import hashlib
import importlib.util
import pathlib
import sys
import tempfile
import warnings

import numpy as np

from nestgrad import ad

from . import generator, jax_interp

MARGIN = 1e-8           # skip a point whose nearest branch decision is closer than this (relative) ...
MARGIN32 = 1e-4         # ... or this when a float32 kernel is compared (its rounding moves switches further)
VALUE_TOL = {"python": 1e-9, "jit": 1e-7, "jit32": 1e-3}
GRAD_TOL = {"python": 1e-7, "jit": 1e-6, "jit32": 2e-2}


@dataclasses.dataclass
class Outcome:
    seed: int
    status: str = "ok"     # ok | unsupported | kernel_error | fail
    kind: str = ""         # for failures: crash, numba, value, grad, oracle; for rejections: the message
    message: str = ""
    source: str = ""
    compared: int = 0      # points compared
    skipped: int = 0       # points skipped (non-finite, near a switch)
    jitted: bool = False

    def report(self):
        return f"seed {self.seed}: {self.status} [{self.kind}] {self.message}\n{self.source}"


def _import(source, seed, folder):
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    path = pathlib.Path(folder) / f"fuzz_kernel_{seed}_{digest}.py"
    path.write_text(source)
    name = f"ad_fuzz_kernel_{seed}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _plain(fn, point, args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return float(fn(point, *args))
        except (ArithmeticError, ValueError, TypeError):   # e.g. math.sin(inf), -numpy.bool_: no reference
            return np.nan


def _bad_value(got, want, tol):
    return not (np.isfinite(got) and abs(got - want) <= tol * (1.0 + abs(want)))


def _bad_grad(got, want, tol):
    scale = 1.0 + np.max(np.abs(want))
    return not (np.all(np.isfinite(got)) and np.all(np.abs(got - want) <= tol * scale))


def _fmt(a):
    return np.array2string(np.asarray(a), precision=17, separator=", ")


def compare(out, label, point, tol_key, value, grad, want_value, want_grad, only_grad=None):
    """Fill ``out`` with a failure if ``value``/``grad`` (from ``label``) disagree with the references."""
    where = f"{label} at theta={_fmt(point)}"
    if value is not None and _bad_value(value, want_value, VALUE_TOL[tol_key]):
        out.status, out.kind = "fail", "value"
        out.message = f"{where}: value {value!r}, expected {want_value!r}"
    elif _bad_grad(grad, want_grad, GRAD_TOL[tol_key]):
        out.status, out.kind = "fail", "grad"
        out.message = f"{where}: value_and_grad gradient {_fmt(grad)}, JAX {_fmt(want_grad)}"
    elif only_grad is not None and _bad_grad(only_grad, want_grad, GRAD_TOL[tol_key]):
        out.status, out.kind = "fail", "grad"
        out.message = f"{where}: grad() gradient {_fmt(only_grad)}, JAX {_fmt(want_grad)}"
    return out.status == "fail"


def _evaluate(impl, point, args, ntheta, dtype):
    g = np.full(ntheta, np.nan, dtype=dtype)
    only = np.full(ntheta, np.nan, dtype=dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        p = point.astype(dtype)
        a = tuple(x.astype(dtype) if isinstance(x, np.ndarray) else x for x in args)
        v = impl.value_and_grad(p, *a, g)
        impl.grad(p, *a, only)
    return float(v), g.astype(np.float64), only.astype(np.float64)


def run_case(seed, feats=generator.FAST, size=1.0, **kw):
    """Generate the kernel of ``seed`` and run it (``run_program``'s keywords)."""
    return run_program(generator.generate(seed, feats, size), **kw)


def run_program(prog, npoints=4, jit=False, jit32=False, folder=None, mutate=None):
    """Run one program. ``mutate(grad) -> grad`` perturbs nestgrad's gradients (for the self-test only)."""
    seed = prog.seed
    out = Outcome(seed, source=prog.source, jitted=jit or jit32)
    folder = folder or tempfile.mkdtemp(prefix="ad_fuzz_")
    module = _import(prog.source, seed, folder)
    try:
        d = ad.differentiate(module.kern)
    except ad.UnsupportedError as e:
        out.status, out.kind, out.message = "unsupported", str(e).split(": ", 1)[-1][:100], str(e)
        return out
    except ad.KernelError as e:
        out.status, out.kind, out.message = "kernel_error", str(e).split(": ", 1)[-1][:100], str(e)
        return out
    except Exception as e:  # noqa: BLE001 - any other exception is a crash of the differentiator
        out.status, out.kind, out.message = "fail", "crash", f"ad.differentiate raised {e!r}"
        return out

    points = prog.points(npoints, np.random.default_rng(seed + 7919))
    plain = np.array([_plain(module.kern, p, prog.args) for p in points])
    jv, jg, margin, nv = jax_interp.value_and_grad(prog.source, points, prog.args)
    usable = np.isfinite(plain) & np.isfinite(jv) & np.all(np.isfinite(jg), axis=1)
    usable &= margin > (MARGIN32 if jit32 else MARGIN)
    out.skipped = int(np.sum(~usable))
    impls = [("nestgrad python", "python", d, np.float64)]
    try:
        if jit:
            impls.append(("nestgrad jit float64", "jit", d.jit(), np.float64))
        if jit32:
            impls.append(("nestgrad jit float32", "jit32", d.jit(dtype="float32"), np.float32))
    except Exception as e:  # noqa: BLE001
        out.status, out.kind, out.message = "fail", "numba", f"jit() raised {e!r}"
        return out
    for k in np.flatnonzero(usable):
        point = points[k]
        tol = VALUE_TOL["python"]
        if _bad_value(plain[k], jv[k], tol) or _bad_value(plain[k], nv[k], tol):
            out.status, out.kind = "fail", "oracle"
            out.message = (f"plain Python {plain[k]!r}, JAX {jv[k]!r}, numpy {nv[k]!r} at theta={_fmt(point)} "
                           "(a harness bug)")
            return out
        for label, tol_key, impl, dtype in impls:
            try:
                v, g, only = _evaluate(impl, point, prog.args, prog.ntheta, dtype)
            except Exception as e:  # noqa: BLE001 - numba typing errors surface on the first call
                out.status, out.kind = "fail", "numba" if tol_key != "python" else "crash"
                out.message = f"{label} raised {type(e).__name__}: {str(e)[:1500]}"
                return out
            if mutate is not None:
                g, only = mutate(g), mutate(only)
            if compare(out, label, point, tol_key, v, g, plain[k], jg[k], only):
                return out
        out.compared += 1
    return out


def summarise(outcomes):
    """Counts by status and the number of points compared, for test messages and the slow run's log."""
    counts = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    return {"cases": len(outcomes), "points": sum(o.compared for o in outcomes),
            "skipped_points": sum(o.skipped for o in outcomes), "jitted": sum(o.jitted for o in outcomes),
            **counts}
