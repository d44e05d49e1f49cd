"""The ``pde`` case kind: an equation, a domain or mesh, initial data, a solver, output times, shocks.

Equations (docs/theory.md §1):

* ``burgers`` — the scalar conservation law for the gradient ``p`` in 1-D,
  ``p_t + (a p²/2)_x = ν (D p_x)_x``, solved by finite volumes (:func:`solvers.conservation.solver.solve_conservation`);
* ``hamilton_jacobi`` — the viscous HJ equation for the potential ``u``,
  ``u_t + H(∇u) = ν Δu`` with ``H = (a/2)|p|²`` (``"quadratic"``) or ``a|p|`` (``"eikonal"``) on an
  interval or box (finite differences, :func:`solvers.hamilton_jacobi.solver.solve_hj`, with ``ν D``
  as the diffusion coefficient) or on a closed triangulated surface (icosphere, torus, a mesh file:
  :func:`solvers.surfaces.hamilton_jacobi.solve_surface_hj`, ``a = D = 1``).

Shocks are the discontinuities of ``p`` (kinks of ``u``); see :mod:`shockflow.prediction.shock_report`.
The settings below are validated by :mod:`shockflow.cases.schema`; the runner is
:mod:`shockflow.runners.pde`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from shockflow.cases.schema import at_least, greater_than, interval, setting

__all__ = ["PDECase", "Equation", "Solver", "Output", "ShockDetection", "EQUATIONS", "DOMAIN_CLASSES",
           "INITIAL_CLASSES"]

EQUATIONS = ("burgers", "hamilton_jacobi")
BOUNDARY_KINDS = ("periodic", "outflow", "dirichlet", "reflecting", "symmetric")


def _solver_names(module: str, attribute: str):
    def names():
        import importlib

        return tuple(getattr(importlib.import_module(module), attribute))
    return names


# -- equation --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Equation:
    """The PDE and its coefficients (docs/theory.md §1)."""

    kind: str = setting(doc="`burgers`: p_t + (a p²/2)_x = ν (D p_x)_x for the gradient p (1-D); "
                            "`hamilton_jacobi`: u_t + H(∇u) = ν Δu for the potential u.", choices=EQUATIONS)
    nu: float = setting(0.0, doc="Viscosity ν (docs/theory.md §1: ν = T/2 for SGD temperature T).", bounds=at_least(0))
    hamiltonian: str = setting("quadratic", doc="Hamilton–Jacobi only: H = (a/2)|p|² (`quadratic`) or a|p| (`eikonal`).",
                               choices=("quadratic", "eikonal"))
    a: float = setting(1.0, doc="Coefficient of the flux (burgers) or of the Hamiltonian (grid HJ); "
                                "the inverse metric g^{xx} of a flat chart.", bounds=greater_than(0))
    D: float = setting(1.0, doc="Diffusion coefficient: the viscous term is ν D (grid domains).", bounds=at_least(0))


# -- domains ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """An interval [lower, upper] of `cells` uniform cells (cell-centred values)."""

    TAG: ClassVar[str] = "interval"
    cells: int = setting(doc="Number of cells.", bounds=at_least(4))
    lower: float = setting(0.0, doc="Left end.")
    upper: float = setting(1.0, doc="Right end.")
    boundary: str = setting("periodic", doc="Boundary condition on both ends (solvers.grid.boundary): `symmetric` is "
                                            "the no-flux condition for a potential u, `outflow` lets a Burgers "
                                            "wave leave.", choices=BOUNDARY_KINDS)
    boundary_value: float = setting(0.0, doc="The boundary value for `dirichlet`.")

    ndim: ClassVar[int] = 1

    def check(self):
        if not self.upper > self.lower:
            yield "upper", f"expected upper > lower = {self.lower:g}, found {self.upper:g}"


@dataclass(frozen=True)
class Box:
    """A box with `cells[k]` uniform cells on [lower[k], upper[k]] along axis k (2 or 3 axes; HJ only)."""

    TAG: ClassVar[str] = "box"
    cells: tuple[int, ...] = setting(doc="Cells per axis.", bounds=at_least(4))
    lower: tuple[float, ...] = setting(doc="Lower corner.")
    upper: tuple[float, ...] = setting(doc="Upper corner.")
    boundary: str = setting("symmetric", doc="Boundary condition on every side.", choices=BOUNDARY_KINDS)
    boundary_value: float = setting(0.0, doc="The boundary value for `dirichlet`.")

    @property
    def ndim(self) -> int:
        return len(self.cells)

    def check(self):
        if len(self.cells) not in (2, 3):
            yield "cells", f"expected 2 or 3 axes (use an interval domain in 1-D), found {len(self.cells)}"
            return
        for key in ("lower", "upper"):
            if len(getattr(self, key)) != len(self.cells):
                yield key, f"expected {len(self.cells)} entries (one per axis of cells), found {len(getattr(self, key))}"
                return
        for k, (lo, hi) in enumerate(zip(self.lower, self.upper)):
            if not hi > lo:
                yield f"upper[{k}]", f"expected upper > lower = {lo:g}, found {hi:g}"


@dataclass(frozen=True)
class Icosphere:
    """The frequency-n geodesic icosphere (10n² + 2 vertices) of the given radius (HJ only)."""

    TAG: ClassVar[str] = "icosphere"
    frequency: int = setting(doc="Subdivision frequency n (10n² + 2 vertices).", bounds=at_least(1))
    radius: float = setting(1.0, doc="Radius.", bounds=greater_than(0))


@dataclass(frozen=True)
class Torus:
    """A triangulated torus about the z axis (HJ only)."""

    TAG: ClassVar[str] = "torus"
    R: float = setting(2.0, doc="Major radius.", bounds=greater_than(0))
    r: float = setting(1.0, doc="Minor radius (< R).", bounds=greater_than(0))
    n_major: int = setting(48, doc="Vertices around the major circle.", bounds=at_least(3))
    n_minor: int = setting(24, doc="Vertices around the minor circle (even).", bounds=at_least(4))

    def check(self):
        if not self.R > self.r:
            yield "r", f"expected r < R = {self.R:g}, found {self.r:g}"


@dataclass(frozen=True)
class MeshFile:
    """A closed triangulated surface read from a file (any format meshio reads: .msh, .vtu, .xdmf,
    .obj, .stl, .ply, ...; needs the ``[mesh]`` extra), checked like a generated one: an orientable
    closed 2-manifold (HJ only)."""

    TAG: ClassVar[str] = "mesh"
    path: str = setting(doc="The mesh file, relative to the case file; its triangle cells are used.")

    def check(self):
        if not self.path.strip():
            yield "path", "expected the name of a mesh file, found an empty string"


DOMAIN_CLASSES = (Interval, Box, Icosphere, Torus, MeshFile)
MESH_DOMAINS = ("icosphere", "torus", "mesh")


# -- initial data ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Wave:
    """A single Fourier mode, ``amplitude · WAVE(2π · frequency · x + phase) + offset``, on an interval."""

    DOMAINS: ClassVar[tuple[str, ...]] = ("interval",)
    WAVE: ClassVar[np.ufunc]
    amplitude: float = setting(1.0, doc="Amplitude.")
    frequency: float = setting(1.0, doc="Cycles per unit length.", bounds=greater_than(0))
    phase: float = setting(0.0, doc="Phase (radians).")
    offset: float = setting(0.0, doc="Constant added.")

    def evaluate(self, x, *rest):
        return self.amplitude * self.WAVE(2 * np.pi * self.frequency * x + self.phase) + self.offset


@dataclass(frozen=True)
class Sine(_Wave):
    """u0(x) = amplitude · sin(2π · frequency · x + phase) + offset (interval)."""

    TAG: ClassVar[str] = "sine"
    WAVE: ClassVar[np.ufunc] = np.sin


@dataclass(frozen=True)
class Cosine(_Wave):
    """u0(x) = amplitude · cos(2π · frequency · x + phase) + offset (interval)."""

    TAG: ClassVar[str] = "cosine"
    WAVE: ClassVar[np.ufunc] = np.cos


@dataclass(frozen=True)
class Riemann:
    """A step: u0 = left for x < position, right for x > position (interval; a Riemann problem)."""

    TAG: ClassVar[str] = "riemann"
    DOMAINS: ClassVar[tuple[str, ...]] = ("interval",)
    left: float = setting(doc="Value left of the step.")
    right: float = setting(doc="Value right of the step.")
    position: float = setting(0.0, doc="Position of the step.")

    def evaluate(self, x, *rest):
        return np.where(x < self.position, self.left, self.right).astype(np.float64)


@dataclass(frozen=True)
class Gaussian:
    """u0 = amplitude · exp(−|x − center|² / (2 width²)) + offset (interval or box)."""

    TAG: ClassVar[str] = "gaussian"
    DOMAINS: ClassVar[tuple[str, ...]] = ("interval", "box")
    center: tuple[float, ...] = setting(doc="Centre (one number per axis).")
    width: float = setting(doc="Standard deviation.", bounds=greater_than(0))
    amplitude: float = setting(1.0, doc="Amplitude (negative: a well).")
    offset: float = setting(0.0, doc="Constant added.")

    def evaluate(self, *coords):
        r2 = sum((c - x0) ** 2 for c, x0 in zip(coords, self.center))
        return self.amplitude * np.exp(-r2 / (2 * self.width ** 2)) + self.offset


@dataclass(frozen=True)
class Quadratic:
    """u0 = offset − (curvature/2) · |x − center|² (interval or box): for HJ, every characteristic
    focuses at time 1/curvature (docs/theory.md §1)."""

    TAG: ClassVar[str] = "quadratic"
    DOMAINS: ClassVar[tuple[str, ...]] = ("interval", "box")
    curvature: float = setting(doc="κ (> 0: a ridge, first shock at 1/κ).")
    center: tuple[float, ...] = setting(doc="Centre (one number per axis).")
    offset: float = setting(0.0, doc="Constant added.")

    def evaluate(self, *coords):
        r2 = sum((c - x0) ** 2 for c, x0 in zip(coords, self.center))
        return self.offset - 0.5 * self.curvature * r2


@dataclass(frozen=True)
class Zonal:
    """u0 = amplitude · cos(θ)^power + offset on a surface, θ the polar angle from the +z axis."""

    TAG: ClassVar[str] = "zonal"
    DOMAINS: ClassVar[tuple[str, ...]] = MESH_DOMAINS
    amplitude: float = setting(1.0, doc="Amplitude.")
    power: int = setting(1, doc="Power of cos θ.", bounds=at_least(0))
    offset: float = setting(0.0, doc="Constant added.")

    def evaluate(self, x, y, z):
        c = z / np.sqrt(x * x + y * y + z * z)
        return self.amplitude * c ** self.power + self.offset


@dataclass(frozen=True)
class ArrayFile:
    """Values from a NumPy file, one per cell (interval, box) or per vertex (surfaces)."""

    TAG: ClassVar[str] = "array"
    DOMAINS: ClassVar[tuple[str, ...]] = ("interval", "box", *MESH_DOMAINS)
    path: str = setting(doc="A .npy or .npz file, relative to the case file.")
    key: str | None = setting(None, doc="The array's name inside a .npz file (default: its only array).")

    def check(self):
        if not self.path.endswith((".npy", ".npz")):
            yield "path", f'expected a file name ending in .npy or .npz, found "{self.path}"'
        elif self.key is not None and not self.path.endswith(".npz"):
            yield "key", "only a .npz file has named arrays; remove key or use a .npz file"


INITIAL_CLASSES = (Sine, Cosine, Riemann, Gaussian, Quadratic, Zonal, ArrayFile)


# -- solver, output, shocks ------------------------------------------------------------------------
_BURGERS_ONLY = ("numerical_flux", "reconstruction", "limiter", "viscous")
_GRID_HJ_ONLY = ("derivative",)


@dataclass(frozen=True)
class Solver:
    """Scheme choices; a key left out takes the method's default (shown in parentheses)."""

    integrator: str | None = setting(None, doc="SSP Runge–Kutta method (burgers: `ssprk2`; HJ: `ssprk3`).",
                                     choices=("euler", "ssprk2", "ssprk3"))
    cfl: float | None = setting(None, doc="Courant number (burgers: 0.45 with MUSCL, 0.9 first order; HJ: 0.5).",
                                bounds=interval(0, 1, closed="right"))
    numerical_flux: str | None = setting(None, doc="burgers only (`godunov`).",
                                         choices=_solver_names("solvers.conservation.numerical_fluxes", "NUMERICAL_FLUXES"))
    reconstruction: str | None = setting(None, doc="burgers only (`muscl`).",
                                         choices=_solver_names("solvers.conservation.reconstruction", "RECONSTRUCTIONS"))
    limiter: str | None = setting(None, doc="burgers only, MUSCL slope limiter (`mc`).",
                                  choices=_solver_names("solvers.conservation.reconstruction", "LIMITERS"))
    viscous: str | None = setting(None, doc="burgers only: `explicit` or `implicit` (Crank–Nicolson, Strang split) "
                                            "viscous term (`explicit`).", choices=("explicit", "implicit"))
    numerical_hamiltonian: str | None = setting(
        None, doc="HJ only (grid: `godunov`, `lax_friedrichs` or `local_lax_friedrichs`; surfaces: "
                  "`smooth_lax_friedrichs`, `local_lax_friedrichs` or `lax_friedrichs`).",
        choices=lambda: tuple(sorted(set(_solver_names("solvers.hamilton_jacobi.hamiltonians", "NUMERICAL_HAMILTONIANS")())
                                     | set(_solver_names("solvers.surfaces.hamilton_jacobi", "SURFACE_NUMERICAL_HAMILTONIANS")()))))
    derivative: str | None = setting(None, doc="grid HJ only: one-sided derivatives (`eno2`).",
                                     choices=_solver_names("solvers.hamilton_jacobi.derivatives", "DERIVATIVES"))
    max_steps: int = setting(10_000_000, doc="Stop with an error after this many steps.", bounds=at_least(1))
    force_unstable: bool = setting(False, doc="Run a scheme outside its stability limit (forward Euler with a "
                                              "high-order reconstruction or derivative, a Courant number above the "
                                              "pair's limit, solvers.time_stepping.STABILITY_LIMITS); for studying "
                                              "instabilities only.")

    def scheme(self, equation: str, on_mesh: bool) -> tuple[str, str, float]:
        """(spatial scheme, integrator, Courant number) this solver will use, defaults filled in as the runner does."""
        if equation == "burgers":
            spatial = self.reconstruction or "muscl"
            integrator = self.integrator or "ssprk2"
            cfl = self.cfl if self.cfl is not None else (0.9 if spatial == "first_order" else 0.45)
        else:
            spatial = "first_order" if on_mesh else (self.derivative or "eno2")
            integrator = self.integrator or "ssprk3"
            cfl = self.cfl if self.cfl is not None else 0.5
        return spatial, integrator, cfl


@dataclass(frozen=True)
class Output:
    """Output times: `snapshots` equally spaced times from 0 to `t_end` (both included)."""

    t_end: float = setting(doc="Final time (the coarse-graining scale γ of docs/theory.md §1).", bounds=greater_than(0))
    snapshots: int = setting(101, doc="Number of stored snapshots, including t = 0 and t_end.", bounds=at_least(2))

    @property
    def times(self) -> np.ndarray:
        return np.linspace(0.0, self.t_end, self.snapshots)


@dataclass(frozen=True)
class ShockDetection:
    """Shock detection on the solution (solvers.shocks; on surfaces and boxes, Hessian steepening)."""

    enabled: bool = setting(True, doc="Detect shocks.")
    rel_jump: float = setting(0.02, doc="Smallest jump counted, as a fraction of the range of p.",
                              bounds=interval(0, 1, closed="neither"))
    max_width_cells: float = setting(4.0, doc="A transition narrower than this many cells is a shock.",
                                     bounds=greater_than(0))
    viscous_width_factor: float = setting(2.0, doc="With ν > 0, also a transition within this factor of the "
                                                   "viscous shock width 8ν/|Δp|.", bounds=greater_than(0))
    position: str = setting("crossing", doc="Sub-cell position: `crossing` (mid-value crossing) or `mass`.",
                            choices=("crossing", "mass"))
    resolved_cells: float = setting(16.0, doc="Formation-time fit: use snapshots whose steepest transition "
                                              "spans at least this many cells.", bounds=greater_than(0))
    fit_steepening: float = setting(3.0, doc="Formation-time fit: use snapshots at most this many times "
                                             "steeper than the first usable one.", bounds=greater_than(1))


@dataclass(frozen=True)
class PDECase:
    """A PDE case: `shockflow solve CASE` solves it and reports its shocks."""

    equation: Equation = setting(doc="The equation.")
    domain: Interval | Box | Icosphere | Torus | MeshFile = setting(doc="The domain or mesh.", tag="kind")
    initial: Sine | Cosine | Riemann | Gaussian | Quadratic | Zonal | ArrayFile = setting(
        doc="Initial data (p0 for burgers, u0 for HJ).", tag="function")
    output: Output = setting(doc="Output times.")
    solver: Solver = setting(doc="Scheme choices.", factory=Solver)
    shocks: ShockDetection = setting(doc="Shock detection.", factory=ShockDetection)

    @property
    def on_mesh(self) -> bool:
        return self.domain.TAG in MESH_DOMAINS

    @property
    def method(self) -> str:
        """``finite_volume`` (burgers), ``finite_difference`` (grid HJ) or ``vertex_star`` (surface HJ)."""
        if self.equation.kind == "burgers":
            return "finite_volume"
        return "vertex_star" if self.on_mesh else "finite_difference"

    def check(self):
        eq, dom, ini, sol = self.equation, self.domain, self.initial, self.solver
        if eq.kind == "burgers":
            if dom.TAG != "interval":
                yield "domain.kind", f'burgers cases are 1-D: expected "interval", found "{dom.TAG}"'
            for key in _GRID_HJ_ONLY + ("numerical_hamiltonian",):
                if getattr(sol, key) is not None:
                    yield f"solver.{key}", "applies to hamilton_jacobi equations only; remove it for burgers"
            if eq.hamiltonian != "quadratic":
                yield "equation.hamiltonian", "applies to hamilton_jacobi equations only; remove it for burgers"
        else:
            for key in _BURGERS_ONLY:
                if getattr(sol, key) is not None:
                    yield f"solver.{key}", "applies to burgers equations only; remove it for hamilton_jacobi"
            if self.on_mesh:
                if sol.derivative is not None:
                    yield "solver.derivative", f'applies to grid domains only, found a "{dom.TAG}" mesh'
                from solvers.surfaces import SURFACE_NUMERICAL_HAMILTONIANS

                if sol.numerical_hamiltonian not in (None, *SURFACE_NUMERICAL_HAMILTONIANS):
                    valid = ", ".join(f'"{n}"' for n in sorted(SURFACE_NUMERICAL_HAMILTONIANS))
                    yield ("solver.numerical_hamiltonian", f"expected one of {valid} on a surface, "
                           f'found "{sol.numerical_hamiltonian}"')
                for key in ("a", "D"):
                    if getattr(eq, key) != 1.0:
                        yield f"equation.{key}", f"surface solves have {key} = 1; found {getattr(eq, key):g}"
            else:
                from solvers.hamilton_jacobi import NUMERICAL_HAMILTONIANS

                if sol.numerical_hamiltonian not in (None, *NUMERICAL_HAMILTONIANS):
                    valid = ", ".join(f'"{n}"' for n in sorted(NUMERICAL_HAMILTONIANS))
                    yield ("solver.numerical_hamiltonian", f"expected one of {valid} on a grid, "
                           f'found "{sol.numerical_hamiltonian}"')
        yield from self._stability()
        if dom.TAG not in ini.DOMAINS:
            yield ("initial.function", f'"{ini.TAG}" is defined on ' + ", ".join(ini.DOMAINS)
                   + f' domains, found a "{dom.TAG}" domain')
        elif hasattr(ini, "center") and len(ini.center) != dom.ndim:
            yield "initial.center", f"expected {dom.ndim} entries (one per axis of the domain), found {len(ini.center)}"
        if dom.TAG == "interval" and dom.boundary == "periodic" and eq.kind == "hamilton_jacobi" \
                and isinstance(ini, Quadratic):
            yield "domain.boundary", "quadratic data are not periodic; use symmetric or outflow"

    def _stability(self):
        """The (spatial scheme, integrator) pair within its stability limit, unless forced."""
        from solvers.time_stepping import HIGH_ORDER_SCHEMES, STABILITY_LIMITS

        sol = self.solver
        if sol.force_unstable:
            return
        spatial, integrator, cfl = sol.scheme(self.equation.kind, self.on_mesh)
        which = "reconstruction" if self.equation.kind == "burgers" else "derivative"
        if integrator == "euler" and spatial in HIGH_ORDER_SCHEMES:
            yield ("solver.integrator", f'forward Euler with the {which} "{spatial}" loses its order'
                   + (" and is unstable at every Courant number" if STABILITY_LIMITS.get((spatial, integrator)) == 0
                      else "") + '; use "ssprk2" or "ssprk3", a first-order scheme, or set solver.force_unstable = true')
            return
        limit = STABILITY_LIMITS.get((spatial, integrator))
        if limit is not None and cfl > limit:
            yield ("solver.cfl", f'expected a Courant number <= {limit:g}, the stability limit of the {which} '
                   f'"{spatial}" with "{integrator}", found {cfl:g} (or set solver.force_unstable = true)')
