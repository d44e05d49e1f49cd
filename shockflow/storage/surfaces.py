"""Surface solutions on disk: a ``.npz`` with the mesh, the snapshots and the settings.

:func:`save_surface_solution` writes through :func:`~shockflow.storage.atomic.atomic_open`, so an
interrupted write never leaves a file that looks complete; :func:`load_surface_solution` reads it
back, re-validating the mesh and the snapshots' shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from shockflow.storage.atomic import atomic_open
from solvers.errors import SolverInputError
from solvers.surfaces import SurfaceSolution, TriangleMesh

__all__ = ["save_surface_solution", "load_surface_solution"]

_KEYS = {"vertices", "triangles", "times", "values", "location", "steps", "settings"}


def save_surface_solution(solution: SurfaceSolution, path) -> Path:
    """Write ``solution`` to ``path`` (``.npz``) atomically; returns the path."""
    path = Path(path)
    if path.suffix != ".npz":
        raise SolverInputError(f"path: expected a file name ending in .npz, found {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb") as fh:
        np.savez(fh, vertices=solution.mesh.vertices, triangles=solution.mesh.triangles,
                 require_closed=np.array(solution.mesh.require_closed), times=solution.times,
                 values=solution.values, location=np.array(solution.location), steps=np.array(solution.steps),
                 settings=np.array(json.dumps(solution.settings, sort_keys=True)))
    return path


def load_surface_solution(path) -> SurfaceSolution:
    """Read a file written by :func:`save_surface_solution`."""
    path = Path(path)
    if not path.is_file():
        raise SolverInputError(f"path: no such file {str(path)!r}")
    with np.load(path, allow_pickle=False) as f:
        missing = _KEYS - set(f.files)
        if missing:
            raise SolverInputError(f"path: {str(path)!r} is not a surface solution (missing {sorted(missing)})")
        mesh = TriangleMesh(f["vertices"], f["triangles"], bool(f["require_closed"]))
        return SurfaceSolution(mesh, f["times"], f["values"], str(f["location"]), int(f["steps"]),
                               json.loads(str(f["settings"])))
