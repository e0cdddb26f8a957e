"""How often would *perfect* nested sampling see the unequal mixture's light mode run out of live points?

The mixture of ``tests/sampler/hard_problems.unequal_mixture`` (5-D, weights 0.6 / 0.3 / 0.1, widths 0.5 / 0.8 /
0.3, well separated): inside a contour ``log L > L*`` each mode is a ball whose volume is known in closed form,
so perfect nested sampling (every new point an independent draw from the prior inside the contour) can be
simulated exactly: pick a mode with probability its share of the volume, then a radius. A sampler that proposes
from the live points cannot revive a mode whose last live point died; this gives the fraction of runs in which
even perfect sampling touches zero live points in the light mode, between the contours where the box prior stops
mattering (-60) and where the mode dominates (-8).

    python scripts/perfect_ns_mode_loss.py            # 400 runs, nlive 500 (about a minute)
"""

import sys

import numba
import numpy as np

WEIGHTS = np.array([0.6, 0.3, 0.1])
WIDTHS = np.array([0.5, 0.8, 0.3])
D = 5
LOG_PEAK = np.log(WEIGHTS) - D * np.log(WIDTHS) - 0.5 * D * np.log(2 * np.pi)


@numba.njit
def _draw(level, log_peak, widths):
    vol = np.zeros(3)
    for j in range(3):
        if log_peak[j] > level:
            vol[j] = (2 * widths[j] ** 2 * (log_peak[j] - level)) ** (D / 2)
    cdf = np.cumsum(vol / vol.sum())
    pick, mode = np.random.random(), 0
    while pick > cdf[mode]:
        mode += 1
    r2 = 2 * widths[mode] ** 2 * (log_peak[mode] - level) * np.random.random() ** (2 / D)
    return mode, log_peak[mode] - r2 / (2 * widths[mode] ** 2)


@numba.njit
def fewest_in_light_mode(seed, nlive, start, stop, log_peak, widths):
    np.random.seed(seed)
    mode = np.zeros(nlive, np.int64)
    logl = np.zeros(nlive)
    for i in range(nlive):
        mode[i], logl[i] = _draw(start, log_peak, widths)
    fewest = nlive
    while True:
        worst = np.argmin(logl)
        if logl[worst] > stop:
            return fewest
        mode[worst], logl[worst] = _draw(logl[worst], log_peak, widths)
        fewest = min(fewest, int((mode == 2).sum()))


def main(runs=400, nlive=500):
    fewest = np.array([fewest_in_light_mode(s, nlive, -60.0, -8.0, LOG_PEAK, WIDTHS) for s in range(runs)])
    print(f"{runs} perfect runs, nlive {nlive}: light mode down to 0 live points in {np.mean(fewest == 0):.1%}, "
          f"to <= 1 in {np.mean(fewest <= 1):.1%}; fewest-count histogram {np.bincount(fewest)[:8].tolist()}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
