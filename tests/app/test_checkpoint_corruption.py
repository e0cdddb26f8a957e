"""A damaged checkpoint is ONE clear error naming the file and the field, never a traceback or a wrong resume.

Every corruption starts from the checkpoint of a real small run and is fed to `NestedSampler.run(resume=True)`
(the sampler is compiled once for the module); a few go through `nestgrad run --resume` for the exit status.
"""
import io
import json
import zipfile

import numpy as np
import pytest

from nestgrad.sampler.checkpoint import CheckpointError, read_checkpoint, write_checkpoint

CONFIG = """\
name: small
likelihood:
  builtin: gaussian4d      # the likelihood of the other CLI tests: compiled once per test session
sampler:
  nlive: 40
  seed: 3
  max_iter: 8
backend: cpu
output:
  dir: out
  plots: []
"""
META = "__meta_json__"


@pytest.fixture(scope="module")
def real(tmp_path_factory, app_env, nestgrad_inprocess):
    """(config path, checkpoint bytes, arrays, meta, sampler) of a real 8-iteration run."""
    from nestgrad.sampler import config as cfg

    folder = tmp_path_factory.mktemp("corrupt")
    (folder / "small.yaml").write_text(CONFIG)
    status, _, err = nestgrad_inprocess("run", folder / "small.yaml", "--quiet", "--no-check")
    assert status == 0, err
    checkpoint = folder / "out" / "checkpoint.npz"
    arrays, meta = read_checkpoint(checkpoint)
    assert meta["record"]["niter"] == 8 and arrays["dead_logl"].size > 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NESTGRAD_CACHE_DIR", app_env["NESTGRAD_CACHE_DIR"])
        config = cfg.load(folder / "small.yaml")
        sampler = cfg.make_sampler(config, cfg.build(config)).compile()
    return folder / "small.yaml", checkpoint.read_bytes(), arrays, meta, sampler


def resume(sampler, path):
    return sampler.run(checkpoint=str(path), resume=True, progress=False, max_iter=9)


def save(path, arrays, meta):
    """An npz with `arrays` and metadata: a dict (JSON-encoded) or raw bytes/array stored as they are."""
    if isinstance(meta, dict):
        meta = json.dumps(meta).encode()
    stored = np.frombuffer(meta, np.uint8) if isinstance(meta, bytes) else meta
    np.savez_compressed(path, **arrays, **({} if meta is None else {META: stored}))


def with_array(name, value):
    return lambda a, m: ({**a, name: value(a[name]) if callable(value) else value}, m)


def without_array(name):
    return lambda a, m: ({k: v for k, v in a.items() if k != name}, m)


def set_at(name, index, value):
    def change(array):
        array = array.copy()
        array[index] = value
        return array
    return with_array(name, change)


def with_meta(key, value):
    """Set (or delete, value=...) the metadata entry at dotted `key`."""
    def edit(arrays, meta):
        meta = json.loads(json.dumps(meta))
        *parents, last = key.split(".")
        node = meta
        for part in parents:
            node = node[part]
        if value is ...:
            del node[last]
        else:
            node[last] = value
        return arrays, meta
    return edit


def raw_meta(data):
    return lambda a, m: (a, data)


# (id, edit of (arrays, meta) -> (arrays, meta), text the message must contain after "<file>: ")
CASES = [
    ("metadata missing", lambda a, m: (a, None), "metadata: missing"),
    ("metadata not JSON", raw_meta(b"{not json"), "metadata: not valid JSON"),
    ("metadata not UTF-8", raw_meta(b"\xff\xfe{}"), "metadata: not valid JSON"),
    ("metadata deeply nested JSON", raw_meta(b"[" * 100000 + b"]" * 100000), "metadata: "),
    ("metadata a JSON list", raw_meta(b"[1, 2]"), "metadata: expected a JSON object"),
    ("metadata stored as floats", raw_meta(np.zeros(3)), "metadata: stored as float64"),
    ("format unknown", with_meta("format", "other-1"), "format: unknown checkpoint format"),
    ("settings missing", with_meta("settings", ...), "settings: missing"),
    ("settings.k text", with_meta("settings.k", "five"), "settings.k: expected an integer >= 1"),
    ("settings.params empty", with_meta("settings.params", []), "settings.params: expected a list of names"),
    ("record.niter negative", with_meta("record.niter", -1), "record.niter: expected an integer >= 0"),
    ("record.niter off by one", lambda a, m: with_meta("record.niter", m["record"]["niter"] + 1)(a, m),
     "diag_"),
    ("record.running_logz garbage", with_meta("record.running_logz", "abc"), "record.running_logz: expected a float"),
    ("record.running_logz NaN", with_meta("record.running_logz", "nan"), "record.running_logz"),
    ("record.wall_time NaN", with_meta("record.wall_time", float("nan")), "record.wall_time"),
    ("record.ndim disagrees", with_meta("record.ndim", 7), "record.ndim: 7 but the settings say 4"),
    ("generator unknown", with_meta("generator.bit_generator", "system"), "generator: not a random-generator state"),
    ("generator state missing", with_meta("generator.state", ...), "generator: not a random-generator state"),
    ("live u missing", without_array("state_u"), "state_u: missing"),
    ("dead births missing", without_array("dead_birth"), "dead_birth: missing"),
    ("diagnostic missing", without_array("diag_nlike"), "diag_nlike: missing"),
    ("live u NaN", set_at("state_u", (3, 1), np.nan), "state_u: 1 value(s) not finite and in [0, 1], first nan"),
    ("live u above 1", set_at("state_u", (0, 0), 1.5), "state_u: 1 value(s) not finite and in [0, 1]"),
    ("live u negative", set_at("state_u", (5, 2), -0.1), "state_u: 1 value(s)"),
    ("live u integers", with_array("state_u", lambda u: (u * 10).astype(np.int64)), "state_u: dtype int64"),
    ("live u transposed", with_array("state_u", lambda u: u.T.copy()), "state_u: shape (4, 40) does not match d"),
    ("live u flat", with_array("state_u", lambda u: u.ravel()), "state_u: shape (160,), expected (n, d)"),
    ("live logl short", with_array("state_logl", lambda x: x[:-1]), "state_logl: shape (39,) does not match n = 40"),
    ("live logl +inf", set_at("state_logl", 0, np.inf), "state_logl: 1 value(s) not a log-likelihood"),
    ("live logl NaN", set_at("state_logl", 7, np.nan), "state_logl: 1 value(s)"),
    ("live logl text", with_array("state_logl", lambda x: x.astype(str)), "state_logl: dtype <U"),
    ("live theta inf", set_at("state_theta", (2, 0), -np.inf), "state_theta: 1 value(s) not finite"),
    ("step size zero", with_array("state_step_size", np.array(0.0)), "state_step_size: 1 value(s) not finite and "
     "positive"),
    ("step size an array", with_array("state_step_size", np.ones(2)), "state_step_size: shape (2,), expected ()"),
    ("trajectory length zero", with_array("state_n_steps", np.array(0)), "state_n_steps: 1 value(s)"),
    ("chain rng floats", with_array("state_chain_rng", lambda r: r.astype(float)), "state_chain_rng: dtype float64"),
    ("chain rng extra row", with_array("state_chain_rng", lambda r: np.vstack([r, r[:1]])),
     "state_chain_rng: shape (5, 2) does not match k = 4"),
    ("thread ids negative", set_at("state_thread", 0, -4), "state_thread: 1 value(s) not zero or more"),
    ("dead u shorter than dead logl", with_array("dead_u", lambda x: x[:-2]), "dead_u: shape"),
    ("dead theta another d", with_array("dead_theta", lambda x: x[:, :3]), "dead_theta: shape"),
    ("dead u NaN", set_at("dead_u", (1, 1), np.nan), "dead_u: 1 value(s)"),
    ("dead logl NaN", set_at("dead_logl", 0, np.nan), "dead_logl: 1 value(s)"),
    ("dead labels negative", set_at("dead_label", 0, -1), "dead_label: 1 value(s)"),
    ("diagnostic short", with_array("diag_logl_star", lambda x: x[:-1]),
     "diag_logl_star: shape (7,) does not match niter = 8 (from record.niter)"),
    ("reflections per chain wrong k", with_array("diag_reflections_per_chain", lambda x: x[:, :-1]),
     "diag_reflections_per_chain: shape (8, 3) does not match k = 4"),
    ("object array (pickle)", with_array("state_theta", lambda x: np.array([None, 1], dtype=object)),
     "state_theta: holds Python objects (pickled data), which a nestgrad checkpoint never contains"),
    # a float32 logL resumed silently (a different run: the float64 values were gone); an int32 id array met
    # kernels compiled for int64; a scalar rho or an array of jumps crashed inside the sampler
    ("live logl float32", with_array("state_logl", lambda x: x.astype(np.float32)),
     "state_logl: dtype float32, expected float64"),
    ("dead logl float32", with_array("dead_logl", lambda x: x.astype(np.float32)),
     "dead_logl: dtype float32, expected float64"),
    ("iteration a float", with_array("state_iteration", lambda x: x.astype(float)),
     "state_iteration: dtype float64, expected int64"),
    ("thread ids int32", with_array("state_thread", lambda x: x.astype(np.int32)),
     "state_thread: dtype int32, expected int64"),
    ("chain rng signed", with_array("state_chain_rng", lambda x: x.astype(np.int64)),
     "state_chain_rng: dtype int64, expected uint64"),
    ("rho a scalar", with_array("state_rho", np.array(0.5)), "state_rho: shape (), expected (2,)"),
    ("jumps an array", with_array("state_jumps", np.ones(3, np.int64)), "state_jumps: shape (3,), expected ()"),
    ("live theta flat", with_array("state_theta", lambda t: t.ravel()),
     "state_theta: shape (160,), expected (n, d) = (40, 4)"),
]


def check_message(message, path, expected):
    assert message.startswith(f"{path}: "), message
    assert expected in message, message
    assert "pickle.load" not in message and "allow_pickle" not in message, message  # never advise unpickling
    assert "\n" not in message, message
    # what to do, and that nothing was deleted: it was "remove it to start again", or nothing at all
    assert message.endswith("the checkpoint is damaged: restore it from a copy to resume the run, or delete it to "
                            "start afresh (nestgrad leaves it as it is)"), message


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_corrupted_field_is_named(real, tmp_path, case):
    _, _, arrays, meta, sampler = real
    _, edit, expected = case
    path = tmp_path / "checkpoint.npz"
    save(path, *edit(dict(arrays), meta))
    with pytest.raises(CheckpointError) as info:
        resume(sampler, path)
    check_message(str(info.value), path, expected)


def _member_data_offset(blob: bytes, member: str) -> tuple[int, int]:
    """(offset, size) of a zip member's compressed bytes."""
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        info = archive.getinfo(member)
    name_len, extra_len = np.frombuffer(blob[info.header_offset + 26:info.header_offset + 30], np.uint16)
    return info.header_offset + 30 + int(name_len) + int(extra_len), info.compress_size


def flip_member(member):
    def edit(blob):
        offset, size = _member_data_offset(blob, member)
        middle = offset + size // 2
        return blob[:middle] + bytes([blob[middle] ^ 0xFF]) + blob[middle + 1:]
    return edit


# (id, edit of the file's bytes, text the message must contain after "<file>: ")
BYTE_CASES = [
    # random bytes were said to read "as pickled Python objects" (numpy's guess for anything not zip or npy)
    ("garbage bytes", lambda b: b"\x00" + np.random.default_rng(0).bytes(len(b)),
     "not a checkpoint archive (not a zip (.npz) archive: it begins with the bytes b'\\x00"),
    ("pickled objects", lambda b: b"\x80\x04\x95" + bytes(20), "not a checkpoint archive (it holds pickled Python"),
    ("empty file", lambda b: b"", "not a checkpoint archive (the file is empty"),
    # a truncated file was "not a checkpoint archive (BadZipFile: File is not a zip file)"
    ("truncated zip", lambda b: b[:len(b) // 2], "an incomplete checkpoint archive (its zip directory is missing"),
    ("zip without its directory", lambda b: b[:-22], "an incomplete checkpoint archive"),
    ("a single .npy array", lambda b: _npy_bytes(), "not a checkpoint archive (a single .npy array"),
    ("flipped byte in live u", flip_member("state_u.npy"), "state_u: cannot be read"),
    ("flipped byte in dead logl", flip_member("dead_logl.npy"), "dead_logl: cannot be read"),
    ("flipped byte in metadata", flip_member(META + ".npy"), META + ": cannot be read"),
]


def _npy_bytes():
    handle = io.BytesIO()
    np.save(handle, np.zeros(3))
    return handle.getvalue()


@pytest.mark.parametrize("case", BYTE_CASES, ids=[c[0] for c in BYTE_CASES])
def test_damaged_file_is_named(real, tmp_path, case):
    _, blob, _, _, sampler = real
    _, edit, expected = case
    path = tmp_path / "checkpoint.npz"
    path.write_bytes(edit(blob))
    with pytest.raises(CheckpointError) as info:
        resume(sampler, path)
    check_message(str(info.value), path, expected)


def test_intact_checkpoint_resumes_and_rewrites_stored(real, tmp_path):
    """The control: the untouched bytes resume; a checkpoint written back round-trips every array exactly. Members
    are stored, not deflated (deflating 1.6M dead points took 7.6 s of a run for 30% less disk); a deflated
    checkpoint, as earlier versions wrote, still resumes."""
    _, blob, arrays, meta, sampler = real
    path = tmp_path / "checkpoint.npz"
    path.write_bytes(blob)
    assert resume(sampler, path).niter == 9
    write_checkpoint(tmp_path / "again.npz", arrays, meta)
    again, _ = read_checkpoint(tmp_path / "again.npz")
    assert set(again) == set(arrays)
    for name in arrays:
        np.testing.assert_array_equal(again[name], arrays[name], err_msg=name)
    with zipfile.ZipFile(tmp_path / "again.npz") as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}
    with zipfile.ZipFile(path) as stored, zipfile.ZipFile(tmp_path / "deflated.npz", "w", zipfile.ZIP_DEFLATED) as out:
        for info in stored.infolist():
            out.writestr(info.filename, stored.read(info.filename))
    assert resume(sampler, tmp_path / "deflated.npz").niter == 9


@pytest.mark.parametrize("edit, expected", [
    (lambda blob, arrays, meta, path: path.write_bytes(blob[: len(blob) // 3]), "an incomplete checkpoint archive"),
    (lambda blob, arrays, meta, path: save(path, set_at("state_u", (0, 0), np.nan)(arrays, meta)[0], meta),
     "state_u: 1 value(s) not finite"),
], ids=["truncated", "NaN in u"])
def test_cli_resume_from_a_damaged_checkpoint_exits_2(real, nestgrad_inprocess, edit, expected):
    config, blob, arrays, meta, _ = real
    checkpoint = config.parent / "out" / "checkpoint.npz"
    edit(blob, arrays, meta, checkpoint)
    damaged = checkpoint.read_bytes()
    status, _, err = nestgrad_inprocess("run", config, "--resume", "--quiet", "--no-check")
    assert status == 2, err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err, err
    assert f"{checkpoint}: {expected}" in err, err
    assert checkpoint.read_bytes() == damaged  # the damaged file is left for the user to inspect or remove


@pytest.mark.parametrize("edit, expected", [
    (lambda blob, arrays, meta, path: path.write_bytes(blob[: len(blob) // 3]), "an incomplete checkpoint archive"),
    (lambda blob, arrays, meta, path: path.write_bytes(b"hello"), "not a checkpoint archive (not a zip"),
    (lambda blob, arrays, meta, path: save(path, *with_meta("settings.k", ...)(arrays, meta)),
     "settings.k: missing from the metadata"),
    (lambda blob, arrays, meta, path: save(path, *without_array("state_logl")(arrays, meta)),
     "state_logl: missing from the checkpoint"),
], ids=["truncated", "not a zip", "metadata key missing", "array missing"])
def test_a_fresh_run_calls_a_damaged_checkpoint_damaged(real, nestgrad_inprocess, tmp_path, edit, expected):
    """A fresh run into a folder with a damaged checkpoint said it "holds an unfinished run: continue it with
    --resume", which then failed; now it says what is damaged and what to do, and leaves the file as it is."""
    config, blob, arrays, meta, _ = real
    checkpoint = tmp_path / "checkpoint.npz"
    edit(blob, arrays, meta, checkpoint)
    damaged = checkpoint.read_bytes()
    status, _, err = nestgrad_inprocess("run", config, "--out", tmp_path, "--quiet", "--no-check")
    assert status == 2, err
    assert err.count("nestgrad: error:") == 1 and "Traceback" not in err and "unfinished" not in err, err
    assert f"nestgrad: error: {checkpoint}: {expected}" in err, err
    assert "the checkpoint is damaged: restore it from a copy to resume the run, or delete it to start afresh" in err
    assert "a fresh run here would overwrite it" in err, err
    assert checkpoint.read_bytes() == damaged
