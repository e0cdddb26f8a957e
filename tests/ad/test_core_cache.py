"""Generated modules live in the cache directory and a second process reuses them (file and numba cache)."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = textwrap.dedent('''
    import json, os, sys
    import numpy as np
    from nestgrad import ad
    text = ("def k(theta, x):\\n    s = 0.0\\n    for i in range(x.shape[0]):\\n"
            "        s += theta[0] * x[i] * x[i]\\n    return s\\n")
    d = ad.differentiate_source(text, "k", filename=os.environ["KERNEL_FILE"])
    j = d.jit()
    g = np.zeros(1)
    v = j.value_and_grad(np.array([2.0]), np.arange(3.0), g)
    stats = j.value_and_grad.stats
    print(json.dumps({"files": d.cache_files, "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()), "value": float(v), "grad": float(g[0])}))
''')


def run(tmp_path):
    env = dict(os.environ, NESTGRAD_CACHE_DIR=str(tmp_path / "cache"), KERNEL_FILE=str(tmp_path / "kern.py"),
               PYTHONPATH=os.pathsep.join([str(REPO)] + sys.path))
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_reuses_generated_module_and_machine_code(tmp_path):
    first = run(tmp_path)
    cache = tmp_path / "cache"
    for f in first["files"]:
        assert f.startswith(str(cache)) and os.path.exists(f)
        assert os.path.basename(f).startswith("k_")
    mtimes = {f: os.stat(f).st_mtime_ns for f in first["files"]}
    assert first["misses"] >= 1 and first["value"] == 10.0 and first["grad"] == 5.0
    second = run(tmp_path)
    assert second["files"] == first["files"]
    assert {f: os.stat(f).st_mtime_ns for f in second["files"]} == mtimes  # not rewritten
    assert second["hits"] >= 1 and second["misses"] == 0  # numba loaded the machine code from the cache
    assert (second["value"], second["grad"]) == (first["value"], first["grad"])
