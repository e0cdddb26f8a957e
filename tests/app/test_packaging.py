"""The built wheel installs one top-level package, `nestgrad`, holding every module of ad/, likelihoods/ and
sampler/; installed from it (not from the checkout), the public API imports and the old top-level names do not
exist, so nestgrad cannot clash with the PyPI packages named `ad` or `sampler`."""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("nestgrad", "ad", "likelihoods", "sampler")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """Build the wheel from a copy of the sources, as `pip install .` would (no build folder in the checkout)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    for name in SOURCES:
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = out.glob("nestgrad-*.whl")
    return path


def test_wheel_has_only_nestgrad_at_the_top(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"nestgrad"}
    for old in ("ad", "likelihoods", "sampler"):
        assert not any(n.startswith(old + "/") for n in names)


def test_wheel_holds_every_module_and_the_default_config(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    for package in ("ad", "likelihoods", "sampler"):
        for file in (REPO / package).rglob("*.py"):
            if "__pycache__" not in file.parts:
                assert f"nestgrad/{file.relative_to(REPO).as_posix()}" in names, file
    assert "nestgrad/sampler/default_config.yaml" in names
    assert "nestgrad = nestgrad.sampler.cli:main" in entry_points


def test_installed_wheel_imports_the_api_and_not_the_old_names(wheel, tmp_path):
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
                           str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    script = (
        "import importlib.util, numpy as np, nestgrad as ng\n"
        f"assert ng.__file__.startswith({str(site)!r}), ng.__file__\n"
        "assert all(importlib.util.find_spec(n) is None for n in ('ad', 'likelihoods', 'sampler'))\n"
        "def k(theta, x):\n"
        "    return -0.5 * ((theta[0] - x) ** 2)\n"
        "L = ng.Likelihood(k, ['a'], {'x': 1.0}, backend='python')\n"
        "value, grad = L.logl_and_grad(np.array([[3.0]]))\n"
        "assert value[0] == -2.0 and grad[0, 0] == -2.0, (value, grad)\n"
        "assert ng.priors.Uniform(0, 1).transform(0.25) == 0.25\n"
        "print(ng.__version__)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    (tmp_path / "use_wheel.py").write_text(script)  # a file: the differentiator reads the kernel's source
    ran = subprocess.run([sys.executable, "use_wheel.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.strip() == __import__("nestgrad").__version__


def test_old_names_inside_a_checkout_are_the_nestgrad_modules(tmp_path):
    """In a source checkout, `import ad` / `from sampler.priors import ...` (the pre-package names) still work
    and give the very same module objects as nestgrad.*, whichever is imported first."""
    script = (
        "import sys\n"
        "from sampler.priors import Uniform\n"       # old name first, before nestgrad was ever imported
        "import ad, likelihoods.data, nestgrad.sampler.priors, nestgrad.ad, nestgrad.likelihoods.data\n"
        "assert Uniform is nestgrad.sampler.priors.Uniform\n"
        "assert ad is nestgrad.ad and likelihoods.data is nestgrad.likelihoods.data\n"
        "assert sys.modules['sampler'] is sys.modules['nestgrad.sampler']\n"
        "print('same')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    ran = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.strip() == "same"
