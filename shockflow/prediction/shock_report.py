"""The shocks of a solved PDE case as a table: when each formed, where, and how strong.

Shocks are discontinuities of the gradient field ``p`` (docs/theory.md §1): of the solution itself for
Burgers, of ``p = ∇u`` (kinks of ``u``) for Hamilton–Jacobi.

**1-D (interval).**  :func:`solvers.shocks.track_shocks` finds the shocks of ``p`` in every
snapshot and links them into tracks.  A row of the table is a track:

* ``time`` — when the shock formed.  For the tracks that appear first, after the initial time,
  from smooth data, this is the formation time extrapolated from the steepening of ``p`` on the
  resolved pre-shock snapshots (``1/max|p_x|`` falls linearly to zero at t*; docs/theory.md §1), which
  does not depend on the snapshot spacing (and may precede or follow the first detection: an
  under-resolved steep front fires the indicator early); otherwise (a shock in the initial data, or a later
  shock) the first snapshot time it was seen;
* ``location`` — its position at ``time`` (for an extrapolated time, the first-seen position
  moved back with the track's Rankine–Hugoniot speed);
* ``strength`` — the largest jump ``|p_L − p_R|`` along the track; ``first_seen``, the final
  position and jump, and the measured speed are kept too.

**Boxes and surfaces.**  Before a shock, the smallest eigenvalue λ(t) of the Hessian of ``u``
along the steepest characteristic obeys ``1/λ(t) = 1/λ0 + t`` (inviscid), so ``−1/λ_min``
falls linearly to zero at the formation time t* = −1/inf λ_min(∇²u0) (docs/theory.md §1).  The
Hessian is estimated by differencing the gradient (grids: centred differences; surfaces: the
P1 derivative of the vertex star gradients, smoothed by two rounds of triangle -> vertex ->
triangle area-weighted averaging — without them the estimate is off by O(1) at the irregular
vertices of an icosphere: λ_min of sin²θ came out −2.06 instead of −2 at every resolution — and
projected on each triangle's tangent plane), the
line is fitted through the resolved snapshots (the steepest transition wider than
``resolved_cells`` cells) and extrapolated to zero.  The table has one row: ``time`` = that
t*, ``location`` = where λ_min is attained (at the first snapshot where the transition is
narrower than ``max_width_cells`` cells, or the last fitted one), ``strength`` = the largest
jump of the gradient across one cell (surfaces: across an edge) at the final time.  This is a
first-shock report, not a tracker: later shocks on a surface are not listed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["ShockRecord", "ShockReport", "detection_settings", "report_line", "report_hessian", "grid_hessian_probe",
           "SurfaceHessianProbe"]


@dataclass(frozen=True)
class ShockRecord:
    time: float
    location: tuple[float, ...]
    strength: float
    first_seen: float
    final_location: tuple[float, ...]
    final_strength: float
    speed: float

    def as_dict(self) -> dict:
        """``time``, ``location``, ``strength`` where the shock formed; ``first_seen``; ``speed`` (its
        mean speed over the track, NaN where untracked); ``final_location`` and ``final_strength`` at
        the last snapshot.  Locations are numbers in 1-D, lists otherwise."""
        def place(loc):
            return loc[0] if len(loc) == 1 else list(loc)

        return {"time": self.time, "location": place(self.location), "strength": self.strength,
                "first_seen": self.first_seen, "speed": self.speed, "final_location": place(self.final_location),
                "final_strength": self.final_strength}


@dataclass(frozen=True)
class ShockReport:
    """``shocks`` sorted by time; ``formation_time`` the extrapolated first-shock time (inf: none
    forms; NaN: could not be estimated); ``formation_time_from_data`` = t0 − 1/inf λ(t0) from the
    first snapshot alone; ``steepness[n]`` the steepness series (max p_x or −λ_min) the fit used;
    ``tracks`` (1-D) lists ``(times, positions)`` per track for figures."""

    method: str
    shocks: tuple[ShockRecord, ...]
    formation_time: float
    formation_time_from_data: float
    first_detection: float
    times: np.ndarray
    steepness: np.ndarray
    fit_points: int
    tracks: tuple[tuple[np.ndarray, np.ndarray], ...] = ()


class _ScaledBurgers:
    """f(p) = a p²/2 for the Rankine–Hugoniot speed of p_t + (a p²/2)_x = ..."""

    def __init__(self, a: float):
        self.a = float(a)

    def f(self, q):
        return 0.5 * self.a * np.asarray(q) ** 2

    def df(self, q):
        return self.a * np.asarray(q)


def detection_settings(detection=None, *, nu: float = 0.0, periodic: bool = False):
    """The :class:`solvers.shocks.ShockSettings` of a case's ``[shocks]`` table (``detection``: a
    :class:`~shockflow.cases.pde.ShockDetection`, None for the defaults) with the viscosity ``nu`` of the
    viscous-width criterion and the cell's periodicity."""
    from solvers.shocks import ShockSettings

    d = detection
    return ShockSettings(
        nu=nu, periodic=periodic,
        **({} if d is None else dict(rel_jump=d.rel_jump, max_width_cells=d.max_width_cells,
                                     viscous_width_factor=d.viscous_width_factor, position=d.position,
                                     resolved_cells=d.resolved_cells, fit_steepening=d.fit_steepening)),
    )


def report_line(times, fields, x, *, a: float = 1.0, nu: float = 0.0, periodic: bool = False,
                detection=None, domain: tuple[float, float] | None = None) -> ShockReport:
    """Shocks of 1-D fields ``fields[n]`` (p) at ``times[n]`` on uniformly spaced ``x``.

    ``a``: flux coefficient (p_t + (a p²/2)_x = ν p_xx); ``nu`` the effective viscosity ν D / a of the
    viscous-width criterion; ``detection``: a :class:`~shockflow.cases.pde.ShockDetection`.
    """
    from solvers.shocks import track_shocks

    settings = detection_settings(detection, nu=nu, periodic=periodic)
    flux = "burgers" if a == 1.0 else _ScaledBurgers(a)
    times = np.asarray(times, dtype=np.float64)
    tracking = track_shocks(times, fields, x, flux=flux, settings=settings)
    lo, hi = domain if domain is not None else (float(x[0]), float(x[-1]))
    period = hi - lo

    def wrap(p: float) -> float:
        return lo + (p - lo) % period if periodic else p

    rows = []
    born_smooth = math.isfinite(tracking.first_detection) and tracking.first_detection > times[0]
    for tr in tracking.tracks:
        first = float(tr.times[0])
        jumps = np.abs(tr.right - tr.left)
        t_form, x_form = first, float(tr.positions[0])
        if born_smooth and first == tracking.first_detection and math.isfinite(tracking.formation_time):
            t_form = float(tracking.formation_time)
            x_form = float(tr.positions[0] - tr.rh_speeds[0] * (first - t_form))
        rows.append(ShockRecord(time=t_form, location=(wrap(x_form),), strength=float(jumps.max()), first_seen=first,
                                final_location=(wrap(float(tr.positions[-1])),), final_strength=float(jumps[-1]),
                                speed=float(tr.measured_speed)))
    rows.sort(key=lambda r: (r.time, r.location))
    tracks = tuple((tr.times.copy(), np.array([wrap(p) for p in tr.positions])) for tr in tracking.tracks)
    return ShockReport("tracks", tuple(rows), float(tracking.formation_time), float(tracking.formation_time_from_data),
                       float(tracking.first_detection), times, np.asarray(tracking.steepness), int(tracking.fit_points),
                       tracks)


# -- Hessian steepening (boxes, surfaces) ----------------------------------------------------------
@dataclass(frozen=True)
class HessianProbe:
    """What :func:`report_hessian` needs from one snapshot."""

    lam_min: float          # smallest Hessian eigenvalue (<= 0 where characteristics converge)
    location: tuple[float, ...]
    p_range: float          # range of the gradient (the scale of a jump)
    jump: float             # largest gradient jump across one cell / edge
    h: float                # cell / edge size


def grid_hessian_probe(u: np.ndarray, coords: tuple[np.ndarray, ...]) -> HessianProbe:
    """Hessian of the cell-centre field ``u`` on a 2-D/3-D box by second-order centred differences."""
    dx = [float(c[1] - c[0]) for c in coords]
    grads = np.gradient(u, *dx, edge_order=2)
    nd = u.ndim
    H = np.empty(u.shape + (nd, nd))
    for i in range(nd):
        gi = np.gradient(grads[i], *dx, edge_order=2)
        for j in range(nd):
            H[..., i, j] = gi[j]
    H = 0.5 * (H + np.swapaxes(H, -1, -2))
    lam = np.linalg.eigvalsh(H)[..., 0]
    index = np.unravel_index(int(np.argmin(lam)), lam.shape)
    location = tuple(float(c[i]) for c, i in zip(coords, index))
    p_range = max(float(np.ptp(g)) for g in grads)
    jump = max(float(np.max(np.abs(np.diff(g, axis=k)))) for k, g in enumerate(grads))
    return HessianProbe(float(lam[index]), location, p_range, jump, max(dx))


class SurfaceHessianProbe:
    """Hessian probe on a closed triangle mesh (see the module docstring)."""

    def __init__(self, mesh, smoothing: int = 2):
        from solvers.surfaces import LaplaceBeltrami

        self.mesh = mesh
        self.smoothing = int(smoothing)
        self.vertex_area = np.bincount(mesh.triangles.ravel(), weights=np.repeat(mesh.areas, 3), minlength=mesh.n_vertices)
        self.grads = LaplaceBeltrami(mesh).gradients  # (triangles, 3 corners, 3)
        n = mesh.n_vertices
        self.owner = np.repeat(np.arange(n), np.diff(mesh.star_ptr))
        corner = np.argmax(mesh.triangles[mesh.star] == self.owner[:, None], axis=1)
        theta = mesh.angles[mesh.star, corner]
        total = np.bincount(self.owner, weights=theta, minlength=n)
        self.weight = theta / total[self.owner]
        nrm = mesh.normals / np.linalg.norm(mesh.normals, axis=1, keepdims=True)
        self.P = np.eye(3)[None] - nrm[:, :, None] * nrm[:, None, :]
        self.centroids = mesh.vertices[mesh.triangles].mean(axis=1)
        inner = mesh.edge_triangles[:, 1] >= 0
        self.pairs = mesh.edge_triangles[inner]
        self.h = float(mesh.h)

    def __call__(self, u: np.ndarray) -> HessianProbe:
        m = self.mesh
        ptri = np.einsum("ka,kad->kd", u[m.triangles], self.grads)
        nv = m.vertex_normals[self.owner]
        proj = ptri[m.star] - np.einsum("sd,sd->s", ptri[m.star], nv)[:, None] * nv
        pbar = np.zeros((m.n_vertices, 3))
        np.add.at(pbar, self.owner, self.weight[:, None] * proj)
        H = np.einsum("kai,kaj->kij", pbar[m.triangles], self.grads)
        H = 0.5 * (H + np.swapaxes(H, 1, 2))
        for _ in range(self.smoothing):  # triangles -> vertices (area-weighted) -> triangles
            Hv = np.zeros((m.n_vertices, 3, 3))
            for c in range(3):
                np.add.at(Hv, m.triangles[:, c], m.areas[:, None, None] * H)
            Hv /= self.vertex_area[:, None, None]
            H = Hv[m.triangles].mean(axis=1)
        H = self.P @ H @ self.P
        lam = np.linalg.eigvalsh(H)[:, 0]
        k = int(np.argmin(lam))
        pmag = np.linalg.norm(pbar, axis=1)
        jump = float(np.max(np.linalg.norm(ptri[self.pairs[:, 0]] - ptri[self.pairs[:, 1]], axis=1))) \
            if self.pairs.size else 0.0
        return HessianProbe(float(lam[k]), tuple(float(v) for v in self.centroids[k]), 2.0 * float(pmag.max()),
                            jump, self.h)


def report_hessian(times, probes: list[HessianProbe], detection=None) -> ShockReport:
    """First-shock report from per-snapshot Hessian probes (see the module docstring)."""
    resolved_cells = 16.0 if detection is None else detection.resolved_cells
    max_width = 4.0 if detection is None else detection.max_width_cells
    fit_steepening = 3.0 if detection is None else detection.fit_steepening
    t = np.asarray(times, dtype=np.float64)
    steep = np.array([max(-p.lam_min, 0.0) for p in probes])
    with np.errstate(divide="ignore", invalid="ignore"):
        width = np.array([p.p_range / s if s > 0 else math.inf for p, s in zip(probes, steep)])
    h = np.array([p.h for p in probes])
    shocked = np.flatnonzero(width <= max_width * h)
    first = float(t[shocked[0]]) if shocked.size else math.nan
    last = shocked[0] if shocked.size else t.size
    use = np.flatnonzero((width[:last] >= resolved_cells * h[:last]) & (steep[:last] > 0))
    if use.size:
        early = use[steep[use] <= fit_steepening * steep[use[0]]]
        if early.size >= 2:
            use = early
    formation = first if shocked.size else math.inf
    if use.size >= 2:
        slope, intercept = np.polyfit(t[use], 1.0 / steep[use], 1)
        if slope < 0:
            formation = float(-intercept / slope)
    from_data = float(t[0] + 1.0 / steep[0]) if steep[0] > 0 else math.inf
    rows = ()
    if shocked.size or (math.isfinite(formation) and formation <= t[-1]):
        at = probes[shocked[0]] if shocked.size else probes[use[-1]]
        rows = (ShockRecord(time=float(formation), location=at.location, strength=float(probes[-1].jump),
                            first_seen=first, final_location=probes[-1].location,
                            final_strength=float(probes[-1].jump), speed=math.nan),)
    return ShockReport("hessian", rows, float(formation), from_data, first, t, steep, int(use.size))
