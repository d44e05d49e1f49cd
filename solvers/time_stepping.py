"""Explicit strong-stability-preserving Runge–Kutta methods and the time-step clock.

Every method is written in Shu–Osher form: with ``q0`` the state at the start of the step,
stage ``s`` computes

    q_s = alpha[s] * q0 + beta[s] * (q_{s-1} + dt * L(q_{s-1})),        q_{-1} = q0,

and the last stage is the new state.  A solver therefore needs a single fused kernel
``stage(q_prev, q0, out, alpha, beta, dt)`` that evaluates ``L`` and combines in one pass.
Forward Euler is one stage; SSP-RK2 (Heun) and SSP-RK3 (Shu–Osher) are TVD under the same CFL
number as forward Euler (their SSP coefficient is 1).

:class:`Clock` chooses the step: the stable step of every term (hyperbolic, parabolic, ...)
is combined as ``dt = cfl / sum(1 / dt_term)``, and the step is shortened to land exactly on
each requested output time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solvers.errors import SolverInputError, require_cfl, require_choice, require_times

#: Shu–Osher coefficients (alpha, beta) per stage.
INTEGRATORS: dict[str, np.ndarray] = {
    "euler": np.array([[0.0, 1.0]]),
    "ssprk2": np.array([[0.0, 1.0], [0.5, 0.5]]),
    "ssprk3": np.array([[0.0, 1.0], [0.75, 0.25], [1.0 / 3.0, 2.0 / 3.0]]),
}

#: The formal order of accuracy of each integrator.
ORDER = {"euler": 1, "ssprk2": 2, "ssprk3": 3}

#: The largest Courant number at which each (spatial scheme, integrator) pair is stable, as plain data.
#: Spatial schemes: the reconstructions of the conservation solver (``first_order``, ``muscl``, ``weno5``)
#: and the one-sided derivatives of the grid HJ solver (``first_order``, ``eno2``, ``weno5``).
#: First order (Godunov / monotone Hamiltonians) is TVD / monotone up to 1 with forward Euler and so with
#: every SSP method (SSP coefficient 1).  A limited second-order reconstruction (MUSCL with minmod, MC or
#: van Leer, slopes up to twice the one-sided difference; ENO2) is TVD for an Euler stage up to 1/2
#: (Harten's condition), hence 1/2 for every SSP method; with forward Euler alone it is only first order in
#: time and its limit is that bound.  WENO5 has eigenvalues on the imaginary axis, where forward Euler has no
#: stability interval at all (0: never stable) and SSP-RK2 only a small one; SSP-RK3 contains an interval of
#: the imaginary axis (|z| <= sqrt(3)), the usual Courant bound being 1/2 with WENO5 for shock-capturing runs.
STABILITY_LIMITS: dict[tuple[str, str], float] = {
    ("first_order", "euler"): 1.0, ("first_order", "ssprk2"): 1.0, ("first_order", "ssprk3"): 1.0,
    ("muscl", "euler"): 0.5, ("muscl", "ssprk2"): 0.5, ("muscl", "ssprk3"): 0.5,
    ("eno2", "euler"): 0.5, ("eno2", "ssprk2"): 0.5, ("eno2", "ssprk3"): 0.5,
    ("weno5", "euler"): 0.0, ("weno5", "ssprk2"): 0.3, ("weno5", "ssprk3"): 0.5,
}

#: spatial schemes above first order: forward Euler with one of them loses the order (and, for WENO5,
#: stability) the scheme was chosen for, so a case must ask for it explicitly
HIGH_ORDER_SCHEMES = ("muscl", "eno2", "weno5")


def tableau(name: str) -> np.ndarray:
    """The ``(stages, 2)`` array of Shu–Osher coefficients of integrator ``name``."""
    return INTEGRATORS[require_choice("integrator", name, INTEGRATORS)]


def step_limit_error(max_steps: int, t_end: float, t: float) -> SolverInputError:
    """The error of a solve that would need more than ``max_steps`` steps (raised by :class:`Clock` and by the
    compiled step loops that apply its rule)."""
    return SolverInputError(
        f"max_steps: the solve needs more than {max_steps} steps to reach t = {float(t_end)!r} "
        f"(now at t = {float(t)!r}); raise max_steps, coarsen the grid or solve to an earlier time"
    )


def combine_bounds(*bounds: float) -> float:
    """The stable step of a sum of terms whose own stable steps are ``bounds`` (harmonic sum).

    Each term contributes a rate ``1/dt_term``; ``inf`` (a term that imposes no limit) adds 0.
    Returns ``inf`` when no term limits the step.
    """
    rate = 0.0
    for b in bounds:
        if b <= 0 or np.isnan(b):
            raise SolverInputError(f"stable time step bound: expected a positive number, found {b!r}")
        if np.isfinite(b):
            rate += 1.0 / b
    return np.inf if rate == 0.0 else 1.0 / rate


def advective_bound(max_speed: float, dx) -> float:
    """Stable step of an explicit upwind transport term: ``1 / sum_k (|speed_k| / dx_k)``.

    ``max_speed`` may be a scalar (same bound on every axis) or one value per axis.
    """
    dx = np.atleast_1d(np.asarray(dx, dtype=np.float64))
    speed = np.broadcast_to(np.abs(np.asarray(max_speed, dtype=np.float64)), dx.shape)
    rate = float(np.sum(speed / dx))
    return np.inf if rate == 0.0 else 1.0 / rate


def diffusive_bound(max_diffusivity: float, dx) -> float:
    """Stable step of an explicit centred diffusion term: ``1 / (2 D sum_k 1/dx_k^2)``."""
    dx = np.atleast_1d(np.asarray(dx, dtype=np.float64))
    rate = 2.0 * float(max_diffusivity) * float(np.sum(1.0 / dx**2))
    return np.inf if rate == 0.0 else 1.0 / rate


@dataclass
class Clock:
    """Steps from ``t0`` through the output times ``times``, landing on each one exactly.

    ``next_step(dt_stable)`` returns the step to take (``cfl * dt_stable`` shortened to the next
    output time) and whether that step ends on an output time.  ``advance(dt)`` moves the
    clock.  A step that would leave a sliver smaller than ``1e-12`` of the interval before an
    output time is stretched to land on it, so no near-zero steps are taken.
    """

    t0: float
    times: np.ndarray
    cfl: float
    max_steps: int = 10_000_000

    def __post_init__(self):
        self.cfl = require_cfl(self.cfl)
        self.times = require_times(self.t0, self.times)
        self.t = float(self.t0)
        self.step = 0
        self.index = 0  # next output time to reach
        while self.index < len(self.times) and self.times[self.index] <= self.t:
            self.index += 1
        self._initial_outputs = self.index

    @property
    def initial_outputs(self) -> int:
        """How many output times coincide with ``t0`` (their snapshot is the initial state)."""
        return self._initial_outputs

    @property
    def done(self) -> bool:
        return self.index >= len(self.times)

    def next_step(self, dt_stable: float) -> tuple[float, bool]:
        if self.step >= self.max_steps:
            raise step_limit_error(self.max_steps, self.times[-1], self.t)
        target = self.times[self.index]
        dt = self.cfl * dt_stable
        if not dt > 0:
            raise SolverInputError(f"time step: expected a positive stable step, found {dt_stable!r}")
        remaining = target - self.t
        if dt >= remaining - 1e-12 * max(1.0, abs(target)):
            return remaining, True
        return dt, False

    def advance(self, dt: float, lands: bool) -> bool:
        """Move the clock by ``dt``; returns True when an output time was reached."""
        self.step += 1
        if lands:
            self.t = float(self.times[self.index])
            self.index += 1
            return True
        self.t += dt
        return False
