"""`nestgrad run` imports only what the run uses: no matplotlib without plots, no GPU or optional stacks on cpu.

One real command-line process (the `nestgrad` entry point's `main()`, as the console script calls it), whose
`sys.modules` is inspected after the run; the same process then makes a plot, so the check is seen to notice
matplotlib when it is imported.
"""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CONFIG = """\
name: lazy
likelihood:
  builtin: gaussian4d
sampler:
  nlive: 50
  dlogz: 0.5
  seed: 3
backend: cpu
output:
  dir: {out}
  plots: []
"""
NOT_WITHOUT_PLOTS = ("matplotlib", "PIL", "fontTools", "scipy.ndimage")
NEVER_ON_CPU = ("numba.cuda", "cupy", "jax", "mpi4py")

CHILD = """\
import json, sys
from nestgrad.sampler.cli import main

def loaded(names):
    return sorted(n for n in names if n in sys.modules)

watch = json.loads(sys.argv[1])
sys.argv = ["nestgrad", "run", sys.argv[2], "--quiet"]
status = main()
after_run = loaded(watch)
status_plot = main(["plot", sys.argv[2].replace("lazy.yaml", "out"), "--kinds", "corner"])
print(json.dumps({"status": status, "after_run": after_run, "status_plot": status_plot,
                  "after_plot": loaded(watch)}))
"""


def test_run_without_plots_imports_no_matplotlib_and_no_gpu_stack(app_env, tmp_path):
    config = tmp_path / "lazy.yaml"
    config.write_text(CONFIG.format(out=tmp_path / "out"))
    watch = list(NOT_WITHOUT_PLOTS + NEVER_ON_CPU)
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(watch), str(config)], cwd=REPO, env=app_env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == 0 and report["status_plot"] == 0, done.stderr
    assert report["after_run"] == [], f"a run without plots imported {report['after_run']}"
    # the same check does see matplotlib once a plot is made (and the GPU stack stays out of a cpu process)
    assert "matplotlib" in report["after_plot"]
    assert not set(report["after_plot"]) & set(NEVER_ON_CPU), report["after_plot"]
