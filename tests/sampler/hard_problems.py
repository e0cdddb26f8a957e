"""Problems of the classes on which the sampler once gave biased evidence or posteriors (issue "proposals that
mix"), each with an analytic log-evidence and, for multimodal ones, the true mode weights.

Written after the test problems of dynesty (``tests/test_gau.py`` correlated Gaussian, ``test_egg``), UltraNest
(asymmetric Gaussian, funnel) and PolyChord's Gaussian mixtures; references are exact (closed form) — no
number here comes from running nestgrad.
"""

import math

import numpy as np
from numba import njit
from scipy import special

from cut_off_peak import cut_off_peak
from heavy_tailed_modes import cauchy_mixture, correlated_student, rotated_cauchy
from problems import Problem
from nestgrad.sampler.priors import Beta, Cauchy, Exponential, HalfNormal, LogUniform, Normal, Prior, Uniform


# --- one kernel for all Gaussian mixtures: sum_k w_k N(theta; m_k, C_k), precision matrices given ------------
# (one compiled likelihood serves the correlated Gaussian, the mixtures, the ridge and the ignored parameter,
# whose precision has a zero row and column, so the test suite compiles the fused sampler kernel once for them)

@njit
def _component(theta, data, k, grad_out, want_grad):
    means, precs, lognorm = data[0], data[1], data[2]
    d = theta.shape[0]
    q = 0.0
    for i in range(d):
        acc = 0.0
        for j in range(d):
            acc += precs[k, i, j] * (theta[j] - means[k, j])
        if want_grad:
            grad_out[i] = -acc
        q += (theta[i] - means[k, i]) * acc
    return lognorm[k] - 0.5 * q


@njit
def _gmm_value(theta, data, scratch):
    top = -math.inf
    nk = data[0].shape[0]
    for k in range(nk):
        top = max(top, _component(theta, data, k, theta, False))
    total = 0.0
    for k in range(nk):
        total += math.exp(_component(theta, data, k, theta, False) - top)
    return top + math.log(total)


@njit
def _gmm_value_and_grad(theta, data, grad_out, scratch):
    value = _gmm_value(theta, data, scratch)
    d = theta.shape[0]
    for i in range(d):
        grad_out[i] = 0.0
    for k in range(data[0].shape[0]):
        p = math.exp(_component(theta, data, k, scratch, True) - value)
        for i in range(d):
            grad_out[i] += p * scratch[i]
    return value


class GaussianMixture(Problem):
    """sum_k w_k N(theta; m_k, C_k) on a prior that holds all of its mass, so logZ is exact in closed form.

    ``free``: indices of parameters the likelihood ignores (zero rows/columns of the precision; the
    normalisation covers the other parameters only)."""

    def __init__(self, name, means, covs, weights, prior, logz, free=()):
        means = np.asarray(means, dtype=np.float64)
        k, d = means.shape
        kept = [i for i in range(d) if i not in free]
        precs = np.zeros((k, d, d))
        lognorm = np.empty(k)
        for c in range(k):
            sub = np.asarray(covs[c], dtype=np.float64)[np.ix_(kept, kept)]
            precs[c][np.ix_(kept, kept)] = np.linalg.inv(sub)
            lognorm[c] = math.log(weights[c]) - 0.5 * (len(kept) * math.log(2 * math.pi) + np.linalg.slogdet(sub)[1])
        super().__init__(name, prior.names, _gmm_value, _gmm_value_and_grad, (means, precs, lognorm), prior,
                         logz=logz)
        self._kernels = self._kernels._replace(scratch_size=d)
        self.means, self.covs, self.weights = means, np.asarray(covs, float), np.asarray(weights, float)

    def mode_weights(self, theta, weights):
        """Posterior mass of each component's basin (smallest Mahalanobis distance)."""
        dist = np.stack([np.einsum("ij,jk,ik->i", theta - m, np.linalg.pinv(c), theta - m)
                         for m, c in zip(self.means, self.covs)], axis=1)
        nearest = np.argmin(dist, axis=1)
        return np.array([weights[nearest == k].sum() for k in range(len(self.weights))])


def _box(names, half_width):
    return Prior({n: Uniform(-half_width, half_width) for n in names})


def ar1_covariance(ndim, rho, scale_min, scale_max):
    scales = np.geomspace(scale_min, scale_max, ndim)
    lag = np.abs(np.subtract.outer(np.arange(ndim), np.arange(ndim)))
    return np.outer(scales, scales) * rho ** lag


def correlated_gaussian(ndim=20, rho=0.95, scale_min=0.05, scale_max=1.0, prior="uniform", half_width=10.0,
                        prior_sigma=3.0):
    """N(0, C), C = AR(1)(rho) with scales from scale_min to scale_max (axis ratio ~ 80 at the defaults).

    uniform prior on [-w, w]^d (the likelihood's mass lies inside): logZ = -d log(2w);
    normal prior N(0, s^2 I): logZ = log N(0; 0, C + s^2 I)."""
    cov = ar1_covariance(ndim, rho, scale_min, scale_max)
    names = [f"x{i}" for i in range(ndim)]
    if prior == "uniform":
        pri, logz = _box(names, half_width), -ndim * math.log(2 * half_width)
    else:
        pri = Prior({n: Normal(0.0, prior_sigma) for n in names})
        total = cov + prior_sigma ** 2 * np.eye(ndim)
        logz = -0.5 * (ndim * math.log(2 * math.pi) + np.linalg.slogdet(total)[1])
    return GaussianMixture(f"corr{ndim}d_{prior}", [np.zeros(ndim)], [cov], [1.0], pri, logz)


def unequal_mixture(widths=(0.5, 0.8, 0.3), name="mixture5d"):
    """5-D, weights 0.6 / 0.3 / 0.1, widths 0.5 / 0.8 / 0.3 by default (the lightest mode is the narrowest and has
    the highest peak), well separated, prior U(-10, 10)^5: logZ = -5 log 20."""
    means = [[-4.0, -4.0, 0.0, 0.0, 2.0], [4.0, 3.0, 1.0, -2.0, 0.0], [0.0, 4.0, -4.0, 3.0, -3.0]]
    covs = [s * s * np.eye(5) for s in widths]
    names = [f"x{i}" for i in range(5)]
    return GaussianMixture(name, means, covs, [0.6, 0.3, 0.1], _box(names, 10.0), -5 * math.log(20.0))


def slanted_ridge(separation=5.0, scale=1.0, rho=0.99):
    """Two equal modes, each elongated along the diagonal (correlation rho), centred on the line y = x and
    ``separation`` apart along it; prior U(-10, 10)^2: logZ = -log 400, each mode holds half the mass."""
    h = separation / (2 * math.sqrt(2))
    cov = scale ** 2 * np.array([[1.0, rho], [rho, 1.0]])
    return GaussianMixture("ridge2d", [[-h, -h], [h, h]], [cov, cov], [0.5, 0.5], _box(["x", "y"], 10.0),
                           -math.log(400.0))


def ignored_parameter(sigma_free=5.0):
    """a, b ~ N(0.3, 0.05^2) likelihood on uniform [0, 1] priors and a third parameter the likelihood ignores,
    prior N(0, sigma_free): its posterior is its prior; logZ = 2 log(Phi(14) - Phi(-6))."""
    prior = Prior({"a": Uniform(0.0, 1.0), "b": Uniform(0.0, 1.0), "free": Normal(0.0, sigma_free)})
    mass = special.ndtr(0.7 / 0.05) - special.ndtr(-0.3 / 0.05)
    cov = np.diag([0.05 ** 2, 0.05 ** 2, 1.0])
    return GaussianMixture("ignored3d", [[0.3, 0.3, 0.0]], [cov], [1.0], prior, 2 * math.log(mass), free=(2,))


# The ignored parameters of ``ignored_families`` and their priors as scipy distributions (the posterior of each).
IGNORED_FAMILIES = {
    "u": (Uniform(-3.0, 7.0), ("uniform", (-3.0, 10.0))), "lu": (LogUniform(1e-3, 1e2), ("loguniform", (1e-3, 1e2))),
    "hn": (HalfNormal(2.0), ("halfnorm", (0.0, 2.0))), "c": (Cauchy(0.0, 1.0), ("cauchy", (0.0, 1.0))),
    "be": (Beta(2.0, 5.0), ("beta", (2.0, 5.0))), "ex": (Exponential(0.5), ("expon", (0.0, 0.5))),
}


def ignored_families():
    """The ``ignored_parameter`` likelihood on a and b, and six parameters it ignores, one per prior family
    (heavy-tailed Cauchy and log-uniform among them): each one's posterior is its prior; logZ as there."""
    prior = Prior({"a": Uniform(0.0, 1.0), "b": Uniform(0.0, 1.0),
                   **{name: dist for name, (dist, _) in IGNORED_FAMILIES.items()}})
    d = 2 + len(IGNORED_FAMILIES)
    mass = special.ndtr(0.7 / 0.05) - special.ndtr(-0.3 / 0.05)
    cov = np.diag([0.05 ** 2, 0.05 ** 2] + [1.0] * (d - 2))
    mean = np.array([0.3, 0.3] + [0.0] * (d - 2))
    return GaussianMixture("ignored8d_families", [mean], [cov], [1.0], prior, 2 * math.log(mass),
                           free=tuple(range(2, d)))


# --- heavy tails with a narrow core: product of Cauchy densities ---------------------------------------------

@njit
def _cauchy_value(theta, data, scratch):
    g = data[0][0]
    total = 0.0
    for i in range(theta.shape[0]):
        total += math.log(g / math.pi) - math.log(g * g + theta[i] * theta[i])
    return total


@njit
def _cauchy_value_and_grad(theta, data, grad_out, scratch):
    g = data[0][0]
    total = 0.0
    for i in range(theta.shape[0]):
        den = g * g + theta[i] * theta[i]
        total += math.log(g / math.pi) - math.log(den)
        grad_out[i] = -2.0 * theta[i] / den
    return total


def cauchy(ndim=6, width=0.05, half_width=20.0):
    """prod_i Cauchy(theta_i; 0, width) on U(-w, w)^d: logZ = d log((2/pi) atan(w / width) / (2 w))."""
    names = [f"x{i}" for i in range(ndim)]
    prior = Prior({n: Uniform(-half_width, half_width) for n in names})
    logz = ndim * math.log((2 / math.pi) * math.atan(half_width / width) / (2 * half_width))
    return Problem(f"cauchy{ndim}d", names, _cauchy_value, _cauchy_value_and_grad, (np.array([width]),), prior,
                   logz=logz)


# --- a plateau: constant likelihood on part of the prior ------------------------------------------------------

@njit
def _plateau_value(theta, data, scratch):
    if theta[0] * theta[0] + theta[1] * theta[1] < 1.0:
        return math.log(10.0)
    return 0.0


@njit
def _plateau_value_and_grad(theta, data, grad_out, scratch):
    grad_out[0] = 0.0
    grad_out[1] = 0.0
    return _plateau_value(theta, data, scratch)


def plateau():
    """logL = log 10 inside the unit circle, 0 outside, prior U(-3, 3)^2 (dynesty tests/test_plateau.py):
    logZ = log(1 + 9 pi / 36)."""
    prior = Prior({"x": Uniform(-3.0, 3.0), "y": Uniform(-3.0, 3.0)})
    return Problem("plateau", prior.names, _plateau_value, _plateau_value_and_grad, (np.zeros(1),), prior,
                   logz=math.log(1 + 9 * math.pi / 36))


@njit
def _floor_peak_value(theta, data, scratch):
    inv_var, floor = data[0][0], data[0][1]
    r2 = 0.0
    for i in range(theta.shape[0]):
        r2 += theta[i] * theta[i]
    return max(-0.5 * r2 * inv_var, floor)


@njit
def _floor_peak_value_and_grad(theta, data, grad_out, scratch):
    value = _floor_peak_value(theta, data, scratch)
    on_peak = value > data[0][1]
    for i in range(theta.shape[0]):
        grad_out[i] = -theta[i] * data[0][0] if on_peak else 0.0
    return value


def floor_peak(ndim=5, sigma=0.5, floor=-6.0, half_width=5.0):
    """logL = max(-r^2 / (2 sigma^2), floor) on U(-w, w)^d: a likelihood clipped from below (as scientists clip
    invalid regions), so almost the whole prior is one plateau and the peak holds ~0.1% of it (5-D defaults):
    most sets of 500 prior draws hold no point above the floor. logZ in closed form (the peak's ball lies inside
    the prior)."""
    names = [f"x{i}" for i in range(ndim)]
    radius = math.sqrt(-2.0 * floor) * sigma
    peak = (2 * math.pi * sigma ** 2) ** (ndim / 2) * special.gammainc(ndim / 2, radius ** 2 / (2 * sigma ** 2))
    ball = math.pi ** (ndim / 2) / special.gamma(ndim / 2 + 1) * radius ** ndim
    volume = (2 * half_width) ** ndim
    logz = math.log((peak + math.exp(floor) * (volume - ball)) / volume)
    return Problem(f"floor_peak{ndim}d", names, _floor_peak_value, _floor_peak_value_and_grad,
                   (np.array([1.0 / sigma ** 2, floor]),), _box(names, half_width), logz=logz)


@njit
def _boxed_value(theta, data, scratch):
    sigma, half = data[0][0], data[0][1]
    total = 0.0
    inside = True
    for i in range(theta.shape[0]):
        r = (theta[i] - 1.0) / sigma
        total += -0.5 * r * r - math.log(sigma * math.sqrt(2.0 * math.pi))
        inside = inside and abs(theta[i] - 1.0) < half
    return total if inside else -math.inf


@njit
def _boxed_value_and_grad(theta, data, grad_out, scratch):
    for i in range(theta.shape[0]):
        grad_out[i] = -(theta[i] - 1.0) / (data[0][0] * data[0][0])
    return _boxed_value(theta, data, scratch)


def boxed_gaussian(ndim=5, sigma=1.0, half=1.5, prior_half=5.0):
    """A Gaussian defined only inside the box |x_i - 1| < half (logL = -inf outside), on U(-w, w)^d: the finite
    region is (half / w)^d of the prior (0.24% at the defaults), so most initial draws are redrawn and the run
    estimates that share. logZ = d log(Phi(half / sigma) - Phi(-half / sigma)) - d log(2 w)."""
    names = [f"x{i}" for i in range(ndim)]
    mass = special.ndtr(half / sigma) - special.ndtr(-half / sigma)
    return Problem(f"boxed{ndim}d", names, _boxed_value, _boxed_value_and_grad, (np.array([sigma, half]),),
                   _box(names, prior_half), logz=ndim * (math.log(mass) - math.log(2 * prior_half)))


@njit
def _wedding_cake_value(theta, data, scratch):
    alpha, sigma = data[0][0], data[0][1]
    d = theta.shape[0]
    r = 0.0
    for i in range(d):
        r = max(r, abs(theta[i] - 0.5))
    tier = int(d * math.log(2.0 * r) / math.log(alpha))
    return -(alpha ** (2.0 * tier / d)) / (8.0 * sigma * sigma)


@njit
def _wedding_cake_value_and_grad(theta, data, grad_out, scratch):
    for i in range(theta.shape[0]):
        grad_out[i] = 0.0
    return _wedding_cake_value(theta, data, scratch)


def wedding_cake(ndim=4, alpha=0.5, sigma=0.01):
    """Fowlie, Handley & Su (2020), as in dynesty's tests: nested hypercubes around the centre of U(0, 1)^d, each
    a plateau holding ``alpha`` of the volume of the one outside it, logL = -alpha^(2 i / d) / (8 sigma^2) on tier
    i. logZ = logsumexp_i(logL_i + i log alpha + log(1 - alpha))."""
    names = [f"x{i}" for i in range(ndim)]
    tiers = np.arange(5000)
    logl = -alpha ** (2.0 * tiers / ndim) / (8.0 * sigma ** 2) + tiers * math.log(alpha) + math.log(1.0 - alpha)
    top = logl.max()
    logz = float(top + math.log(np.exp(logl - top).sum()))
    prior = Prior({n: Uniform(0.0, 1.0) for n in names})
    return Problem(f"wedding_cake{ndim}d", names, _wedding_cake_value, _wedding_cake_value_and_grad,
                   (np.array([alpha, sigma]),), prior, logz=logz)


def separated_mixture(ndim, weights, width=0.5, separation=8.0, half_width=10.0, seed=7, name=None):
    """Equal-width isotropic modes with fixed random centres at least ``separation`` apart, well inside
    U(-w, w)^d: logZ = -d log(2w)."""
    rng = np.random.default_rng(seed)
    means = []
    while len(means) < len(weights):
        m = rng.uniform(-half_width + 5 * width, half_width - 5 * width, ndim)
        if all(np.linalg.norm(m - o) >= separation for o in means):
            means.append(m)
    names = [f"x{i}" for i in range(ndim)]
    return GaussianMixture(name or f"mixture{ndim}d_{len(weights)}modes", means,
                           [width * width * np.eye(ndim)] * len(weights), list(weights), _box(names, half_width),
                           -ndim * math.log(2 * half_width))


def crossed_modes(ndim=4, weights=(0.7, 0.3), rho=0.95, separation=8.0, half_width=10.0):
    """Two modes elongated along different directions (AR(1) correlation +rho in one, -rho in the other, scales
    0.3-1), centres ``separation`` apart, prior U(-w, w)^d: each mode needs its own whitening. logZ = -d log(2w)."""
    base = ar1_covariance(ndim, rho, 0.3, 1.0)
    flip = np.array([(-1.0) ** i for i in range(ndim)])
    offset = np.full(ndim, separation / (2 * math.sqrt(ndim)))
    names = [f"x{i}" for i in range(ndim)]
    return GaussianMixture(f"crossed{ndim}d", [-offset, offset], [base, base * np.outer(flip, flip)], list(weights),
                           _box(names, half_width), -ndim * math.log(2 * half_width))


PROBLEMS = {
    "corr20d_uniform": lambda: correlated_gaussian(20, prior="uniform"),
    "corr20d_normal": lambda: correlated_gaussian(20, prior="normal"),
    "mixture5d": unequal_mixture,
    "mixture5d_equal_widths": lambda: unequal_mixture((0.5, 0.5, 0.5), "mixture5d_equal_widths"),
    "ridge2d": slanted_ridge,
    "cauchy6d": cauchy,
    "ignored3d": ignored_parameter,
    "plateau": plateau,
    "cut_off_peak3d": cut_off_peak,
}

# Variants of the same classes with other dimensions, conditioning, widths and mode counts: what an outsider's
# held-out set of these classes looks like (scripts/bench_accuracy.py --problems ...); none is tuned for.
VARIANTS = {
    "corr20d_rho09_normal": lambda: correlated_gaussian(20, rho=0.9, prior="normal"),
    "corr10d_rho099": lambda: correlated_gaussian(10, rho=0.99, scale_min=0.01),
    "mixture10d_4modes": lambda: separated_mixture(10, (0.4, 0.3, 0.2, 0.1)),
    "mixture3d_2modes_9to1": lambda: separated_mixture(3, (0.9, 0.1), width=0.3),
    "ridge2d_far": lambda: slanted_ridge(separation=8.0, rho=0.995),
    "cauchy6d_w001": lambda: cauchy(6, width=0.01),
    "cauchy10d": lambda: cauchy(10, width=0.05),
    "ignored3d_sigma20": lambda: ignored_parameter(20.0),
    # Added after the axis slice moves, to look for what they do not fix:
    "corr30d_rho095": lambda: correlated_gaussian(30, rho=0.95),
    "cauchy3d_w0005": lambda: cauchy(3, width=0.005),
    "mixture2d_5modes": lambda: separated_mixture(2, (0.4, 0.25, 0.15, 0.1, 0.1), width=0.2, separation=3.0),
    "ignored8d_families": ignored_families,
    "floor_peak5d": floor_peak,
    "wedding_cake4d": wedding_cake,
    "boxed5d": boxed_gaussian,
    "cauchy_mixture4d": cauchy_mixture,  # heavy tails and two modes (0.7 / 0.3) at once
    # Added 2026-11-26 late: ill-conditioning and modes at once, each mode correlated its own way
    "crossed4d": crossed_modes,
    "crossed10d": lambda: crossed_modes(10, weights=(0.6, 0.4)),
    # Added 2026-11-28: a Cauchy product whose arms run along no coordinate axis (the axis slice moves follow the
    # metric's axes, which a symmetric star leaves at the coordinate axes)
    "rotated_cauchy6d": rotated_cauchy,
    # Added 2026-11-28 (sixth session): elliptical heavy tails with the ill-conditioned Gaussian's shape (a
    # multivariate Cauchy, axis ratio ~20, off the box's centre, 3% of its mass outside the box)
    "student6d": correlated_student,
    # Added 2026-11-28 (seventh session): the same shape with lighter tails (Student-t, nu = 3)
    "student6d_nu3": lambda: correlated_student(6, nu=3.0),
}
PROBLEMS.update(VARIANTS)
