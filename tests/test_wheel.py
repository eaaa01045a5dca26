"""An installable tool: the wheel built from this checkout, installed (not editable) in a
fresh virtual environment, runs a new study from ``prereg init`` to ``score`` in an empty
folder outside the repository.

Nothing is downloaded: the wheel is built without build isolation by the running interpreter
(the dev extras pin a setuptools that builds wheels by itself), installed with ``--no-deps
--no-index`` into a fresh environment made without a pip of its own, and that environment
sees the running interpreter's packages (numpy, ruff, pip, ...) through a ``.pth`` line, after
its own: the ``prereg`` it imports is the wheel's. About 15 seconds; it runs wherever the
suite runs (``make test``, CI). An interpreter that cannot build wheels (a setuptools older
than 70.1 without the ``wheel`` package, as in an environment made before the dev extras asked
for one) skips it outside CI and fails it in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

# what the build reads (a copy, so that building leaves nothing in the checkout)
SOURCES = ("pyproject.toml", "setup.py", "README.md", "runtime", "templates", "generated", "spec")


def _can_build_wheels() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    major_minor = tuple(int(x) for x in setuptools.__version__.split(".")[:2])
    if major_minor >= (70, 1):
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


def _run(argv, *, cwd, env, timeout=300) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"{argv}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a fresh virtual environment with the wheel installed."""
    if not _can_build_wheels():
        if os.environ.get("CI"):
            pytest.fail("this interpreter cannot build wheels: install the dev extras")
        pytest.skip("this interpreter cannot build wheels (setuptools < 70.1 without wheel)")
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy(path, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    dist = base / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", dist, src],
        cwd=base, env=env,
    )  # fmt: skip
    (wheel,) = dist.glob("prereg-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "prereg/_shipped/templates/starter-factorial.yaml.j2" in names
    assert "prereg/_shipped/generated/prereg.schema.json" in names
    venv = base / "venv"
    # without pip of its own (seeding one takes most of a minute): the pip it runs below is the
    # running interpreter's, seen through the .pth line, installing into the fresh environment
    _run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
        cwd=base, env=env,
    )  # fmt: skip
    bin_dir = venv / "bin"
    py = bin_dir / "python"
    purelib = _run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base, env=env
    ).stdout.strip()
    # the running interpreter's packages (its own and those it sees through .pth lines)
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    ours |= {p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")}
    Path(purelib, "zz_prereg_test_deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    _run([py, "-m", "pip", "install", "--no-deps", "--no-index", wheel], cwd=base, env=env)
    return bin_dir


def test_the_installed_wheel_runs_init_compile_items_simulate_score(installed, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{installed}{os.pathsep}{env.get('PATH', '')}"
    work = tmp_path / "empty"
    work.mkdir()
    assert not any(work.iterdir())
    where = _run(
        [installed / "python", "-c", "import prereg; print(prereg.__file__)"], cwd=work, env=env
    ).stdout.strip()
    assert Path(where).is_relative_to(installed.parent), where  # the wheel's, not the checkout's
    assert not Path(where).is_relative_to(ROOT)
    prereg = installed / "prereg"
    _run([prereg, "init", "my-study"], cwd=work, env=env)
    _run([prereg, "compile"], cwd=work, env=env)
    assert (work / "generated" / "my_study" / "rules.py").is_file()
    _run([prereg, "my-study", "items", "--out", "items.jsonl"], cwd=work, env=env)
    _run(
        [prereg, "my-study", "simulate", "--items", "items.jsonl", "--scenario", "effect",
         "--seed", "1", "--out", "observations.jsonl"],
        cwd=work, env=env,
    )  # fmt: skip
    score = _run(
        [prereg, "my-study", "score", "--items", "items.jsonl", "--observations",
         "observations.jsonl", "--out", "results/run1/SCORE.json"],
        cwd=work, env=env,
    )  # fmt: skip
    assert (work / "results" / "run1" / "SCORE.json").is_file(), score.stdout
    assert (work / "results" / "run1" / "SCORE.md").is_file()
    # the checkout was never written: the tool ran from the wheel in the empty folder
    assert sorted(p.name for p in work.iterdir()) == [
        "generated",
        "items.jsonl",
        "observations.jsonl",
        "results",
        "spec",
    ]
