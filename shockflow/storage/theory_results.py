"""Result files of the theory cases (``nqf``, ``bbp``, ``scaling``): a nested document as netCDF-4/CF groups.

The companion theories report a document: nested dicts of numbers, strings, lists (per mode, per
step size, per sample size) and tables (lists of rows with the same keys).  The file keeps it in
the same family as the PDE and prediction results (docs/result-file.md): HDF5 with dimension
scales, ``long_name`` and ``units`` on every array, UTF-8 variable-length strings and Fletcher-32
checksums, so ``xr.open_dataset(path, engine="h5netcdf", group=...)`` gives named dimensions with
coordinates.  The mapping is one rule for every theory:

    a dict                 -> a group (its scalars are attributes, ``None`` stored as "null")
    a list of numbers/str  -> a variable; its dimensions from the theory's :class:`Layout`
    a list of lists        -> a 2-D variable (rectangular; dimensions from the layout)
    a list of dicts (rows) -> a table group: one dimension of rows, one variable per key
                              (rows holding dicts: a group per item, named 0, 1, ...)
    a bool                 -> uint8 with CF ``flag_values``/``flag_meanings`` (read back as bool)

A variable whose only dimension has its own name is that dimension's coordinate (``eps`` of the
phase diagram); every other dimension gets an index coordinate (or the layout's labels).  Every
group lists its keys in order (attribute ``keys``), so the reader rebuilds the document exactly;
``None`` inside a numeric list becomes NaN.

    /    attrs: format="shockflow-theory-result", format_version, Conventions, case_name, case_kind,
                case_path, case_text, overrides, settings (JSON), seed (-1: none), versions (JSON),
                created, wall_time, keys; then the document's own keys

Written atomically (:func:`shockflow.storage.atomic.atomic_path`); every reader check that fails
raises :class:`~shockflow.storage.results.ResultFileError` naming the file, the object and what was
expected.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np

from shockflow.storage.atomic import atomic_path
from shockflow.storage.hdf5 import open_hdf5
from shockflow.storage.results import TEXT, ResultFileError, _attr, _read_attr, _Reader, notebook_library

__all__ = ["Layout", "TheoryResult", "write_theory_result", "read_theory_result", "THEORY_FORMAT",
           "THEORY_FORMAT_VERSION"]

THEORY_FORMAT = "shockflow-theory-result"
THEORY_FORMAT_VERSION = 1
#: root attributes of every file; a document key may not reuse one
PROVENANCE = ("format", "format_version", "Conventions", "case_name", "case_kind", "case_path", "case_text",
              "overrides", "settings", "seed", "versions", "created", "wall_time", "keys")
_FLAGS = "false true"


@dataclass(frozen=True)
class Layout:
    """How one theory's document maps onto netCDF dimensions.

    ``dims``: a variable's path (``fit/local_exponents``), a shorter tail of it or its bare name ->
    its dimension names; for a table (a list of rows), the table's path -> ``(row dimension,)``.
    ``describe``: path or name -> ``(long_name, units)``.  ``labels``: dimension -> coordinate labels
    (``bound`` -> ``("lower", "upper")``).  A list nobody declared gets ``<name>_index`` dimensions.
    """

    dims: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    describe: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def lookup(self, table: Mapping, path: str):
        parts = path.split("/")
        for k in range(len(parts)):
            key = "/".join(parts[k:])
            if key in table:
                return table[key]
        return None

    def describe_of(self, path: str) -> tuple[str, str]:
        found = self.lookup(self.describe, path)
        return found if found is not None else (path.rsplit("/", 1)[-1].replace("_", " "), "1")


@dataclass(frozen=True, eq=False)
class TheoryResult:
    """A theory result file read back: provenance, the ``document`` (nested dicts and lists as the
    runner reported them, curves included) and, for notebooks, every group's arrays with their
    dimensions (``groups[path] = {"attrs": {...}, "variables": {name: (dims, array, attrs)}}``)."""

    case_name: str
    case_kind: str
    document: dict
    case_text: str = ""
    case_path: str = ""
    settings: dict = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    seed: int | None = None
    versions: dict = field(default_factory=dict)
    created: str = ""
    wall_time: float = 0.0
    groups: dict = field(default_factory=dict)
    format_version: int = THEORY_FORMAT_VERSION

    def to_xarray(self, group: str = ""):
        """One group as an ``xarray.Dataset`` ("" the root; e.g. ``teacher_student/rows``, ``points``),
        with the file's dimensions, coordinates and attributes (needs the ``[xarray]`` extra)."""
        xr = notebook_library("xarray", "to_xarray")

        if group not in self.groups:
            raise ValueError(f"to_xarray: unknown group {group!r}; expected one of "
                             f"{', '.join(repr(g) for g in self.groups)}")
        g = self.groups[group]
        data, coords = {}, {}
        for name, (dims, a, attrs) in g["variables"].items():
            (coords if dims == (name,) else data)[name] = xr.Variable(dims, a, attrs=attrs)
        return xr.Dataset(data, coords=coords, attrs={k: _netcdf_attr(v) for k, v in g["attrs"].items()})

    def to_dataframe(self, group: str = ""):
        """The variables of ``group`` as a pandas DataFrame (one row per coordinate point; needs the
        ``[xarray]`` extra)."""
        return self.to_xarray(group).to_dataframe()


def _netcdf_attr(value):
    if value is None or isinstance(value, (dict, list, tuple)):
        return json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    return value


# ---- writing ------------------------------------------------------------------------------------

def _is_dicts(value) -> bool:
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, Mapping) for v in value)


def _is_rows(value) -> bool:
    """A list of dicts whose values are scalars or lists (a table); else a list of groups."""
    return all(not isinstance(x, Mapping) and not _is_dicts(x) for row in value for x in row.values())


def _as_array(value, where: str) -> tuple[np.ndarray, dict]:
    """(array, extra attributes) of a list: None -> NaN; bool -> uint8 flags; strings -> UTF-8."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return value, {}
    if isinstance(value, np.ndarray) and value.dtype.kind == "b":
        return value.astype(np.uint8), {"flag_values": np.array([0, 1], np.uint8), "flag_meanings": _FLAGS}
    try:
        flat = np.asarray(value, dtype=object)
    except ValueError:  # ragged
        flat = np.zeros(())
    if flat.ndim == 0 or any(isinstance(v, (list, tuple, Mapping)) for v in flat.ravel().tolist()):
        raise ValueError(f"write_theory_result: /{where}: expected a rectangular list (rows of one length), found a ragged one")
    items = flat.ravel().tolist()
    if items and all(isinstance(v, (bool, np.bool_)) for v in items):
        a = np.array(items, dtype=np.uint8).reshape(flat.shape)
        return a, {"flag_values": np.array([0, 1], np.uint8), "flag_meanings": _FLAGS}
    if items and all(isinstance(v, (str, bytes)) for v in items):
        return np.array([v.decode() if isinstance(v, bytes) else v for v in items], dtype=TEXT).reshape(flat.shape), {}
    if all(v is None or (isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool))
           for v in items):
        ints = items and all(isinstance(v, (int, np.integer)) for v in items)
        return np.array([math.nan if v is None else v for v in items],
                        dtype=np.int64 if ints else np.float64).reshape(flat.shape), {}
    kinds = sorted({type(v).__name__ for v in items})
    raise ValueError(f"write_theory_result: /{where}: expected a rectangular list of numbers, strings or "
                     f"booleans, found {', '.join(kinds)}")


def _write_variables(g: h5py.Group, variables: dict, layout: Layout, path: str) -> None:
    """Create the coordinates first (a variable named as its only dimension, else an index or the
    layout's labels), then the other variables with their scales attached."""
    from shockflow.storage.results import _dataset

    sizes: dict[str, int] = {}
    for name, (dims, a, extra) in list(variables.items()):
        # a list shorter than its declared dimension (a run whose later modes never switched on)
        # keeps a dimension of its own, <name>_<dim>, rather than failing the write
        dims = tuple(d if sizes.setdefault(d, n) == n else f"{name}_{d}" for d, n in zip(dims, a.shape))
        for d, n in zip(dims, a.shape):
            sizes.setdefault(d, n)
        variables[name] = (dims, a, extra)
    for d, n in sizes.items():
        own = variables.get(d)
        if own is not None and own[0] == (d,):
            a = own[1]
        elif d in layout.labels and len(layout.labels[d]) == n:
            a = np.array(layout.labels[d], dtype=TEXT)
        else:
            a = np.arange(n, dtype=np.int64)
        ds = _dataset(g, d, a, scale=True)
        long_name, units = layout.describe_of(f"{path}/{d}" if path else d) if own is not None else (f"{d} index", "1")
        ds.attrs["long_name"], ds.attrs["units"] = long_name, units
        if own is not None:
            for k, v in own[2].items():
                ds.attrs[k] = v
    for name, (dims, a, extra) in variables.items():
        if name in sizes and variables[name][0] == (name,):
            continue
        ds = _dataset(g, name, a, dims)
        long_name, units = layout.describe_of(f"{path}/{name}" if path else name)
        ds.attrs["long_name"], ds.attrs["units"] = long_name, units
        for k, v in extra.items():
            ds.attrs[k] = v


def _dims_of(layout: Layout, path: str, name: str, ndim: int) -> tuple[str, ...]:
    dims = layout.lookup(layout.dims, path)
    if dims is None:
        return (f"{name}_index",) if ndim == 1 else tuple(f"{name}_index{k}" for k in range(ndim))
    if len(dims) != ndim:
        raise ValueError(f"write_theory_result: /{path}: {ndim} dimension(s), but the layout names {tuple(dims)}")
    return tuple(dims)


def _write_group(g: h5py.Group, doc: Mapping, layout: Layout, path: str) -> None:
    variables = {}
    for key, value in doc.items():
        where = f"{path}/{key}" if path else key
        if not isinstance(key, str) or not key or "/" in key:
            raise ValueError(f"write_theory_result: /{path}: key {key!r} cannot name a netCDF object")
        if isinstance(value, Mapping):
            _write_group(g.create_group(key), value, layout, where)
        elif _is_dicts(value) and _is_rows(value):
            _write_rows(g.create_group(key), value, layout, where)
        elif _is_dicts(value):   # a list of documents (one per run): groups 0, 1, ...
            h = g.create_group(key)
            _write_group(h, {str(i): item for i, item in enumerate(value)}, layout, where)
            h.attrs["layout"] = "list"
        elif isinstance(value, (list, tuple, np.ndarray)):
            a, extra = _as_array(value, where)
            variables[key] = (_dims_of(layout, where, key, a.ndim), a, extra)
        else:
            g.attrs[key] = _attr(value.item() if isinstance(value, np.generic) else value)
    _write_variables(g, variables, layout, path)
    g.attrs["keys"] = json.dumps(list(doc))


def _write_rows(g: h5py.Group, rows: list, layout: Layout, path: str) -> None:
    keys = list(rows[0])
    if any(list(r) != keys for r in rows):
        raise ValueError(f"write_theory_result: /{path}: every row needs the keys {keys}")
    dims = layout.lookup(layout.dims, path)
    row_dim = dims[0] if dims else "row"
    variables = {}
    for key in keys:
        where = f"{path}/{key}"
        a, extra = _as_array([r[key] for r in rows], where)
        declared = layout.lookup(layout.dims, where)
        if declared is not None and len(declared) == a.ndim and declared[0] == row_dim:
            d = tuple(declared)
        else:
            d = (row_dim,) + tuple(f"{key}_index{k}" for k in range(1, a.ndim))
        variables[key] = (d, a, extra)
    _write_variables(g, variables, layout, path)
    g.attrs["layout"] = "table"
    g.attrs["keys"] = json.dumps(keys)


def write_theory_result(path: str | os.PathLike, document: Mapping, layout: Layout, *, case, seed: int | None,
                        settings: dict, versions: dict, wall_time: float = 0.0) -> Path:
    """Write ``document`` (see the module docstring) with the provenance of ``case`` to ``path``,
    atomically; returns the path.  ``versions``: the package versions that produced it
    (:func:`shockflow.logs.package_versions`).  ``ValueError`` names the part of the document that
    has no netCDF form."""
    clash = sorted(set(document) & set(PROVENANCE))
    if clash:
        raise ValueError(f"write_theory_result: the document's keys {clash} are provenance attributes")
    path = Path(path)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = THEORY_FORMAT
            f.attrs["format_version"] = THEORY_FORMAT_VERSION
            f.attrs["Conventions"] = "CF-1.8"
            f.attrs["case_name"] = case.name
            f.attrs["case_kind"] = case.kind
            f.attrs["case_path"] = str(case.path) if getattr(case, "path", None) is not None else ""
            f.attrs["case_text"] = case.text or ""
            f.attrs["overrides"] = json.dumps(list(getattr(case, "overrides", ()) or ()))
            f.attrs["settings"] = json.dumps(settings)
            f.attrs["seed"] = -1 if seed is None else int(seed)
            f.attrs["versions"] = json.dumps(versions)
            f.attrs["created"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
            f.attrs["wall_time"] = float(wall_time)
            _write_group(f, document, layout, "")
    return path


# ---- reading ------------------------------------------------------------------------------------

def _value(v):
    """An attribute as the document holds it (arrays as they are; JSON texts and "null" decoded)."""
    return v if isinstance(v, np.ndarray) else _read_attr(v)


def _scale_names(ds: h5py.Dataset) -> tuple[str, ...]:
    if ds.is_scale:
        return (ds.name.rsplit("/", 1)[-1],)
    return tuple(ds.dims[k][0].name.rsplit("/", 1)[-1] if len(ds.dims[k]) else f"dim_{k}" for k in range(ds.ndim))


def _read_group(r: _Reader, g: h5py.Group, path: str, groups: dict, skip=()):
    keys = r.attr(g, "keys", "json")
    if not isinstance(keys, list):
        r.fail(f"attribute 'keys' of {g.name}", "a JSON list of names", repr(keys))
    variables = {}
    for name, obj in g.items():
        if isinstance(obj, h5py.Dataset):
            a = r.array(f"{path}/{name}" if path else name, numeric=False)
            attrs = {k: _value(v) for k, v in obj.attrs.items() if k not in ("DIMENSION_LIST", "REFERENCE_LIST",
                                                                                 "CLASS", "NAME")}
            variables[name] = (_scale_names(obj), a, attrs)
    layout = g.attrs.get("layout")
    table = layout == "table"
    groups[path] = {"attrs": {k: _value(v) for k, v in g.attrs.items() if k not in ("keys", "layout", *skip)},
                    "variables": variables}
    doc = {}
    for key in keys:
        where = f"{path}/{key}" if path else key
        if key in variables:
            _, a, attrs = variables[key]
            if attrs.get("flag_meanings") == _FLAGS:
                a = a.astype(bool)
            doc[key] = a.tolist()
        elif key in g and isinstance(g[key], h5py.Group):
            doc[key] = _read_group(r, g[key], where, groups)
        elif key in g.attrs and not table:
            doc[key] = _value(g.attrs[key])
        else:
            r.fail(f"/{where}", f"a dataset, group or attribute (listed in 'keys' of {g.name})", "nothing (missing)")
    if table:
        n = {len(v) for v in doc.values()}
        if len(n) > 1:
            r.fail(g.name, "columns of one length (a table)", f"lengths {sorted(n)}")
        return [{k: doc[k][i] for k in keys} for i in range(n.pop() if n else 0)]
    if layout == "list":
        return [doc[k] for k in keys]
    return doc


def read_theory_result(path: str | os.PathLike) -> TheoryResult:
    """Read a file written by :func:`write_theory_result`; :class:`ResultFileError` for a missing,
    truncated, damaged or foreign file, naming the object and what was expected."""
    try:
        with open_hdf5(path, format=THEORY_FORMAT, kind="a shockflow theory result file", error=ResultFileError,
                       max_version=THEORY_FORMAT_VERSION) as f:
            r = _Reader(f, path)
            for key in ("case_name", "case_kind", "case_path", "case_text", "created"):
                r.attr(f, key)
            settings = r.attr(f, "settings", "json")
            overrides = r.attr(f, "overrides", "json")
            seed = r.attr(f, "seed", "int")
            groups: dict = {}
            document = _read_group(r, f, "", groups, skip=PROVENANCE)
            return TheoryResult(
                case_name=r.attr(f, "case_name"), case_kind=r.attr(f, "case_kind"), document=document,
                case_text=r.attr(f, "case_text"), case_path=r.attr(f, "case_path"),
                settings=settings if isinstance(settings, dict) else {}, overrides=tuple(overrides or ()),
                seed=None if seed < 0 else seed, versions=r.attr(f, "versions", "json"), created=r.attr(f, "created"),
                wall_time=r.attr(f, "wall_time", "float"), groups=groups,
                format_version=int(f.attrs["format_version"]))
    except ResultFileError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as exc:  # a truncated file h5py opened but cannot walk
        raise ResultFileError(f"result file {str(path)!r}: cannot read it ({type(exc).__name__}: {exc})") from None
