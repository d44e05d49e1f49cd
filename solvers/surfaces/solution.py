"""The result of a solve on a triangulated surface, stored with its mesh.

A :class:`SurfaceSolution` holds the snapshots ``values[k]`` at ``times[k]`` (one value per vertex
for the P1 / vertex-star solvers, one per triangle for finite volumes: ``location``), the mesh
they live on, the number of steps and the settings that produced them (plain numbers and
strings).  Saving and drawing are the domain's (``shockflow.storage.surfaces``,
``shockflow.figures.surface``): the solvers write no files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solvers.errors import SolverInputError
from solvers.surfaces.mesh import TriangleMesh

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
