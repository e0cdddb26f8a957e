"""The chain kernel on a heavy-tailed, star-shaped contour that the unit cube truncates (product of Cauchy densities,
width 0.05 on U(-20, 20)^3, contour reaching the cube's faces): started from exact uniform draws of the contour
(rejection from the prior), its end points are uniform on the contour too (the billiard's cube and contour
reflections and the axis, pair and radial slice moves are exact), and with any of the slice moves one trajectory
forgets how far out each coordinate was, which the billiard alone, its step set by the star's thin arms, does not.

``test_invariance.py`` tests untruncated Gaussian contours; the slow test of ``cauchy10d`` in ``test_mixing.py``
shows what the slower mixing cost: logZ high by about one of its errors (mean pull +1.17 over 20 seeds, 0.05 with
the slice moves)."""

import numpy as np
import pytest
from scipy import stats

from hard_problems import cauchy
from nestgrad.sampler import geometry
from nestgrad.sampler.hmc import NCTRL
from nestgrad.sampler.hmc_cpu import make_chain_kernel
from nestgrad.sampler.hmc_runtime import ChainWorkspace
from nestgrad.sampler.rng import seed_chain_states

D, WIDTH, HALF, BUDGET = 3, 0.05, 20.0, 18.0  # contour: sum_i log(1 + (x_i / width)^2) < BUDGET


def _inside(x):
    return np.log1p((x / WIDTH) ** 2).sum(axis=1) < BUDGET


def _exact(n, gen):
    """Uniform draws from the contour by rejection from the prior."""
    out = []
    while sum(len(o) for o in out) < n:
        x = gen.uniform(-HALF, HALF, size=(400_000, D))
        out.append(x[_inside(x)])
    return np.concatenate(out)[:n]


@pytest.fixture(scope="module")
def setup():
    problem = cauchy(D, width=WIDTH, half_width=HALF)
    k = problem.cpu_kernels()
    gen = np.random.default_rng(2024)
    live = _exact(500, gen)
    starts = _exact(3000, gen)
    reference = _exact(20000, gen)
    logl_star = float(problem.logl(np.zeros((1, D)))[0] - BUDGET)  # logl = logl(0) - sum log(1 + (x/w)^2)
    geo = geometry.build((live + HALF) / (2 * HALF), np.zeros(live.shape[0], np.int64), True)
    return problem, k, make_chain_kernel(k.value, k.value_and_grad), geo, starts, reference, logl_star


def _run(setup, n_steps, slices, seed=7, step=0.1, pairs=0, radial=0):
    problem, k, advance, geo, starts, _, logl_star = setup
    n = starts.shape[0]
    ws = ChainWorkspace(n, D, np.float64, k.scratch_size)
    ctrl = np.zeros(NCTRL, np.int64)
    ctrl[:] = [n_steps, 5, 0, 1, slices, pairs, radial]  # steps, refresh every 5, no jumps, dense metric, slices
    u0 = np.ascontiguousarray((starts + HALF) / (2 * HALF))
    logl0 = problem.logl(starts)
    advance(u0, logl0, logl_star, np.full(n, step), ctrl, seed_chain_states(np.random.default_rng(seed), n),
            k.data, problem.prior.codes, problem.prior.args, *geo.kernel_arrays(), *ws.arrays())
    assert np.all(ws.out_logl > logl_star)
    return ws.out_theta.copy()


@pytest.mark.parametrize("slices,pairs,radial", [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, 3)])
def test_end_points_stay_uniform_on_a_truncated_star(setup, slices, pairs, radial):
    reference = setup[5]
    ends = _run(setup, n_steps=30, slices=slices, pairs=pairs, radial=radial)
    assert np.all(_inside(ends))
    # Every coordinate's distribution (the arms reach the cube's faces) and the budget used.
    for i in range(D):
        assert stats.ks_2samp(ends[:, i], reference[:, i]).pvalue > 1e-3, i
    used = lambda x: np.log1p((x / WIDTH) ** 2).sum(axis=1)
    assert stats.ks_2samp(used(ends), used(reference)).pvalue > 1e-3


def test_slice_moves_forget_how_far_out_each_coordinate_was(setup):
    starts = setup[4]

    def memory(ends):
        # rank correlation of log|x_i| between start and end, averaged over coordinates
        return np.mean([stats.spearmanr(np.log(np.abs(starts[:, i])), np.log(np.abs(ends[:, i])))[0]
                        for i in range(D)])

    # 60 steps, 12 refreshes (measured: 0.41 without the slice moves, 0.16 with them; 0.28 and 0.03 at 120 steps)
    without, with_slices = memory(_run(setup, 60, 0)), memory(_run(setup, 60, 1))
    assert with_slices < 0.25 and without > 2 * with_slices, (without, with_slices)


def test_pair_slice_moves_forget_how_far_out_each_coordinate_was(setup):
    """Slices along differences of live points: on this star most pairs share an arm or the core, so their
    differences run along the arms as the axes do, without knowing where the axes are."""
    starts = setup[4]

    def memory(ends):
        return np.mean([stats.spearmanr(np.log(np.abs(starts[:, i])), np.log(np.abs(ends[:, i])))[0]
                        for i in range(D)])

    # measured: 0.41 without, 0.22 with one pair slice per refresh (0.16 with one axis slice)
    without, with_pairs = memory(_run(setup, 60, 0)), memory(_run(setup, 60, 0, pairs=1))
    assert with_pairs < 0.3 and with_pairs < 0.7 * without, (without, with_pairs)


def test_radial_slice_moves_forget_how_far_out_along_its_arm_a_point_was(setup):
    """Slices along the line through the centre and the chain's point: on a star that line runs along the point's
    arm, so one move can carry it from the core to the arm's tip or back. (Every coordinate scales alike along
    the line, so what it forgets is the point's reach, max_i |x_i|, more than which arm it is on.)"""
    starts = setup[4]

    def memory(ends):
        return stats.spearmanr(np.abs(starts).max(axis=1), np.abs(ends).max(axis=1))[0]

    # measured: 0.49 without, 0.12 with one radial slice per refresh (0.19 with a pair slice, 0.01 with an axis one)
    without, with_radial = memory(_run(setup, 60, 0)), memory(_run(setup, 60, 0, radial=1))
    assert with_radial < 0.25 and with_radial < 0.5 * without, (without, with_radial)


def test_a_ctrl_array_of_the_wrong_length_is_refused(setup):
    """The kernel reads its controls without bounds checks: a short array (one written before a control was
    added) must fail before the kernel runs, not read past its end."""
    problem, k, advance, geo, starts, _, logl_star = setup
    ws = ChainWorkspace(2, D, np.float64, k.scratch_size)
    u0 = np.ascontiguousarray((starts[:2] + HALF) / (2 * HALF))
    with pytest.raises(ValueError, match="controls"):
        advance(u0, problem.logl(starts[:2]), logl_star, np.full(2, 0.1), np.zeros(NCTRL - 1, np.int64),
                seed_chain_states(np.random.default_rng(0), 2), k.data, problem.prior.codes, problem.prior.args,
                *geo.kernel_arrays(), *ws.arrays())
