"""Numerics only: arrays and numbers in, arrays and numbers out.  Never imports ``shockflow``.

One subpackage per concept; each ``__init__`` is its public face:

- :mod:`solvers.grid` — uniform grids with ghost cells and their boundary conditions;
- :mod:`solvers.conservation` — scalar conservation laws (fluxes, reconstructions, diffusion,
  the general kernel and the compiled Burgers fast path);
- :mod:`solvers.hamilton_jacobi` — Hamilton–Jacobi equations on grids (numerical Hamiltonians,
  one-sided derivatives, boundary padding, general and fast kernels);
- :mod:`solvers.charts` — the equations of a quotient chart with its metric (chart HJ, chart
  Burgers, the continuity equation of mean-field networks);
- :mod:`solvers.surfaces` — triangulated surfaces (meshes, Laplace–Beltrami, finite volumes, HJ);
- :mod:`solvers.exact` — exact solutions the tests validate against;
- :mod:`solvers.shocks` — shock detection and tracking on a field;
- :mod:`solvers.time_stepping`, :mod:`solvers.errors` — what every solver shares.
"""
