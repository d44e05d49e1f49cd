"""The built-in default case: Burgers' equation from sine data, through the first shock.

    u_t + (u^2/2)_x = 0,   u(x, 0) = A sin(2 pi x) + c   on the periodic cell [0, 1).

Everything about it is known exactly (docs/theory.md §5), so the demo reports each measured number
beside its exact value: the first shock forms at t* = 1/(2 pi A) at the decreasing zero crossing
x = 1/2 (moved to 1/2 + c t* by the mean flow), and afterwards sits at x = 1/2 + c t with the
Rankine–Hugoniot speed (u_L + u_R)/2 = c, by the odd symmetry of the data about that point.
The solve is second order (MUSCL with the monotonized-central limiter, SSP-RK2, exact Godunov
flux); the shock is found by the grid-convergent indicator of :mod:`solvers.shocks`.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np

from solvers.conservation import solve_conservation
from solvers.grid import Grid
from solvers.shocks import track_shocks


@dataclass(frozen=True)
class DemoResult:
    cells: int
    amplitude: float
    offset: float
    t_end: float
    steps: int
    seconds: float
    formation_time_exact: float
    formation_time_measured: float
    formation_time_relative_error: float
    shock_position_exact: float
    shock_position_measured: float
    shock_position_error_cells: float
    shock_speed_rankine_hugoniot: float
    shock_speed_measured: float
    mass_drift_relative: float

    def as_dict(self) -> dict:
        return asdict(self)

    def table(self) -> str:
        rows = [
            ("quantity", "exact", "measured", "difference"),
            ("first shock time t*", f"{self.formation_time_exact:.5f}", f"{self.formation_time_measured:.5f}",
             f"{100 * self.formation_time_relative_error:+.2f} %"),
            (f"shock position at t = {self.t_end:g}", f"{self.shock_position_exact:.5f}",
             f"{self.shock_position_measured:.5f}", f"{self.shock_position_error_cells:+.2f} cells"),
            ("shock speed (Rankine-Hugoniot)", f"{self.offset:.5f}", f"{self.shock_speed_measured:.5f}",
             f"{self.shock_speed_measured - self.offset:+.1e}"),
            ("mass (integral of u)", "conserved", f"drift {self.mass_drift_relative:.1e}", ""),
        ]
        widths = [max(len(r[k]) for r in rows) for k in range(4)]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        head = (f"Burgers u_t + (u^2/2)_x = 0, u0 = {self.amplitude:g} sin(2 pi x) + {self.offset:g} on [0, 1), "
                f"{self.cells} cells, MUSCL-MC + SSP-RK2 + Godunov: {self.steps} steps in {self.seconds:.2f} s")
        return head + "\n" + "\n".join(lines)


class DemoInputError(ValueError):
    """An argument of the demo is unusable; the message names the option."""


def _check_demo(cells, amplitude, offset, t_end, snapshots) -> None:
    from shockflow.cases.cost import available_memory

    for option, value in (("--amplitude", amplitude), ("--offset", offset), ("--t-end", t_end)):
        if not math.isfinite(value):
            raise DemoInputError(f"{option}: expected a finite number, found {value}")
    if cells < 4:
        raise DemoInputError(f"--cells: expected at least 4 cells (the smallest grid with a MUSCL stencil), found {cells}")
    if not amplitude > 0 or not t_end > 0:
        raise DemoInputError("--amplitude and --t-end: expected positive numbers")
    t_star = 1.0 / (2.0 * math.pi * amplitude)
    if not t_end > t_star:
        raise DemoInputError(f"--t-end: the demo measures the first shock, which forms at t* = 1/(2 pi A) = {t_star:.6g}; "
                             f"expected --t-end > {t_star:.6g}, found {t_end:g}")
    need = 8.0 * cells * (snapshots + 40)
    if need > available_memory():
        raise DemoInputError(f"--cells: {cells} cells need about {need / 2 ** 30:.3g} GiB, more than is available")
    steps = t_end * cells * (amplitude + abs(offset)) / 0.45
    if steps > 1e8:
        # named by the option furthest above its default (--amplitude 1e300 had blamed --cells)
        ratios = {"--t-end": t_end / 0.4, "--cells": cells / 2000,
                  "--amplitude" if amplitude >= abs(offset) else "--offset": (amplitude + abs(offset)) / 1.25}
        option = max(ratios, key=ratios.get)
        raise DemoInputError(f"{option}: about {steps:.3g} time steps would be needed (t_end · cells · (A + |c|) / 0.45 "
                             f"with --t-end {t_end:g}, --cells {cells}, --amplitude {amplitude:g}, --offset "
                             f"{offset:g}); expected at most 1e8")


def run_demo(cells: int = 2000, amplitude: float = 1.0, offset: float = 0.25, t_end: float = 0.4,
             snapshots: int = 81) -> DemoResult:
    """Solve the default case and compare every measured number with its exact value
    (:class:`DemoInputError` naming the option for arguments the demo cannot run with)."""
    _check_demo(cells, amplitude, offset, t_end, snapshots)
    grid = Grid.line(cells, 0.0, 1.0)
    q0 = grid.cell_averages(lambda x: amplitude * np.sin(2 * np.pi * x) + offset)
    times = np.linspace(0.0, t_end, snapshots)
    start = time.perf_counter()
    solution = solve_conservation(grid, q0, times, reconstruction="muscl", limiter="mc", integrator="ssprk2")
    seconds = time.perf_counter() - start
    tracking = track_shocks(solution.times, solution.snapshots, grid.centers(0), periodic=True)
    t_star = 1.0 / (2.0 * math.pi * amplitude)
    if not tracking.tracks:
        raise RuntimeError("demo: no shock was detected; the solver or the detector is broken")
    track = max(tracking.tracks, key=lambda tr: tr.times.size)
    exact_position = 0.5 + offset * t_end
    measured_position = float(track.positions[-1])
    # positions are unwrapped across the periodic seam: compare modulo the period
    error = (measured_position - exact_position + 0.5) % 1.0 - 0.5
    mass0 = grid.integrate(q0)
    mass1 = grid.integrate(solution.final)
    return DemoResult(
        cells=cells, amplitude=amplitude, offset=offset, t_end=t_end, steps=solution.steps, seconds=seconds,
        formation_time_exact=t_star, formation_time_measured=tracking.formation_time,
        formation_time_relative_error=tracking.formation_time / t_star - 1.0,
        shock_position_exact=exact_position, shock_position_measured=exact_position + error,
        shock_position_error_cells=error / grid.dx[0],
        shock_speed_rankine_hugoniot=track.rh_speed, shock_speed_measured=track.measured_speed,
        mass_drift_relative=abs(mass1 - mass0) / max(abs(mass0), 1e-300),
    )
