"""One HDF5 result file per run: what was asked, what was solved, what was found (docs/result-file.md).

Format version 2 is netCDF-4 compatible (the CF conventions, as Dedalus writes its files): every
group is a self-contained netCDF group whose arrays carry HDF5 dimension scales, so
``xr.open_dataset(path, engine="h5netcdf", group=...)`` gives named dimensions with coordinates;
every array has ``long_name`` and ``units``; strings are UTF-8 variable-length; numeric arrays
carry a Fletcher-32 checksum.

    /                      attrs: format="shockflow-result", format_version, case_name, case_kind,
                                  case_path, case_text, overrides (JSON list), settings (JSON),
                                  seed (-1: none), versions (JSON), created (UTC ISO 8601), wall_time,
                                  main_solution (the group holding Result.times/values)
    /problem               attrs only: equation, quantity, method, domain, nu, solver (JSON), ...
    /solution              times (times), coordinates (x | axis0, axis1, ... | vertex, vertices,
                           triangles), initial, values (times, ...); attrs steps, seconds
                           (PDE cases; network cases keep each chart's solution in /extraction/<chart>)
    /shocks                one row per shock (dimension ``shock``): chart, time, location (shock,
                           component), strength, first_seen, final_location, final_strength, speed;
                           attrs of the report
    /shocks/steepness      times, values (the series of the formation-time fit)
    /shocks/tracks         track, time, position (dimension ``point``)
    /transitions/predicted, observed, matches   one row per transition (dimension ``transition``/``match``)
    /extraction/<chart>    network cases: x, u0, mobility, times, values, viscous_values, escape_*,
                           trajectory; attrs of the chart

Version 1 files (before issue 22) are still read.  Every reader check that fails raises
:class:`ResultFileError` naming the file, the object and what was expected.

Written atomically (:mod:`shockflow.storage.atomic`): an interrupted run leaves no file, or the old one.
"""

from __future__ import annotations

import json
import os
import reprlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np

from shockflow.storage.atomic import atomic_path, complete_commits
from shockflow.storage.hdf5 import open_hdf5

__all__ = ["Result", "write_result", "read_result", "FORMAT", "FORMAT_VERSION", "ResultFileError"]

FORMAT = "shockflow-result"
FORMAT_VERSION = 2
SHOCK_COLUMNS = ("time", "location", "strength", "first_seen", "final_location", "final_strength", "speed")
TRANSITION_GROUPS = ("predicted", "observed", "matches")
TEXT = h5py.string_dtype("utf-8")

#: long_name and units of the arrays a result file holds (CF: "1" is dimensionless)
DESCRIPTIONS = {
    "times": ("output time", "1"), "x": ("cell centre", "1"), "vertex": ("mesh vertex index", "1"),
    "vertices": ("mesh vertex position", "1"), "triangle": ("mesh triangle index", "1"),
    "triangles": ("vertex indices of each triangle", "1"), "corner": ("triangle corner", "1"),
    "space": ("Cartesian axis", "1"), "initial": ("initial data as solved", "1"),
    "values": ("solution snapshots", "1"),
    "shock": ("shock index", "1"), "component": ("coordinate of a location", "1"),
    "chart": ("chart the row comes from", "1"), "time": ("formation time of the shock", "1"),
    "location": ("where the shock forms", "1"), "strength": ("largest jump |p_L - p_R| along its track", "1"),
    "first_seen": ("first snapshot time the detector found it", "1"),
    "final_location": ("location at the last snapshot of its track", "1"),
    "final_strength": ("strength at the last snapshot of its track", "1"),
    "speed": ("measured shock speed", "1"), "point": ("track point index", "1"),
    "track": ("track index", "1"), "position": ("shock position on the track", "1"),
    "transition": ("transition index", "1"), "match": ("match index", "1"),
    "step": ("training step", "1"), "flow_step": ("step of the gradient flow t/eta", "1"),
    "gamma_star": ("shock formation gamma of the chart", "1"), "critical_lr": ("critical learning rate", "1"),
    "d0": ("initial distance to the ridge", "1"), "d_exit": ("exit distance", "1"),
    "d_eff": ("effective distance with noise", "1"), "nu": ("viscosity (projected temperature)", "1"),
    "escape_time": ("escape time of the ridge", "1"),
    "saddle": ("saddle of the chain the transition escapes from (0: the origin)", "1"), "method": ("how the step was predicted", "1"),
    "onset": ("training step where the drop begins", "1"), "end": ("training step where the drop ends", "1"),
    "steepest": ("training step of the steepest descent", "1"), "drop": ("relative loss drop", "1"),
    "predicted_step": ("predicted training step", "1"), "observed_step": ("observed training step", "1"),
    "relative_error": ("|predicted - observed| / observed", "1"),
    "u0": ("quotient loss on the chart (initial data)", "1"), "mobility": ("chart mobility", "1"),
    "viscous_values": ("viscous solution snapshots", "1"), "escape": ("escape sample index", "1"),
    "escape_x": ("chart coordinate of the escape sample", "1"), "escape_rate": ("escape rate", "1"),
    "trajectory_steps": ("training step of the snapshot", "1"), "trajectory": ("chart coordinate over training", "1"),
}


class ResultFileError(ValueError):
    """A file is missing, not HDF5, not a shockflow result file, or damaged."""


#: the optional libraries of the notebook methods (to_xarray, to_dataframe) and the extra that installs them
NOTEBOOK_EXTRA = "xarray"


def notebook_library(name: str, method: str):
    """The module ``name`` (``xarray``, ``pandas``) that ``method`` needs, imported; where it is not installed a
    ModuleNotFoundError that says how to install it (the ``[xarray]`` extra)."""
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        raise ModuleNotFoundError(f"{method} needs {name}, which is not installed: pip install "
                                  f"'shockflow[{NOTEBOOK_EXTRA}]' (or pip install {name})", name=name) from None


@dataclass(frozen=True, eq=False)
class Result:
    """Everything a result file holds (see the module docstring).

    ``problem``: plain attributes (str/float/int/JSON-able); ``coordinates``: named arrays;
    ``shocks``: columns by :data:`SHOCK_COLUMNS` (``location`` of shape (k, d)) and, for network
    cases, ``chart``; ``shock_info``: scalar attributes of the shock report; ``tracks``: (track,
    time, position) arrays; ``transitions``: {"predicted"|"observed"|"matches": {column: array}};
    ``extraction``: network cases, ``{"attrs": {...}, "charts": {label: {"attrs": {...}, name: array}}}``.
    """

    case_name: str
    case_kind: str
    case_text: str
    settings: dict
    times: np.ndarray
    values: np.ndarray
    problem: dict = field(default_factory=dict)
    coordinates: dict = field(default_factory=dict)
    initial: np.ndarray | None = None
    steps: int = 0
    seconds: float = 0.0
    shocks: dict = field(default_factory=dict)
    shock_info: dict = field(default_factory=dict)
    steepness: tuple[np.ndarray, np.ndarray] | None = None
    tracks: dict = field(default_factory=dict)
    transitions: dict = field(default_factory=dict)
    case_path: str = ""
    overrides: tuple[str, ...] = ()
    seed: int | None = None
    versions: dict = field(default_factory=dict)
    created: str = ""
    wall_time: float = 0.0
    extraction: dict = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    @property
    def shock_count(self) -> int:
        return int(np.asarray(self.shocks.get("time", ())).size)

    @property
    def charts(self) -> tuple[str, ...]:
        """The chart labels of a network case (empty for PDE cases)."""
        return tuple(self.extraction.get("charts", {}))

    def shock_rows(self) -> list[dict]:
        """The shocks as ``{time, location, strength}`` dicts (``location`` a number in 1-D; ``chart``
        too where the rows come from several charts)."""
        rows = []
        for k in range(self.shock_count):
            loc = np.asarray(self.shocks["location"][k]).tolist()
            row = {"time": float(self.shocks["time"][k]), "location": loc[0] if len(loc) == 1 else loc,
                   "strength": float(self.shocks["strength"][k])}
            if "chart" in self.shocks:
                row["chart"] = str(self.shocks["chart"][k])
            rows.append(row)
        return rows

    # -- notebooks -------------------------------------------------------------------------------
    def to_dataframe(self, table: str = "shocks"):
        """One table as a pandas DataFrame: ``shocks`` (one row per shock, location split per
        component), ``predicted``, ``observed`` or ``matches`` (needs the ``[xarray]`` extra)."""
        pd = notebook_library("pandas", "to_dataframe")

        if table == "shocks":
            cols = {}
            for key, a in self.shocks.items():
                a = np.asarray(a)
                if a.ndim == 2:
                    for j, name in enumerate(_components(self, a.shape[1])):
                        cols[f"{key}_{name}" if a.shape[1] > 1 else key] = a[:, j]
                else:
                    cols[key] = a
            return pd.DataFrame(cols)
        if table in TRANSITION_GROUPS:
            return pd.DataFrame({k: np.asarray(v) for k, v in self.transitions.get(table, {}).items()})
        raise ValueError(f"to_dataframe: unknown table {table!r}; expected one of shocks, "
                         f"{', '.join(TRANSITION_GROUPS)}")

    def to_xarray(self, group: str = "solution"):
        """A group as an ``xarray.Dataset`` with named dimensions and coordinates: ``solution`` (the
        main solution), ``shocks``, ``predicted``/``observed``/``matches``, or a chart label of a
        network case (needs the ``[xarray]`` extra)."""
        xr = notebook_library("xarray", "to_xarray")

        def var(dims, a, name):
            long_name, units = DESCRIPTIONS.get(name, (name, "1"))
            return xr.Variable(dims, np.asarray(a), attrs={"long_name": long_name, "units": units})

        if group == "solution":
            dims, coords = _solution_dims(self)
            data = {"values": var(("times",) + dims, self.values, "values")}
            if self.initial is not None:
                data["initial"] = var(dims, self.initial, "initial")
            cvars = {"times": var(("times",), self.times, "times")}
            for name, (d, a) in coords.items():
                cvars[name] = var(d, a, name)
            return xr.Dataset(data, coords=cvars, attrs={"case_name": self.case_name, **_plain(self.problem)})
        if group == "shocks":
            n = self.shock_count
            d = _width(self.shocks.get("location"))
            data = {k: var(("shock", "component") if np.asarray(a).ndim == 2 else ("shock",), a, k)
                    for k, a in self.shocks.items()}
            return xr.Dataset(data, coords={"shock": np.arange(n), "component": list(_components(self, d))},
                              attrs=_plain(self.shock_info))
        if group in TRANSITION_GROUPS:
            cols = self.transitions.get(group, {})
            dim = "match" if group == "matches" else "transition"
            n = len(next(iter(cols.values()))) if cols else 0
            return xr.Dataset({k: var((dim,), a, k) for k, a in cols.items()}, coords={dim: np.arange(n)})
        if group in self.charts:
            chart = self.extraction["charts"][group]
            data, cvars = {}, {}
            for name, a in chart.items():
                if name == "attrs":
                    continue
                dims = EXTRACTION_DIMS[name]
                (cvars if dims == (name,) else data)[name] = var(dims, a, name)
            if "escape_x" in chart:
                cvars["escape"] = var(("escape",), np.arange(len(chart["escape_x"])), "escape")
            return xr.Dataset(data, coords=cvars, attrs=_plain(chart["attrs"]))
        choices = ["solution", "shocks", *TRANSITION_GROUPS, *self.charts]
        raise ValueError(f"to_xarray: unknown group {group!r}; expected one of {', '.join(choices)}")


#: dimensions of the arrays of an /extraction/<chart> group
EXTRACTION_DIMS = {"x": ("x",), "u0": ("x",), "mobility": ("x",), "times": ("times",),
                   "values": ("times", "x"), "viscous_values": ("times", "x"), "escape_x": ("escape",),
                   "escape_rate": ("escape",), "trajectory_steps": ("trajectory_steps",),
                   "trajectory": ("trajectory_steps",)}


def _plain(attrs: dict) -> dict:
    """Attributes netCDF can hold (numbers and strings; the rest as JSON)."""
    out = {}
    for k, v in attrs.items():
        if isinstance(v, (bool, np.bool_)):
            out[k] = int(v)
        elif v is None or isinstance(v, (dict, list, tuple)):
            out[k] = json.dumps(v)
        else:
            out[k] = v
    return out


def _width(location) -> int:
    """Components of a location column (k, d); 1 when there is none."""
    a = np.asarray(location) if location is not None else np.zeros((0, 1))
    return a.shape[1] if a.ndim == 2 else 1


def _components(result: Result, d: int) -> tuple[str, ...]:
    if "vertices" in result.coordinates:
        return ("x", "y", "z")[:d]
    names = [k for k in result.coordinates if k not in ("vertices", "triangles")]
    return tuple(names[:d]) if len(names) == d else tuple(f"axis{k}" for k in range(d))


def _solution_dims(result: Result):
    """(dims of one snapshot, {coordinate name: (dims, array)}) of the main solution."""
    c = result.coordinates
    if "vertices" in c:
        n = np.asarray(c["vertices"]).shape[0]
        m = np.asarray(c["triangles"]).shape[0]
        return ("vertex",), {"vertex": (("vertex",), np.arange(n)), "space": (("space",), np.array(["x", "y", "z"])),
                             "triangle": (("triangle",), np.arange(m)), "corner": (("corner",), np.arange(3)),
                             "vertices": (("vertex", "space"), c["vertices"]),
                             "triangles": (("triangle", "corner"), c["triangles"])}
    return tuple(c), {k: ((k,), v) for k, v in c.items()}


# ---- writing ------------------------------------------------------------------------------------

def _array(a):
    a = np.asarray(a)
    if a.dtype.kind in "SUO":
        return np.array([x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()],
                        dtype=TEXT).reshape(a.shape)
    return a


def _dataset(group: h5py.Group, name: str, a, dims: tuple[str, ...] | None = None,
             scale: bool = False) -> h5py.Dataset:
    """``group[name] = a`` with long_name/units, a checksum (numeric, non-empty), gzip by snapshot
    when large, and the dimension scales ``dims`` (looked up in ``group``) attached."""
    a = _array(a)
    kw = {}
    if a.dtype.kind in "fiub" and a.size:
        kw["fletcher32"] = True
        if a.ndim >= 1 and a.shape[0] > 1 and a.nbytes >= 4096:
            kw.update(chunks=(1,) + a.shape[1:] if a.ndim >= 2 else (min(a.shape[0], 65536),),
                      compression="gzip", compression_opts=4, shuffle=True)
    ds = group.create_dataset(name, data=a, **kw)
    long_name, units = DESCRIPTIONS.get(name, (name, "1"))
    ds.attrs["long_name"] = long_name
    ds.attrs["units"] = units
    if scale:
        ds.make_scale(name)
    elif dims:
        if len(dims) != a.ndim:
            raise ValueError(f"write_result: {group.name}/{name} has {a.ndim} dimensions, named {dims}")
        for k, d in enumerate(dims):
            ds.dims[k].attach_scale(group[d])
    return ds


def _coordinate(group: h5py.Group, name: str, a) -> None:
    _dataset(group, name, a, scale=True)


def _attr(value):
    if value is None:
        return "null"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def _table(group: h5py.Group, dim: str, columns: dict, components: tuple[str, ...] = ()) -> None:
    """Columns of one row per ``dim`` (an index coordinate); 2-D columns over ``component``."""
    n = len(next(iter(columns.values()))) if columns else 0
    _coordinate(group, dim, np.arange(n, dtype=np.int64))
    if any(np.asarray(a).ndim == 2 for a in columns.values()):
        _coordinate(group, "component", np.array(components, dtype=object))
    group.attrs["order"] = json.dumps(list(columns))
    for col, a in columns.items():
        a = np.asarray(a)
        _dataset(group, col, a, (dim, "component")[:a.ndim])


def write_result(result: Result, path: str | os.PathLike, extend=None) -> Path:
    """Write ``result`` to ``path`` atomically; returns the path.

    ``extend(f)``, if given, adds groups or attributes of its own to the open file ``f`` before it is
    committed: the whole file appears at once or not at all."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = FORMAT_VERSION
            f.attrs["Conventions"] = "CF-1.8"
            f.attrs["case_name"] = result.case_name
            f.attrs["case_kind"] = result.case_kind
            f.attrs["case_path"] = result.case_path
            f.attrs["case_text"] = result.case_text
            f.attrs["overrides"] = json.dumps(list(result.overrides))
            f.attrs["settings"] = json.dumps(result.settings)
            f.attrs["seed"] = -1 if result.seed is None else int(result.seed)
            f.attrs["versions"] = json.dumps(result.versions)
            f.attrs["created"] = result.created or datetime.now(timezone.utc).isoformat(timespec="seconds")
            f.attrs["wall_time"] = float(result.wall_time)
            prob = f.create_group("problem")
            prob.attrs["keys"] = json.dumps(sorted(result.problem))
            for key, value in result.problem.items():
                prob.attrs[key] = _attr(value)
            charts = result.extraction.get("charts", {})
            if charts:
                _write_extraction(f, result.extraction)
                f.attrs["main_solution"] = f"extraction/{next(iter(charts))}"
            else:
                _write_solution(f.create_group("solution"), result)
                f.attrs["main_solution"] = "solution"
            sol = f[f.attrs["main_solution"]]
            sol.attrs["steps"] = int(result.steps)
            sol.attrs["seconds"] = float(result.seconds)
            sh = f.create_group("shocks")
            for key, value in result.shock_info.items():
                sh.attrs[key] = _attr(value)
            cols = {c: np.asarray(result.shocks[c], dtype=np.float64) for c in SHOCK_COLUMNS if c in result.shocks}
            if "chart" in result.shocks:
                cols = {"chart": np.asarray(result.shocks["chart"], dtype=object), **cols}
            d = _width(cols.get("location"))
            _table(sh, "shock", cols, _components(result, d))
            if result.steepness is not None:
                st = sh.create_group("steepness")
                _coordinate(st, "times", np.asarray(result.steepness[0], dtype=np.float64))
                _dataset(st, "values", np.asarray(result.steepness[1], dtype=np.float64), ("times",))
                st["values"].attrs["long_name"] = "steepness behind the formation-time fit"
            tr = sh.create_group("tracks")
            _table(tr, "point", {k: result.tracks[k] for k in ("track", "time", "position") if k in result.tracks})
            trans = f.create_group("transitions")
            for gname in TRANSITION_GROUPS:
                _table(trans.create_group(gname), "match" if gname == "matches" else "transition",
                       result.transitions.get(gname, {}))
            if extend is not None:
                extend(f)
    return path


def _write_solution(sol: h5py.Group, result: Result) -> None:
    dims, coords = _solution_dims(result)
    _coordinate(sol, "times", np.asarray(result.times, dtype=np.float64))
    for name, (d, a) in coords.items():
        if d == (name,):
            _coordinate(sol, name, a)
    for name, (d, a) in coords.items():
        if d != (name,):
            _dataset(sol, name, a, d)
    if result.initial is not None:
        _dataset(sol, "initial", np.asarray(result.initial, dtype=np.float64), dims)
    _dataset(sol, "values", np.asarray(result.values, dtype=np.float64), ("times",) + dims)


def _write_extraction(f: h5py.File, extraction: dict) -> None:
    g = f.create_group("extraction")
    for key, value in extraction.get("attrs", {}).items():
        g.attrs[key] = _attr(value)
    g.attrs["charts"] = json.dumps(list(extraction["charts"]))
    for label, chart in extraction["charts"].items():
        h = g.create_group(label)
        for key, value in chart.get("attrs", {}).items():
            h.attrs[key] = _attr(value)
        arrays = {k: v for k, v in chart.items() if k != "attrs"}
        unknown = sorted(set(arrays) - set(EXTRACTION_DIMS))
        if unknown:
            raise ValueError(f"write_result: /extraction/{label}: no dimensions known for {unknown}")
        if "escape_x" in arrays:
            _coordinate(h, "escape", np.arange(len(arrays["escape_x"]), dtype=np.int64))
        for name, a in arrays.items():
            if EXTRACTION_DIMS[name] == (name,):
                _coordinate(h, name, a)
        for name, a in arrays.items():
            if EXTRACTION_DIMS[name] != (name,):
                _dataset(h, name, a, EXTRACTION_DIMS[name])


# ---- reading ------------------------------------------------------------------------------------

def _read_attr(value):
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str) and value[:1] in "[{" or value == "null":
        try:
            return json.loads(value)
        except (TypeError, ValueError):
            return value
    return value


_KINDS = {"str": "a string", "json": "a JSON text", "int": "an integer", "float": "a number"}


class _Reader:
    """Checked access to an open result file: every failure names the file, the object and what
    was expected."""

    def __init__(self, f: h5py.File, path):
        self.f, self.where = f, repr(str(path))

    def fail(self, obj: str, expected: str, found: str):
        raise ResultFileError(f"result file {self.where}: {obj}: expected {expected}, found {found}")

    def node(self, path: str, kind: type, expected: str):
        parent, _, name = path.rpartition("/")
        base = self.f[parent] if parent else self.f
        if name not in base:
            self.fail(f"/{path}", expected, "nothing (missing)")
        obj = base[name]
        if not isinstance(obj, kind):
            self.fail(f"/{path}", expected, "a group" if isinstance(obj, h5py.Group) else "a dataset")
        return obj

    def group(self, path: str) -> h5py.Group:
        return self.node(path, h5py.Group, "a group")

    def array(self, path: str, *, numeric: bool = True, ndim: int | None = None) -> np.ndarray:
        ds = self.node(path, h5py.Dataset, "a dataset" + (" of numbers" if numeric else ""))
        try:
            a = ds[()]
        except OSError as exc:  # checksum or filter failure
            self.fail(f"/{path}", "readable data", f"a damaged dataset ({exc})")
        if numeric and a.dtype.kind not in "fiub":
            self.fail(f"/{path}", "numbers", f"dtype {a.dtype}")
        if ndim is not None and a.ndim != ndim:
            self.fail(f"/{path}", f"{ndim} dimension(s)", f"shape {a.shape}")
        if a.dtype.kind in "OS":
            a = np.array([x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()],
                         dtype=object).reshape(a.shape)
        return a

    def attr(self, obj: h5py.HLObject, name: str, kind: str = "str"):
        label = f"attribute {name!r} of {obj.name}"
        if name not in obj.attrs:
            self.fail(label, _KINDS[kind], "nothing (missing)")
        value = obj.attrs[name]
        if isinstance(value, bytes):
            value = value.decode()
        if isinstance(value, np.generic):
            value = value.item()
        if kind == "str":
            if not isinstance(value, str):
                self.fail(label, "a string", repr(value))
            return value
        if kind == "json":
            if not isinstance(value, str):
                self.fail(label, "a JSON text", repr(value))
            try:
                return json.loads(value)
            except ValueError as exc:
                self.fail(label, "a JSON text", f"{value[:40]!r} ({exc})")
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                self.fail(label, "an integer", repr(value))
            return value
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.fail(label, "a number", repr(value))
            return float(value)
        raise AssertionError(kind)

    def columns(self, path: str, ordered=None) -> dict:
        g = self.group(path)
        names = ordered if ordered is not None else self.attr(g, "order", "json")
        if not isinstance(names, list):
            self.fail(f"attribute 'order' of {g.name}", "a JSON list of column names", repr(names))
        return {c: self.array(f"{path}/{c}", numeric=False) for c in names}


def read_result(path: str | os.PathLike) -> Result:
    """Read a file written by :func:`write_result` (format versions 1 and 2).

    A group commit still renaming in the file's directory (a run's log, result and figures) is finished first
    (:func:`~shockflow.storage.atomic.complete_commits`), so the file read is never half of a mixed pair.  A ``path``
    that is not one (a number, None, bytes) is a :class:`ResultFileError` naming the argument."""
    if not (isinstance(path, str) or (isinstance(path, os.PathLike) and isinstance(os.fspath(path), str))):
        raise ResultFileError(f"path: expected the path of a result file (str or os.PathLike), "
                              f"found {reprlib.repr(path)}")
    complete_commits(Path(path).parent)
    with open_hdf5(path, format=FORMAT, kind="a shockflow result file", error=ResultFileError,
                   max_version=FORMAT_VERSION) as f:
        r = _Reader(f, path)
        version = int(f.attrs["format_version"])
        prob = r.group("problem")
        keys = r.attr(prob, "keys", "json")
        problem = {}
        for k in keys:
            if k not in prob.attrs:
                r.fail(f"attribute {k!r} of /problem", "an attribute (listed in 'keys')", "nothing (missing)")
            problem[k] = _read_attr(prob.attrs[k])
        extraction = {}
        if version == 1:
            c = r.group("problem/coordinates")
            coords = {k: r.array(f"problem/coordinates/{k}") for k in r.attr(c, "order", "json")}
            initial = r.array("problem/initial") if "initial" in prob else None
            main = "solution"
            if "extraction" in f:
                extraction = _read_extraction_v1(r)
                # format 1 kept the first chart's box in /problem; every chart's is in its group
                for key in ("lower", "upper"):
                    problem[key] = [float(c["attrs"][key]) for c in extraction["charts"].values()]
        else:
            main = r.attr(f, "main_solution")
            if main.startswith("extraction/"):
                extraction = _read_extraction(r)
                chart = extraction["charts"][main.split("/", 1)[1]]
                coords, initial = {"x": chart["x"]}, chart["u0"]
            else:
                s = r.group(main)
                if "vertices" in s:
                    coords = {"vertices": r.array(f"{main}/vertices", ndim=2),
                              "triangles": r.array(f"{main}/triangles", ndim=2)}
                else:
                    names = [n for n in ("x", *(f"axis{k}" for k in range(8))) if n in s]
                    if not names:
                        r.fail(f"/{main}", "coordinates (x, axis0, ... or vertices)", "none")
                    coords = {n: r.array(f"{main}/{n}", ndim=1) for n in names}
                initial = r.array(f"{main}/initial") if "initial" in s else None
        sol = r.group(main)
        times = r.array(f"{main}/times", ndim=1)
        if times.size == 0:
            r.fail(f"/{main}/times", "at least one output time", "an empty array")
        values = r.array(f"{main}/values")
        if values.ndim < 2 or values.shape[0] != times.size:
            r.fail(f"/{main}/values", f"one snapshot per output time ({times.size}, ...)", f"shape {values.shape}")
        sh = r.group("shocks")
        if version == 1:
            shocks = {c: r.array(f"shocks/{c}") for c in SHOCK_COLUMNS if c in sh}
        else:
            shocks = r.columns("shocks")
            for c in SHOCK_COLUMNS:
                if c in shocks:
                    shocks[c] = np.asarray(shocks[c], dtype=np.float64)
        chart_of_shocks = extraction.pop("_chart_of_shocks", None)
        if chart_of_shocks is not None and "chart" not in shocks and chart_of_shocks.size == shocks["time"].size:
            shocks = {"chart": chart_of_shocks, **shocks}
        info = {k: _read_attr(v) for k, v in sh.attrs.items() if k != "order"}
        steep = (r.array("shocks/steepness/times"), r.array("shocks/steepness/values")) if "steepness" in sh else None
        tk = r.group("shocks/tracks")
        tracks = {k: r.array(f"shocks/tracks/{k}") for k in ("track", "time", "position") if k in tk}
        transitions = {}
        for gname in TRANSITION_GROUPS:
            transitions[gname] = r.columns(f"transitions/{gname}")
        pred, matches = transitions["predicted"], transitions["matches"]
        if version == 1 and "chart" in pred and "predicted_step" in matches:  # format 1: no chart on matches
            chart_of = dict(zip(np.asarray(pred["step"]).tolist(), pred["chart"]))
            transitions["matches"] = {"chart": np.array([chart_of.get(v, "") for v in matches["predicted_step"]],
                                                        dtype=object), **matches}
        for key in ("case_name", "case_kind", "case_path", "case_text", "created"):
            r.attr(f, key)
        seed = r.attr(f, "seed", "int")
        settings = r.attr(f, "settings", "json")
        if not isinstance(settings, dict):
            r.fail("attribute 'settings' of /", "a JSON object", type(settings).__name__)
        overrides = r.attr(f, "overrides", "json")
        if not isinstance(overrides, list):
            r.fail("attribute 'overrides' of /", "a JSON list", type(overrides).__name__)
        return Result(
            case_name=r.attr(f, "case_name"), case_kind=r.attr(f, "case_kind"), case_text=r.attr(f, "case_text"),
            settings=settings, times=times, values=values, problem=problem, coordinates=coords,
            initial=initial, steps=r.attr(sol, "steps", "int"), seconds=r.attr(sol, "seconds", "float"),
            shocks=shocks, shock_info=info, steepness=steep, tracks=tracks, transitions=transitions,
            case_path=r.attr(f, "case_path"), overrides=tuple(overrides),
            seed=None if seed < 0 else seed, versions=r.attr(f, "versions", "json"),
            created=r.attr(f, "created"), wall_time=r.attr(f, "wall_time", "float"), extraction=extraction,
            format_version=version,
        )


def _read_extraction(r: _Reader) -> dict:
    g = r.group("extraction")
    labels = r.attr(g, "charts", "json")
    charts = {}
    for label in labels:
        h = r.group(f"extraction/{label}")
        chart = {"attrs": {k: _read_attr(v) for k, v in h.attrs.items()}}
        for name in EXTRACTION_DIMS:
            if name in h:
                chart[name] = r.array(f"extraction/{label}/{name}")
        for name in ("x", "u0", "times", "values"):
            if name not in chart:
                r.fail(f"/extraction/{label}/{name}", "a dataset", "nothing (missing)")
        charts[label] = chart
    return {"attrs": {k: _read_attr(v) for k, v in g.attrs.items() if k != "charts"}, "charts": charts}


def _read_extraction_v1(r: _Reader) -> dict:
    """Version 1: each chart's solution in a subgroup; its shock rows there too (the chart column)."""
    g = r.group("extraction")
    labels = r.attr(g, "charts", "json")
    charts, chart_of_shocks = {}, []
    for label in labels:
        base = f"extraction/{label}"
        h = r.group(base)
        chart = {"attrs": {k: _read_attr(v) for k, v in h.attrs.items()}}
        for name in ("x", "u0", "mobility", "escape_x", "escape_rate", "trajectory_steps", "trajectory"):
            if name in h:
                chart[name] = r.array(f"{base}/{name}")
        s = r.group(f"{base}/solution")
        chart["times"] = r.array(f"{base}/solution/times")
        chart["values"] = r.array(f"{base}/solution/values")
        if "viscous_values" in s:
            chart["viscous_values"] = r.array(f"{base}/solution/viscous_values")
        if "shock_time" in s:
            chart_of_shocks += [label] * r.array(f"{base}/solution/shock_time").size
        charts[label] = chart
    out = {"attrs": {k: _read_attr(v) for k, v in g.attrs.items() if k != "charts"}, "charts": charts}
    out["_chart_of_shocks"] = np.array(chart_of_shocks, dtype=object)
    return out
