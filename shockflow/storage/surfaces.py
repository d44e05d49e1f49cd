"""Surface solutions on disk: a ``.npz`` with the mesh, the snapshots and the settings; and a
XDMF time series (XML plus an HDF5 data file, written with h5py) that ParaView opens.

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

__all__ = ["save_surface_solution", "load_surface_solution", "write_surface_xdmf"]

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




def write_surface_xdmf(path, vertices, triangles, times, values, *, name: str = "u") -> tuple[Path, Path]:
    """Write snapshots on a triangle mesh as an XDMF 3 temporal collection (``path``, ``.xdmf``)
    whose heavy data are in ``<stem>.h5`` beside it (``/vertices``, ``/triangles``, ``/times``,
    ``/<name>/<k>``, one dataset per output time k); ParaView opens the ``.xdmf`` and steps through the
    output times.  Each file is written atomically, the data file first."""
    import h5py

    from shockflow.storage.atomic import atomic_path

    path = Path(path)
    if path.suffix != ".xdmf":
        raise ValueError(f"write_surface_xdmf: expected a file name ending in .xdmf, found {str(path)!r}")
    x = np.asarray(vertices, dtype=np.float64)
    tri = np.asarray(triangles, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    n, m = x.shape[0], tri.shape[0]
    if values.ndim != 2 or values.shape != (times.size, n):
        raise ValueError(f"write_surface_xdmf: expected values of shape ({times.size}, {n}) "
                         f"(one row per time, one value per vertex), found {values.shape}")
    heavy = path.with_suffix(".h5")
    with atomic_path(heavy) as tmp:
        with h5py.File(tmp, "w") as f:
            f.create_dataset("vertices", data=x)
            f.create_dataset("triangles", data=tri)
            f.create_dataset("times", data=times)
            g = f.create_group(name)
            for k in range(times.size):
                g.create_dataset(f"{k:06d}", data=values[k])
    h5 = heavy.name

    def item(dims, kind, precision, where):
        return (f'<DataItem Dimensions="{dims}" NumberType="{kind}" Precision="{precision}" Format="HDF">'
                f"{h5}:{where}</DataItem>")

    grids = []
    for k, t in enumerate(times):
        slab = item(f"{n}", "Float", 8, f"/{name}/{k:06d}")
        grids.append(
            f'<Grid Name="t{k}" GridType="Uniform"><Time Value="{float(t)!r}"/>'
            f'<Topology TopologyType="Triangle" NumberOfElements="{m}">{item(f"{m} 3", "Int", 8, "/triangles")}</Topology>'
            f'<Geometry GeometryType="XYZ">{item(f"{n} 3", "Float", 8, "/vertices")}</Geometry>'
            f'<Attribute Name="{name}" AttributeType="Scalar" Center="Node">{slab}</Attribute></Grid>')
    text = ('<?xml version="1.0"?>\n<Xdmf Version="3.0"><Domain>'
            '<Grid Name="TimeSeries" GridType="Collection" CollectionType="Temporal">\n'
            + "\n".join(grids) + "\n</Grid></Domain></Xdmf>\n")
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return path, heavy
