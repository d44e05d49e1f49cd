"""The built-in cases: the TOML files of the project's ``cases/`` directory.

They are looked for, in this order, in ``$SHOCKFLOW_CASES`` if set; in the package data
``shockflow/cases/data/`` (an installed wheel: ``setup.py`` copies ``cases/*.toml`` there, found
with :mod:`importlib.resources`); and in the ``cases/`` directory of the source checkout beside
the ``shockflow`` package (a checkout or an editable install).  A built-in case is named by its
file name without ``.toml``; ``shockflow solve burgers-riemann`` runs ``burgers-riemann.toml``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["BuiltinCase", "cases_directory", "cases_search_paths", "builtin_cases", "builtin_names",
           "builtin_case_path"]


@dataclass(frozen=True)
class BuiltinCase:
    name: str
    kind: str
    description: str
    path: Path

    def as_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "description": self.description}


def cases_search_paths() -> list[Path]:
    """The directories searched for built-in cases, in order (the first holding a ``*.toml`` wins)."""
    env = os.environ.get("SHOCKFLOW_CASES")
    if env:
        return [Path(env)]  # an explicit choice: nothing else is searched
    paths = []
    try:
        paths.append(Path(str(resources.files("shockflow.cases") / "data")))
    except (ModuleNotFoundError, TypeError):  # pragma: no cover - a zip import without a file system
        pass
    paths.append(Path(__file__).resolve().parents[2] / "cases")
    return paths


def cases_directory() -> Path | None:
    for c in cases_search_paths():
        if c.is_dir() and any(c.glob("*.toml")):
            return c
    return None


def builtin_cases() -> list[BuiltinCase]:
    """Every ``*.toml`` of the cases directory, sorted by name (headers read, bodies not validated)."""
    directory = cases_directory()
    if directory is None:
        return []
    out = []
    for path in sorted(directory.glob("*.toml")):
        try:
            head = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            head = {}
        out.append(BuiltinCase(path.stem, str(head.get("kind", "?")), str(head.get("description", "")), path))
    return out


def builtin_names() -> list[str]:
    return [c.name for c in builtin_cases()]


def builtin_case_path(name: str) -> Path | None:
    """The built-in case file named ``name`` (with or without ``.toml``), or None: the file of that stem in the
    cases directory, found without reading the others (``builtin_cases`` reads every header: 14 ms a run)."""
    directory = cases_directory()
    stem = name.removesuffix(".toml")
    if directory is None or not stem or Path(stem).name != stem:
        return None
    path = directory / f"{stem}.toml"
    return path if path.is_file() else None
