"""Settings as frozen dataclasses, read from TOML tables with key-path errors, documented from themselves.

This module is generic: it knows nothing about PDEs or networks.  A case kind declares a tree of
frozen dataclasses whose fields are made with :func:`setting`; this module then

* **parses** a TOML table into that tree (:func:`parse_settings`): types are checked (an integer
  is accepted for a float, never a boolean for a number), names against their valid choices,
  numbers against their bounds; unknown keys are rejected with the closest valid key suggested;
  missing required keys are collected; every problem of the file is reported at once in one
  :class:`~shockflow.cases.errors.CaseError` naming the file and each key path
  (``solver.cfl``, ``domain.cells[1]``) with what was expected and what was found;
* runs cross-field checks: a dataclass may define ``check(self)`` yielding ``(key, message)``
  pairs (``key`` relative to its table; ``""`` for the table itself), and a ``ValueError``
  from ``__post_init__`` is reported at the table's path;
* **documents** the tree (:func:`reference_markdown`): every key with its type, default and
  meaning, from the same declarations, so the reference page cannot drift;
* turns parsed settings back into plain data (:func:`to_plain`) for result files.

Supported field types: ``bool``, ``int``, ``float``, ``str``, ``X | None`` (``None`` = not given;
TOML has no null), ``tuple[X, ...]`` (a TOML array; a single value is taken as a 1-tuple),
nested dataclasses (TOML tables), and **variants**: a union of dataclasses, each with a class
attribute ``TAG``, chosen by the value of a tag key inside the table
(``setting(tag="function")`` — ``[initial] function = "sine"`` picks the class whose
``TAG == "sine"`` and validates the remaining keys against it).

Example::

    @dataclass(frozen=True)
    class Solver:
        \"\"\"Time stepping.\"\"\"
        cfl: float = setting(0.5, doc="Courant number", bounds=interval(0, 1, closed="right"))
        integrator: str = setting("ssprk3", doc="Runge–Kutta method", choices=("euler", "ssprk2", "ssprk3"))
"""

from __future__ import annotations

import difflib
import math
import types
import typing
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import Any, Callable, Iterable

from shockflow.cases.errors import CaseError, Problem

__all__ = [
    "Bound", "Call", "at_least", "greater_than", "interval", "setting", "parse_settings", "reference_markdown",
    "to_plain", "variants_of", "closest",
]


# -- bounds ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Bound:
    """A numeric constraint: ``describe`` is how the error and the docs phrase it."""

    describe: str
    accepts: Callable[[float], bool]


def greater_than(low: float) -> Bound:
    return Bound(f"> {low:g}", lambda v: v > low)


def at_least(low: float) -> Bound:
    return Bound(f">= {low:g}", lambda v: v >= low)


def interval(low: float, high: float, closed: str = "both") -> Bound:
    """``closed`` in {"both", "left", "right", "neither"}."""
    lo_ok = closed in ("both", "left")
    hi_ok = closed in ("both", "right")
    text = f"in {'[' if lo_ok else '('}{low:g}, {high:g}{']' if hi_ok else ')'}"
    return Bound(text, lambda v: (v >= low if lo_ok else v > low) and (v <= high if hi_ok else v < high))


# -- declaring fields --------------------------------------------------------------------------------
def setting(default: Any = MISSING, *, doc: str, choices=None, bounds: Bound | None = None,
            tag: str | None = None, factory: Callable[[], Any] | None = None, finite: bool = True,
            callables: Callable[[], dict] | None = None, exclude: Iterable[str] = ()):
    """A dataclass field with its documentation and constraints.

    ``default``: the value when the key is absent (omit it for a required key); ``factory``
    for a nested table whose keys all have defaults.  ``choices``: valid names (a collection, or
    a callable returning one, for registries filled at import time).  ``bounds``: a
    :class:`Bound` for numbers (applied to every element of a tuple).  Fields are keyword-only, so
    required and optional keys may come in any order (the order of the reference page).  ``tag``: the
    discriminating key of a variant table.  ``finite``: reject inf/nan (TOML allows them).
    ``callables`` (for a field of type :class:`Call`): a function returning ``{name: callable}``; the
    table's ``tag`` key (default ``name``) picks one and the other keys are checked against its
    signature (``exclude``: parameters a file may not set).
    """
    meta = {"doc": doc, "choices": choices, "bounds": bounds, "tag": tag, "finite": finite,
            "callables": callables, "exclude": tuple(exclude)}
    if factory is not None:
        return field(default_factory=factory, metadata=meta, kw_only=True)
    return field(default=default, metadata=meta, kw_only=True)


def _choices(meta) -> tuple[str, ...] | None:
    c = meta.get("choices")
    if c is None:
        return None
    return tuple(c() if callable(c) else c)


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The closest valid name (difflib), or None."""
    match = difflib.get_close_matches(str(name), list(valid), n=1, cutoff=0.5)
    return match[0] if match else None


# -- call tables -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """A table naming a registered callable (a model class, a data generator) and its keyword
    arguments, validated against the callable's signature: ``[model] name = "mlp"  width = 8``."""

    name: str
    arguments: tuple[tuple[str, Any], ...] = ()

    def kwargs(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.arguments}


_ANNOTATIONS = {
    "int": int, "float": float, "str": str, "bool": bool,
    "Sequence[int]": tuple[int, ...], "tuple[int, ...]": tuple[int, ...], "list[int]": tuple[int, ...],
    "Sequence[float]": tuple[float, ...], "tuple[float, ...]": tuple[float, ...], "list[float]": tuple[float, ...],
}


def _annotation_type(annotation):
    """A schema type for a signature annotation (string or type); None: pass the TOML value through."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    optional = False
    parts = [p.strip() for p in text.split("|")]
    if "None" in parts:
        optional = True
        parts.remove("None")
    if len(parts) != 1 or parts[0] not in _ANNOTATIONS:
        return None
    tp = _ANNOTATIONS[parts[0]]
    return (tp | None) if optional else tp


def call_parameters(func, exclude: Iterable[str] = ()) -> list:
    """The keyword parameters of ``func`` (a class: its ``__init__``) a call table may set."""
    import inspect

    target = func.__init__ if isinstance(func, type) else func
    out = []
    for p in inspect.signature(target).parameters.values():
        if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in exclude:
            continue
        out.append(p)
    return out


def _parse_call(meta, value, key: str, out: "_Collector"):
    tag = meta.get("tag") or "name"
    registry = meta["callables"]()
    exclude = tuple(meta.get("exclude") or ())
    if not isinstance(value, dict):
        out.add(key, f"expected a table, found {_found(value)}")
        return MISSING
    if tag not in value:
        out.missing.append(_join(key, tag))
        return MISSING
    name = value[tag]
    if not isinstance(name, str) or name not in registry:
        hint = closest(name, registry) if isinstance(name, str) else None
        did = f' (did you mean "{hint}"?)' if hint else ""
        shown = f'"{name}"' if isinstance(name, str) else _found(name)
        out.add(_join(key, tag), f"unknown name {shown}{did}; expected one of " + ", ".join(f'"{n}"' for n in sorted(registry)))
        return MISSING
    params = {p.name: p for p in call_parameters(registry[name], exclude)}
    before = len(out.problems) + len(out.missing)
    args = []
    for k, v in value.items():
        if k == tag:
            continue
        if k not in params:
            hint = closest(k, params)
            did = f" (did you mean '{hint}'?)" if hint else ""
            out.add(_join(key, k), f"unknown key{did}; {name} takes: " + ", ".join(params))
            continue
        tp = _annotation_type(params[k].annotation)
        converted = v if tp is None else _convert(tp, {"finite": True}, v, _join(key, k), out)
        if converted is not MISSING:
            args.append((k, converted))
    for p in params.values():
        if p.default is p.empty and p.name not in value:
            out.missing.append(_join(key, p.name))
    if len(out.problems) + len(out.missing) > before:
        return MISSING
    return Call(name, tuple(args))


# -- type introspection ----------------------------------------------------------------------------
def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_union(tp) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _strip_none(tp):
    """``(inner, optional)`` for ``X | None``."""
    if _is_union(tp):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        inner = args[0] if len(args) == 1 else typing.Union[tuple(args)]
        return inner, optional
    return tp, False


def variants_of(tp) -> tuple[type, ...]:
    """The dataclasses of a variant union (empty if ``tp`` is not one)."""
    tp, _ = _strip_none(tp)
    if _is_union(tp):
        args = typing.get_args(tp)
        if all(is_dataclass(a) and hasattr(a, "TAG") for a in args):
            return tuple(args)
    elif is_dataclass(tp) and hasattr(tp, "TAG"):
        return (tp,)
    return ()


def _toml_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return type(value).__name__


def _found(value) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, bool):
        return f"{str(value).lower()} (boolean)"
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({_toml_type(value)})"


def type_name(tp) -> str:
    """How the docs and errors name a type."""
    tp, optional = _strip_none(tp)
    if tp is bool:
        return "boolean"
    if tp is int:
        return "integer"
    if tp is float:
        return "number"
    if tp is str:
        return "string"
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"array of {type_name(args[0])}s"
        return "array [" + ", ".join(type_name(a) for a in args) + "]"
    if variants_of(tp) or tp is Call:
        return "table"
    if is_dataclass(tp):
        return "table"
    return getattr(tp, "__name__", str(tp))


# -- parsing ---------------------------------------------------------------------------------------
class _Collector:
    def __init__(self):
        self.problems: list[Problem] = []
        self.missing: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.problems.append(Problem(key, message))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _convert(tp, meta, value, key: str, out: _Collector):
    """Convert and check one TOML value against its declared type; record problems; return value or MISSING."""
    inner, _optional = _strip_none(tp)
    if inner is Call:
        return _parse_call(meta, value, key, out)
    vs = variants_of(inner)
    if vs:
        return _parse_variant(vs, meta["tag"], value, key, out)
    if is_dataclass(inner):
        if not isinstance(value, dict):
            out.add(key, f"expected a table, found {_found(value)}")
            return MISSING
        return _parse_table(inner, value, key, out)
    if typing.get_origin(inner) is tuple:
        args = typing.get_args(inner)
        if not isinstance(value, list):
            if isinstance(value, dict):
                out.add(key, f"expected {type_name(inner)}, found {_found(value)}")
                return MISSING
            value = [value]
        if len(args) == 2 and args[1] is Ellipsis:
            element_types = [args[0]] * len(value)
        else:
            if len(value) != len(args):
                out.add(key, f"expected {type_name(inner)} ({len(args)} entries), found {len(value)} entries")
                return MISSING
            element_types = list(args)
        items = []
        ok = True
        for i, (et, v) in enumerate(zip(element_types, value)):
            item = _convert_scalar(et, meta, v, f"{key}[{i}]", out)
            ok = ok and item is not MISSING
            items.append(item)
        return tuple(items) if ok else MISSING
    return _convert_scalar(inner, meta, value, key, out)


def _convert_scalar(tp, meta, value, key: str, out: _Collector):
    if tp is bool:
        if not isinstance(value, bool):
            out.add(key, f"expected a boolean (true or false), found {_found(value)}")
            return MISSING
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            out.add(key, f"expected an integer, found {_found(value)}")
            return MISSING
        if not -2 ** 63 <= value < 2 ** 63:  # TOML integers are 64-bit (tomllib reads any size)
            out.add(key, f"expected a 64-bit integer, found an integer of {len(str(abs(value)))} digits")
            return MISSING
    elif tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            out.add(key, f"expected a number, found {_found(value)}")
            return MISSING
        if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:
            out.add(key, f"expected a finite number, found an integer of {len(str(abs(value)))} digits")
            return MISSING
        given = value
        value = float(value)
        if meta.get("finite", True) and not math.isfinite(value):
            out.add(key, f"expected a finite number, found {_found(value)}")
            return MISSING
    elif tp is str:
        if not isinstance(value, str):
            out.add(key, f"expected a string, found {_found(value)}")
            return MISSING
        choices = _choices(meta)
        if choices is not None and value not in choices:
            hint = closest(value, choices)
            did = f" (did you mean \"{hint}\"?)" if hint else ""
            out.add(key, f"unknown name \"{value}\"{did}; expected one of " + ", ".join(f'"{c}"' for c in choices))
            return MISSING
        return value
    else:  # pragma: no cover - a declaration error, not a user error
        raise TypeError(f"schema: unsupported field type {tp!r} at {key}")
    bounds = meta.get("bounds")
    if bounds is not None and not bounds.accepts(value):
        noun = "a number" if tp is float else "an integer"
        out.add(key, f"expected {noun} {bounds.describe}, found {_found(given if tp is float else value)}")
        return MISSING
    return value


def _parse_variant(variants, tag: str, value, key: str, out: _Collector):
    if tag is None:  # pragma: no cover - declaration error
        raise TypeError(f"schema: variant field {key} needs setting(tag=...)")
    if not isinstance(value, dict):
        out.add(key, f"expected a table, found {_found(value)}")
        return MISSING
    names = {v.TAG: v for v in variants}
    if tag not in value:
        out.missing.append(_join(key, tag))
        return MISSING
    name = value[tag]
    if not isinstance(name, str) or name not in names:
        hint = closest(name, names) if isinstance(name, str) else None
        did = f" (did you mean \"{hint}\"?)" if hint else ""
        out.add(_join(key, tag), f"unknown name {_found(name) if not isinstance(name, str) else chr(34) + name + chr(34)}{did}; "
                                 "expected one of " + ", ".join(f'"{n}"' for n in names))
        return MISSING
    rest = {k: v for k, v in value.items() if k != tag}
    return _parse_table(names[name], rest, key, out, extra_keys=(tag,))


def _parse_table(cls, table: dict, path: str, out: _Collector, extra_keys: Iterable[str] = ()):
    hints = _hints(cls)
    declared = [f for f in fields(cls) if f.init]
    valid = [f.name for f in declared]
    extra = tuple(extra_keys)
    before = len(out.problems) + len(out.missing)
    for key in table:
        if key in valid or key in extra:
            continue
        hint = closest(key, valid + list(extra))
        did = f" (did you mean '{hint}'?)" if hint else ""
        listing = ", ".join(valid + list(extra))
        where = f"[{path}]" if path else "the top level"
        out.add(_join(path, key), f"unknown key{did}; valid keys in {where} are: {listing}")
    kwargs = {}
    for f in declared:
        key = _join(path, f.name)
        if f.name in table:
            value = _convert(hints[f.name], f.metadata, table[f.name], key, out)
            if value is not MISSING:
                kwargs[f.name] = value
        elif f.default is MISSING and f.default_factory is MISSING:
            inner, _ = _strip_none(hints[f.name])
            if is_dataclass(inner) and not variants_of(inner):
                _parse_table(inner, {}, key, out)  # report its own missing keys
            else:
                out.missing.append(key)
    if len(out.problems) + len(out.missing) > before:
        return MISSING
    try:
        obj = cls(**kwargs)
    except (ValueError, TypeError) as exc:
        out.add(path, str(exc))
        return MISSING
    check = getattr(obj, "check", None)
    if callable(check):
        bad = False
        for rel, message in check() or ():
            out.add(_join(path, rel) if rel else path, message)
            bad = True
        if bad:
            return MISSING
    return obj


def parse_settings(cls, table: dict, *, file: str = "<string>", path: str = "", extra_keys: Iterable[str] = ()):
    """Parse ``table`` (from ``tomllib``) into the dataclass ``cls``; raise :class:`CaseError` listing every problem.

    ``extra_keys`` are keys of the table handled by the caller (accepted, not parsed).
    """
    out = _Collector()
    obj = _parse_table(cls, table, path, out, extra_keys)
    if out.problems or out.missing or obj is MISSING:
        raise CaseError(file, out.problems, out.missing)
    return obj


# -- plain data ------------------------------------------------------------------------------------
def to_plain(obj) -> Any:
    """Settings -> nested dicts/lists of plain values (variants carry their tag key; keys that are
    not set, i.e. None, are left out, as in TOML), which :func:`parse_settings` reads back."""
    if isinstance(obj, Call):
        return {"name": obj.name, **{k: to_plain(v) for k, v in obj.arguments}}
    if is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in fields(obj):
            value = getattr(obj, f.name)
            if value is None:
                continue
            plain = to_plain(value)
            tag = f.metadata.get("tag")
            if tag and is_dataclass(value):
                plain = {tag: type(value).TAG, **plain}
            out[f.name] = plain
        return out
    if isinstance(obj, (tuple, list)):
        return [to_plain(v) for v in obj]
    return obj


# -- documentation ---------------------------------------------------------------------------------
def _default_text(f) -> str:
    if f.default_factory is not MISSING:
        return "(table)"
    if f.default is MISSING:
        return "**required**"
    return _toml_value(f.default)


def _toml_value(value) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, tuple):
        return "`[" + ", ".join(_toml_value(v).strip("`") for v in value) + "]`"
    if isinstance(value, float) and math.isinf(value):
        return "`inf`"
    return f"`{value!r}`"


def _meaning(f, tp) -> str:
    meta = f.metadata
    text = meta.get("doc", "")
    choices = _choices(meta)
    if choices is not None:
        text += " One of " + ", ".join(f'`"{c}"`' for c in choices) + "."
    bounds = meta.get("bounds")
    if bounds is not None:
        text += f" Must be {bounds.describe}."
    return text.replace("|", "\\|").replace("\n", " ")


def _first_line(cls) -> str:
    doc = (cls.__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def _table_sections(cls, path: str, heading: str, out: list[str], level: int) -> None:
    hints = _hints(cls)
    out.append(f"{'#' * level} {heading}\n")
    summary = _first_line(cls)
    if summary:
        out.append(summary + "\n")
    rows = [f for f in fields(cls) if f.init and not (is_dataclass(_strip_none(hints[f.name])[0])
                                                     or variants_of(hints[f.name]))]
    rows = [f for f in rows if _strip_none(hints[f.name])[0] is not Call]
    if rows:
        out.append("| key | type | default | meaning |")
        out.append("|---|---|---|---|")
        for f in rows:
            out.append(f"| `{f.name}` | {type_name(hints[f.name])} | {_default_text(f)} | {_meaning(f, hints[f.name])} |")
        out.append("")
    for f in fields(cls):
        if not f.init:
            continue
        tp = hints[f.name]
        sub = _join(path, f.name)
        vs = variants_of(tp)
        required = f.default is MISSING and f.default_factory is MISSING
        if _strip_none(tp)[0] is Call:
            _call_sections(f, sub, out, level + 1)
        elif vs:
            tag = f.metadata["tag"]
            out.append(f"{'#' * (level + 1)} `[{sub}]`\n")
            text = f.metadata.get("doc", "")
            out.append(f"{text} {'Required' if required else 'Optional'} table; the key `{tag}` chooses one of: "
                       + ", ".join(f'`"{v.TAG}"`' for v in vs) + ".\n")
            for v in vs:
                _table_sections(v, sub, f'`[{sub}]` with `{tag} = "{v.TAG}"`', out, level + 2)
        elif is_dataclass(_strip_none(tp)[0]):
            _table_sections(_strip_none(tp)[0], sub, f"`[{sub}]`" + ("" if required else " (optional)"), out, level + 1)


def _call_sections(f, path: str, out: list[str], level: int) -> None:
    import inspect

    meta = f.metadata
    tag = meta.get("tag") or "name"
    registry = meta["callables"]()
    out.append(f"{'#' * level} `[{path}]`\n")
    out.append(f"{meta.get('doc', '')} The key `{tag}` chooses one of: " + ", ".join(f'`"{n}"`' for n in sorted(registry))
               + "; the other keys are its keyword arguments, checked against its signature:\n")
    out.append(f"| `{tag}` | arguments (default) |")
    out.append("|---|---|")
    for name in sorted(registry):
        args = []
        for p in call_parameters(registry[name], meta.get("exclude") or ()):
            ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
            ann = "" if p.annotation is inspect.Parameter.empty else f": {ann}"
            default = "" if p.default is p.empty else f" = {p.default!r}"
            args.append(f"`{p.name}{ann}{default}`")
        out.append(f'| `"{name}"` | ' + (", ".join(args) if args else "(none)").replace("|", "\\|") + " |")
    out.append("")


def reference_markdown(cls, heading: str, intro: str = "", level: int = 2) -> str:
    """A Markdown reference of every key of the settings tree ``cls`` (type, default, meaning)."""
    out: list[str] = []
    _table_sections(cls, "", heading, out, level)
    if intro:
        out.insert(1, intro.strip() + "\n")
    return "\n".join(out).rstrip() + "\n"

