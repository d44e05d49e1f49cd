"""The result of a solve on a triangulated surface, stored with its mesh; saving, loading, a figure.

A :class:`SurfaceSolution` holds the snapshots ``values[k]`` at ``times[k]`` (one value per vertex
for the P1 / vertex-star solvers, one per triangle for finite volumes: ``location``), the mesh
they live on, the number of steps and the settings that produced them (plain numbers and
strings).  :meth:`SurfaceSolution.save` writes a ``.npz`` atomically (a temporary file in the
same directory, then ``os.replace``), so an interrupted write never leaves a file that looks
complete; :meth:`SurfaceSolution.load` reads it back, re-validating the mesh.

:func:`plot_on_sphere` draws values on a surface (matplotlib, imported only here) into a PNG.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solvers.errors import SolverInputError
from solvers.mesh import TriangleMesh

LOCATIONS = ("vertices", "triangles")


@dataclass(frozen=True, eq=False)
class SurfaceSolution:
    """Snapshots of a field on ``mesh`` at ``times`` (see the module docstring)."""

    mesh: TriangleMesh
    times: np.ndarray
    values: np.ndarray
    location: str
    steps: int
    settings: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.location not in LOCATIONS:
            raise SolverInputError(f"location: expected one of {LOCATIONS}, found {self.location!r}")
        n = self.mesh.n_vertices if self.location == "vertices" else self.mesh.n_triangles
        times = np.array(self.times, dtype=np.float64).reshape(-1)
        values = np.array(self.values, dtype=np.float64)
        if values.shape != (times.size, n):
            raise SolverInputError(
                f"values: expected shape ({times.size}, {n}) (one row per output time, one value per "
                f"{self.location[:-1]}), found {values.shape}"
            )
        times.flags.writeable = False
        values.flags.writeable = False
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "settings", dict(self.settings))

    def __getitem__(self, index: int) -> np.ndarray:
        return self.values[index]

    def save(self, path) -> Path:
        """Write ``path`` (``.npz``) atomically; returns the path."""
        path = Path(path)
        if path.suffix != ".npz":
            raise SolverInputError(f"path: expected a file name ending in .npz, found {str(path)!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(
                    fh,
                    vertices=self.mesh.vertices,
                    triangles=self.mesh.triangles,
                    require_closed=np.array(self.mesh.require_closed),
                    times=self.times,
                    values=self.values,
                    location=np.array(self.location),
                    steps=np.array(self.steps),
                    settings=np.array(json.dumps(self.settings, sort_keys=True)),
                )
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    @classmethod
    def load(cls, path) -> "SurfaceSolution":
        """Read a file written by :meth:`save`."""
        path = Path(path)
        if not path.is_file():
            raise SolverInputError(f"path: no such file {str(path)!r}")
        with np.load(path, allow_pickle=False) as f:
            missing = {"vertices", "triangles", "times", "values", "location", "steps", "settings"} - set(f.files)
            if missing:
                raise SolverInputError(f"path: {str(path)!r} is not a surface solution (missing {sorted(missing)})")
            mesh = TriangleMesh(f["vertices"], f["triangles"], bool(f["require_closed"]))
            return cls(mesh, f["times"], f["values"], str(f["location"]), int(f["steps"]), json.loads(str(f["settings"])))

    def plot(self, path, index: int = -1, **kwargs) -> Path:
        """Figure of snapshot ``index`` (see :func:`plot_on_sphere`)."""
        return plot_on_sphere(self.mesh, self.values[index], path, **kwargs)


def plot_on_sphere(mesh: TriangleMesh, values, path, *, title: str | None = None, cmap: str = "viridis",
                   elevation: float = 25.0, azimuth: float = -60.0) -> Path:
    """Draw ``values`` (one per vertex or one per triangle) on ``mesh`` and save a PNG at ``path``.

    Vertex values are averaged over each triangle for its colour.  Works for any surface; the
    axes are scaled equally so a sphere looks round.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    v = np.asarray(values, dtype=np.float64)
    if v.shape == (mesh.n_vertices,):
        face = v[mesh.triangles].mean(axis=1)
    elif v.shape == (mesh.n_triangles,):
        face = v
    else:
        raise SolverInputError(
            f"values: expected one value per vertex ({mesh.n_vertices},) or per triangle ({mesh.n_triangles},), "
            f"found shape {v.shape}"
        )
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise SolverInputError(f"path: expected a file name ending in .png, found {str(path)!r}")
    lo, hi = float(np.nanmin(face)), float(np.nanmax(face))
    norm = matplotlib.colors.Normalize(lo, hi if hi > lo else lo + 1.0)
    colormap = matplotlib.colormaps[cmap]
    fig = plt.figure(figsize=(6, 5))
    ax = fig.add_subplot(projection="3d")
    poly = Poly3DCollection(mesh.vertices[mesh.triangles], facecolors=colormap(norm(face)), edgecolor="none",
                           linewidth=0, antialiased=False)
    ax.add_collection3d(poly)
    lo_x, hi_x = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    centre, half = (lo_x + hi_x) / 2, (hi_x - lo_x).max() / 2
    for setter, c in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), centre):
        setter(c - half, c + half)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elevation, azimuth)
    ax.set_axis_off()
    mappable = matplotlib.cm.ScalarMappable(norm=norm, cmap=colormap)
    fig.colorbar(mappable, ax=ax, shrink=0.7)
    if title:
        ax.set_title(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".png", dir=path.parent)
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
