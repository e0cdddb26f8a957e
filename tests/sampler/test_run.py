"""The run loop: determinism, birth constraints, diagnostics, checkpoint/resume bit-identity, signals, errors."""

import os
import signal

import numpy as np
import pytest

import problems
from nestgrad.sampler import NestedSampler, Results, priors
from nestgrad.sampler.checkpoint import CheckpointError, read_checkpoint
from nestgrad.sampler.nested_sampler import SamplerError

PROB = problems.gaussian(3)
KW = dict(nlive=60, delete_fraction=0.2)


def run(seed=5, **kw):
    return NestedSampler(PROB, PROB.prior, seed=seed, **KW).run(dlogz=0.5, progress=False, **kw)


def assert_identical(a: Results, b: Results):
    for field in ("u", "theta", "logl", "logl_birth"):
        np.testing.assert_array_equal(getattr(a.dead, field), getattr(b.dead, field))
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert set(a.diagnostics) == set(b.diagnostics)
    for key in a.diagnostics:
        np.testing.assert_array_equal(a.diagnostics[key], b.diagnostics[key], err_msg=key)
    assert (a.logz, a.logz_err, a.information, a.niter, a.nlike, a.ngrad) == \
        (b.logz, b.logz_err, b.information, b.niter, b.nlike, b.ngrad)


@pytest.fixture(scope="module")
def reference():
    return run()


def test_same_seed_gives_identical_results(reference):
    assert_identical(reference, run())
    other = run(seed=6)
    assert other.logz != reference.logz


def test_results_fields_and_diagnostics(reference):
    r = reference
    n = r.dead.logl.size
    assert r.dead.u.shape == (n, 3) and r.dead.theta.shape == (n, 3) and r.weights.shape == (n,)
    assert np.all(np.diff(r.dead.logl) >= 0) and np.all(r.dead.logl > r.dead.logl_birth)
    np.testing.assert_allclose(PROB.prior.transform(r.dead.u), r.dead.theta)
    np.testing.assert_allclose(PROB.logl(r.dead.theta), r.dead.logl, rtol=1e-12)
    assert r.params == PROB.params and r.niter > 0 and r.ngrad > 0 and r.nlike > r.ngrad
    for key in ("logl_star", "step_size", "outside_fraction", "reflections", "acceptance", "nlike", "ngrad",
                "nlive", "logz", "logz_remain"):
        assert r.diagnostics[key].shape == (r.niter,), key
    assert r.diagnostics["reflections_per_chain"].shape == (r.niter, 12)
    assert np.all(np.diff(r.diagnostics["logl_star"]) > 0)
    assert r.diagnostics["nlike"].sum() + r.settings["initial_draws"] == r.nlike
    assert r.diagnostics["logz_remain"][-1] < 0.5
    assert "logZ" in r.summary()


def test_resume_after_max_iter_is_bit_identical(reference, tmp_path):
    path = tmp_path / "checkpoint.npz"
    partial = run(checkpoint=path, max_iter=7)
    assert partial.niter == 7 and path.exists()
    again = run(checkpoint=path, resume=True, max_iter=12)   # stop a second time
    assert again.niter == 12
    chains = run(checkpoint=path, resume=True, max_iter=30)  # and a third, once the chains have taken over
    assert chains.diagnostics["ngrad"][0] == 0 and chains.diagnostics["ngrad"][-1] > 0  # from prior draws
    assert_identical(reference, run(checkpoint=path, resume=True))


def test_a_checkpoint_without_family_ids_resumes_to_the_same_run(reference, tmp_path):
    """Checkpoints written before points carried creation and parent ids resume: the dead points, weights and
    evidence are the uninterrupted run's; only the ESS, which then knows no parents before the resume, may
    differ, and it stays positive and at most Kish's."""
    from nestgrad.sampler.checkpoint import write_checkpoint
    from nestgrad.sampler.genealogy import kish_ess

    path = tmp_path / "checkpoint.npz"
    run(checkpoint=path, max_iter=7)
    arrays, meta = read_checkpoint(path)
    old = {name: a for name, a in arrays.items()
           if name not in ("state_uid", "state_parent", "state_next_uid", "dead_uid", "dead_parent")}
    write_checkpoint(path, old, meta)
    resumed = run(checkpoint=path, resume=True)
    for field in ("u", "theta", "logl", "logl_birth"):
        np.testing.assert_array_equal(getattr(reference.dead, field), getattr(resumed.dead, field))
    np.testing.assert_array_equal(reference.weights, resumed.weights)
    assert resumed.logz == reference.logz and 0 < resumed.ess <= kish_ess(resumed.weights) * (1 + 1e-12)


def test_checkpoint_frequency_does_not_change_the_computation(reference, tmp_path):
    assert_identical(reference, run(checkpoint=tmp_path / "c.npz", checkpoint_every=0.0))


def test_checkpoint_is_plain_npz_with_json(tmp_path):
    path = tmp_path / "c.npz"
    run(checkpoint=path, max_iter=3)
    with np.load(path, allow_pickle=False) as npz:  # raises if anything needed pickle
        assert "state_u" in npz.files
    arrays, meta = read_checkpoint(path)
    assert meta["settings"]["nlive"] == KW["nlive"] and meta["record"]["niter"] == 3
    assert meta["generator"]["bit_generator"] == "PCG64"


@pytest.mark.parametrize("signum,exc", [(signal.SIGINT, KeyboardInterrupt), (signal.SIGTERM, SystemExit)])
def test_signal_writes_checkpoint_then_stops_and_resume_matches(reference, tmp_path, signum, exc):
    path = tmp_path / "checkpoint.npz"
    before = signal.getsignal(signum)

    def interrupt(niter, state, info):
        if niter == 5:
            os.kill(os.getpid(), signum)

    with pytest.raises(exc):
        run(checkpoint=path, callback=interrupt, checkpoint_every=1e9)
    assert signal.getsignal(signum) is before  # handlers are restored
    assert read_checkpoint(path)[1]["record"]["niter"] == 5
    assert_identical(reference, run(checkpoint=path, resume=True))


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_a_callback_that_raises_keeps_the_run_so_far(reference, tmp_path, exc):
    """A user's callback failing late must not lose the iterations before it: they are checkpointed, the error
    comes through with a note saying where, and resuming gives the uninterrupted run."""
    path = tmp_path / "checkpoint.npz"

    def fail(niter, state, info):
        if niter == 6:
            raise exc("the user's callback")

    with pytest.raises(exc) as raised:
        run(checkpoint=path, callback=fail, checkpoint_every=1e9)
    assert read_checkpoint(path)[1]["record"]["niter"] == 6
    assert any(str(path) in note and "resume" in note for note in raised.value.__notes__)
    assert_identical(reference, run(checkpoint=path, resume=True))


def test_resume_with_other_settings_is_refused(tmp_path):
    path = tmp_path / "c.npz"
    run(checkpoint=path, max_iter=2)
    other = NestedSampler(PROB, PROB.prior, nlive=80, delete_fraction=0.2, seed=5)
    other._build = None  # refused before the chain kernel is built (an outsider waited 5-10 s of compiling)
    with pytest.raises(CheckpointError, match="nlive = .*, this run has 80"):
        other.run(dlogz=0.5, progress=False, checkpoint=path, resume=True)


def test_limits_stop_the_run():
    assert run(max_iter=4).niter == 4
    assert run(max_time=0.0).niter == 0  # only the initial live points: still a valid (if poor) result
    capped = run(max_nlike=5000)
    assert capped.nlike >= 5000 and capped.nlike - capped.diagnostics["nlike"][-1] < 5000


@pytest.mark.parametrize("kwargs,word", [
    (dict(nlive=1), "nlive"),
    (dict(delete_fraction=1.5), "delete_fraction"),
    (dict(backend="tpu"), "backend"),
    (dict(hmc={"n_stepz": 3}), "n_stepz"),
])
def test_bad_settings_name_the_argument(kwargs, word):
    with pytest.raises((SamplerError, ValueError), match=word):
        NestedSampler(PROB, PROB.prior, **kwargs)


@pytest.mark.parametrize("kwargs,message", [
    (dict(max_iter=-1), "max_iter: must be positive"),
    (dict(max_iter=2.5), "max_iter: expected an integer"),
    (dict(max_nlike=0), "max_nlike: must be positive"),
    (dict(max_time=-3.0), "max_time: must be zero or more"),
    (dict(checkpoint_every=float("nan")), "checkpoint_every: must be a finite number"),
    (dict(callback=5), "callback must be a function"),
    (dict(dlogz="0.1"), "dlogz: expected a number > 0"),  # was "'>' not supported between instances of .str."
])
def test_bad_run_arguments_are_refused_before_sampling(kwargs, message):
    """A negative ``max_iter`` used to stop the run after one iteration and a non-callable callback failed with
    a bare TypeError after the first; both are refused by name before anything runs."""
    with pytest.raises(SamplerError, match=message):
        NestedSampler(PROB, PROB.prior, nlive=20, seed=1).run(progress=False, **kwargs)


def test_prior_must_match_likelihood_parameters():
    wrong = priors.Prior({"a": priors.Uniform(0, 1), "b": priors.Uniform(0, 1), "c": priors.Uniform(0, 1)})
    with pytest.raises(SamplerError, match="do not match"):
        NestedSampler(PROB, wrong)
    with pytest.raises(SamplerError, match="2 parameters"):
        NestedSampler(PROB, priors.Prior({"x0": priors.Uniform(0, 1), "x1": priors.Uniform(0, 1)}))


def test_nonfinite_prior_region_is_accounted_for():
    """A likelihood that is -inf on half of the cube: the redrawn initial points' share enters logZ."""
    half = problems.Problem("half", PROB.params, _half_value, _half_vg, PROB.cpu_kernels().data, PROB.prior,
                            logz=PROB.logz)
    res = NestedSampler(half, half.prior, nlive=200, seed=2).run(dlogz=0.1, progress=False)
    # The Gaussian (centre 0.5, sigma 0.1) loses half its mass: logZ = log(1/2) + truth.
    assert abs(res.logz - (np.log(0.5) + PROB.logz)) < 3 * np.hypot(res.logz_err, 0.05)


from numba import njit  # noqa: E402  (kernels for the test above)


@njit
def _half_value(theta, data, scratch):
    if theta[0] < 0.5:
        return -np.inf
    return problems._gauss_value(theta, data, scratch)


@njit
def _half_vg(theta, data, grad, scratch):
    if theta[0] < 0.5:
        grad[:] = np.nan
        return -np.inf
    return problems._gauss_value_and_grad(theta, data, grad, scratch)


def _terminal_and_pipe():
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    return Terminal(), io.StringIO()


def test_progress_bar_only_on_a_terminal():
    from nestgrad.sampler.progress import Progress

    tty, pipe = _terminal_and_pipe()
    for stream in (tty, pipe):
        bar = Progress(True, 0.1, stream=stream)
        bar.update(12, -3.5, -1.25, 0.7, 4000)
        bar.close()
    assert "logZ=-1.25" in tty.getvalue() and "dlogz=0.7" in tty.getvalue()
    assert pipe.getvalue() == ""


@pytest.mark.parametrize("threads", ["one", "all"])
def test_thread_count_does_not_change_results(reference, threads):
    sampler = NestedSampler(PROB, PROB.prior, seed=5, **KW).compile()
    chooser = sampler._proposal.advance.inner  # hmc.AdaptiveThreads, in the live set's live_rows.SlotAdvance
    chooser.trials = 0
    chooser.threads = 1 if threads == "one" else chooser.max_threads
    assert_identical(reference, sampler.run(dlogz=0.5, progress=False))


def test_stage_lines_only_on_a_terminal():
    from nestgrad.sampler.progress import Progress

    tty, pipe = _terminal_and_pipe()
    for stream in (tty, pipe):
        bar = Progress(True, 0.1, stream=stream)
        bar.close()
        bar.stage("computing the evidence of 4000000 points")
    assert tty.getvalue().endswith("nestgrad: computing the evidence of 4000000 points ...\n")
    assert pipe.getvalue() == ""


def test_a_large_run_says_what_it_computes_after_its_iterations(monkeypatch, capsys):
    from nestgrad.sampler import nested_sampler
    from nestgrad.sampler.progress import Progress

    shown = []
    monkeypatch.setattr(Progress, "stage", lambda self, text: shown.append(text))
    monkeypatch.setattr(nested_sampler, "LARGE_RUN", 1)  # every run is large
    NestedSampler(PROB, PROB.prior, seed=5, **KW).run(dlogz=0.5, progress=False, max_iter=3)
    monkeypatch.setattr(nested_sampler, "LARGE_RUN", 10 ** 9)
    NestedSampler(PROB, PROB.prior, seed=5, **KW).run(dlogz=0.5, progress=False, max_iter=3)
    assert len(shown) == 1 and "evidence" in shown[0]
