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

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shockflow.cases import arguments
from shockflow.cases.errors import CaseError, Problem
from shockflow.cases.kinds import get_kind
from shockflow.cases.schema import _toml_type, parse_settings

__all__ = ["Case", "load_case", "parse_case", "apply_overrides", "HEADER_KEYS"]

HEADER_KEYS = ("kind", "name", "description", "seed", "sweep")

#: a case name is the stem of every file a run writes: letters, digits, ``.``, ``_``, ``-``, ``+``; no leading
#: dot or dash, no ``..``, at most ``NAME_MAX_LENGTH`` characters (so ``<name>-landscape.png`` fits a file name)
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
NAME_MAX_LENGTH = 100
#: a case file larger than this, or an override key of more parts, is refused before parsing
MAX_CASE_BYTES = 1_000_000
MAX_KEY_PARTS = 32


def name_problem(name) -> str | None:
    """Why ``name`` cannot be a case name (the stem of the files a run writes), or None."""
    if not isinstance(name, str) or not name:
        return f"expected a non-empty string, found {name!r} ({_toml_type(name)})"
    if len(name) > NAME_MAX_LENGTH:
        return f"expected at most {NAME_MAX_LENGTH} characters (it names the output files), found {len(name)}"
    if not NAME_PATTERN.fullmatch(name) or ".." in name:
        return (f"expected a file stem of letters, digits, '.', '_', '-', '+' (not starting with '.' or '-', "
                f"no '..'; it names the output files), found {name!r}")
    return None


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
    #: made in Python, not read from a file: what it is (``"network"``: a network given to ``shockflow.forecast``)
    #: and which argument gave which of its tables (``(("training", "optimiser"),)``): its errors name those
    #: (:meth:`CaseError.at`), never a case file
    origin: str | None = None
    arguments: tuple[tuple[str, str], ...] = field(default=())

    @property
    def directory(self) -> Path:
        """Relative paths in the case (array files) are resolved against this directory."""
        return self.path.parent if self.path is not None else Path(".")

    def resolve(self, name: str | Path) -> Path:
        """A path named in the case (an array or mesh file): absolute as given, else relative to :attr:`directory`."""
        path = Path(name)
        return path if path.is_absolute() else self.directory / path


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
            problems.append(Problem("", f"override {_short(item)}: expected KEY=VALUE with a dotted key such as solver.cfl=0.3"))
            continue
        if key.count(".") >= MAX_KEY_PARTS:
            problems.append(Problem("", f"override {_short(item)}: expected a key of at most {MAX_KEY_PARTS} parts, "
                                        f"found {key.count('.') + 1}"))
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


def _short(item, limit: int = 80) -> str:
    text = repr(str(item))
    return text if len(text) <= limit else text[:limit - 5] + "...'"


def _without_strings(text: str) -> str:
    """``text`` with the contents of every TOML string and comment removed (a string becomes ``""``).

    One left-to-right scan: basic strings ``"…"`` (with ``\\`` escapes), literal strings ``'…'`` and
    their multi-line forms (triple quotes), and comments from ``#`` to the end of the line.  An
    unterminated string runs to the end (the TOML parser reports it afterwards).
    """
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif ch in "\"'":
            quote = ch * 3 if text.startswith(ch * 3, i) else ch
            j = i + len(quote)
            while j < n and not text.startswith(quote, j):
                if quote[0] == '"' and text[j] == "\\":
                    j += 1   # an escaped character, a quote among them
                elif len(quote) == 1 and text[j] == "\n":
                    break    # a one-line string ends at the line's end at the latest
                j += 1
            out.append('""')
            i = j if j < n and text[j] == "\n" else j + len(quote)
            while len(quote) == 3 and i < n and text[i] == quote[0]:
                i += 1       # up to two quotes may end a multi-line string's content
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _depth_problem(text: str) -> str | None:
    """A key of more than ``MAX_KEY_PARTS`` dotted parts or tables nested deeper, found without parsing.

    Brackets, braces and dots inside strings and comments do not count (``_without_strings``)."""
    text = _without_strings(text)
    depth = deepest = 0
    for ch in text:  # inline tables and arrays: brackets and braces outside strings
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    if deepest > 2 * MAX_KEY_PARTS:
        return f"expected tables and arrays nested at most {MAX_KEY_PARTS} deep, found {deepest} levels"
    for line in text.splitlines():
        head = line.split("=", 1)[0]  # a key or a [table] header; array rows have commas
        if head.count(".") >= MAX_KEY_PARTS and not any(c in head for c in "\"',"):
            return f"expected keys of at most {MAX_KEY_PARTS} dotted parts, found {head.count('.') + 1}"
    return None


def _check_tree(node, key: str = "", depth: int = 0) -> str | None:
    if depth > MAX_KEY_PARTS:
        return f"{key.split('.')[0]}: expected tables nested at most {MAX_KEY_PARTS} deep"
    if isinstance(node, dict):
        for k, v in node.items():
            found = _check_tree(v, f"{key}.{k}" if key else str(k), depth + 1)
            if found:
                return found
    elif isinstance(node, list):
        for v in node:
            found = _check_tree(v, key, depth + 1)
            if found:
                return found
    return None


def parse_case(text: str, *, file: str = "<string>", path: Path | None = None, overrides=()) -> Case:
    """Validate the TOML ``text`` of a case (see the module docstring); raise :class:`CaseError` (a problem at a key
    an override set names the override)."""
    try:
        return _parse_case(text, file=file, path=path, overrides=overrides)
    except CaseError as exc:
        raise exc.from_overrides(overrides) from None


def _parse_case(text: str, *, file: str, path: Path | None, overrides) -> Case:
    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark (Windows editors) is not part of the TOML
    if len(text) > MAX_CASE_BYTES:
        raise CaseError(file, [Problem("", f"expected a case file of at most {MAX_CASE_BYTES} characters, "
                                           f"found {len(text)}")])
    found = _depth_problem(text)
    if found:
        raise CaseError(file, [Problem("", found)])
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(file, [Problem("", f"not valid TOML: {exc}")]) from None
    except RecursionError:
        raise CaseError(file, [Problem("", f"expected tables and arrays nested at most {MAX_KEY_PARTS} deep")]) from None
    found = _check_tree(raw)
    if found:
        raise CaseError(file, [Problem("", found)])
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
    if name_problem(name):
        given = "" if "name" in table else " (no name given: the default is the file name without .toml; set name = ...)"
        problems.append(Problem("name", name_problem(name) + given))
    for key, value, ok, expected in (
        ("description", description, isinstance(description, str), "a string"),
        ("seed", seed, seed is None or (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2 ** 63),
         "an integer in [0, 2**63 - 1]"),
    ):
        if not ok:
            problems.append(Problem(key, f"expected {expected}, found {value!r} ({_toml_type(value)})"))
    sweep_table = None
    if "sweep" in table:  # the parameter axes of `shockflow sweep`; a single run ignores them, but they must be valid
        from shockflow.cases.sweep_axes import SweepSpecError, split_sweep_table

        try:
            sweep_table = split_sweep_table(text, file)[1]
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
    if sweep_table is not None:
        problems += _axis_problems(kind, body, sweep_table, file)
    if problems:
        raise CaseError(file, problems)
    return Case(name=name, kind=kind.name, description=description, seed=seed, settings=settings, text=text,
                path=path, overrides=tuple(str(o) for o in overrides))


#: values of one sweep axis checked by validation (the first ones; a sweep checks every task it runs)
MAX_AXIS_VALUES_CHECKED = 64


def _axis_problems(kind, body: dict, sweep_table, file: str) -> list[Problem]:
    """Each ``[sweep.axes]`` key must name a setting of the case and each of its values must be valid there:
    the case is validated with the value put in, and a problem at that key is reported at ``sweep.axes.<key>``."""
    import copy

    problems = []
    for key, values, _ in sweep_table.axes:
        if key in HEADER_KEYS:
            continue
        for value in values[:MAX_AXIS_VALUES_CHECKED]:
            trial = copy.deepcopy(body)
            node, parts, ok = trial, key.split("."), True
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if not isinstance(child, dict):
                    ok = False
                    break
                node = child
            if not ok:
                problems.append(Problem(f"sweep.axes.{key}", f"{key} is not a table key of this case"))
                break
            node[parts[-1]] = value
            try:
                parse_settings(kind.settings, trial, file=file, extra_keys=HEADER_KEYS)
            except CaseError as exc:
                bad = [p for p in exc.problems if p.key == key or p.key.startswith(key + ".") or key.startswith(p.key + ".")]
                if bad:
                    problems.append(Problem(f"sweep.axes.{key}", f"value {value!r}: {bad[0].message}"))
                    break
    return problems


def load_case(source, overrides=()) -> Case:
    """Load a case from a file path or a built-in case name (see :mod:`shockflow.cases.builtin`).  ``overrides``:
    ``"KEY=VALUE"`` strings (a list of them, one given bare, or None).  A ``source`` or ``overrides`` of the wrong
    type is an :class:`~shockflow.cases.errors.ArgumentTypeError`; everything else a :class:`CaseError` naming the
    file."""
    from shockflow.cases.builtin import builtin_case_path, builtin_names, cases_search_paths

    arguments.path(source, "source", "a built-in case name or a path to a case file (str or os.PathLike)")
    overrides = arguments.overrides(overrides)
    path = Path(source)
    if not path.is_file():
        from shockflow.storage.input_files import file_problem

        found = builtin_case_path(str(source))
        problem = file_problem(path)
        if found is None and problem not in ("no such file", None):   # a directory, a device, a pipe: it exists
            raise CaseError(str(source), [Problem("", f"{problem}; expected a case file (TOML) or the name of a "
                                                      "built-in case")])
        if found is None:
            names = builtin_names()
            listing = ", ".join(names) if names else (
                "(none found; looked in " + ", ".join(str(p) for p in cases_search_paths()) + ")")
            raise CaseError(str(source), [Problem("", f"no such case file, and no built-in case of that name; "
                                                      f"built-in cases: {listing}")])
        path = found
    return parse_case(read_case_file(path), file=str(path), path=path, overrides=overrides)


def read_case_file(path: Path) -> str:
    """The text of the case file ``path`` (UTF-8, a byte-order mark kept for the parser to drop).  A file too large
    to hold at most ``MAX_CASE_BYTES`` characters (four bytes each, at most) is refused by its size, unread (a
    tester's 200 MB file was read whole, 400 MB of memory, before the character limit refused it)."""
    most = 4 * MAX_CASE_BYTES + 3
    try:
        size = path.stat().st_size
        if size > most:
            raise CaseError(str(path), [Problem("", f"expected a case file of at most {MAX_CASE_BYTES} characters, "
                                                    f"found a file of {size} bytes (not read)")])
        with open(path, "rb") as fh:
            data = fh.read(most + 1)   # a file that grew since: no more than the limit read either
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaseError(str(path), [Problem("", f"expected UTF-8 text (TOML), found undecodable bytes at offset {exc.start}")]) from None
    except OSError as exc:
        raise CaseError(str(path), [Problem("", f"cannot read the file ({exc.strerror})")]) from None
