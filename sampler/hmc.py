"""Constrained HMC in the unit cube (Galilean / reflective billiards, Skilling's GMC), fused over chains.

One step from ``u`` with velocity ``v`` (the prior is flat in ``u``, so there is no force):

1. ``y = u + v``. If ``y`` is inside (in the cube and ``logL(y) > L*``; NaN is outside) move there.
2. Otherwise reflect off the boundary at ``y``: ``n`` is the cube-face normal when ``y`` left the cube, else
   ``grad_u logL(y) = grad_theta logL * dtheta/du`` (chain rule through the prior transform);
   ``v' = v - 2 (v.n) n / |n|^2`` and ``z = y + v'``. If ``z`` is inside, move there with ``v'``.
3. Otherwise (or when ``n`` is zero/NaN) reverse: ``v <- -v`` and stay.

Each case is a volume-preserving map that becomes an involution after a velocity flip (the reflection uses
the normal at ``y``, which the reversed move visits too), so every step leaves the uniform distribution on
``{u : L(u) > L*}`` times an isotropic velocity invariant; so does redrawing the direction (a Gibbs update of
``v`` at fixed ``u``), which happens every ``refresh_every`` steps on a fixed schedule.
``tests/sampler/test_invariance.py`` checks invariance by the shrinkage and insertion-rank tests. Every chain
ends inside, so there is no accept/reject step. Gradients are evaluated only at outside points (step 2), so a
trajectory costs about ``n_steps * (1 + outside_fraction)`` likelihood evaluations.

The velocity has length ``step_size * exp(step_jitter * N(0,1))`` per chain and a uniform direction. Between
iterations the step size follows the measured outside fraction towards ``target_outside``.
"""

import math
import time
import types
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .prior_families import transform_one
from .rng import normal
from .stable_jit import fresh_dispatcher

# Per-chain statistics columns written by the fused kernel.
STAT_STEPS, STAT_OUTSIDE, STAT_REFLECT, STAT_REVERSE, STAT_NLIKE, STAT_NGRAD = range(6)
NSTATS = 6


class HMCSettings(NamedTuple):
    """Tuning of the constrained-HMC proposal.

    n_steps: steps per trajectory; ``None`` means ``min_steps + steps_per_dim * ndim`` (20 + 2 d). With it the
        shrinkage and insertion-rank tests pass at d = 2, 10 (CI) and 50 (slow suite) and logZ lands within
        3 sigma on the Gaussians (d = 2..100), shells, eggbox, Rosenbrock and the seed posterior
        (tests/sampler). Shorter trajectories also passed the d = 50 shrinkage/rank tests (1 and 0.5 steps per
        dimension, 2 seeds each) with rms logZ pulls of 1.1 on the 30-D Gaussian (10 seeds; 0.9 with 2 per
        dimension) and 1.3 on the 100-D one (4 seeds), for 40-60% fewer evaluations. The shrinkage test is
        weakly sensitive to correlated chains and those samples are small, so the default stays at 2 per
        dimension; ``steps_per_dim=1`` is a reasonable setting when speed matters. Thin curved contours mix
        slowly but without bias: on the 2-D shells (nlive 500, 20 seeds) the posterior weight at x2 > 0 was
        0.499 with seed-to-seed sd 0.030 (0.021 with 100 steps, 0.019 with 400; 0.013 for independent samples),
        see tests/sampler/test_shells_symmetry.py.
    refresh_every: a fresh isotropic direction every this many steps. Needed: a billiard in a spherical contour
        conserves its impact parameter (angular momentum), so with one direction per trajectory the radius, the
        one coordinate nested sampling cares about, barely mixes. Measured on the 30-D Gaussian (nlive 500):
        one direction per 300-step trajectory gave logZ pulls of -2.2, +9.2, +1.8 sigma; refreshing every 10
        steps brought 4 seeds within 1.2 sigma. On the 10-D Gaussian (36 seeds) the rms pull was 1.5 with 10
        and 0.8 with 5 steps between refreshes, hence 5 (~ one boundary hit per segment at target_outside 0.2).
    target_outside: outside fraction the step size is tuned to. 0.2: lower fractions make the step small relative
        to the region (more evaluations per unit distance), higher ones spend most evaluations on reflections.
    initial_step: step length in unit-cube units before any adaptation.
    step_jitter: sigma of the per-chain log-normal jitter of the step length (breaks resonances of fixed steps).
    adapt_rate: gain of ``log step += adapt_rate * (target_outside - outside_fraction)`` per iteration.
    """

    n_steps: int | None = None
    min_steps: int = 20
    steps_per_dim: float = 2.0
    target_outside: float = 0.2
    initial_step: float = 0.1
    step_jitter: float = 0.3
    adapt_rate: float = 2.0
    refresh_every: int = 5

    def steps_for(self, ndim: int) -> int:
        if self.n_steps is not None:
            return int(self.n_steps)
        return int(round(self.min_steps + self.steps_per_dim * ndim))

    def adapt(self, step_size: float, outside_fraction: float) -> float:
        """Next iteration's step size from this iteration's measured outside fraction."""
        new = step_size * math.exp(self.adapt_rate * (self.target_outside - outside_fraction))
        return float(min(max(new, 1e-12), 1.0))

    @classmethod
    def from_any(cls, value) -> "HMCSettings":
        """Accept ``None``, an ``HMCSettings`` or a dict of fields; unknown keys are errors naming the key."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if not isinstance(value, dict):
            raise TypeError(f"hmc: expected a dict of settings, got {value!r}")
        unknown = sorted(set(value) - set(cls._fields))
        if unknown:
            raise ValueError(f"hmc: unknown setting(s) {', '.join(unknown)}; known: {', '.join(cls._fields)}")
        out = cls(**value)
        if out.n_steps is not None and int(out.n_steps) < 1:
            raise ValueError(f"hmc.n_steps must be >= 1, got {out.n_steps}")
        if int(out.refresh_every) < 1:
            raise ValueError(f"hmc.refresh_every must be >= 1, got {out.refresh_every}")
        if not 0.0 < out.target_outside < 1.0:
            raise ValueError(f"hmc.target_outside must be in (0, 1), got {out.target_outside}")
        if not 0.0 < out.initial_step <= 1.0:
            raise ValueError(f"hmc.initial_step must be in (0, 1], got {out.initial_step}")
        return out

# --- the trajectory body --------------------------------------------------------------------------------------
# ``_inside``, ``_chain``, ``_advance`` and ``_evaluate`` are templates, never called here: their globals
# ``value``, ``value_and_grad`` (the likelihood's per-sample functions), ``transform`` (prior) and ``draw_normal``
# (RNG) are bound per target by :func:`chain_function`: njit functions for the CPU, device functions for the GPU
# (``sampler.hmc_gpu``). One body, so the backends cannot drift.


def _inside(y, logl_star, data, codes, args, theta, jac):
    # Returns (inside, logl, evaluated): outside the cube nothing is evaluated.
    for i in range(y.shape[0]):
        if not (y[i] > 0.0 and y[i] < 1.0):
            return False, -math.inf, False
    transform(codes, args, y, theta, jac)
    ly = float(value(theta, data))
    return ly > logl_star, ly, True


def _chain(j, u_start, logl_start, logl_star, step_sizes, n_steps, refresh_every, rng_states, data, codes, args,
           work_u, work_v, work_y, work_w, work_z, work_theta, work_jac, work_grad, work_scratch,
           out_u, out_theta, out_logl, stats):
    # One chain's whole trajectory. Kept out of the prange body: numba compiles a parfor body much more
    # slowly than an ordinary function it calls.
    d = u_start.shape[1]
    u, v, y, w, z = work_u[j], work_v[j], work_y[j], work_w[j], work_z[j]
    theta, jac, grad, scratch = work_theta[j], work_jac[j], work_grad[j], work_scratch[j]
    for s in range(NSTATS):
        stats[j, s] = 0
    for i in range(d):
        u[i] = u_start[j, i]
    logl = logl_start[j]
    for t in range(n_steps):
        if t % refresh_every == 0:
            # Fresh isotropic direction: a Gibbs update of v at fixed u, valid at any fixed schedule.
            norm = 0.0
            for i in range(d):
                v[i] = draw_normal(rng_states, j)
                norm += v[i] * v[i]
            scale = step_sizes[j] / math.sqrt(norm)
            for i in range(d):
                v[i] *= scale
        stats[j, STAT_STEPS] += 1
        for i in range(d):
            y[i] = u[i] + v[i]
        ok, ly, evaluated = _inside(y, logl_star, data, codes, args, theta, jac)
        if evaluated:
            stats[j, STAT_NLIKE] += 1
        if ok:
            for i in range(d):
                u[i] = y[i]
            logl = ly
            continue
        stats[j, STAT_OUTSIDE] += 1
        # Normal of the boundary at y: cube faces first, else the likelihood gradient in u.
        in_cube = evaluated
        if in_cube:
            value_and_grad(theta, data, grad, scratch)
            stats[j, STAT_NGRAD] += 1
            stats[j, STAT_NLIKE] += 1
            for i in range(d):
                w[i] = grad[i] * jac[i]
        else:
            for i in range(d):
                w[i] = (1.0 if y[i] >= 1.0 else 0.0) - (1.0 if y[i] <= 0.0 else 0.0)
        nn = 0.0
        vn = 0.0
        for i in range(d):
            nn += w[i] * w[i]
            vn += v[i] * w[i]
        if not (nn > 0.0 and math.isfinite(nn) and math.isfinite(vn)):
            stats[j, STAT_REVERSE] += 1
            for i in range(d):
                v[i] = -v[i]
            continue
        c = 2.0 * vn / nn
        for i in range(d):
            w[i] = v[i] - c * w[i]  # reflected velocity v'
            z[i] = y[i] + w[i]
        ok, lz, evaluated = _inside(z, logl_star, data, codes, args, theta, jac)
        if evaluated:
            stats[j, STAT_NLIKE] += 1
        if ok:
            stats[j, STAT_REFLECT] += 1
            for i in range(d):
                u[i] = z[i]
                v[i] = w[i]
            logl = lz
        else:
            stats[j, STAT_REVERSE] += 1
            for i in range(d):
                v[i] = -v[i]
    transform(codes, args, u, theta, jac)
    for i in range(d):
        out_u[j, i] = u[i]
        out_theta[j, i] = theta[i]
    out_logl[j] = logl


def _advance(u_start, logl_start, logl_star, step_sizes, n_steps, refresh_every, rng_states, data, codes, args,
             work_u, work_v, work_y, work_w, work_z, work_theta, work_jac, work_grad, work_scratch,
             out_u, out_theta, out_logl, stats):
    for j in prange(u_start.shape[0]):
        _chain(j, u_start, logl_start, logl_star, step_sizes, n_steps, refresh_every, rng_states, data, codes,
               args, work_u, work_v, work_y, work_w, work_z, work_theta, work_jac, work_grad, work_scratch,
               out_u, out_theta, out_logl, stats)


def _evaluate(thetas, data, theta_buf, out):
    # Initial draws only; serial, because a second parallel function would double the compile time for a
    # once-per-run batch.
    for b in range(thetas.shape[0]):
        t = theta_buf[b]
        for i in range(thetas.shape[1]):
            t[i] = thetas[b, i]
        out[b] = value(t, data)


def _bind(fn, jit, **globals_):
    """``fn``'s code compiled by ``jit`` with the template globals bound to ``globals_``."""
    namespace = dict(fn.__globals__)
    namespace.update(globals_)
    return jit(types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__))


def chain_function(value, value_and_grad, transform, draw_normal, jit, jit_inline):
    """``chain(j, ...)``: chain ``j``'s whole trajectory (the ``_chain`` template) compiled by ``jit`` with the
    target's likelihood functions, prior ``transform`` and RNG ``draw_normal`` (used for the GPU kernel and for
    likelihoods whose functions do not live in a generated module)."""
    inside = _bind(_inside, jit_inline, value=value, transform=transform)
    return _bind(_chain, jit, value=value, value_and_grad=value_and_grad, transform=transform,
                 draw_normal=draw_normal, _inside=inside)


# --- the CPU kernel ---------------------------------------------------------------------------------------------
# Compiled in every process, never loaded from numba's on-disk cache, and against fresh copies of the likelihood's
# functions: that is what makes a resumed run bit-identical to an uninterrupted one (see sampler/stable_jit.py).

_KERNEL_CACHE = {}


def _compiled_in_memory(value, value_and_grad):
    njit_plain, njit_inline = njit(error_model="numpy"), njit(inline="always", error_model="numpy")
    chain = chain_function(value, value_and_grad, transform_one, normal, njit_plain, njit_inline)
    advance = _bind(_advance, njit(parallel=True, error_model="numpy"), _chain=chain)
    return advance, _bind(_evaluate, njit_plain, value=value)


def _kernels(value, value_and_grad):
    """``(advance, evaluate)`` for one likelihood, compiled in this process (kept per pair of dispatchers)."""
    key = (id(value), id(value_and_grad))
    hit = _KERNEL_CACHE.get(key)
    if hit is not None and hit[0] is value and hit[1] is value_and_grad:
        return hit[2]
    memo = {}
    pair = _compiled_in_memory(fresh_dispatcher(value, memo), fresh_dispatcher(value_and_grad, memo))
    _KERNEL_CACHE[key] = (value, value_and_grad, pair)
    return pair


def make_chain_kernel(value, value_and_grad):
    """The fused CPU kernel for one likelihood: ``advance(...)`` runs all chains through whole trajectories
    (``prange`` over chains), with the likelihood's njit ``value``/``value_and_grad`` compiled inline."""
    return _kernels(value, value_and_grad)[0]


def make_batch_evaluator(value, value_and_grad=None):
    """njit ``evaluate(thetas, data, theta_buf, out)``: ``value`` on every row (initial draws). Pass the
    ``value_and_grad`` of the same likelihood to share the compiled pair with :func:`make_chain_kernel`."""
    if value_and_grad is None:
        return _compiled_in_memory(fresh_dispatcher(value), fresh_dispatcher(value))[1]
    return _kernels(value, value_and_grad)[1]


class AdaptiveThreads:
    """Calls the parallel chain kernel with either all numba threads or one, whichever was faster when last
    measured. With little work per iteration (few chains, cheap likelihood) a parallel region costs more than
    it saves, and far more when other processes keep the cores busy: measured on the busy 2-core development
    machine, the seed 4-D posterior (nlive 500) took 0.05 s on one thread and 0.98 s on two, while the 30-D
    Gaussian took 1.17 s on one and 0.61 s on two. Results do not depend on the thread count (each chain owns
    its RNG row and work arrays), so this choice changes timings only, never the computation.
    The first ``trials`` calls of every ``retune_every`` alternate one thread / all threads and time them.
    """

    def __init__(self, advance, retune_every=200, trials=6):
        import numba
        self._numba = numba
        self.advance = advance
        self.retune_every, self.trials = retune_every, trials
        self.max_threads = numba.get_num_threads()
        self.calls = 0
        self.threads = self.max_threads
        self._times = {}

    def __call__(self, *args):
        if self.max_threads == 1:
            return self.advance(*args)
        phase = self.calls % self.retune_every
        trial = phase < self.trials
        n = (1 if phase % 2 == 0 else self.max_threads) if trial else self.threads
        previous = self._numba.get_num_threads()
        self._numba.set_num_threads(n)
        try:
            start = time.perf_counter()
            self.advance(*args)
            elapsed = time.perf_counter() - start
        finally:
            self._numba.set_num_threads(previous)
        if trial:
            self._times[n] = min(self._times.get(n, math.inf), elapsed)
            if phase == self.trials - 1:
                self.threads = min(self._times, key=self._times.get)
                self._times = {}
        self.calls += 1


class ChainWorkspace:
    """Per-chain work arrays, allocated once per run (the fused kernel allocates nothing)."""

    def __init__(self, nchains: int, ndim: int, dtype, scratch_size: int):
        f8 = np.float64
        self.u, self.v, self.y, self.w, self.z = (np.empty((nchains, ndim), f8) for _ in range(5))
        self.theta = np.empty((nchains, ndim), dtype)
        self.jac = np.empty((nchains, ndim), f8)
        self.grad = np.empty((nchains, ndim), dtype)
        self.scratch = np.empty((nchains, max(int(scratch_size), 0)), dtype)
        self.out_u = np.empty((nchains, ndim), f8)
        self.out_theta = np.empty((nchains, ndim), f8)
        self.out_logl = np.empty(nchains, f8)
        self.stats = np.zeros((nchains, NSTATS), np.int64)

    def arrays(self):
        return (self.u, self.v, self.y, self.w, self.z, self.theta, self.jac, self.grad, self.scratch,
                self.out_u, self.out_theta, self.out_logl, self.stats)
