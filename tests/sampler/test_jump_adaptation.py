"""How many independence jumps the chains propose (``HMCSettings.adapt_jumps``): cut to one a refresh where they
are rarely accepted in one cluster, kept, and allowed more, while the live points form several, since jumps are
then what carries chains between modes (Rastrigin 3-D: docs/benchmarks.md, fourteenth and fifteenth sessions)."""

from nestgrad.sampler.hmc_settings import HMCSettings


def test_rare_jumps_are_cut_in_one_cluster_and_kept_among_several():
    s = HMCSettings()
    # 0.7% accepted (Rastrigin 3-D while the contour passes the low modes' peaks), trajectories of 60 steps
    one, several = (s.adapt_jumps(1, 6000, 42, 60, several_modes=m) for m in (False, True))
    assert one == 1
    assert several == 72  # 6 wanted / (0.007 x 12 refreshes) = 71.4
    # below the modes' own floor, or none accepted at all: one a refresh either way
    assert s.adapt_jumps(1, 6000, 6, 60, several_modes=True) == 1
    assert s.adapt_jumps(1, 6000, 0, 60, several_modes=True) == 1
    # often accepted: enough for the wanted number, the same in one cluster or several
    assert s.adapt_jumps(1, 1000, 500, 60) == s.adapt_jumps(1, 1000, 500, 60, several_modes=True) == 1
    assert s.adapt_jumps(1, 1000, 100, 60, several_modes=True) == 5
    assert HMCSettings(min_jump_acceptance_modes=0.02).adapt_jumps(1, 6000, 42, 60, several_modes=True) == 1


def test_each_case_has_its_own_cap():
    s = HMCSettings()
    # 0.25% among several clusters wants 200 a refresh: capped at max_jumps_modes
    assert s.adapt_jumps(1, 8000, 20, 60, several_modes=True) == s.max_jumps_modes == 100
    # 2.1% in one cluster wants 24: capped at max_jumps; 3% wants 17, under it
    assert s.adapt_jumps(1, 1000, 21, 60) == s.max_jumps == 20
    assert s.adapt_jumps(1, 1000, 30, 60) == 17
    assert HMCSettings(max_jumps_modes=30).adapt_jumps(1, 8000, 20, 60, several_modes=True) == 30


def test_the_caps_are_checked_by_name():
    import pytest
    with pytest.raises(ValueError, match="hmc.max_jumps_modes"):
        HMCSettings.from_any({"max_jumps_modes": 0})
