"""The layers of docs/architecture.md, read from the code's own imports.

Every ``import`` and ``from … import`` of every module under ``solvers/`` and ``shockflow/`` (at
module level and inside functions alike) becomes an edge between modules; ``from package import
name`` goes to the submodule where ``name`` is one, else to the package's ``__init__``.  Then:

* ``solvers`` never imports ``shockflow`` (numerics know nothing of networks or files);
* no two modules import each other (a cycle of two), and no two packages (``shockflow.cases`` and
  ``shockflow.sweeps``, say) do either: the packages form layers;
* the library never imports the command line, and case settings never import their runners.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("solvers", "shockflow")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the two packages, by dotted name."""
    return {module_name(p, root): p for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))}


def _resolve(target: str, known: dict[str, Path]) -> str | None:
    """The module a dotted import target lands in: itself, or its nearest known parent."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules that module ``name`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            hit = _resolve(target, known)
            if hit is not None and hit != name:
                found.add(hit)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(root)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def mutual_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs of modules that import each other, each pair once."""
    return sorted((a, b) for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, ()))


def package_graph(graph: dict[str, set[str]], depth: int = 2) -> dict[str, set[str]]:
    """The graph between packages: modules grouped by their first ``depth`` name parts."""
    def package(module: str) -> str:
        return ".".join(module.split(".")[:depth])

    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        out.setdefault(package(a), set()).update(package(b) for b in targets if package(b) != package(a))
    return out


def crossings(graph: dict[str, set[str]], source: str, forbidden: str) -> list[tuple[str, str]]:
    """Edges from modules under ``source`` to modules under ``forbidden`` (dotted prefixes)."""
    def under(module: str, prefix: str) -> bool:
        return module == prefix or module.startswith(prefix + ".")

    return sorted((a, b) for a, targets in graph.items() if under(a, source)
                  for b in targets if under(b, forbidden))


@pytest.fixture(scope="module")
def graph():
    return import_graph()


def test_the_graph_sees_the_imports_it_must(graph):
    # a reading that found nothing would pass every rule below: check known edges first
    assert "solvers.errors" in graph["solvers.conservation.solver"]
    assert "shockflow.cases.pde" in graph["shockflow.runners.pde"]
    assert "solvers.charts" in graph["shockflow.prediction.predict"]  # an import inside a function, from a face
    assert len(graph) > 150


def test_solvers_never_import_shockflow(graph):
    assert crossings(graph, "solvers", "shockflow") == []


def test_no_two_modules_import_each_other(graph):
    assert mutual_imports(graph) == []


def test_no_two_packages_import_each_other(graph):
    assert mutual_imports(package_graph(graph)) == []


def test_the_library_never_imports_the_command_line(graph):
    library = {m: t for m, t in graph.items() if m != "shockflow.cli"}
    assert crossings(library, "shockflow", "shockflow.cli") == []


def test_case_settings_never_import_their_runners(graph):
    assert crossings(graph, "shockflow.cases", "shockflow.runners") == []


def test_a_cycle_in_a_tree_is_found(tmp_path):
    # the same reading on a small tree with a deliberate cycle and a forbidden crossing
    for rel, text in {
        "solvers/__init__.py": "",
        "solvers/grid.py": "from shockflow.cases import settings\n",
        "shockflow/__init__.py": "",
        "shockflow/cases/__init__.py": "",
        "shockflow/cases/settings.py": "def run():\n    from shockflow.runners.pde import solve\n",
        "shockflow/runners/__init__.py": "",
        "shockflow/runners/pde.py": "from ..cases.settings import run\nimport solvers.grid\n",
    }.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    g = import_graph(tmp_path)
    assert mutual_imports(g) == [("shockflow.cases.settings", "shockflow.runners.pde")]
    assert crossings(g, "solvers", "shockflow") == [("solvers.grid", "shockflow.cases.settings")]
    assert crossings(g, "shockflow.cases", "shockflow.runners") == [("shockflow.cases.settings", "shockflow.runners.pde")]
    assert mutual_imports(package_graph(g)) == [("shockflow.cases", "shockflow.runners")]
