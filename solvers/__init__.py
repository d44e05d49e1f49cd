"""Numerics only: grids, boundary conditions, numerical fluxes and Hamiltonians,
time integrators, exact solutions and shock detection.  Arrays in, arrays out."""
