"""Triangulated surfaces: meshes, Laplace–Beltrami (fenics-basix P1), finite volumes and HJ on vertex stars.

- :mod:`~solvers.surfaces.mesh`, :mod:`~solvers.surfaces.mesh_generation` — checked triangle meshes, icosphere, torus;
- :mod:`~solvers.surfaces.fem` — P1 Laplace–Beltrami and the surface heat equation;
- :mod:`~solvers.surfaces.finite_volumes` — scalar conservation laws on triangles;
- :mod:`~solvers.surfaces.hamilton_jacobi` — monotone HJ on vertex stars;
- :mod:`~solvers.surfaces.solution` — the snapshots of a surface solve.
"""

from solvers.surfaces.fem import LaplaceBeltrami, P1Reference, solve_surface_heat
from solvers.surfaces.finite_volumes import solve_surface_conservation
from solvers.surfaces.hamilton_jacobi import SURFACE_NUMERICAL_HAMILTONIANS, SurfaceHJ, SurfaceHJSettings, solve_surface_hj
from solvers.surfaces.mesh import TriangleMesh
from solvers.surfaces.mesh_generation import icosphere, torus, user_mesh
from solvers.surfaces.solution import SurfaceSolution

__all__ = ["LaplaceBeltrami", "P1Reference", "SURFACE_NUMERICAL_HAMILTONIANS", "SurfaceHJ", "SurfaceHJSettings",
           "SurfaceSolution", "TriangleMesh", "icosphere", "solve_surface_conservation", "solve_surface_heat",
           "solve_surface_hj", "torus", "user_mesh"]
