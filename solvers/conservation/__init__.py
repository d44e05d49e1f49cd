"""Scalar conservation laws ``q_t + div(a(x) f(q)) = div(ν D(x) ∇q) + s`` by finite volumes.

- :mod:`~solvers.conservation.flux_functions` — convex fluxes ``f`` (Burgers built in, user fluxes compiled);
- :mod:`~solvers.conservation.numerical_fluxes` — exact Godunov, Engquist–Osher, Rusanov;
- :mod:`~solvers.conservation.reconstruction` — first order, MUSCL (minmod, MC, van Leer), WENO5;
- :mod:`~solvers.conservation.diffusion` — the viscous term, explicit rate or implicit step;
- :mod:`~solvers.conservation.kernels` — the general compiled stage kernel and its NumPy reference;
- :mod:`~solvers.conservation.burgers_fast_path` — the vectorised Burgers/Godunov kernels;
- :mod:`~solvers.conservation.solver` — :func:`solve_conservation`, which picks the kernel.
"""

from solvers.conservation.diffusion import ImplicitDiffusion
from solvers.conservation.flux_functions import BURGERS, ConvexFlux, get_flux, recompile_with
from solvers.conservation.numerical_fluxes import NUMERICAL_FLUXES
from solvers.conservation.reconstruction import LIMITERS, RECONSTRUCTIONS
from solvers.conservation.solver import solve_conservation

__all__ = ["BURGERS", "ConvexFlux", "ImplicitDiffusion", "LIMITERS", "NUMERICAL_FLUXES", "RECONSTRUCTIONS",
           "get_flux", "recompile_with", "solve_conservation"]
