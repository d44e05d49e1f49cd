"""Values on a triangulated surface, drawn in 3-D (matplotlib's object API, no pyplot state)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shockflow.figures.canvas import save_png
from solvers.errors import SolverInputError
from solvers.surfaces import TriangleMesh

__all__ = ["plot_on_sphere"]


def plot_on_sphere(mesh: TriangleMesh, values, path, *, title: str | None = None, cmap: str = "viridis",
                   elevation: float = 25.0, azimuth: float = -60.0) -> Path:
    """Draw ``values`` (one per vertex or one per triangle) on ``mesh`` and save a PNG at ``path``.

    Vertex values are averaged over each triangle for its colour.  Works for any surface; the
    axes are scaled equally so a sphere looks round.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
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
    fig = Figure(figsize=(6, 5), dpi=100)
    FigureCanvasAgg(fig)
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
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=colormap), ax=ax, shrink=0.7)
    if title:
        ax.set_title(title)
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_png(fig, path)
