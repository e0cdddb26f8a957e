"""logZ of *perfect* nested sampling on likelihoods made of plateaus, with the sampler's own rules for ties.

On the wedding cake of ``tests/sampler/hard_problems.wedding_cake`` (nested hypercubes around the centre of
U(0, 1)^d, each tier half the volume of the one outside it) and the circle plateau of ``hard_problems.plateau``,
the likelihood is a function of the prior volume ``X`` inside a point's level set, so an exact draw from the prior
inside a contour is a uniform ``X`` below the contour's volume. This runs nested sampling with such draws in place
of the chains and the rules of ``sampler.nested.step`` for which points die (every point tied with the contour),
when the live set widens (a plateau holding all but fewer than ``k`` points) and when it refills (at least ``k``
short of ``nlive`` after tied deaths), and computes logZ with ``sampler.evidence``. What it measures is the bias
of those rules and of the estimator, free of any sampling error; ``--no-refill`` runs the rule that killed one
point an iteration while short instead.

    python scripts/perfect_ns_plateaus.py                       # wedding cake, 400 runs, nlive 500
    python scripts/perfect_ns_plateaus.py --problem plateau --runs 2000
    python scripts/perfect_ns_plateaus.py --no-refill
"""

import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from nestgrad.sampler import evidence  # noqa: E402
from nestgrad.sampler.nested import widening_limit  # noqa: E402


class WeddingCake:
    """logL on tier i (volume fraction in (alpha^(i+1), alpha^i]) = -alpha^(2 i / d) / (8 sigma^2)."""

    def __init__(self, ndim=4, alpha=0.5, sigma=0.01):
        self.d, self.alpha, self.sigma = ndim, alpha, sigma
        tiers = np.arange(5000)
        terms = self.tier_logl(tiers) + tiers * math.log(alpha) + math.log(1.0 - alpha)
        self.logz = float(terms.max() + math.log(np.exp(terms - terms.max()).sum()))

    def tier_logl(self, tier):
        return -(self.alpha ** (2.0 * tier / self.d)) / (8.0 * self.sigma ** 2)

    def logl(self, x):
        return self.tier_logl(np.floor(np.log(x) / math.log(self.alpha)))

    def volume_above(self, contour):
        if contour == -np.inf:
            return 1.0
        tier = round(self.d * math.log(-contour * 8.0 * self.sigma ** 2) / (2.0 * math.log(self.alpha)))
        return self.alpha ** (tier + 1)


class CirclePlateau:
    """logL = log 10 on the unit disc, 0 elsewhere, prior U(-3, 3)^2: the disc is the inner pi / 36 of the volume."""

    def __init__(self):
        self.inner = math.pi / 36.0
        self.logz = math.log(1.0 + 9.0 * self.inner)

    def logl(self, x):
        return np.where(x < self.inner, math.log(10.0), 0.0)

    def volume_above(self, contour):
        return 1.0 if contour < 0.0 else self.inner if contour < math.log(10.0) else 0.0


def run(problem, rng, nlive, k, dlogz, refill_rule):
    """One run: logZ - truth."""
    logl, birth = problem.logl(rng.random(nlive)), np.full(nlive, -np.inf)
    dead_logl, dead_birth = [], []
    running = evidence.RunningEvidence()
    limit = widening_limit(nlive)
    while True:
        n = logl.size
        plateau = int(np.count_nonzero(logl == logl.min()))
        refill = refill_rule and n + k <= nlive
        if refill or (plateau > max(1, n - k) and n + k <= limit):
            contour, dies = float(birth.max()), np.zeros(n, bool)
        else:
            m = min(k + n - nlive, n) if refill_rule else min(max(1, k + n - nlive), n)
            contour = float(np.partition(logl, m - 1)[m - 1])
            dies = logl <= contour
            if dies.all():
                break  # every live point tied after widening: the run ends (AllLiveTied)
        removed = np.sort(logl[dies])
        running.remove(removed, n)
        dead_logl.append(removed)
        dead_birth.append(birth[dies][np.argsort(logl[dies], kind="stable")])
        volume = problem.volume_above(contour)
        if volume <= 0.0:
            break
        logl = np.concatenate([logl[~dies], problem.logl(rng.random(k) * volume)])
        birth = np.concatenate([birth[~dies], np.full(k, contour)])
        if running.remaining(logl) < dlogz:
            break
    all_logl = np.concatenate(dead_logl + [logl])
    all_birth = np.concatenate(dead_birth + [birth])
    order = evidence.sort_dead(all_logl, all_birth)
    counts = evidence.live_counts(all_logl[order], all_birth[order])
    return evidence.from_counts(all_logl[order], counts).logz - problem.logz


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", choices=("wedding_cake", "plateau"), default="wedding_cake")
    parser.add_argument("--nlive", type=int, default=500)
    parser.add_argument("--delete-fraction", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--dlogz", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-refill", action="store_true", help="one death an iteration while the set is short")
    opts = parser.parse_args()
    problem = WeddingCake() if opts.problem == "wedding_cake" else CirclePlateau()
    k = max(1, int(round(opts.delete_fraction * opts.nlive)))
    rng = np.random.default_rng(opts.seed)
    errors = np.array([run(problem, rng, opts.nlive, k, opts.dlogz, not opts.no_refill) for _ in range(opts.runs)])
    print(f"perfect nested sampling, {opts.problem}, nlive {opts.nlive}, k {k}, "
          f"{'one death an iteration while short' if opts.no_refill else 'refill'}: logZ - truth "
          f"{errors.mean():+.4f} ± {errors.std(ddof=1) / math.sqrt(errors.size):.4f} nats over {errors.size} runs, "
          f"seed scatter {errors.std(ddof=1):.3f}")


if __name__ == "__main__":
    main()
