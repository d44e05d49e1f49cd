"""Sweep axes: which keys of a case vary, over which values, and how the axes combine.

An axis is a dotted case key and a tuple of values.  On the command line an axis is written
like an override with several values (``--set KEY=VALUES``); the VALUES are one of

    v1,v2,v3                 a comma list; each item is a TOML value (``0.5``, ``200``, ``true``,
                             ``"x"``, ``[1, 2]``; commas inside brackets, braces or quotes do not
                             split); a bare word is a string, as in ``--set``
    linspace:a:b:n           n floats evenly spaced from a to b, both included (numpy.linspace)
    logspace:a:b:n           n floats geometrically spaced from a to b, both included
                             (numpy.geomspace: a and b are the end VALUES, not exponents; a, b > 0)
    range:start:stop[:step]  whole numbers start, start+step, ... below stop (Python's range)

A single value (``--set domain.cells=200``) is not an axis but a fixed override of every task.

Axes combine as an outer product (the last axis varies fastest), except axes named together
in a zip group (``--zip KEY1,KEY2``), which advance together and must have equal lengths; a
zip group takes the place of its first axis in the product order.

In a case file the same is written as a ``[sweep]`` table, which the sweep removes from the
case text before the case is validated (so the task hash does not change when the sweep grows)::

    [sweep]
    seed = 7                                  # optional: the sweep seed (default: the case's seed, else 0)
    zip = [["training.lr", "training.steps"]] # optional: zip groups
    [sweep.axes]
    "initial.amplitude" = "linspace:0.5:2.0:4"   # a range spec, a comma list, or
    "domain.cells" = [100, 200]                  # a TOML array of the values

Keys in ``[sweep.axes]`` may also be written as nested tables (``[sweep.axes.initial]``,
``amplitude = [...]``); they are flattened into dotted keys.  Axes given on the command line
replace table axes of the same key.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

__all__ = ["Axis", "SweepAxes", "SweepSpecError", "SweepTable", "parse_values", "parse_set", "parse_zip",
           "build_axes", "split_sweep_table", "toml_value"]

RANGE_KINDS = ("linspace", "logspace", "range")
#: the most values one axis may have (a sweep is refused above 100000 tasks in all: shockflow.sweeps.sweep)
MAX_AXIS_VALUES = 100_000
_KEY = re.compile(r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$")


class SweepSpecError(ValueError):
    """A sweep axis, zip group or ``[sweep]`` table is malformed; the message names the argument."""


@dataclass(frozen=True)
class Axis:
    """One swept key and its values (``spec``: the text it was parsed from, for messages)."""

    key: str
    values: tuple
    spec: str = ""

    def __post_init__(self):
        if not isinstance(self.key, str) or not _KEY.match(self.key):
            raise SweepSpecError(f"axis key: expected a dotted case key such as initial.amplitude, found {self.key!r}")
        if len(self.values) == 0:
            raise SweepSpecError(f"axis {self.key}: expected at least one value, found none")


@dataclass(frozen=True)
class SweepAxes:
    """Axes, zip groups (tuples of axis keys) and fixed overrides (``(key, value)`` pairs)."""

    axes: tuple[Axis, ...] = ()
    zips: tuple[tuple[str, ...], ...] = ()
    fixed: tuple[tuple[str, Any], ...] = ()
    dimensions: tuple[tuple[str, ...], ...] = field(init=False, repr=False)

    def __post_init__(self):
        by_key = {}
        for a in self.axes:
            if a.key in by_key:
                raise SweepSpecError(f"axes: the key {a.key} is swept twice")
            by_key[a.key] = a
        for key, _ in self.fixed:
            if key in by_key:
                raise SweepSpecError(f"fixed overrides: the key {key} is also swept")
        grouped: dict[str, tuple[str, ...]] = {}
        for group in self.zips:
            if len(group) < 2:
                raise SweepSpecError(f"zip: expected at least two keys in a zip group, found {list(group)}")
            for key in group:
                if key not in by_key:
                    valid = ", ".join(by_key) or "(no axes)"
                    raise SweepSpecError(f"zip: {key} is not a swept key; swept keys: {valid}")
                if key in grouped:
                    raise SweepSpecError(f"zip: {key} appears in more than one zip group")
                grouped[key] = group
            lengths = {k: len(by_key[k].values) for k in group}
            if len(set(lengths.values())) != 1:
                raise SweepSpecError("zip: the axes of a zip group must have equal lengths, found "
                                     + ", ".join(f"{k}: {n}" for k, n in lengths.items()))
        dims, seen = [], set()
        for a in self.axes:
            group = grouped.get(a.key, (a.key,))
            if group not in seen:
                seen.add(group)
                dims.append(group)
        object.__setattr__(self, "dimensions", tuple(dims))

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(a.key for a in self.axes)

    @property
    def shape(self) -> tuple[int, ...]:
        """Length of each product dimension (a zip group is one dimension)."""
        by_key = {a.key: a for a in self.axes}
        return tuple(len(by_key[g[0]].values) for g in self.dimensions)

    def __len__(self) -> int:
        return math.prod(self.shape)

    def points(self) -> list[dict]:
        """Every parameter point, as ``{key: value}`` in axis order (last dimension fastest)."""
        by_key = {a.key: a for a in self.axes}
        ranges = [range(n) for n in self.shape]
        out = []
        for idx in itertools.product(*ranges):
            point = {}
            for group, i in zip(self.dimensions, idx):
                for key in group:
                    point[key] = by_key[key].values[i]
            out.append({a.key: point[a.key] for a in self.axes})
        return out


# -- values ----------------------------------------------------------------------------------------
def _scalar(text: str):
    """A TOML value, or the bare text as a string (the rule of ``--set``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets, braces and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    for i, c in enumerate(text):
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _number(key: str, spec: str, name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise SweepSpecError(f"--set {key}={spec}: {name} must be a finite number, found {text!r}")
    return value


def _count(key: str, spec: str, text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise SweepSpecError(f"--set {key}={spec}: the count n must be a whole number >= 1, found {text!r}")
    return n


def _integer(key: str, spec: str, name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise SweepSpecError(f"--set {key}={spec}: {name} must be a whole number, found {text!r}") from None


def parse_values(key: str, spec: str) -> tuple:
    """The values of ``spec`` (see the module docstring) for the axis ``key``."""
    text = str(spec).strip()
    head, colon, rest = text.partition(":")
    if colon and head in RANGE_KINDS:
        fields = rest.split(":")
        if head in ("linspace", "logspace"):
            if len(fields) != 3:
                raise SweepSpecError(f"--set {key}={spec}: expected {head}:a:b:n (three fields after "
                                     f"{head}:), found {len(fields)}")
            a = _number(key, spec, "a", fields[0])
            b = _number(key, spec, "b", fields[1])
            n = _count(key, spec, fields[2])
            if n > MAX_AXIS_VALUES:
                raise SweepSpecError(f"--set {key}={spec}: {n} values, expected at most {MAX_AXIS_VALUES} on one axis")
            if head == "logspace":
                if not (a > 0 and b > 0):
                    raise SweepSpecError(f"--set {key}={spec}: logspace needs end values a > 0 and b > 0 "
                                         f"(they are values, not exponents), found a = {a:g}, b = {b:g}")
                values = np.geomspace(a, b, n) if n > 1 else np.array([a])
            else:
                values = np.linspace(a, b, n)
            return tuple(float(v) for v in values)
        if len(fields) not in (2, 3):
            raise SweepSpecError(f"--set {key}={spec}: expected range:start:stop or range:start:stop:step, "
                                 f"found {len(fields)} fields after range:")
        start = _integer(key, spec, "start", fields[0])
        stop = _integer(key, spec, "stop", fields[1])
        step = _integer(key, spec, "step", fields[2]) if len(fields) == 3 else 1
        if step == 0:
            raise SweepSpecError(f"--set {key}={spec}: step must not be 0")
        if len(range(start, stop, step)) > MAX_AXIS_VALUES:
            raise SweepSpecError(f"--set {key}={spec}: {len(range(start, stop, step))} values, expected at most "
                                 f"{MAX_AXIS_VALUES} on one axis")
        values = tuple(range(start, stop, step))
        if not values:
            raise SweepSpecError(f"--set {key}={spec}: the range is empty (start {start}, stop {stop}, step {step})")
        return values
    items = _split_top_level(text)
    if any(not item.strip() for item in items):
        raise SweepSpecError(f"--set {key}={spec}: empty value in the comma list (expected v1,v2,... or "
                             f"linspace:a:b:n, logspace:a:b:n, range:start:stop[:step])")
    values = tuple(_scalar(item.strip()) for item in items)
    for i, v in enumerate(values):   # 1 and 1.0 are one value: two tasks would run the same case twice
        for w in values[:i]:
            if type(v) is not bool and type(w) is not bool and v == w:
                raise SweepSpecError(f"--set {key}={spec}: the value {items[i].strip()} repeats {w!r}: each value of an "
                                     f"axis once")
    return values


def parse_set(item: str) -> tuple[str, tuple]:
    """``"key=VALUES"`` -> ``(key, values)``."""
    key, sep, spec = str(item).partition("=")
    key = key.strip()
    if not sep or not _KEY.match(key):
        raise SweepSpecError(f"--set {item!r}: expected KEY=VALUES with a dotted key, e.g. "
                             f"--set initial.amplitude=0.5,1.0 or --set training.lr=logspace:1e-3:1:7")
    return key, parse_values(key, spec)


def parse_zip(item: str) -> tuple[str, ...]:
    """``"k1,k2"`` -> ``("k1", "k2")``."""
    keys = tuple(k.strip() for k in str(item).split(","))
    if len(keys) < 2 or any(not _KEY.match(k) for k in keys):
        raise SweepSpecError(f"--zip {item!r}: expected two or more swept keys separated by commas, "
                             f"e.g. --zip training.lr,training.steps")
    return keys


def toml_value(value) -> str:
    """The TOML text of a value (the right-hand side of a ``--set`` override)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, np.generic):
        return toml_value(value.item())
    raise SweepSpecError(f"value {value!r}: expected a number, boolean, string or list, found {type(value).__name__}")


# -- the [sweep] table -----------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepTable:
    """What a ``[sweep]`` table says: axes (``(key, values, spec)``), zip groups, the sweep seed."""

    axes: tuple[tuple[str, tuple, str], ...] = ()
    zips: tuple[tuple[str, ...], ...] = ()
    seed: int | None = None


def _flatten(table: dict, prefix: str = "") -> Iterable[tuple[str, Any]]:
    for k, v in table.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict):
            yield from _flatten(v, key)
        else:
            yield key, v


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(#.*)?$")


def split_sweep_table(text: str, file: str = "<string>") -> tuple[str, SweepTable | None]:
    """Remove the ``[sweep]`` table (and its sub-tables) from a case text.

    Returns the case text without it (what the tasks run and hash) and the parsed table (None
    when there is none).  The table must be written as ``[sweep]`` / ``[sweep.axes]`` sections;
    the removal is checked by parsing both texts.
    """
    try:
        whole = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepSpecError(f"case file {file!r}: not valid TOML: {exc}") from None
    if "sweep" not in whole:
        return text, None
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        m = _HEADER.match(line)
        if m:
            name = m.group(1).strip().strip('"')
            skipping = name == "sweep" or name.startswith("sweep.")
        if not skipping:
            kept.append(line)
    stripped = "".join(kept)
    expected = {k: v for k, v in whole.items() if k != "sweep"}
    try:
        ok = tomllib.loads(stripped) == expected
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise SweepSpecError(f"case file {file!r}: sweep: write the sweep as a [sweep] section (with "
                             f"[sweep.axes]) after the case's top-level keys, not as dotted keys or an inline table")
    return stripped, _sweep_table(whole["sweep"], file)


def _sweep_table(raw, file: str) -> SweepTable:
    where = f"case file {file!r}: sweep"
    if not isinstance(raw, dict):
        raise SweepSpecError(f"{where}: expected a table, found {raw!r}")
    unknown = set(raw) - {"axes", "zip", "seed"}
    if unknown:
        raise SweepSpecError(f"{where}: unknown keys {sorted(unknown)}; valid keys: axes, seed, zip")
    seed = raw.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise SweepSpecError(f"{where}.seed: expected an integer >= 0, found {seed!r}")
    axes_raw = raw.get("axes", {})
    if not isinstance(axes_raw, dict):
        raise SweepSpecError(f"{where}.axes: expected a table of KEY = VALUES, found {axes_raw!r}")
    axes = []
    for key, value in _flatten(axes_raw):
        if isinstance(value, list):
            if not value:
                raise SweepSpecError(f"{where}.axes.{key}: expected at least one value, found []")
            axes.append((key, tuple(value), toml_value(value)))
        elif isinstance(value, str):
            axes.append((key, parse_values(key, value), value))
        else:
            axes.append((key, (value,), toml_value(value)))
    zips_raw = raw.get("zip", [])
    if not isinstance(zips_raw, list) or not all(isinstance(g, list) and all(isinstance(k, str) for k in g)
                                                   for g in zips_raw):
        raise SweepSpecError(f'{where}.zip: expected a list of lists of keys, e.g. [["a.x", "a.y"]], found {zips_raw!r}')
    return SweepTable(axes=tuple(axes), zips=tuple(tuple(g) for g in zips_raw), seed=seed)


def build_axes(sets: Iterable[str] = (), zips: Iterable[str] = (), table: SweepTable | None = None) -> SweepAxes:
    """Combine a ``[sweep]`` table with command-line ``--set`` and ``--zip`` items.

    A ``--set`` with one value is a fixed override; with several it is an axis (replacing a table
    axis of the same key).  Table axes with one value are fixed overrides too.
    """
    entries: dict[str, tuple[tuple, str]] = {}
    if table is not None:
        for key, values, spec in table.axes:
            entries[key] = (values, spec)
    for item in sets:
        key, values = parse_set(item)
        entries.pop(key, None)
        entries[key] = (values, str(item).partition("=")[2])
    axes, fixed = [], []
    for key, (values, spec) in entries.items():
        if len(values) == 1:
            fixed.append((key, values[0]))
        else:
            axes.append(Axis(key, tuple(values), spec))
    groups = list(table.zips) if table is not None else []
    groups += [parse_zip(z) for z in zips]
    return SweepAxes(axes=tuple(axes), zips=tuple(groups), fixed=tuple(fixed))
