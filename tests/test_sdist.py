"""``pip install`` from an sdist: build the source distribution, install it into a
fresh virtual environment, and run the installed ``rtshield`` from another folder.

Affordable and offline: the sdist is built without build isolation and
installed with ``--no-build-isolation --no-deps``; the fresh environment sees
the dependencies (numpy, matplotlib, scikit-build-core, …) of the environment
running the tests through a ``.pth`` file, while rtshield itself comes only
from the sdist (the test checks where it was imported from).

The sdist is installed without the profile-guided build (``RTS_PGO=OFF``): the
installation that runs the tests (tools/install.sh) already builds the same sources
with it, and here the sdist is checked to carry that build's training run
(``sim/pgo/train.c``; the rest of the PGO build is the sources the install here
compiles), so the test does not build the native library a second and third time.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("build") is None
    or importlib.util.find_spec("scikit_build_core") is None,
    reason="building the sdist needs the packages build and scikit-build-core "
    "(pip install -e '.[test]', or tools/install.sh --test)",
)


def _run(cmd, **kw):
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=900,
                         **kw)
    assert res.returncode == 0, f"{cmd}: {res.stdout[-2000:]}\n{res.stderr[-4000:]}"
    return res


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sdist")
    _run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", tmp / "dist",
          REPO])
    (sdist,) = (tmp / "dist").glob("rtshield-*.tar.gz")
    env_dir = tmp / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(_run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "_rtshield_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": "2"}
    env.pop("PYTHONPATH", None)
    _run([py, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
          "--disable-pip-version-check", "--config-settings=cmake.define.RTS_PGO=OFF", sdist],
         env=env, cwd=tmp)
    return sdist, env_dir, env


def test_sdist_holds_the_sources_templates_and_scenarios(installed):
    sdist, _, _ = installed
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for need in ("pyproject.toml", "CMakeLists.txt", "python/rtshield/report.py",
                 "python/rtshield/templates/page.html.j2", "libshield/include/rtshield",
                 "scenarios/danicki2021/queue_500.toml", "README.md",
                 "python/rtshield/rig/paper_tables.csv", "sim/pgo/train.c"):
        assert any(n == need or n.startswith(need + "/") for n in names), need
    assert not any(n.startswith(("build/", ".venv/")) for n in names)


def test_installed_package_runs_from_another_folder(installed, tmp_path):
    _, env_dir, env = installed
    py = env_dir / "bin" / "python"
    where = _run([py, "-c", "import rtshield, sys; print(rtshield.__file__)"],
                 env=env, cwd=tmp_path).stdout.strip()
    assert where.startswith(str(env_dir)), where
    exe = env_dir / "bin" / "rtshield"
    assert _run([exe, "--version"], env=env, cwd=tmp_path).stdout.strip().endswith("0.1.0")
    # A shipped scenario, the native engine, the figures and the templated report.
    code = (
        "import rtshield, pathlib;"
        "sc = pathlib.Path(rtshield.__file__).parent / 'scenarios/danicki2021/queue_500.toml';"
        "run = rtshield.simulate(sc, duration='2s');"
        "print(len(run.timeseries), run.write('out'))"
    )
    out = _run([py, "-c", code], env=env, cwd=tmp_path).stdout
    assert out.startswith("2 ")
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<nav class=\"toc\"" in html and "data:image/png;base64," in html
    # Package data beside the modules: the rig's copy of the paper's tables.
    code = "from rtshield.rig import results; print(results.paper_tables()[False]['SD'])"
    assert _run([py, "-c", code], env=env, cwd=tmp_path).stdout.strip() == (
        "(1.008, 27.852, 25.685, 21.678)")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="building the rig's target needs gcc")
def test_installed_rig_builds_its_target_from_the_trees_it_carries(installed, tmp_path):
    """``rtshield rig freertos-tcp`` from the installed package: the target's sources, the
    build script and the pinned FreeRTOS trees come from the installed copy, not a checkout."""
    _, env_dir, env = installed
    py = env_dir / "bin" / "python"
    code = (
        "import pathlib; from rtshield.rig.freertos import build as freertos;"
        "tree = freertos.find_tree(None); print(freertos._repo()); print(tree);"
        "print(freertos.default_scenario());"
        f"print(freertos.build_target(tree, cache_dir=pathlib.Path({str(tmp_path / 'cache')!r}),"
        " say=lambda m: None))"
    )
    env = {k: v for k, v in env.items() if k != "RTS_THIRD_PARTY"}
    repo, tree, scenario, exe = _run([py, "-c", code], env=env, cwd=tmp_path).stdout.split()
    package = Path(
        _run([py, "-c", "import rtshield; print(rtshield.__file__)"], env=env, cwd=tmp_path)
        .stdout.strip()).parent
    assert Path(repo) == package / "source"
    assert Path(tree) == package / "source" / "third_party"
    assert (Path(tree) / "FreeRTOS-Plus-TCP" / "source" / "FreeRTOS_IP.c").is_file()
    assert Path(scenario).is_relative_to(package) and Path(scenario).is_file()
    assert Path(exe).is_relative_to(tmp_path / "cache") and os.access(exe, os.X_OK)
