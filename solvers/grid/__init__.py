"""Uniform grids with ghost cells, and the boundary conditions that fill the ghosts."""

from solvers.grid.boundary import KINDS, BoundaryConditions, Side, fill_ghosts, fill_ghosts_compiled, fill_ghosts_reference
from solvers.grid.uniform import Grid

__all__ = ["BoundaryConditions", "Grid", "KINDS", "Side", "fill_ghosts", "fill_ghosts_compiled", "fill_ghosts_reference"]
