"""The statistics scripts behind figures in docs/benchmarks.md keep running and keep saying what they measured:
``scripts/seed_pulls.py`` (a problem's logZ pulls over seeds), ``scripts/perfect_ns_plateaus.py`` (the
sampler's rules for ties with exact draws in place of the chains) and ``scripts/mixture_volume_check.py`` (exact
contour volumes of the heavy-tailed mixture)."""
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _script(app_env, name, *args):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / name), *args], cwd=REPO, env=app_env,
                          capture_output=True, text=True, timeout=600)
    return proc


def _number(pattern, text):
    match = re.search(pattern, text)
    assert match, text
    return [float(g) for g in match.groups()]


def test_seed_pulls_reports_the_pull_distribution(app_env):
    proc = _script(app_env, "seed_pulls.py", "ridge2d", "--seeds", "0:4", "--processes", "1", "--nlive", "200")
    assert proc.returncode == 0, proc.stderr[-3000:]
    mean, se = _number(r"mean pull ([-+]\d+\.\d+) ± (\d+\.\d+)", proc.stdout)
    (rms,) = _number(r"rms pull (\d+\.\d+)", proc.stdout)
    assert "seeds 0:4 (4)" in proc.stdout and se > 0 and rms < 3 and abs(mean) <= rms


def test_seed_pulls_names_an_unknown_problem(app_env):
    proc = _script(app_env, "seed_pulls.py", "no_such_problem")
    assert proc.returncode != 0 and "unknown problem 'no_such_problem'" in proc.stderr


def test_perfect_sampling_on_nested_plateaus_is_biased_without_the_refill_and_not_with_it(app_env):
    """With exact draws, the rule that killed one point an iteration while the live set was short leaves the
    wedding cake's logZ high by several standard errors; refilling first leaves it within three."""
    common = ("--problem", "wedding_cake", "--nlive", "200", "--runs", "200", "--seed", "3")
    pattern = r"logZ - truth ([-+]\d+\.\d+) ± (\d+\.\d+) nats"
    refill = _script(app_env, "perfect_ns_plateaus.py", *common)
    old = _script(app_env, "perfect_ns_plateaus.py", *common, "--no-refill")
    assert refill.returncode == 0 and old.returncode == 0, refill.stderr[-2000:] + old.stderr[-2000:]
    bias, se = _number(pattern, refill.stdout)
    old_bias, old_se = _number(pattern, old.stdout)
    assert abs(bias) < 3 * se and old_bias > 3 * old_se, (refill.stdout, old.stdout)


def test_the_mixture_volume_table_agrees_with_plain_uniform_draws():
    """``scripts/mixture_volume_check.py`` weighs draws from a defensive mixture (half uniform, half the likelihood
    as a density) into exact contour volumes: where contours hold a good share of the prior, plain uniform draws
    measure the same volumes, within their binomial error."""
    import numpy as np

    sys.path[:0] = [str(REPO / "scripts"), str(REPO / "tests" / "sampler")]
    try:
        import mixture_volume_check as check
        from heavy_tailed_modes import cauchy_mixture
    finally:
        del sys.path[:2]
    problem = cauchy_mixture()
    levels, log_x = check.volume_table(problem, 2_000_000, seed=1)
    uniform = check.log_likelihoods(problem, np.random.default_rng(2).uniform(-20.0, 20.0, (1_000_000, 4)))
    for level in (-32.0, -28.0, -24.0):
        share = np.mean(uniform > level)
        se = np.sqrt(share * (1 - share) / uniform.size)
        table = np.exp(np.interp(level, levels, log_x))
        assert 0.02 < share < 0.9 and abs(table - share) < 4 * se + 0.003 * share, (level, table, share, se)
