"""Hamilton–Jacobi equations ``u_t + H(x, ∇u) = ν div(D ∇u)`` on grids, 1–3-D.

- :mod:`~solvers.hamilton_jacobi.hamiltonians` — Hamiltonians and numerical Hamiltonians (Godunov, LF, LLF);
- :mod:`~solvers.hamilton_jacobi.derivatives` — one-sided derivatives (first order, ENO2, WENO5);
- :mod:`~solvers.hamilton_jacobi.boundary` — ghost padding for HJ data;
- :mod:`~solvers.hamilton_jacobi.solver` — :func:`solve_hj` and the general kernels;
- :mod:`~solvers.hamilton_jacobi.fast_kernels` — compile-time specialised 1-D/2-D step kernels.
"""

from solvers.hamilton_jacobi.boundary import HJBoundary
from solvers.hamilton_jacobi.derivatives import DERIVATIVES
from solvers.hamilton_jacobi.hamiltonians import NUMERICAL_HAMILTONIANS, CompiledHamiltonian
from solvers.hamilton_jacobi.solver import HJDiscretisation, HJSettings, centred_gradient, solve_hj

__all__ = ["CompiledHamiltonian", "DERIVATIVES", "HJBoundary", "HJDiscretisation", "HJSettings",
           "NUMERICAL_HAMILTONIANS", "centred_gradient", "solve_hj"]
