"""python/rtshield imports in one direction, and the check says so when it does not.

The layering is import-linter's contracts in ``.importlinter`` (the top
level's layers, the schema package's, the core without presentation
libraries, no cycle between siblings); ``tools/test.sh`` runs ``lint-imports``
beside ruff. Here the contracts are run on the source tree and on a copy with
one bad import added, which must fail naming the modules. A second, plainer
check finds every import cycle between any two modules of the package (the
strongly connected components of grimp's import graph), also inside one layer
or one package. Imports inside functions count like any other.

Both run in a subprocess on ``python/rtshield`` (not the installed package)
so that the graph is the source tree's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "python"
CONFIG = ROOT / ".importlinter"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

#: Cycles still being removed by their package's own work, each a set of modules
#: (issue 25: the analysis package's two circles). Any other cycle fails; remove
#: an entry once its cycle is gone.
PENDING: dict[str, str] = {}

#: Tarjan's algorithm over grimp's graph, run in a subprocess on PYTHONPATH's rtshield.
_CYCLES = r"""
import json, sys
import grimp

sys.setrecursionlimit(10000)
g = grimp.build_graph("rtshield", cache_dir=None)
adj = {m: sorted(g.find_modules_directly_imported_by(m)) for m in sorted(g.modules)}
index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

def visit(v):
    index[v] = low[v] = n[0]
    n[0] += 1
    stack.append(v)
    on.add(v)
    for w in adj[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1 or v in adj[v]:
            out.append(sorted(comp))

for m in adj:
    if m not in index:
        visit(m)
print(json.dumps(sorted(out)))
"""


def _env(pythonpath: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(pythonpath)}


def lint(pythonpath: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the repository's contracts on the rtshield under ``pythonpath``."""
    return subprocess.run(
        [str(LINT_IMPORTS), str(CONFIG), "--no-cache"],
        cwd=ROOT, env=_env(pythonpath), capture_output=True, text=True, timeout=300,
    )


def cycles(pythonpath: Path) -> list[list[str]]:
    """Every import cycle of the rtshield under ``pythonpath``: its modules, sorted."""
    out = subprocess.run(
        [sys.executable, "-c", _CYCLES],
        cwd=ROOT, env=_env(pythonpath), capture_output=True, text=True, timeout=300, check=True,
    )
    return json.loads(out.stdout)


def unexpected(found: list[list[str]]) -> list[list[str]]:
    """The cycles not inside a package of :data:`PENDING`."""
    return [c for c in found if not any(all(m.startswith(p + ".") for m in c) for p in PENDING)]


def copy_with(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the source package (Python files only) with ``line`` added at the end
    of ``module`` (a path below rtshield/); the folder to put on PYTHONPATH."""
    dest = tmp_path / "src"
    shutil.copytree(
        SOURCE / "rtshield", dest / "rtshield",
        ignore=lambda d, names: [n for n in names if n == "__pycache__" or n == "scenarios"
                                 or (Path(d, n).is_file() and not n.endswith(".py"))
                                 or n == "_rtshield_ffi.py"],
    )
    target = dest / "rtshield" / module
    target.write_text(target.read_text(encoding="utf-8") + line, encoding="utf-8")
    return dest


def test_the_contracts_hold_on_the_source_tree():
    p = lint(SOURCE)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "0 broken" in p.stdout


def test_no_import_cycle_in_the_package():
    assert unexpected(cycles(SOURCE)) == []


def test_an_upward_import_breaks_the_layers(tmp_path):
    # the engine's configuration reaching up to the runner that uses it
    src = copy_with(tmp_path, "engine_config.py", "\nfrom rtshield import runner  # noqa\n")
    p = lint(src)
    assert p.returncode != 0
    assert "rtshield's top level imports downwards only BROKEN" in p.stdout
    assert "rtshield.engine_config is not allowed to import rtshield.runner" in p.stdout
    found = unexpected(cycles(src))
    assert any({"rtshield.engine_config", "rtshield.runner"} <= set(c) for c in found), found


def test_a_lazy_cycle_inside_one_package_is_found(tmp_path):
    # two verbs of one layer importing each other, one of them inside a function:
    # no layer contract covers the commands' insides, the cycle checks do
    src = copy_with(
        tmp_path, "commands/compare.py",
        "\n\ndef _injected():\n    from rtshield.commands import demo  # noqa\n",
    )
    p = lint(src)
    assert p.returncode != 0
    assert "No cycles are allowed in rtshield.commands" in p.stdout
    # names one import of the two that would break it
    assert "- .demo -> .compare" in p.stdout or "- .compare -> .demo" in p.stdout
    assert ["rtshield.commands.compare", "rtshield.commands.demo"] in unexpected(cycles(src))


def test_a_core_module_may_not_use_a_presentation_library(tmp_path):
    src = copy_with(tmp_path, "scenario_types.py", "\n\ndef _table():\n    import rich  # noqa\n")
    p = lint(src)
    assert p.returncode != 0
    assert "rtshield.scenario_types is not allowed to import rich" in p.stdout
