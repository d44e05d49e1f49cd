"""The built-in cases: the TOML files of the project's ``cases/`` directory.

They are found in ``$SHOCKFLOW_CASES`` if set, else in the ``cases/`` directory beside the
``shockflow`` package (the source checkout, or an editable install).  A built-in case is named
by its file name without ``.toml``; ``shockflow solve burgers-riemann`` runs
``cases/burgers-riemann.toml``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BuiltinCase", "cases_directory", "builtin_cases", "builtin_names", "builtin_case_path"]


@dataclass(frozen=True)
class BuiltinCase:
    name: str
    kind: str
    description: str
    path: Path

    def as_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "description": self.description}


def cases_directory() -> Path | None:
    env = os.environ.get("SHOCKFLOW_CASES")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "cases")
    for c in candidates:
        if c.is_dir():
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
    for c in builtin_cases():
        if c.name == name or c.name == name.removesuffix(".toml"):
            return c.path
    return None
