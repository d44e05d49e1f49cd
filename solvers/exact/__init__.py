"""Exact solutions used to validate the solvers (docs/theory.md §1 and §5).

- :mod:`solvers.exact.riemann` — Riemann problem for a convex flux (shock or rarefaction);
- :mod:`solvers.exact.characteristics` — smooth Burgers solution before the first shock, and
  the first shock time from initial data;
- :mod:`solvers.exact.hopf_cole` — viscous Burgers and viscous Hamilton–Jacobi from any data (1-D, 2-D);
- :mod:`solvers.exact.hopf_lax` — inviscid Hamilton–Jacobi (H = ½|p|²), value and proximal point;
- :mod:`solvers.exact.viscous_shock` — the travelling viscous Burgers shock.
"""

from solvers.exact.characteristics import (ShockOnset, burgers_smooth, burgers_smooth_slope, characteristic_foot,
                                           first_shock, first_shock_time)
from solvers.exact.hopf_cole import viscous_burgers, viscous_hj, viscous_hj_2d
from solvers.exact.hopf_lax import HopfLax, hopf_lax, hopf_lax_solution
from solvers.exact.riemann import rankine_hugoniot_speed, riemann
from solvers.exact.viscous_shock import viscous_shock, viscous_shock_derivatives, viscous_shock_speed, viscous_shock_width

__all__ = [
    "HopfLax", "ShockOnset", "burgers_smooth", "burgers_smooth_slope", "characteristic_foot", "first_shock",
    "first_shock_time", "hopf_lax", "hopf_lax_solution", "rankine_hugoniot_speed", "riemann", "viscous_burgers",
    "viscous_hj", "viscous_hj_2d", "viscous_shock", "viscous_shock_derivatives", "viscous_shock_speed",
    "viscous_shock_width",
]
