"""Constrained HMC in the unit cube (Galilean / reflective billiards, Skilling's GMC), fused over chains.

Each chain runs in its cluster's metric (``sampler.geometry``): velocity ``v = L_c z`` with ``z`` isotropic, so
in whitened coordinates ``L_c^-1 u`` the billiard is the plain one. One step from ``u`` with velocity ``v``:

1. ``y = u + v``. If ``y`` is inside (in the cube, in the chain's region, and ``logL(y) > L*``; NaN is outside)
   move there.
2. Otherwise, when ``y`` is in the cube but in another cluster's region, reverse (``v <- -v``). Else reflect off
   the boundary at ``y``: ``g`` is the cube-face normal when ``y`` left the cube, else
   ``grad_u logL(y) = grad_theta logL * dtheta/du``; ``v' = v - 2 (v.g) S_c g / (g^T S_c g)`` (the mirror image in
   whitened coordinates) and ``z = y + v'``. If ``z`` is inside, move there with ``v'``.
3. Otherwise (or when ``g`` is zero/NaN) reverse.

Each case is a volume-preserving map that becomes an involution after a velocity flip (the normal is a function
of ``y``, which the reversed move visits too), so every step leaves the uniform distribution on
``{u : L(u) > L*} ∩ region_c`` times the velocity distribution invariant; so does redrawing the direction every
``refresh_every`` steps (a Gibbs update of ``v``). Chains never cross region borders by billiard moves, so each
cluster's metric is used only inside its own region and the kernel is invariant whatever the clustering.

At each refresh a chain proposes ``jumps`` independence jumps: points uniform in the union of the clusters'
bounding ellipsoids, each accepted (Metropolis-Hastings) with ``min(1, count(u) / count(u'))`` when it is
inside the contour and the cube, ``count`` being the number of ellipsoids containing a point. This moves
chains between modes with the right odds. Then ``slices`` slice-sampling moves along axes of the metric (columns
of ``L_c``) and ``pair_slices`` along the difference of two live points of cluster c (drawn from the survivors the
iteration began with, so the direction does not depend on where the chain is): the bracket is the line's chord
through the cube, which every point of the line shares, shrunk towards ``u`` on each miss (Neal 2003), and a point
is inside when it is in the cube, in region c and above the contour. Last, ``radial_slices`` slice moves along the
line through cluster c's centre and ``u``, of the density ``|t|^(d-1)`` that polar coordinates about a fixed centre
give that line: on a star-shaped contour they run along the arm the point is on.

``tests/sampler/test_invariance.py`` checks invariance by the shrinkage and insertion-rank tests. Every chain
ends inside, so there is no final accept/reject.
"""

import math
import types

from .hmc_settings import HMCSettings  # noqa: F401  (re-exported: the settings belong to this kernel)

# Per-chain statistics columns written by the fused kernel.
(STAT_STEPS, STAT_OUTSIDE, STAT_REFLECT, STAT_REVERSE, STAT_NLIKE, STAT_NGRAD, STAT_NAN, STAT_JUMP_TRIED,
 STAT_JUMP_ACCEPTED, STAT_REGION_EXIT) = range(10)
NSTATS = 10
# Integer controls passed as one array: trajectory length, steps between refreshes, jump proposals per refresh,
# dense metric, axis slice moves per refresh, live-point-pair slice moves per refresh, radial slice moves per refresh.
CTRL_N_STEPS, CTRL_REFRESH, CTRL_JUMPS, CTRL_DENSE, CTRL_SLICES, CTRL_PAIR_SLICES, CTRL_RADIAL_SLICES = range(7)
NCTRL = 7
# Shrinkage steps after which an axis slice move gives up and stays put: each shrink at least halves the bracket on
# average, so this is reached only where the slice is narrower than 2^-60 of the cube's chord.
MAX_SHRINK = 60

# --- the trajectory body --------------------------------------------------------------------------------------
# Templates, never called here: their globals ``value``, ``value_and_grad`` (the likelihood's per-sample
# functions), ``transform`` (prior), ``draw_normal``/``draw_uniform`` (RNG) and the helpers below are bound per
# target: as njit source for the CPU (``sampler.hmc_cpu``), as device functions for the GPU (:func:`chain_function`,
# ``sampler.hmc_gpu``).
# One body, so the backends cannot drift.


def _mahalanobis2(x, mean, chol, c, dense, tmp):
    # |L_c^-1 (x - mean_c)|^2 by forward substitution (tmp receives the whitened vector).
    d = x.shape[0]
    total = 0.0
    for i in range(d):
        acc = x[i] - mean[c, i]
        if dense:
            for m in range(i):
                acc -= chol[c, i, m] * tmp[m]
        tmp[i] = acc / chol[c, i, i]
        total += tmp[i] * tmp[i]
    return total


def _region(x, mean, chol, radius2, dense, tmp):
    nclusters = mean.shape[0]
    if nclusters == 1:
        return 0
    best = 0
    best_value = math.inf
    for c in range(nclusters):
        value_c = mahalanobis2(x, mean, chol, c, dense, tmp) / radius2[c]
        if value_c < best_value:
            best_value = value_c
            best = c
    return best


def _ellipsoid_count(x, mean, chol, radius2, dense, tmp):
    count = 0
    for c in range(mean.shape[0]):
        if mahalanobis2(x, mean, chol, c, dense, tmp) <= radius2[c]:
            count += 1
    return count


def _correlated_normal(rng_states, j, chol, c, dense, z, out):
    # out = L_c z for z ~ N(0, I) drawn into z; returns |z| (directions are out / |z|).
    d = z.shape[0]
    norm = 0.0
    for i in range(d):
        z[i] = draw_normal(rng_states, j)
        norm += z[i] * z[i]
    for i in range(d):
        acc = 0.0
        if dense:
            for m in range(i + 1):
                acc += chol[c, i, m] * z[m]
        else:
            acc = chol[c, i, i] * z[i]
        out[i] = acc
    return math.sqrt(norm)


def _in_cube(y):
    for i in range(y.shape[0]):
        if not (y[i] > 0.0 and y[i] < 1.0):
            return False
    return True


def _slice_along(u, w, y, c, logl, logl_star, floor, rng_states, j, g_mean, g_chol, g_radius2, dense, tmp, codes,
                 args, theta, jac, data, scratch, stats):
    # One slice move from u along the direction w: the bracket is the line's chord through the unit cube, the same
    # from every point of the line, shrunk towards u on each miss (Neal 2003); a point u + s w is inside when it is
    # in the cube, in region c, above the contour and |1 + s| >= floor. Exact for the uniform distribution there
    # whatever the direction, as long as the line does not depend on where on it u is. With floor 0 the density
    # along the line is flat; a radial move (w = u - centre) samples |1 + s|^(d-1) by its slice, floor = U^(1/(d-1)).
    # Returns the new logl (u is updated).
    d = u.shape[0]
    nclusters = g_mean.shape[0]
    lo_t = -math.inf
    hi_t = math.inf
    for i in range(d):
        di = w[i]
        if di > 0.0:
            lo_t = max(lo_t, -u[i] / di)
            hi_t = min(hi_t, (1.0 - u[i]) / di)
        elif di < 0.0:
            lo_t = max(lo_t, (1.0 - u[i]) / di)
            hi_t = min(hi_t, -u[i] / di)
    if not (hi_t > lo_t and math.isfinite(hi_t) and math.isfinite(lo_t)):
        return logl
    for _ in range(MAX_SHRINK):
        shift = lo_t + (hi_t - lo_t) * draw_uniform(rng_states, j)
        for i in range(d):
            y[i] = u[i] + shift * w[i]
        inside = abs(1.0 + shift) >= floor and in_cube(y) and (
            nclusters == 1 or region(y, g_mean, g_chol, g_radius2, dense, tmp) == c)
        ly = -math.inf
        if inside:
            ly = counted_value(y, codes, args, theta, jac, data, scratch, stats, j)
            inside = ly > logl_star
        if inside:
            for i in range(d):
                u[i] = y[i]
            return ly
        if shift < 0.0:
            lo_t = shift
        else:
            hi_t = shift
    return logl


def _counted_value(x, codes, args, theta, jac, data, scratch, stats, j):
    # log-likelihood at unit-cube point x (theta and jac receive the prior transform), counted in chain j's stats.
    transform(codes, args, x, theta, jac)
    value_x = float(value(theta, data, scratch))
    stats[j, STAT_NLIKE] += 1
    if value_x != value_x:
        stats[j, STAT_NAN] += 1
    return value_x


def _chain(j, u_start, logl_start, logl_star, step_sizes, ctrl, rng_states, data, codes, args,
           g_mean, g_chol, g_cov, g_radius2, g_cdf, g_pool, g_pool_start,
           work_u, work_v, work_y, work_w, work_z, work_t, work_theta, work_jac, work_grad, work_scratch,
           out_u, out_theta, out_logl, out_cluster, stats):
    # One chain's whole trajectory.
    d = u_start.shape[1]
    n_steps, refresh_every = ctrl[CTRL_N_STEPS], ctrl[CTRL_REFRESH]
    jumps, dense, slices = ctrl[CTRL_JUMPS], ctrl[CTRL_DENSE] != 0, ctrl[CTRL_SLICES]
    pair_slices, radial_slices = ctrl[CTRL_PAIR_SLICES], ctrl[CTRL_RADIAL_SLICES]
    nclusters = g_mean.shape[0]
    u, v, y, w, z, tmp = work_u[j], work_v[j], work_y[j], work_w[j], work_z[j], work_t[j]
    theta, jac, grad, scratch = work_theta[j], work_jac[j], work_grad[j], work_scratch[j]
    for s in range(stats.shape[1]):
        stats[j, s] = 0
    for i in range(d):
        u[i] = u_start[j, i]
    logl = logl_start[j]
    c = region(u, g_mean, g_chol, g_radius2, dense, tmp)
    for t in range(n_steps):
        if t % refresh_every == 0:
            for _ in range(jumps):
                # Independence jump: uniform in a volume-weighted ellipsoid, MH ratio count(u) / count(y).
                stats[j, STAT_JUMP_TRIED] += 1
                r = draw_uniform(rng_states, j)
                cp = 0
                while cp < nclusters - 1 and g_cdf[cp] <= r:
                    cp += 1
                norm = correlated_normal(rng_states, j, g_chol, cp, dense, tmp, w)
                radius = math.sqrt(g_radius2[cp]) * draw_uniform(rng_states, j) ** (1.0 / d) / norm
                for i in range(d):
                    y[i] = g_mean[cp, i] + radius * w[i]
                accept_draw = draw_uniform(rng_states, j)
                if in_cube(y):
                    count_old = ellipsoid_count(u, g_mean, g_chol, g_radius2, dense, tmp)
                    count_new = ellipsoid_count(y, g_mean, g_chol, g_radius2, dense, tmp)
                    if count_old > 0 and count_new > 0 and accept_draw * count_new < count_old:
                        ly = counted_value(y, codes, args, theta, jac, data, scratch, stats, j)
                        if ly > logl_star:
                            stats[j, STAT_JUMP_ACCEPTED] += 1
                            for i in range(d):
                                u[i] = y[i]
                            logl = ly
                            c = region(u, g_mean, g_chol, g_radius2, dense, tmp)
            for _ in range(slices):
                # Slice move along one axis of cluster c's metric (a column of its Cholesky factor): crosses long,
                # heavy-tailed directions in one move where the billiard diffuses.
                axis = min(int(draw_uniform(rng_states, j) * d), d - 1)
                for i in range(d):
                    if dense:
                        w[i] = g_chol[c, i, axis] if i >= axis else 0.0
                    else:
                        w[i] = g_chol[c, i, i] if i == axis else 0.0
                logl = slice_along(u, w, y, c, logl, logl_star, 0.0, rng_states, j, g_mean, g_chol, g_radius2,
                                   dense, tmp, codes, args, theta, jac, data, scratch, stats)
            for _ in range(pair_slices):
                # Slice move along the difference of two live points of cluster c (chosen from the survivors
                # this iteration began with, not from where u is): the directions follow the contour's own shape,
                # the arms of a star whatever their orientation, as differential evolution's do.
                first = g_pool_start[c]
                count = g_pool_start[c + 1] - first
                if count < 2:
                    continue
                a = first + min(int(draw_uniform(rng_states, j) * count), count - 1)
                b = first + min(int(draw_uniform(rng_states, j) * (count - 1)), count - 2)
                if b >= a:
                    b += 1
                for i in range(d):
                    w[i] = g_pool[a, i] - g_pool[b, i]
                logl = slice_along(u, w, y, c, logl, logl_star, 0.0, rng_states, j, g_mean, g_chol, g_radius2,
                                   dense, tmp, codes, args, theta, jac, data, scratch, stats)
            for _ in range(radial_slices):
                # Slice move along the line through cluster c's centre and u: out along the arm u is on, whatever
                # the arm's orientation, and back through the centre. In polar coordinates about a fixed centre the
                # uniform density is r^(d-1) dr along each line, hence the floor.
                for i in range(d):
                    w[i] = u[i] - g_mean[c, i]
                floor = draw_uniform(rng_states, j) ** (1.0 / (d - 1)) if d > 1 else 0.0
                logl = slice_along(u, w, y, c, logl, logl_star, floor, rng_states, j, g_mean, g_chol, g_radius2,
                                   dense, tmp, codes, args, theta, jac, data, scratch, stats)
            # Fresh direction in cluster c's metric: a Gibbs update of v at fixed u, valid at any fixed schedule.
            norm = correlated_normal(rng_states, j, g_chol, c, dense, tmp, v)
            scale = step_sizes[j] / norm
            for i in range(d):
                v[i] *= scale
        stats[j, STAT_STEPS] += 1
        for i in range(d):
            y[i] = u[i] + v[i]
        # Where is y? 0: inside; 1: out of the cube; 2: in another region; 3: below the contour.
        where = 0
        ly = -math.inf
        if not in_cube(y):
            where = 1
        elif nclusters > 1 and region(y, g_mean, g_chol, g_radius2, dense, tmp) != c:
            where = 2
        else:
            ly = counted_value(y, codes, args, theta, jac, data, scratch, stats, j)
            if not ly > logl_star:
                where = 3
        if where == 0:
            for i in range(d):
                u[i] = y[i]
            logl = ly
            continue
        stats[j, STAT_OUTSIDE] += 1
        if where == 2:
            stats[j, STAT_REGION_EXIT] += 1
            stats[j, STAT_REVERSE] += 1
            for i in range(d):
                v[i] = -v[i]
            continue
        # Normal of the boundary at y: cube faces, else the likelihood gradient in u.
        if where == 3:
            value_and_grad(theta, data, grad, scratch)
            stats[j, STAT_NGRAD] += 1
            stats[j, STAT_NLIKE] += 1
            for i in range(d):
                w[i] = grad[i] * jac[i]
        else:
            for i in range(d):
                w[i] = (1.0 if y[i] >= 1.0 else 0.0) - (1.0 if y[i] <= 0.0 else 0.0)
        # s = S_c g (in tmp); reflection v' = v - 2 (v.g) / (g.s) s.
        gs = 0.0
        vg = 0.0
        for i in range(d):
            acc = 0.0
            if dense:
                for m in range(d):
                    acc += g_cov[c, i, m] * w[m]
            else:
                acc = g_cov[c, i, i] * w[i]
            tmp[i] = acc
            gs += w[i] * acc
            vg += v[i] * w[i]
        if not (gs > 0.0 and math.isfinite(gs) and math.isfinite(vg)):
            stats[j, STAT_REVERSE] += 1
            for i in range(d):
                v[i] = -v[i]
            continue
        coef = 2.0 * vg / gs
        for i in range(d):
            w[i] = v[i] - coef * tmp[i]  # reflected velocity v'
            z[i] = y[i] + w[i]
        ok = False
        lz = -math.inf
        if in_cube(z) and (nclusters == 1 or region(z, g_mean, g_chol, g_radius2, dense, tmp) == c):
            lz = counted_value(z, codes, args, theta, jac, data, scratch, stats, j)
            ok = lz > logl_star
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
    out_cluster[j] = c


def _evaluate(thetas, data, theta_buf, scratch, out):
    # Initial draws only; serial (one scratch row serves every sample): a parallel function would add compile
    # time for a once-per-run batch.
    for b in range(thetas.shape[0]):
        t = theta_buf[b]
        for i in range(thetas.shape[1]):
            t[i] = thetas[b, i]
        out[b] = value(t, data, scratch)


def _bind(fn, jit, **globals_):
    """``fn``'s code compiled by ``jit`` with the template globals bound to ``globals_``."""
    namespace = dict(fn.__globals__)
    namespace.update(globals_)
    return jit(types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__))


def chain_function(value, value_and_grad, transform, draw_normal, draw_uniform, jit, jit_inline):
    """``chain(j, ...)``: chain ``j``'s whole trajectory (the ``_chain`` template) compiled by ``jit`` with the
    target's likelihood functions, prior ``transform`` and RNG ``draw_normal``/``draw_uniform``."""
    # Plain (not numba-inlined) helpers: numba-level inlining of every call site multiplied the compile time.
    mahalanobis2 = _bind(_mahalanobis2, jit)
    region = _bind(_region, jit, mahalanobis2=mahalanobis2)
    ellipsoid_count = _bind(_ellipsoid_count, jit, mahalanobis2=mahalanobis2)
    in_cube = _bind(_in_cube, jit)
    correlated_normal = _bind(_correlated_normal, jit, draw_normal=draw_normal)
    counted_value = _bind(_counted_value, jit, value=value, transform=transform)
    slice_along = _bind(_slice_along, jit, draw_uniform=draw_uniform, in_cube=in_cube, region=region,
                        counted_value=counted_value)
    return _bind(_chain, jit, value_and_grad=value_and_grad, transform=transform, draw_uniform=draw_uniform,
                 region=region, ellipsoid_count=ellipsoid_count, in_cube=in_cube,
                 correlated_normal=correlated_normal, counted_value=counted_value, slice_along=slice_along)
