"""Reading a case file: TOML (``tomllib``) -> overrides -> the kind's validated settings.

Every case file has a header at the top level::

    kind = "pde"                 # required: a registered case kind
    name = "burgers-riemann"     # optional: defaults to the file name without .toml
    description = "..."          # optional: one line, shown by `shockflow cases`
    seed = 0                     # optional: for kinds that draw random numbers

and the kind's tables beside it.  Overrides (``--set solver.cfl=0.3`` on the command line) are
applied to the parsed TOML before validation, so an override is checked exactly like the file
(this is how the tests run every built-in case at a reduced size).  The case text, the
overrides and the resolved settings travel with the case into its result file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shockflow.cases.errors import CaseError, Problem
from shockflow.cases.kinds import get_kind
from shockflow.cases.schema import _toml_type, parse_settings

__all__ = ["Case", "load_case", "parse_case", "apply_overrides", "HEADER_KEYS"]

HEADER_KEYS = ("kind", "name", "description", "seed", "sweep")


@dataclass(frozen=True)
class Case:
    """A validated case: header, the kind's settings tree, and where it came from."""

    name: str
    kind: str
    description: str
    seed: int | None
    settings: Any
    text: str
    path: Path | None = None
    overrides: tuple[str, ...] = field(default=())

    @property
    def directory(self) -> Path:
        """Relative paths in the case (array files) are resolved against this directory."""
        return self.path.parent if self.path is not None else Path(".")


def _parse_value(text: str):
    """A TOML value (``200``, ``0.5``, ``true``, ``[1, 2]``, ``"x"``), or the bare text as a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_overrides(table: dict, overrides, file: str) -> dict:
    """Return a copy of ``table`` with each ``"a.b.c=value"`` of ``overrides`` set (tables created as needed)."""
    import copy

    out = copy.deepcopy(table)
    problems = []
    for item in overrides:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            problems.append(Problem("", f"override {item!r}: expected KEY=VALUE with a dotted key such as solver.cfl=0.3"))
            continue
        parts = key.split(".")
        node = out
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                where = ".".join(parts[:depth + 1])
                problems.append(Problem(where, f"override {item!r}: expected a table at {where}, found a {_toml_type(child)}"))
                break
            node = child
        else:
            node[parts[-1]] = _parse_value(value.strip())
    if problems:
        raise CaseError(file, problems)
    return out


def parse_case(text: str, *, file: str = "<string>", path: Path | None = None, overrides=()) -> Case:
    """Validate the TOML ``text`` of a case (see the module docstring); raise :class:`CaseError`."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(file, [Problem("", f"not valid TOML: {exc}")]) from None
    table = apply_overrides(raw, overrides, file)
    problems = []
    kind_name = table.get("kind")
    kind = None
    if kind_name is None:
        problems.append(Problem("kind", 'missing required key: the case kind, e.g. kind = "pde"'))
    elif not isinstance(kind_name, str):
        problems.append(Problem("kind", f"expected a string, found {kind_name!r} ({_toml_type(kind_name)})"))
    else:
        try:
            kind = get_kind(kind_name)
        except KeyError as exc:
            problems.append(Problem("kind", exc.args[0]))
    default_name = path.stem if path is not None else "case"
    name = table.get("name", default_name)
    description = table.get("description", "")
    seed = table.get("seed")
    for key, value, ok, expected in (
        ("name", name, isinstance(name, str) and name.strip() != "", "a non-empty string"),
        ("description", description, isinstance(description, str), "a string"),
        ("seed", seed, seed is None or (isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0),
         "an integer >= 0"),
    ):
        if not ok:
            problems.append(Problem(key, f"expected {expected}, found {value!r} ({_toml_type(value)})"))
    if "sweep" in table:  # the parameter axes of `shockflow sweep`; a single run ignores them, but they must be valid
        from shockflow.cases.sweep_axes import SweepSpecError, split_sweep_table

        try:
            split_sweep_table(text, file)
        except SweepSpecError as exc:
            message = str(exc).removeprefix(f"case file {file!r}: ").removeprefix("sweep: ")
            problems.append(Problem("sweep", message))
    if kind is None:
        raise CaseError(file, problems)
    body = {k: v for k, v in table.items() if k not in HEADER_KEYS}
    try:
        settings = parse_settings(kind.settings, body, file=file, extra_keys=HEADER_KEYS)
    except CaseError as exc:
        raise CaseError(file, problems + list(exc.problems), exc.missing) from None
    if problems:
        raise CaseError(file, problems)
    return Case(name=name, kind=kind.name, description=description, seed=seed, settings=settings, text=text,
                path=path, overrides=tuple(str(o) for o in overrides))


def load_case(source, overrides=()) -> Case:
    """Load a case from a file path or a built-in case name (see :mod:`shockflow.cases.builtin`)."""
    from shockflow.cases.builtin import builtin_case_path, builtin_names, cases_search_paths

    path = Path(source)
    if not path.is_file():
        found = builtin_case_path(str(source))
        if found is None:
            names = builtin_names()
            listing = ", ".join(names) if names else (
                "(none found; looked in " + ", ".join(str(p) for p in cases_search_paths()) + ")")
            raise CaseError(str(source), [Problem("", f"no such case file, and no built-in case of that name; "
                                                      f"built-in cases: {listing}")])
        path = found
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseError(str(path), [Problem("", f"expected UTF-8 text (TOML), found undecodable bytes at offset {exc.start}")]) from None
    except OSError as exc:
        raise CaseError(str(path), [Problem("", f"cannot read the file ({exc.strerror})")]) from None
    return parse_case(text, file=str(path), path=path, overrides=overrides)
