"""Running a ``pde`` case: settings -> grid or mesh and initial data -> solver -> shocks -> result file.

:func:`build_problem` turns a validated :class:`~shockflow.cases.pde.PDECase` into arrays (the
grid or mesh, the initial data, the output times), reading an array file if the case names one;
:func:`solve_problem` calls the solver of the case's method (finite volumes for Burgers, finite
differences for HJ on a grid, vertex stars for HJ on a surface), in segments between output times
so that a progress bar can follow it (the schemes are one-step methods and every segment ends
exactly on an output time, so this is the same computation as one call);
:func:`run_pde_case` adds the shock report (:mod:`shockflow.prediction.shock_report`) and writes the result
file (:mod:`shockflow.storage`) and, unless asked not to, the figure.

Bad input found here (a missing or mis-shaped array file, a mesh the generator rejects) raises
:class:`~shockflow.cases.errors.CaseError` naming the case file and the key; a solve that stops
being finite raises :class:`solvers.errors.BlowUpError` (step, time, cell).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shockflow.cases.errors import CaseError
from shockflow.storage.atomic import committed_together
from shockflow.cases.kinds import CaseKind, register_kind
from shockflow.cases.pde import ArrayFile, PDECase
from shockflow.cases.schema import closest, to_plain

__all__ = ["PDEProblem", "SolveOutput", "PDEOutcome", "build_problem", "solve_problem", "run_pde_case",
           "solver_settings"]

#: at most this many solver calls per run (progress granularity)
PROGRESS_SEGMENTS = 20
#: a case whose estimated step count exceeds solver.max_steps this many times is refused before the solve
STEP_MARGIN = 10.0


@dataclass(frozen=True, eq=False)
class PDEProblem:
    case: object
    settings: PDECase
    grid: object | None
    mesh: object | None
    initial: np.ndarray
    times: np.ndarray
    boundary: object

    @property
    def quantity(self) -> str:
        return "p" if self.settings.equation.kind == "burgers" else "u"

    @property
    def coordinates(self) -> dict[str, np.ndarray]:
        if self.mesh is not None:
            return {"vertices": np.asarray(self.mesh.vertices), "triangles": np.asarray(self.mesh.triangles)}
        if self.grid.ndim == 1:
            return {"x": self.grid.centers(0)}
        return {f"axis{k}": self.grid.centers(k) for k in range(self.grid.ndim)}


@dataclass(frozen=True, eq=False)
class SolveOutput:
    times: np.ndarray
    values: np.ndarray
    steps: int
    seconds: float



def _boundary(dom):
    if dom.boundary == "dirichlet":
        return ("dirichlet", dom.boundary_value)
    return dom.boundary


def _load_array(case, spec: ArrayFile, shape: tuple[int, ...], what: str) -> np.ndarray:
    path = case.resolve(spec.path)
    if not path.is_file():
        raise CaseError.at(case, "initial.path", f"no such array file '{path}'")
    import zipfile

    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise CaseError.at(case, "initial.path", f"'{path}' is not a NumPy .npy/.npz file ({exc})") from None
    if isinstance(loaded, np.lib.npyio.NpzFile):
        with loaded:
            names = list(loaded.files)
            if spec.key is None:
                if len(names) != 1:
                    raise CaseError.at(case, "initial.key", f"'{path}' holds {len(names)} arrays ({', '.join(names)}); "
                                                      "name one with initial.key")
                key = names[0]
            else:
                key = spec.key
                if key not in names:
                    hint = closest(key, names)
                    did = f' (did you mean "{hint}"?)' if hint else ""
                    raise CaseError.at(case, "initial.key", f'no array "{key}" in \'{path}\'{did}; it holds: {", ".join(names)}')
            values = loaded[key]
    else:
        values = loaded
    if values.dtype.kind not in "fiu":
        raise CaseError.at(case, "initial.path", f"'{path}': expected a numeric array, found dtype {values.dtype}")
    values = np.asarray(values, dtype=np.float64)
    if values.shape != shape:
        raise CaseError.at(case, "initial.path", f"'{path}': expected an array of shape {shape} ({what}), "
                                           f"found shape {values.shape}")
    bad = ~np.isfinite(values)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise CaseError.at(case, "initial.path", f"'{path}': expected finite values, found {float(values[index])} at index {index}")
    return values


def _read_mesh(case, name: str):
    """The triangle mesh in the file ``name`` (relative to the case file), read by meshio and
    checked by :func:`solvers.surfaces.user_mesh` (closed orientable 2-manifold)."""
    from solvers.surfaces import user_mesh

    path = case.resolve(name)
    if not path.is_file():
        raise CaseError.at(case, "domain.path", f"no such mesh file '{path}'")
    try:
        import meshio
    except ImportError:
        raise CaseError.at(case, "domain.path", "reading a mesh file needs meshio: pip install 'shockflow[mesh]'") from None
    import contextlib
    import io

    said = io.StringIO()
    try:  # meshio raises many types for an unreadable file, some readers call sys.exit, and some print
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            m = meshio.read(path)
    except (Exception, SystemExit) as exc:
        why = f"{type(exc).__name__}: {exc}" if not isinstance(exc, SystemExit) else said.getvalue().strip()
        raise CaseError.at(case, "domain.path", f"'{path}' is not a mesh meshio reads ({why})") from None
    tris = [np.asarray(c.data) for c in m.cells if c.type == "triangle"]
    if not tris:
        kinds = ", ".join(sorted({c.type for c in m.cells})) or "none"
        raise CaseError.at(case, "domain.path", f"'{path}': expected triangle cells (a surface mesh), found {kinds}")
    points = np.asarray(m.points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise CaseError.at(case, "domain.path", f"'{path}': expected points in 3-D, found an array of shape {points.shape}")
    if points.shape[1] == 2:
        raise CaseError.at(case, "domain.path", f"'{path}': expected a closed surface in 3-D, found 2-D points")
    from solvers.errors import SolverInputError

    try:
        return user_mesh(points, np.concatenate(tris).astype(np.int64))
    except SolverInputError as exc:
        raise CaseError.at(case, "domain.path", f"'{path}': {exc}") from None


def build_problem(case) -> PDEProblem:
    """Grid or mesh, initial data and output times of a ``pde`` case (reads array files)."""
    from solvers.errors import SolverInputError
    from solvers.grid import Grid

    s: PDECase = case.settings
    dom, ini = s.domain, s.initial
    grid = mesh = None
    try:
        if dom.TAG == "interval":
            grid = Grid.line(dom.cells, dom.lower, dom.upper, ghost=3)
        elif dom.TAG == "box":
            grid = Grid(dom.lower, dom.upper, dom.cells, ghost=3)
        elif dom.TAG == "icosphere":
            from solvers.surfaces import icosphere

            mesh = icosphere(dom.frequency, dom.radius)
        elif dom.TAG == "mesh":
            mesh = _read_mesh(case, dom.path)
        else:
            from solvers.surfaces import torus

            mesh = torus(dom.R, dom.r, dom.n_major, dom.n_minor)
    except SolverInputError as exc:
        raise CaseError.at(case, "domain", str(exc)) from None
    if isinstance(ini, ArrayFile):
        if mesh is not None:
            initial = _load_array(case, ini, (mesh.n_vertices,), "one value per mesh vertex")
        else:
            initial = _load_array(case, ini, grid.shape, "one value per cell")
    elif mesh is not None:
        x = np.asarray(mesh.vertices)
        initial = np.asarray(ini.evaluate(x[:, 0], x[:, 1], x[:, 2]), dtype=np.float64)
    elif s.equation.kind == "burgers":
        initial = grid.cell_averages(ini.evaluate)  # finite volumes start from cell averages
    else:
        initial = grid.sample(ini.evaluate)  # finite differences start from point values
    boundary = None if mesh is not None else _boundary(dom)
    _check_initial_range(case, initial, grid)
    _check_resolved(case, initial, grid)
    _check_step_count(case, initial, grid)
    return PDEProblem(case, s, grid, mesh, initial, s.output.times, boundary)


def _check_initial_range(case, initial: np.ndarray, grid) -> None:
    """Initial data for which not even the first time step exists are refused before the solve, naming
    ``initial``: the Courant rate speed / dx (speed a|p| for burgers, a|∇u| for HJ, a difference quotient
    over a cell) must be a finite double with room for the stages of a step, so that dt = cfl / rate > 0.
    Data that only overflow later (H = a|p|²/2 in the first step) are a run failure with step and cell."""
    eq = case.settings.equation
    if not np.all(np.isfinite(initial)):
        raise CaseError.at(case, "initial", "expected finite initial values, found "
                           + ("NaN" if np.isnan(initial).any() else "an infinite value"))
    if grid is None or initial.size == 0:
        return
    dx = np.float64(np.min(grid.dx))
    with np.errstate(all="ignore"):
        square = dx * dx
    if not (np.isfinite(square) and square > 0):
        # the viscous rate 2νD/dx² and the schemes' differences need dx² as a double
        raise CaseError.at(case, "domain", f"cells {float(dx):.3g} wide: their square is not a usable double "
                                           f"({float(square):.3g}); choose domain.lower, domain.upper and the cells so "
                                           f"that a cell's width lies between about 1e-150 and 1e150")
    with np.errstate(all="ignore"):
        big = float(np.max(np.abs(initial)))
        speed = eq.a * (big if eq.kind == "burgers" else 2.0 * big / dx)
        rate = float(speed / dx + 2.0 * eq.nu * eq.D / square)
    if not 16.0 * rate < np.finfo(np.float64).max:
        what = "a max|p0|" if eq.kind == "burgers" else "a max|u0 differences| / dx"
        raise CaseError.at(case, "initial", f"the initial data are too large to take a single time step: the "
                                            f"Courant rate {what} / dx overflows a double (max |initial| = {big:.3g})")


def _check_resolved(case, initial: np.ndarray, grid) -> None:
    """Smooth initial data that the grid does not resolve are refused before the solve, naming ``domain.cells``.

    The criterion: the data on the grid show a jump (a shock at t = 0, by the case's own detector,
    ``[shocks]``: a transition narrower than ``max_width_cells`` cells) that the same data sampled 64 times
    finer do not have.  It is the condition under which the result is wrong rather than coarse: the report
    would give t* = 0 and a shock in every such transition (burgers-sine at frequency 1000 on 800 cells: about
    200 shocks at t = 0, the exact t* = 1.6e-4), and it holds for any analytic initial function, not only for
    waves (a cells-per-wavelength rule would), while a jump of the data itself (burgers-riemann) is one at every
    resolution.  Applied to 1-D Burgers with an analytic initial function: the detector reads p there directly;
    an array file has no finer samples."""
    s = case.settings
    if grid is None or grid.ndim != 1 or s.equation.kind != "burgers" or isinstance(s.initial, ArrayFile) \
            or not s.shocks.enabled:
        return
    from shockflow.prediction.shock_report import detection_settings
    from solvers.shocks import find_shocks

    settings = detection_settings(s.shocks, nu=s.equation.nu * s.equation.D, periodic=s.domain.boundary == "periodic")
    found = find_shocks(initial, grid.centers(0), settings=settings)
    if not found:
        return
    cells = grid.shape[0]
    fine = min(64 * cells, 1 << 18)
    lo, hi = float(s.domain.lower), float(s.domain.upper)
    x = lo + (np.arange(fine) + 0.5) * (hi - lo) / fine
    with np.errstate(all="ignore"):
        u = np.asarray(s.initial.evaluate(x), dtype=np.float64)
    if fine <= cells or u.shape != x.shape or not np.all(np.isfinite(u)) or find_shocks(u, x, settings=settings):
        return
    raise CaseError.at(case, "domain.cells", f"{cells} cells do not resolve the initial data: on the grid they jump "
                                             f"({len(found)} shock{'s' if len(found) != 1 else ''} at t = 0) where, "
                                             f"sampled {fine // cells} times finer, they are smooth, so the solve "
                                             f"would report t* = 0; refine domain.cells or smooth the initial data (a "
                                             f"transition needs more "
                                             f"than shocks.max_width_cells = {s.shocks.max_width_cells:g} cells)")


def _check_step_count(case, initial: np.ndarray, grid) -> None:
    """A case whose ``output.t_end`` needs more time steps than ``solver.max_steps`` is refused before the solve
    (a tester's t_end = 1e9 ran 19 s into max_steps).  The count is t_end over the time step the initial data
    allow (cfl over the Courant rate: the wave speed a|p| for burgers, |∂H/∂p| from the initial differences for
    HJ, over the cell, plus the viscous rate 2νD/dx²).  For burgers that is an upper bound (max|p| does not grow,
    and falls as shocks dissipate: burgers-sine's five-fold, to its mean), so only a count more than
    :data:`STEP_MARGIN` times max_steps is refused; a case between is left to the solver, which stops at max_steps
    with the same key.  Surfaces are left to the solver's own count."""
    s = case.settings
    eq = s.equation
    if grid is None or initial.size < 2:
        return
    spatial, integrator, cfl = s.solver.scheme(eq.kind, False)
    dx = np.asarray(grid.dx, dtype=np.float64)
    with np.errstate(all="ignore"):
        if eq.kind == "burgers":
            hyperbolic = float(eq.a * np.max(np.abs(initial)) / dx[0])
        else:
            hyperbolic = 0.0
            for k in range(grid.ndim):
                slope = float(np.max(np.abs(np.diff(initial, axis=k)))) / dx[k] if initial.shape[k] > 1 else 0.0
                hyperbolic += eq.a * (slope if eq.hamiltonian == "quadratic" else 1.0) / dx[k]
        rate = hyperbolic + 2.0 * eq.nu * eq.D * float(np.sum(1.0 / dx ** 2))
        steps = float(s.output.t_end) * rate / cfl
    if not math.isfinite(steps) or steps <= STEP_MARGIN * s.solver.max_steps:
        return
    speed = f"wave speed {hyperbolic * float(np.min(dx)):.3g} allows" if eq.kind == "burgers" else "slopes allow"
    raise CaseError.at(case, "output.t_end", f"reaching t_end = {s.output.t_end:g} takes about {steps:.3g} time steps "
                                             f"of {cfl / rate:.3g} (the step the initial data's {speed} on this "
                                             f"grid), more than solver.max_steps = {s.solver.max_steps}; lower "
                                             f"output.t_end, coarsen the grid or raise solver.max_steps")


def solver_settings(s: PDECase) -> dict:
    """The scheme actually used: the case's choices with the method's defaults filled in."""
    sol, eq = s.solver, s.equation
    if s.method == "finite_volume":
        reconstruction = sol.reconstruction or "muscl"
        return {"method": s.method, "numerical_flux": sol.numerical_flux or "godunov", "reconstruction": reconstruction,
                "limiter": sol.limiter or "mc", "integrator": sol.integrator or "ssprk2",
                "cfl": sol.cfl if sol.cfl is not None else (0.9 if reconstruction == "first_order" else 0.45),
                "viscous": sol.viscous or "explicit", "max_steps": sol.max_steps}
    if s.method == "finite_difference":
        return {"method": s.method, "hamiltonian": eq.hamiltonian,
                "numerical_hamiltonian": sol.numerical_hamiltonian or "godunov", "derivative": sol.derivative or "eno2",
                "integrator": sol.integrator or "ssprk3", "cfl": sol.cfl if sol.cfl is not None else 0.5,
                "max_steps": sol.max_steps}
    return {"method": s.method, "hamiltonian": eq.hamiltonian,
            "numerical_hamiltonian": sol.numerical_hamiltonian or "smooth_lax_friedrichs",
            "integrator": sol.integrator or "ssprk3", "cfl": sol.cfl if sol.cfl is not None else 0.5,
            "max_steps": sol.max_steps}


def _segments(n_times: int, count: int) -> list[tuple[int, int]]:
    """Index ranges (start, stop] of output times solved per call."""
    edges = np.unique(np.linspace(0, n_times - 1, min(count, n_times - 1) + 1).round().astype(int))
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]


def solve_problem(problem: PDEProblem, progress=None) -> SolveOutput:
    """Solve ``problem``; ``progress(done, total)`` is called after every segment."""
    from solvers.errors import SolverInputError

    s = problem.settings
    eq = s.equation
    used = solver_settings(s)
    times = problem.times
    values = np.empty((times.size,) + problem.initial.shape)
    values[0] = problem.initial
    state = problem.initial
    steps = 0
    start = time.perf_counter()
    segments = _segments(times.size, PROGRESS_SEGMENTS if problem.mesh is None else 5)
    for a, b in segments:
        seg_times = times[a + 1:b + 1]
        budget = used["max_steps"] - steps
        try:
            if used["method"] == "finite_volume":
                from solvers.conservation import solve_conservation

                sol = solve_conservation(
                    problem.grid, state, seg_times, t0=float(times[a]), flux="burgers",
                    numerical_flux=used["numerical_flux"], reconstruction=used["reconstruction"],
                    limiter=used["limiter"], integrator=used["integrator"], cfl=used["cfl"], nu=eq.nu, a=eq.a,
                    D=eq.D, boundary=problem.boundary, viscous=used["viscous"], max_steps=max(budget, 1),
                    t_final=float(times[-1]))
                out = sol.snapshots
            elif used["method"] == "finite_difference":
                from solvers.hamilton_jacobi import solve_hj

                sol = solve_hj(
                    problem.grid, state, seg_times, t0=float(times[a]), hamiltonian=eq.hamiltonian,
                    numerical_hamiltonian=used["numerical_hamiltonian"], derivative=used["derivative"],
                    integrator=used["integrator"], cfl=used["cfl"], nu=eq.nu, a=eq.a, D=eq.D,
                    boundary=problem.boundary, max_steps=max(budget, 1))
                out = sol.u
            else:
                from solvers.surfaces import solve_surface_hj

                sol = solve_surface_hj(
                    problem.mesh, state, seg_times, t0=float(times[a]), hamiltonian=eq.hamiltonian,
                    numerical_hamiltonian=used["numerical_hamiltonian"], nu=eq.nu, integrator=used["integrator"],
                    cfl=used["cfl"], max_steps=max(budget, 1))
                out = sol.values
        except SolverInputError as exc:
            raise CaseError.at(problem.case, "solver", str(exc)) from None
        values[a + 1:b + 1] = out
        state = np.array(out[-1])
        steps += int(sol.steps)
        if progress is not None:
            progress(b, times.size - 1)
    return SolveOutput(times, values, steps, time.perf_counter() - start)


def shock_report(problem: PDEProblem, solution: SolveOutput):
    """The shocks of ``solution`` (see :mod:`shockflow.prediction.shock_report`)."""
    from shockflow.prediction import shock_report as sr

    s = problem.settings
    eq = s.equation
    if problem.mesh is not None:
        probe = sr.SurfaceHessianProbe(problem.mesh)
        return sr.report_hessian(solution.times, [probe(u) for u in solution.values], s.shocks)
    grid = problem.grid
    if grid.ndim > 1:
        coords = tuple(grid.centers(k) for k in range(grid.ndim))
        return sr.report_hessian(solution.times, [sr.grid_hessian_probe(u, coords) for u in solution.values], s.shocks)
    if eq.kind == "burgers":
        p = solution.values
    else:
        from solvers.hamilton_jacobi import centred_gradient

        p = np.array([centred_gradient(grid, u, problem.boundary)[0] for u in solution.values])
    periodic = s.domain.boundary == "periodic"
    a = eq.a if eq.hamiltonian == "quadratic" else 1.0
    return sr.report_line(solution.times, p, grid.centers(0), a=a, nu=eq.nu * eq.D / a, periodic=periodic,
                          detection=s.shocks, domain=(s.domain.lower, s.domain.upper))


@dataclass(frozen=True, eq=False)
class PDEOutcome:
    """What ``shockflow solve`` reports."""

    case: str
    result_file: Path
    report: object
    steps: int
    seconds: float
    figures: tuple[Path, ...] = field(default=())
    paraview: tuple[Path, ...] = field(default=())

    def as_dict(self) -> dict:
        r = self.report

        def number(v):
            return None if v is None or not math.isfinite(v) else float(v)

        return {"case": self.case, "result_file": str(self.result_file),
                "shocks": [row.as_dict() for row in r.shocks],
                "formation_time": number(r.formation_time), "steps": self.steps, "seconds": self.seconds,
                "figures": [str(p) for p in self.figures], "paraview": [str(p) for p in self.paraview]}

    def key_figures(self) -> dict:
        """Scalars for sweeps: formation times, the shock count and the first shock's time, place
        (per coordinate) and strength (NaN when there is none), steps and seconds."""
        r = self.report
        first = r.shocks[0] if r.shocks else None
        out = {"formation_time": r.formation_time, "formation_time_from_data": r.formation_time_from_data,
               "shock_count": len(r.shocks), "steps": self.steps, "seconds": self.seconds,
               "shock_time": first.time if first else math.nan,
               "shock_strength": first.strength if first else math.nan}
        dims = len(first.location) if first else 1
        for k in range(dims):
            out[f"shock_location_{k}" if dims > 1 else "shock_location"] = first.location[k] if first else math.nan
        return out

    def table(self) -> str:
        r = self.report
        lines = [f"case {self.case}: {self.steps} steps in {self.seconds:.2f} s -> {self.result_file}"]
        how = ("extrapolated from steepening" if getattr(r, "fit_points", 2) >= 2 else
               "no resolved snapshot before the detection to fit: from the initial data")
        lines.append(f"first shock ({how}): t* = {r.formation_time:.6g}; "
                     f"from the initial data alone: {r.formation_time_from_data:.6g}")
        if r.shocks:
            lines.append(f"{'time':>12}  {'location':>24}  {'strength':>10}  {'first seen':>10}")
            for row in r.shocks:
                loc = ", ".join(f"{v:.5g}" for v in row.location)
                lines.append(f"{row.time:12.6g}  {loc:>24}  {row.strength:10.4g}  {row.first_seen:10.4g}")
        else:
            lines.append("no shocks detected")
        for f in self.figures:
            lines.append(f"figure: {f}")
        for f in self.paraview:
            lines.append(f"ParaView: {f}")
        return "\n".join(lines)


def build_result(problem: PDEProblem, solution: SolveOutput, report, *, seed, wall_time: float):
    from shockflow.logs.provenance import package_versions
    from shockflow.storage import Result

    case, s = problem.case, problem.settings
    rows = report.shocks
    dim = len(rows[0].location) if rows else (3 if problem.mesh is not None else problem.grid.ndim)
    shocks = {
        "time": np.array([r.time for r in rows]), "location": np.array([r.location for r in rows]).reshape(-1, dim),
        "strength": np.array([r.strength for r in rows]), "first_seen": np.array([r.first_seen for r in rows]),
        "final_location": np.array([r.final_location for r in rows]).reshape(-1, dim),
        "final_strength": np.array([r.final_strength for r in rows]), "speed": np.array([r.speed for r in rows]),
    }
    tracks = {"track": np.array([k for k, (t, _) in enumerate(report.tracks) for _ in t], dtype=np.int64),
              "time": np.concatenate([t for t, _ in report.tracks]) if report.tracks else np.zeros(0),
              "position": np.concatenate([x for _, x in report.tracks]) if report.tracks else np.zeros(0)}
    dom = s.domain
    problem_attrs = {"equation": s.equation.kind, "quantity": problem.quantity, "method": s.method,
                     "domain": dom.TAG, "nu": s.equation.nu, "a": s.equation.a, "D": s.equation.D,
                     "hamiltonian": s.equation.hamiltonian, "initial": s.initial.TAG,
                     "solver": solver_settings(s)}
    if problem.mesh is None:
        problem_attrs["boundary"] = dom.boundary
        problem_attrs["lower"] = list(np.atleast_1d(dom.lower).astype(float))
        problem_attrs["upper"] = list(np.atleast_1d(dom.upper).astype(float))
    info = {"method": report.method, "formation_time": report.formation_time,
            "formation_time_from_data": report.formation_time_from_data,
            "first_detection": report.first_detection, "fit_points": report.fit_points}
    return Result(
        case_name=case.name, case_kind=case.kind, case_text=case.text, settings=to_plain(s),
        times=solution.times, values=solution.values, problem=problem_attrs, coordinates=problem.coordinates,
        initial=problem.initial, steps=solution.steps, seconds=solution.seconds, shocks=shocks, shock_info=info,
        steepness=(report.times, report.steepness), tracks=tracks,
        case_path=str(case.path) if case.path is not None else "", overrides=case.overrides, seed=seed,
        versions=package_versions(), wall_time=wall_time,
    )


@committed_together
def run_pde_case(case, options) -> PDEOutcome:
    """Solve ``case``, report its shocks, write ``<out>/<name>.h5`` (and ``<name>.png`` unless
    ``options.figures`` is False); returns a :class:`PDEOutcome`."""
    from shockflow.progress import progress, status
    from shockflow.storage import write_result
    from shockflow.storage.outdir import refuse_other_kind
    from shockflow.storage.results import FORMAT as RESULT_FORMAT

    show = options.progress and not options.quiet
    start = time.perf_counter()
    out = Path(options.out)
    refuse_other_kind(out / f"{case.name}.h5", RESULT_FORMAT, "solve", case)   # another case's result stays
    out.mkdir(parents=True, exist_ok=True)
    with status(f"build {case.name}", enabled=show):
        problem = build_problem(case)
    n = problem.times.size - 1
    with progress(n, f"solve {case.name}", enabled=show, unit="snapshot") as bar:
        solution = solve_problem(problem, progress=lambda done, total: bar.update(done - bar.n))
    with status("shocks", enabled=show):
        report = shock_report(problem, solution) if problem.settings.shocks.enabled else _no_shocks(solution)
    seed = options.seed if options.seed is not None else case.seed
    result = build_result(problem, solution, report, seed=seed, wall_time=time.perf_counter() - start)
    with status(f"write {out / (case.name + '.h5')}", enabled=show):
        path = write_result(result, out / f"{case.name}.h5")
    extra = ()
    if problem.mesh is not None:
        extra = _write_paraview(problem, solution, out / f"{case.name}-surface.xdmf", show)
    figures = ()
    from shockflow.figures import can_draw

    if options.figures and can_draw():
        from shockflow.figures import draw_result

        with status("figures", enabled=show):
            figures = draw_result(result, out, format=options.figure_format, dpi=options.dpi)
    return PDEOutcome(case.name, path, report, solution.steps, solution.seconds, figures, extra)


def _write_paraview(problem: PDEProblem, solution: SolveOutput, path: Path, show: bool) -> tuple[Path, ...]:
    """The surface solution as an XDMF time series beside the result file (ParaView:
    ``<name>-surface.xdmf`` and ``<name>-surface.h5``)."""
    from shockflow.progress import status
    from shockflow.storage.surfaces import write_surface_xdmf  # not in shockflow.storage: it imports solvers.surfaces (1 s)

    with status(f"write {path}", enabled=show):
        return write_surface_xdmf(path, problem.mesh.vertices, problem.mesh.triangles, solution.times,
                                  solution.values, name=problem.quantity)


def _no_shocks(solution: SolveOutput):
    from shockflow.prediction import ShockReport

    return ShockReport("disabled", (), math.nan, math.nan, math.nan, solution.times, np.full(solution.times.size, np.nan), 0)


def _verify(case) -> None:
    build_problem(case)


PDE_KIND = register_kind(CaseKind(
    name="pde", settings=PDECase, run=run_pde_case, command="solve", verify=_verify,
    description="a PDE solved to its shocks: Burgers or viscous Hamilton–Jacobi on an interval, box or surface",
))
