"""One HDF5 result file per run: what was asked, what was solved, what was found (docs/result-file.md).

    /                      attrs: format="shockflow-result", format_version, case_name, case_kind,
                                  case_path, case_text, overrides (JSON list), settings (JSON),
                                  seed (-1: none), versions (JSON), created (UTC ISO 8601), wall_time
    /problem               attrs: equation, quantity, method, domain, nu, solver (JSON), ...
                           datasets: coordinates (x, or axis0/axis1/..., or vertices/triangles), initial
    /solution/times        (n,)      /solution/values  (n, *shape), chunked per snapshot, gzip
                           attrs: steps, seconds
    /shocks                columns time, location (k, d), strength, first_seen, final_location,
                           final_strength, speed; attrs: method, formation_time,
                           formation_time_from_data, first_detection, fit_points
    /shocks/steepness      times, values (the series of the formation-time fit)
    /shocks/tracks         track (int), time, position (1-D tracks, concatenated)
    /transitions/predicted, /transitions/observed, /transitions/matches
                           reserved for network cases (empty groups for PDE cases)

Written atomically (:mod:`shockflow.storage.atomic`): an interrupted run leaves no file, or the old one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np

from shockflow.storage.atomic import atomic_path
from shockflow.storage.hdf5 import open_hdf5

__all__ = ["Result", "write_result", "read_result", "FORMAT", "FORMAT_VERSION", "ResultFileError"]

FORMAT = "shockflow-result"
FORMAT_VERSION = 1
SHOCK_COLUMNS = ("time", "location", "strength", "first_seen", "final_location", "final_strength", "speed")
TRANSITION_GROUPS = ("predicted", "observed", "matches")


class ResultFileError(ValueError):
    """A file is missing, not HDF5, or not a shockflow result file."""


@dataclass(frozen=True, eq=False)
class Result:
    """Everything a result file holds (see the module docstring).

    ``problem``: plain attributes (str/float/int/JSON-able); ``coordinates``: named arrays;
    ``shocks``: columns by :data:`SHOCK_COLUMNS` (``location`` of shape (k, d)); ``shock_info``:
    scalar attributes of the shock report; ``tracks``: (track, time, position) arrays;
    ``transitions``: {"predicted"|"observed"|"matches": {column: array}}.
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

    @property
    def shock_count(self) -> int:
        return int(np.asarray(self.shocks.get("time", ())).size)

    def shock_rows(self) -> list[dict]:
        """The shocks as ``{time, location, strength}`` dicts (``location`` a number in 1-D)."""
        rows = []
        for k in range(self.shock_count):
            loc = np.asarray(self.shocks["location"][k]).tolist()
            rows.append({"time": float(self.shocks["time"][k]),
                         "location": loc[0] if len(loc) == 1 else loc,
                         "strength": float(self.shocks["strength"][k])})
        return rows


def _dataset(group: h5py.Group, name: str, a) -> None:
    a = np.asarray(a)
    if a.ndim >= 1 and a.shape[0] > 1 and a.nbytes >= 4096:
        chunk = (1,) + a.shape[1:] if a.ndim >= 2 else (min(a.shape[0], 65536),)
        group.create_dataset(name, data=a, chunks=chunk, compression="gzip", compression_opts=4, shuffle=True)
    else:
        group.create_dataset(name, data=a)


def _attr(value):
    if value is None:
        return "null"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value)
    return value


def write_result(result: Result, path: str | os.PathLike, extend=None) -> Path:
    """Write ``result`` to ``path`` atomically; returns the path.

    ``extend(f)``, if given, adds groups of its own to the open file ``f`` before it is committed
    (``shockflow run`` adds ``/extraction``): the whole file appears at once or not at all."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = FORMAT_VERSION
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
            coords = prob.create_group("coordinates")
            coords.attrs["order"] = json.dumps(list(result.coordinates))
            for name, a in result.coordinates.items():
                _dataset(coords, name, a)
            if result.initial is not None:
                _dataset(prob, "initial", result.initial)
            sol = f.create_group("solution")
            sol.attrs["steps"] = int(result.steps)
            sol.attrs["seconds"] = float(result.seconds)
            _dataset(sol, "times", np.asarray(result.times, dtype=np.float64))
            _dataset(sol, "values", np.asarray(result.values, dtype=np.float64))
            sh = f.create_group("shocks")
            for key, value in result.shock_info.items():
                sh.attrs[key] = _attr(value)
            for col in SHOCK_COLUMNS:
                if col in result.shocks:
                    sh.create_dataset(col, data=np.asarray(result.shocks[col], dtype=np.float64))
            if result.steepness is not None:
                st = sh.create_group("steepness")
                st.create_dataset("times", data=np.asarray(result.steepness[0], dtype=np.float64))
                st.create_dataset("values", data=np.asarray(result.steepness[1], dtype=np.float64))
            tr = sh.create_group("tracks")
            for key in ("track", "time", "position"):
                if key in result.tracks:
                    tr.create_dataset(key, data=np.asarray(result.tracks[key]))
            trans = f.create_group("transitions")
            for gname in TRANSITION_GROUPS:
                g = trans.create_group(gname)
                content = result.transitions.get(gname, {})
                g.attrs["order"] = json.dumps(list(content))
                for col, a in content.items():
                    g.create_dataset(col, data=np.asarray(a))
            if extend is not None:
                extend(f)
    return path


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


def read_result(path: str | os.PathLike) -> Result:
    """Read a file written by :func:`write_result`."""
    with open_hdf5(path, format=FORMAT, kind="a shockflow result file", error=ResultFileError,
                   max_version=FORMAT_VERSION) as f:
        prob = f["problem"]
        problem = {k: _read_attr(prob.attrs[k]) for k in json.loads(prob.attrs["keys"])}
        coords = {k: prob["coordinates"][k][()] for k in json.loads(prob["coordinates"].attrs["order"])}
        initial = prob["initial"][()] if "initial" in prob else None
        sh = f["shocks"]
        shocks = {c: sh[c][()] for c in SHOCK_COLUMNS if c in sh}
        info = {k: _read_attr(v) for k, v in sh.attrs.items()}
        steep = (sh["steepness/times"][()], sh["steepness/values"][()]) if "steepness" in sh else None
        tracks = {k: sh["tracks"][k][()] for k in ("track", "time", "position") if k in sh["tracks"]}
        transitions = {}
        for gname in TRANSITION_GROUPS:
            g = f["transitions"][gname]
            transitions[gname] = {c: g[c][()] for c in json.loads(g.attrs["order"])}
        seed = int(f.attrs["seed"])
        return Result(
            case_name=str(f.attrs["case_name"]), case_kind=str(f.attrs["case_kind"]),
            case_text=str(f.attrs["case_text"]), settings=json.loads(f.attrs["settings"]),
            times=f["solution/times"][()], values=f["solution/values"][()], problem=problem, coordinates=coords,
            initial=initial, steps=int(f["solution"].attrs["steps"]), seconds=float(f["solution"].attrs["seconds"]),
            shocks=shocks, shock_info=info, steepness=steep, tracks=tracks, transitions=transitions,
            case_path=str(f.attrs["case_path"]), overrides=tuple(json.loads(f.attrs["overrides"])),
            seed=None if seed < 0 else seed, versions=json.loads(f.attrs["versions"]),
            created=str(f.attrs["created"]), wall_time=float(f.attrs["wall_time"]),
        )
