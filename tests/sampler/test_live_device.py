"""The live set kept on the GPU (sampler/live_device.py) under the CUDA simulator, in a subprocess because
NUMBA_ENABLE_CUDASIM must be set before numba is first imported: the same dead points as the GPU path with the
live set on the host, bit for bit, while the host receives far fewer rows."""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
K = 3  # chains per iteration in the check script's runs (nlive 30, delete_fraction 0.1)
RECLUSTER_EVERY, REFRESH_EVERY = 10, 16  # the default clustering interval and live_moments.REFRESH_EVERY


@pytest.fixture(scope="module")
def report():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, os.path.join(HERE, "live_device_check.py")], capture_output=True,
                         text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("problem", ["gaussian", "two_modes", "plateaus"])
def test_resident_live_set_gives_the_host_live_sets_dead_points_bit_for_bit(report, problem):
    r = report[problem]
    assert r["same"] and r["points"] > 60


def test_prior_draws_go_into_the_resident_store_and_give_the_host_live_sets_dead_points(report):
    """The first iterations' points are prior draws (``sampler.prior_draws``; 18 iterations at nlive 30 end well
    before the chains would start), put into the store's slots from the host: the same dead points as with the
    live set on the host, and on the quiet iterations only the dead rows and the geometry's one row come back (no
    chain starts are read)."""
    r = report["prior_draws"]
    assert r["same"] and r["points"] > 40
    before = quiet = 0
    for rows, nlive_before, ndead, iteration, _, _ in r["copied"]:
        delta, before = rows - before, rows
        if iteration % RECLUSTER_EVERY and iteration % REFRESH_EVERY:
            assert delta == 2 * ndead + 1, (iteration, delta)
            quiet += 1
    assert quiet >= 12


def test_between_refreshes_only_the_dead_rows_and_the_measured_starts_come_back(report):
    """On an iteration that neither reclusters nor refreshes the moments, the host gets the dead points' u and
    theta, the chains' starts (the correlation measures them all when there are few) and one row (the geometry's
    unused pool), not the survivors; on those that do, the survivors too."""
    copied = report["gaussian"]["copied"]
    before = 0
    quiet = 0
    for rows, nlive_before, ndead, iteration, _, _ in copied:
        delta, before = rows - before, rows
        if iteration % RECLUSTER_EVERY and iteration % REFRESH_EVERY:
            assert delta == 2 * ndead + K + 1 < nlive_before, (iteration, delta)
            quiet += 1
        else:
            assert delta > nlive_before - ndead  # the survivors were gathered for the clustering or the sums
    assert quiet >= 12


def test_a_strided_subset_of_the_starts_is_read_when_fewer_chains_are_measured(report):
    """two_modes measures at most 2 of its 3 chains: before it first reclusters (one cluster until then), the
    host gets the dead rows, those 2 starts and one row."""
    before = 0
    for rows, nlive_before, ndead, iteration, _, _ in report["two_modes"]["copied"][:RECLUSTER_EVERY]:
        delta, before = rows - before, rows
        if iteration % RECLUSTER_EVERY and iteration % REFRESH_EVERY:
            assert delta == 2 * ndead + 2 + 1, (iteration, delta)


def test_several_clusters_and_a_widening_live_set_take_the_host_paths_and_the_store_grows(report):
    assert max(c[4] for c in report["two_modes"]["copied"]) == 2
    plateau = report["plateaus"]["copied"]
    assert plateau[-1][5] > plateau[0][5] and max(c[1] for c in plateau) > 60  # widened past 2x its capacity


def test_resuming_a_resident_run_from_its_checkpoint_gives_the_same_run(report):
    assert report["resumed"]["same"]


@pytest.fixture(scope="module")
def device_report(cuda_device):
    """The same runs on a real GPU (``--device``): skipped where none is usable."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = ROOT
    out = subprocess.run([sys.executable, os.path.join(HERE, "live_device_check.py"), "--device"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.device
@pytest.mark.parametrize("problem", ["gaussian", "two_modes", "plateaus"])
def test_on_a_device_the_resident_live_set_agrees_with_the_host_one(device_report, problem):
    """On hardware the device's bounding radius may differ from the host's in its last bits (fused
    multiply-adds), so the two runs agree to rounding (the tolerance of the chain kernel's device test), not
    necessarily bit for bit; resuming a resident run is exact."""
    r = device_report[problem]
    assert r["max_relative"] is not None and r["max_relative"] < 1e-7, r["max_relative"]
    assert device_report["resumed"]["same"]
