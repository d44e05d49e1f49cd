"""Scalar conservation laws ``q_t + div(a(x) f(q)) = div(ν D(x) ∇q) + s`` by finite volumes.

- :mod:`~solvers.conservation.flux_functions` — convex fluxes ``f`` (Burgers built in, user fluxes compiled);
- :mod:`~solvers.conservation.numerical_fluxes` — exact Godunov, Engquist–Osher, Rusanov;
- :mod:`~solvers.conservation.reconstruction` — first order, MUSCL (minmod, MC, van Leer), WENO5;
- :mod:`~solvers.conservation.diffusion` — the viscous term, explicit rate or implicit step;
- :mod:`~solvers.conservation.kernels` — the general compiled stage kernel and its NumPy reference;
- :mod:`~solvers.conservation.burgers_fast_path` — the vectorised Burgers/Godunov kernels;
- :mod:`~solvers.conservation.solver` — :func:`solve_conservation`, which picks the kernel.
"""

import importlib

# imported on first use (PEP 562): importing one submodule (thread_policy, which shockflow's BLAS thread
# count reads) does not import the solver, its kernels and scipy.sparse
_LAZY = {"ImplicitDiffusion": "diffusion", "BURGERS": "flux_functions", "ConvexFlux": "flux_functions",
         "get_flux": "flux_functions", "recompile_with": "flux_functions", "NUMERICAL_FLUXES": "numerical_fluxes",
         "LIMITERS": "reconstruction", "RECONSTRUCTIONS": "reconstruction", "solve_conservation": "solver"}

__all__ = ["BURGERS", "ConvexFlux", "ImplicitDiffusion", "LIMITERS", "NUMERICAL_FLUXES", "RECONSTRUCTIONS",
           "get_flux", "recompile_with", "solve_conservation"]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'solvers.conservation' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"solvers.conservation.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
