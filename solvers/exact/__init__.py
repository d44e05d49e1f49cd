"""Exact solutions used to validate the solvers (THEORY.md §1 and §5).

- :mod:`solvers.exact.riemann` — Riemann problem for a convex flux (shock or rarefaction);
- :mod:`solvers.exact.characteristics` — smooth Burgers solution before the first shock, and
  the first shock time from initial data;
- :mod:`solvers.exact.hopf_cole` — viscous Burgers and viscous Hamilton–Jacobi from any data;
- :mod:`solvers.exact.hopf_lax` — inviscid Hamilton–Jacobi (H = ½|p|²), value and proximal point;
- :mod:`solvers.exact.viscous_shock` — the travelling viscous Burgers shock.
"""
