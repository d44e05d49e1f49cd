"""Shocks on a sampled field: detection, location, strength, tracking and formation time.

**Indicator (docs/theory.md §1).**  A shock is a transition whose *width does not shrink to zero
relative to its jump as the grid is refined only because it is a discontinuity*.  On a field
``q`` sampled at uniformly spaced points x_i (cell centres, spacing h) every transition is
measured by

* its peak slope ``g = max |q_{i+1} − q_i| / h`` (a local maximum of the face differences),
* its extent: the run of faces around the peak on which the differences keep the peak's sign
  and stay above ``tail`` × the peak difference; the states at the two ends are ``q_L``, ``q_R``
  and the jump is ``Δq = q_R − q_L``,
* its maximum-slope thickness ``w = |Δq| / g``  (a tanh profile of scale δ has w = 2δ; the
  viscous Burgers shock has w = 8ν/|Δq|).

It is reported as a shock when

    |Δq| ≥ min_jump   and   ( w ≤ max_width_cells · h   or   w_ν / viscous_width_factor ≤ w ≤ viscous_width_factor · w_ν )

with ``w_ν = 8ν/|Δq|`` the viscous shock's width,
and, with ``entropy=True``, when it is Lax-admissible for a convex flux (q_L > q_R).
A discontinuity (exact, or captured by a conservative scheme in one to three cells) has w of
a few h at *every* resolution and is found at every N; a smooth profile of width w0 has
``w → w0`` and is *never* found once ``h < w0 / max_width_cells`` — the set of detected shocks
converges under refinement (tests: N and 4N give the same shocks; smooth data, steep or not,
gives none once resolved).  A smooth profile narrower than ``max_width_cells`` cells cannot be
told from a shock on that grid; with ν > 0 given, a resolved profile counts as a shock when its
width is the viscous shock width 8ν/|Δq| (within ``viscous_width_factor``), not when it is
much wider (e.g. a pre-shock steepening) and not when it is much narrower: diffusion widens every profile to at
least that width, so a narrower one is a smooth profile that viscosity dominates (Reynolds number |Δq| w/ν below
8/``viscous_width_factor``: a sine of amplitude 1 at ν = 10 decays without ever steepening, and its descending half
had counted as a shock at t = 0).  ``min_jump`` (default ``rel_jump`` × the range of
the field) is a strength threshold that does not depend on the grid.

The position is sub-cell: where the linear interpolant of the profile crosses the mean
``(q_L + q_R)/2`` (``position="crossing"``), or where a step with the same mass over the extent
(widened by one cell each side) would sit (``position="mass"``, natural for finite-volume cell
averages: exact for cell averages of a step).  The reported states are the end values of the
extent continued linearly from the smooth side to that position (exact for the piecewise-linear
Burgers sawtooth; for a young shock flanked by a steep smooth cusp they converge under refinement).  The speed reported
is the Rankine–Hugoniot speed ``(f(q_L) − f(q_R)) / (q_L − q_R)`` for ``flux`` ("burgers" or an
object with ``f``, ``df``).  On a periodic cell (``periodic=True``) the field is rotated so
that its flattest face is the seam, so shocks on the seam are found whole.

**Potentials.**  With ``field="potential"`` the input is a Hamilton–Jacobi potential φ (H = ½|p|²),
and the shocks searched are the jumps of ``p = φ_x`` (kinks of φ), with p taken at the faces
(:func:`gradient_samples`); positions, states and speeds then refer to p, ``face`` indexes the
face array, and the formation time is γ* = −1/inf φ0'' (docs/theory.md §1).

**Formation time from snapshots.**  For Burgers before the first shock the steepest slope
obeys ``1/‖q_x‖∞ = 1/m − t`` exactly (m = −min u0', docs/theory.md §5), and for a convex flux the
same holds for the characteristic speed ``c = f'(q)``: ``1/‖c_x‖∞`` decreases linearly and
vanishes at t*.  :func:`track_shocks` fits that line through the snapshots taken before the
first detection whose steep region is resolved (its maximum-slope width spans at least
``resolved_cells`` cells) and, when at least two qualify, whose steepness is at most
``fit_steepening`` times that of the first of them (the early part of the line, least touched
by physical or numerical viscosity, which make 1/‖c_x‖∞ bend away from the line near t*), and
extrapolates its zero; it also reports the first snapshot where the indicator fires and the prediction
``t_0 − 1/min c_x(t_0)`` from the first snapshot alone (``first_shock_time`` applied to it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numba
import numpy as np

from solvers.errors import SolverInputError, require_choice, require_finite, require_positive
from solvers.exact.riemann import as_flux, rankine_hugoniot_speed

POSITIONS = ("crossing", "mass")
FIELDS = ("velocity", "potential")


@dataclass(frozen=True)
class ShockSettings:
    """Detection settings (see the module docstring), validated in one place."""

    nu: float = 0.0
    max_width_cells: float = 4.0
    viscous_width_factor: float = 2.0
    min_jump: float | None = None
    rel_jump: float = 0.02
    tail: float = 0.05
    entropy: bool = True
    periodic: bool = False
    position: str = "crossing"
    resolved_cells: float = 16.0
    fit_steepening: float = 3.0
    field: str = "velocity"

    def __post_init__(self):
        object.__setattr__(self, "nu", require_positive("nu", self.nu, allow_zero=True))
        object.__setattr__(self, "max_width_cells", require_positive("max_width_cells", self.max_width_cells))
        object.__setattr__(self, "viscous_width_factor", require_positive("viscous_width_factor", self.viscous_width_factor))
        if self.min_jump is not None:
            object.__setattr__(self, "min_jump", require_positive("min_jump", self.min_jump))
        rel = float(self.rel_jump)
        if not (0.0 < rel < 1.0):
            raise SolverInputError(f"rel_jump: expected a fraction in (0, 1) of the field's range, found {self.rel_jump!r}")
        tail = float(self.tail)
        if not (0.0 < tail < 1.0):
            raise SolverInputError(f"tail: expected a fraction in (0, 1) of the peak slope, found {self.tail!r}")
        require_choice("position", self.position, POSITIONS)
        require_choice("field", self.field, FIELDS)
        object.__setattr__(self, "resolved_cells", require_positive("resolved_cells", self.resolved_cells))
        if not float(self.fit_steepening) > 1.0:
            raise SolverInputError(f"fit_steepening: expected a factor > 1, found {self.fit_steepening!r}")
        object.__setattr__(self, "entropy", bool(self.entropy))
        object.__setattr__(self, "periodic", bool(self.periodic))


@dataclass(frozen=True)
class Shock:
    """One detected shock.  ``jump = right − left``; ``width`` is the maximum-slope thickness
    |jump| / max|q_x| (in units of x), ``cells`` the same in cells; ``face`` the index i of the
    steepest face (between samples i and i+1 of the input order)."""

    position: float
    left: float
    right: float
    jump: float
    speed: float
    width: float
    cells: float
    face: int


def _coordinates(x, n: int) -> np.ndarray:
    if hasattr(x, "centers") and hasattr(x, "ndim"):
        if x.ndim != 1:
            raise SolverInputError(f"x: expected a 1-D grid, found a {x.ndim}-D grid (use shock_mask for 2-D fields)")
        x = x.centers(0)
    x = require_finite("x", x)
    if x.ndim != 1 or x.size != n:
        raise SolverInputError(f"x: expected {n} coordinates (one per sample of q), found shape {x.shape}")
    if n >= 2:
        h = np.diff(x)
        if not (np.all(h > 0) and np.all(np.abs(h - h[0]) <= 1e-8 * abs(h[0]))):   # allclose(rtol=1e-8, atol=0)
            raise SolverInputError("x: expected uniformly spaced, increasing coordinates")
    return x


def gradient_samples(phi: np.ndarray, x: np.ndarray, periodic: bool) -> tuple[np.ndarray, np.ndarray]:
    """``p = φ_x`` at the faces: ``(φ_{i+1} − φ_i)/h`` at ``x_i + h/2`` (with the wrap face if periodic).

    A kink of the potential φ (an HJ shock, docs/theory.md §1) is a jump of p; for a potential
    sampled at points the face difference is second-order accurate where φ is smooth.
    """
    h = float(x[1] - x[0])
    if periodic:
        return np.diff(np.concatenate([phi, phi[..., :1]], axis=-1), axis=-1) / h, x + 0.5 * h
    return np.diff(phi, axis=-1) / h, x[:-1] + 0.5 * h


def _settings(settings: ShockSettings | None, overrides: dict) -> ShockSettings:
    if settings is not None and overrides:
        raise SolverInputError(f"settings: pass either a ShockSettings or keyword settings, found both ({', '.join(overrides)})")
    if settings is None:
        try:
            return ShockSettings(**overrides)
        except TypeError as exc:
            valid = ", ".join(ShockSettings.__dataclass_fields__)
            raise SolverInputError(f"settings: unknown keyword in {sorted(overrides)}; valid keywords are {valid}") from exc
    if not isinstance(settings, ShockSettings):
        raise SolverInputError(f"settings: expected a ShockSettings, found {type(settings).__name__}")
    return settings


def _transitions(q: np.ndarray, h: float, s: ShockSettings, min_jump: float):
    """Extents ``(k, jl, jr, jump, width)`` (peak face, first and last face, jump, width) of the transitions
    passing the indicator, found by :func:`transitions_kernel` (compiled); :func:`_transitions_reference`
    is the same walk in NumPy and Python."""
    q = np.ascontiguousarray(q, dtype=np.float64)
    if q.size < 2:
        return []
    out = np.empty((q.size - 1, 5))
    count = transitions_kernel(q, h, s.max_width_cells, s.viscous_width_factor, s.nu, s.tail, s.entropy, min_jump, out)
    return _strongest([(int(k), int(jl), int(jr), float(jump), float(width)) for k, jl, jr, jump, width in out[:count]])


@numba.njit(cache=True)
def _sign(v):
    return 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)


@numba.njit(cache=True)
def transitions_kernel(q, h, max_width_cells, viscous_width_factor, nu, tail, entropy, min_jump, out):
    """The extents of :func:`_transitions_reference` with its arithmetic: rows ``(k, jl, jr, jump, width)``
    of ``out`` (``(n - 1, 5)``), in face order; returns how many.  A peak face has the largest difference
    of its neighbours (ties to the left), at least ``min_jump h / widest``; its extent is the run of faces
    of its sign whose difference is at least ``tail`` times the peak's."""
    n_f = q.size - 1
    widest = max(max_width_cells * h, viscous_width_factor * 8.0 * nu / min_jump)
    floor = min_jump * h / widest  # necessary: |Δq| ≥ min_jump and w ≤ widest
    count = 0
    for k in range(n_f):
        dk = q[k + 1] - q[k]
        ak = abs(dk)
        left = abs(q[k] - q[k - 1]) if k > 0 else -math.inf
        right = abs(q[k + 2] - q[k + 1]) if k < n_f - 1 else -math.inf
        if not (ak >= left and ak > right and ak >= floor):
            continue
        if entropy and not dk < 0:
            continue
        sign = _sign(dk)
        cut = tail * ak
        jl = k
        while jl > 0 and _sign(q[jl] - q[jl - 1]) == sign and abs(q[jl] - q[jl - 1]) >= cut:
            jl -= 1
        jr = k
        while jr < n_f - 1 and _sign(q[jr + 2] - q[jr + 1]) == sign and abs(q[jr + 2] - q[jr + 1]) >= cut:
            jr += 1
        jump = q[jr + 1] - q[jl]
        if abs(jump) < min_jump:
            continue
        width = abs(jump) / (ak / h)
        viscous = 8.0 * nu / abs(jump)   # the viscous shock's width: a profile much narrower cannot be one
        if width <= max_width_cells * h or viscous / viscous_width_factor <= width <= viscous_width_factor * viscous:
            out[count, 0] = k
            out[count, 1] = jl
            out[count, 2] = jr
            out[count, 3] = jump
            out[count, 4] = width
            count += 1
    return count


@numba.njit(cache=True)
def _row_threshold(q, rel_jump, min_jump):
    """:func:`_located`'s jump threshold for the row ``q``: ``min_jump`` if positive, else ``rel_jump`` of the row's
    range; 0 where the row is constant (no shock)."""
    lo, hi = q[0], q[0]
    for v in q:
        lo = min(lo, v)
        hi = max(hi, v)
    span = hi - lo
    if span == 0.0:
        return 0.0
    return min_jump if min_jump > 0.0 else rel_jump * span


@numba.njit(cache=True)
def _keep_strongest(out, c, kept, seen):
    """:func:`_strongest` on the ``c`` extents of ``out`` (face order): ``kept[i]`` for those kept, the strongest
    first (ties: the lower face), each kept if it overlaps none kept before it; ``seen`` is scratch."""
    for i in range(c):
        kept[i] = False
        seen[i] = False
    for _ in range(c):
        best = -1
        for i in range(c):
            if not seen[i] and (best < 0 or abs(out[i, 3]) > abs(out[best, 3])):
                best = i
        seen[best] = True
        free = True
        for i in range(c):
            if kept[i] and not (out[best, 2] < out[i, 1] or out[best, 1] > out[i, 2]):
                free = False
        kept[best] = free


@numba.njit(cache=True)
def transition_counts_kernel(Q, h, max_width_cells, viscous_width_factor, nu, tail, entropy, rel_jump, min_jump,
                             counts, out):
    """How many extents :func:`transitions_kernel` finds in each row of ``Q`` (a non-periodic field per row), with
    :func:`_located`'s threshold (``min_jump`` if positive, else ``rel_jump`` of the row's range): the rows with none
    are the smooth snapshots, which :func:`track_shocks` then skips.  ``out`` is ``(n - 1, 5)`` scratch."""
    for r in range(Q.shape[0]):
        q = Q[r]
        counts[r] = 0
        if q.size < 3:
            continue
        threshold = _row_threshold(q, rel_jump, min_jump)
        if not threshold > 0.0:
            continue
        counts[r] = transitions_kernel(q, h, max_width_cells, viscous_width_factor, nu, tail, entropy, threshold, out)


@numba.njit(cache=True)
def crossings_kernel(Q, h, x0, max_width_cells, viscous_width_factor, nu, tail, entropy, rel_jump, min_jump, counts,
                     rows, out):
    """:func:`_located` of every row of ``Q`` (non-periodic fields, ``position = "crossing"``) with its arithmetic:
    the extents of :func:`transitions_kernel` under :func:`transition_counts_kernel`'s threshold, the strongest of
    overlapping ones (:func:`_strongest`: by decreasing ``|jump|``, ties to the lower face), each placed where the
    field crosses the mean of its end states.  ``rows`` receives ``(position, q_L, q_R, width, cells, face)`` row
    after row, each row's shocks in face order (at most ``counts.sum()`` of them, with ``counts`` from
    :func:`transition_counts_kernel`); ``counts[r]`` becomes the number kept in row ``r``.  ``out`` is
    ``(n - 1, 5)`` scratch.  Returns the number of rows written."""
    n = Q.shape[1]
    kept = np.zeros(max(n - 1, 1), dtype=np.bool_)
    seen = np.zeros(max(n - 1, 1), dtype=np.bool_)
    written = 0
    for r in range(Q.shape[0]):
        if counts[r] == 0:
            continue
        q = Q[r]
        c = transitions_kernel(q, h, max_width_cells, viscous_width_factor, nu, tail, entropy,
                               _row_threshold(q, rel_jump, min_jump), out)
        _keep_strongest(out, c, kept, seen)
        counts[r] = 0
        for i in range(c):
            if not kept[i]:
                continue
            k, jl, jr = int(out[i, 0]), int(out[i, 1]), int(out[i, 2])
            width = out[i, 4]
            qL, qR = q[jl], q[jr + 1]
            mid = 0.5 * (qL + qR)
            j = k - jl
            for m in range(jr + 1 - jl):
                if (q[jl + m] - mid) * (q[jl + m + 1] - mid) <= 0:
                    j = m
                    break
            a_, b_ = q[jl + j] - mid, q[jl + j + 1] - mid
            frac = 0.5 if a_ == b_ else a_ / (a_ - b_)
            rows[written, 0] = (x0 + h * (jl + j)) + frac * h
            rows[written, 1] = qL
            rows[written, 2] = qR
            rows[written, 3] = width
            rows[written, 4] = width / h
            rows[written, 5] = k
            written += 1
            counts[r] += 1
    return written


def _strongest(found: list) -> list:
    """Overlapping extents describe one transition: keep the strongest, sorted by face."""
    found.sort(key=lambda item: -abs(item[3]))
    kept = []
    for item in found:
        if all(item[2] < other[1] or item[1] > other[2] for other in kept):
            kept.append(item)
    return sorted(kept)


def _transitions_reference(q: np.ndarray, h: float, s: ShockSettings, min_jump: float):
    """Reference of :func:`_transitions`: the extents walked face by face in Python."""
    d = np.diff(q)
    n_f = d.size
    if n_f == 0:
        return []
    a = np.abs(d)
    widest = max(s.max_width_cells * h, s.viscous_width_factor * 8.0 * s.nu / min_jump)
    floor = min_jump * h / widest  # necessary: |Δq| ≥ min_jump and w ≤ widest
    left = np.concatenate([[-np.inf], a[:-1]])
    right = np.concatenate([a[1:], [-np.inf]])
    peaks = np.flatnonzero((a >= left) & (a > right) & (a >= floor))
    if s.entropy:
        peaks = peaks[d[peaks] < 0]
    found = []
    for k in peaks:
        sign = np.sign(d[k])
        cut = s.tail * a[k]
        jl = k
        while jl > 0 and np.sign(d[jl - 1]) == sign and a[jl - 1] >= cut:
            jl -= 1
        jr = k
        while jr < n_f - 1 and np.sign(d[jr + 1]) == sign and a[jr + 1] >= cut:
            jr += 1
        jump = q[jr + 1] - q[jl]
        if abs(jump) < min_jump:
            continue
        width = abs(jump) / (a[k] / h)
        viscous = 8.0 * s.nu / abs(jump)
        if width <= s.max_width_cells * h or viscous / s.viscous_width_factor <= width <= s.viscous_width_factor * viscous:
            found.append((int(k), int(jl), int(jr), float(jump), float(width)))
    return _strongest(found)


def find_shocks(q, x, *, flux="burgers", settings: ShockSettings | None = None, **kwargs) -> list[Shock]:
    """Shocks of the 1-D field ``q`` sampled at uniformly spaced ``x`` (array or 1-D Grid).

    Keyword settings (or ``settings=ShockSettings(...)``): ``nu``, ``max_width_cells``,
    ``viscous_width_factor``, ``min_jump``, ``rel_jump``, ``tail``, ``entropy``, ``periodic``,
    ``position``; see the module docstring.  Returns the shocks sorted by position.
    """
    s = _settings(settings, kwargs)
    q = require_finite("q", q)
    if q.ndim != 1:
        raise SolverInputError(f"q: expected a 1-D field, found shape {q.shape} (use shock_mask for 2-D fields)")
    x = _coordinates(x, q.size)
    return _find_shocks(q, x, as_flux(flux), s)


def _find_shocks(q: np.ndarray, x: np.ndarray, F, s: ShockSettings, transitions=None) -> list[Shock]:
    """:func:`find_shocks` on inputs validated by the caller (``F`` an adapted flux); ``transitions``
    the extent finder (default :func:`_transitions`)."""
    if s.field == "potential" and q.size >= 2:
        q, x = gradient_samples(q, x, s.periodic)
    return _with_speeds([_located(q, x, s, transitions)], F)[0]


def _with_speeds(rows: list, F) -> list[list[Shock]]:
    """The shocks of rows of :func:`_located` tuples, their Rankine–Hugoniot speeds from one call for all
    of them (elementwise the scalar formula), each row sorted by position."""
    flat = [item for row in rows for item in row]
    if not flat:
        return [[] for _ in rows]
    states = np.array([(item[1], item[2]) for item in flat])
    speeds = iter(np.atleast_1d(rankine_hugoniot_speed(F, states[:, 0], states[:, 1])).tolist())
    out = []
    for row in rows:
        shocks = [Shock(pos, qL, qR, qR - qL, next(speeds), width, cells, face) for pos, qL, qR, width, cells, face in row]
        out.append(sorted(shocks, key=lambda sh: sh.position))
    return out


def _located(q: np.ndarray, x: np.ndarray, s: ShockSettings, transitions=None) -> list[tuple]:
    """``(position, q_L, q_R, width, cells, face)`` of each shock of the 1-D field ``q`` (velocity field)."""
    transitions = _transitions if transitions is None else transitions
    if q.size < 3:
        return []
    span = float(np.ptp(q))
    min_jump = s.min_jump if s.min_jump is not None else s.rel_jump * span
    if span == 0.0 or min_jump <= 0.0:
        return []
    h = float(x[1] - x[0])
    n = q.size
    shift = 0
    if s.periodic:
        seam = np.abs(np.diff(np.concatenate([q, q[:1]])))
        shift = (int(np.argmin(seam)) + 1) % n  # the flattest face becomes the seam
        q = np.roll(q, -shift)
    x0 = float(x[0])  # positions in the rotated frame are offsets from x[shift]: x0 + h j
    period = n * h
    found = []
    for k, jl, jr, jump, width in transitions(q, h, s, min_jump):
        qL, qR = float(q[jl]), float(q[jr + 1])
        if s.position == "crossing":
            mid = 0.5 * (qL + qR)
            seg = q[jl:jr + 2] - mid
            hits = np.flatnonzero(seg[:-1] * seg[1:] <= 0)
            i = int(hits[0]) if hits.size else k - jl
            a_, b_ = seg[i], seg[i + 1]
            frac = 0.5 if a_ == b_ else a_ / (a_ - b_)
            pos = (x0 + h * (jl + i)) + frac * h
        else:
            # one more cell on each side, so that a cell cut by the shock near its edge (a
            # difference below the tail cut) is inside: exact for cell averages of a step
            ml, mr = max(jl - 1, 0), min(jr + 1, n - 2)
            sL, sR = float(q[ml]), float(q[mr + 1])
            a_ = (x0 + h * ml) + 0.5 * h
            b_ = (x0 + h * (mr + 1)) - 0.5 * h
            mass = float(np.sum(q[ml + 1:mr + 1])) * h
            pos = a_ + (mass - sR * (b_ - a_)) / (sL - sR) if sL != sR else (x0 + h * k) + 0.5 * h
        if s.periodic:  # back to the input frame, on the cell [x[0] − h/2, x[0] − h/2 + period)
            lower = x[0] - 0.5 * h
            pos = lower + ((pos - lower + shift * h) % period)
        face = (k + shift) % n if s.periodic else k
        found.append((float(pos), qL, qR, width, width / h, int(face)))
    return found


def line_fit(t: np.ndarray, v: np.ndarray) -> tuple[float, float]:
    """``(slope, intercept)`` of the least-squares line through ``(t, v)`` (two or more points), in closed form about
    the mean of ``t``: ``np.polyfit(t, v, 1)`` to rounding, without its scaled Vandermonde solve (a tenth of the
    time at the few dozen points of a tracking fit)."""
    t = np.asarray(t, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    tm, vm = t.mean(), v.mean()
    dt = t - tm
    slope = float(np.dot(dt, v - vm) / np.dot(dt, dt))
    return slope, float(vm - slope * tm)


def max_slope(q, x, *, periodic: bool = False) -> float:
    """``‖q_x‖∞`` from fourth-order face differences (second order next to a non-periodic end)."""
    q = require_finite("q", q)
    x = _coordinates(x, q.size)
    return float(_max_slopes(q[None, :], float(x[1] - x[0]), periodic)[0])


def _max_slopes(Q: np.ndarray, h: float, periodic: bool) -> np.ndarray:
    """:func:`max_slope` of every row of ``Q`` at once (the same arithmetic, row by row)."""
    qe = np.concatenate([Q[:, -1:], Q, Q[:, :2]], axis=1) if periodic else Q
    d2 = np.diff(qe, axis=1) / h
    if qe.shape[1] >= 4:
        d4 = (qe[:, :-3] - 27 * qe[:, 1:-2] + 27 * qe[:, 2:-1] - qe[:, 3:]) / (24 * h)
        inner = np.abs(d4).max(axis=1)
        ends = np.abs(d2[:, [0, -1]]).max(axis=1) if not periodic else np.zeros(Q.shape[0])
        return np.maximum(inner, ends)
    return np.abs(d2).max(axis=1)


# -------------------------------------------------------------------------------- tracking
@dataclass(frozen=True)
class ShockTrack:
    """One shock followed through snapshots (positions unwrapped across a periodic seam)."""

    times: np.ndarray
    positions: np.ndarray
    left: np.ndarray
    right: np.ndarray
    rh_speeds: np.ndarray

    @property
    def measured_speed(self) -> float:
        """Least-squares slope of position against time (NaN with fewer than two points)."""
        if self.times.size < 2:
            return math.nan
        return line_fit(self.times, self.positions)[0]

    @property
    def rh_speed(self) -> float:
        """Mean Rankine–Hugoniot speed over the track."""
        return float(np.mean(self.rh_speeds))

    @property
    def first_seen(self) -> float:
        return float(self.times[0])


@dataclass(frozen=True)
class ShockTracking:
    """Shocks over a sequence of snapshots.

    ``counts[n]`` shocks at ``times[n]``; ``steepness[n] = ‖c_x‖∞`` with ``c = f'(q)`` (for
    Burgers ``‖q_x‖∞``); ``first_detection`` is the first time the indicator fires (NaN if
    never); ``formation_time`` the zero of the line fitted to 1/steepness on the resolved
    pre-shock snapshots (``first_detection`` if fewer than two are usable);
    ``formation_time_from_data`` = ``t_0 − 1/min c_x(t_0)`` from the first snapshot alone (∞ if
    it has no compressive part; ``t_0`` if it already holds a shock).
    """

    times: np.ndarray
    tracks: tuple[ShockTrack, ...]
    counts: np.ndarray
    steepness: np.ndarray
    first_detection: float
    formation_time: float
    formation_time_from_data: float
    fit_points: int
    settings: ShockSettings = field(repr=False)


def _min_char_slope(q: np.ndarray, h: float, F, periodic: bool) -> float:
    """min_x ∂_x f'(q) from fourth-order differences of c = f'(q) (periodic: spectral-free FD with wrap)."""
    c = F.df(q)
    if periodic:
        ce = np.concatenate([c[-2:], c, c[:2]])
        d = (ce[:-4] - 8 * ce[1:-3] + 8 * ce[3:-1] - ce[4:]) / (12 * h)
    else:
        d = np.gradient(c, h, edge_order=2)
        if c.size >= 5:
            d[2:-2] = (c[:-4] - 8 * c[1:-3] + 8 * c[3:-1] - c[4:]) / (12 * h)
    return float(d.min())


def track_shocks(times, snapshots, x, *, flux="burgers", settings: ShockSettings | None = None, reference: bool = False,
                 **kwargs) -> ShockTracking:
    """Detect shocks in every snapshot (rows of ``snapshots``), link them into tracks and estimate
    the formation time (see the module docstring).  Linking: a shock continues the track whose
    position, advanced with its Rankine–Hugoniot speed, is nearest, within
    ``4 h + 2 width + |Δt · s| / 2`` (periodic distance on a periodic cell).  ``reference=True`` finds
    the extents with :func:`_transitions_reference` (the face-by-face walk the tests compare against)."""
    s = _settings(settings, kwargs)
    transitions = _transitions_reference if reference else _transitions
    t = require_finite("times", np.atleast_1d(np.asarray(times, dtype=np.float64)))
    Q = require_finite("snapshots", snapshots)
    if Q.ndim != 2 or Q.shape[0] != t.size:
        raise SolverInputError(f"snapshots: expected shape ({t.size}, n) (one row per time), found {Q.shape}")
    if t.size > 1 and np.any(np.diff(t) <= 0):
        raise SolverInputError("times: expected strictly increasing times")
    x = _coordinates(x, Q.shape[1])
    given = s
    if s.field == "potential":  # track the shocks of p = φ_x (kinks of φ)
        Q, x = gradient_samples(Q, x, s.periodic)
        s = replace(s, field="velocity")
    if s.min_jump is None and Q.size:
        # over a run the strength threshold is rel_jump of the field's largest range, not of each snapshot's own: a
        # field that decays (ν = 10 takes a sine to 1e-5 of itself by t = 0.025) otherwise has its round-off reported
        # as shocks of every later snapshot
        largest = float(np.max(np.ptp(Q, axis=1)))
        if largest > 0.0:
            s = replace(s, min_jump=s.rel_jump * largest)
    h = float(x[1] - x[0])
    period = Q.shape[1] * h
    F = as_flux(flux)
    C = F.df(Q)  # characteristic speeds of every snapshot
    steep = _max_slopes(C, h, s.periodic)
    open_tracks: list[dict] = []
    closed: list[dict] = []
    counts = np.zeros(t.size, dtype=np.int64)
    if s.periodic or transitions is not _transitions:
        located = [_located(q, x, s, transitions) for q in Q]
    else:   # the smooth snapshots (no extent at all) in one compiled pass over the rows, the others one by one
        Qc = np.ascontiguousarray(Q, dtype=np.float64)
        counts = np.zeros(Qc.shape[0], dtype=np.int64)
        transition_counts_kernel(Qc, h, s.max_width_cells, s.viscous_width_factor, s.nu, s.tail, s.entropy,
                                 s.rel_jump, s.min_jump if s.min_jump is not None else 0.0, counts,
                                 np.empty((max(Qc.shape[1] - 1, 1), 5)))
        if s.position == "crossing":   # ... and the others too, in a second compiled pass (_located's arithmetic)
            rows = np.empty((int(counts.sum()), 6))
            crossings_kernel(Qc, h, float(x[0]), s.max_width_cells, s.viscous_width_factor, s.nu, s.tail, s.entropy,
                             s.rel_jump, s.min_jump if s.min_jump is not None else 0.0, counts, rows,
                             np.empty((max(Qc.shape[1] - 1, 1), 5)))
            values, start = rows.tolist(), 0
            located = []
            for c in counts.tolist():
                located.append([(pos, qL, qR, w, cells, int(face)) for pos, qL, qR, w, cells, face
                                in values[start:start + c]])
                start += c
        else:
            located = [_located(q, x, s, transitions) if c else [] for q, c in zip(Q, counts)]
    found = _with_speeds(located, F)   # every snapshot's shocks
    for n, (tn, shocks) in enumerate(zip(t, found)):
        counts[n] = len(shocks)
        unused = list(open_tracks)
        for sh in shocks:
            best, best_d = None, math.inf
            for tr in unused:
                dt = tn - tr["t"][-1]
                guess = tr["x"][-1] + tr["s"][-1] * dt
                dist = sh.position - guess
                if s.periodic:
                    dist = (dist + 0.5 * period) % period - 0.5 * period
                gate = 4 * h + 2 * sh.width + 0.5 * abs(dt * tr["s"][-1])
                if abs(dist) <= gate and abs(dist) < best_d:
                    best, best_d = tr, abs(dist)
            if best is None:
                tr = {"t": [tn], "x": [sh.position], "l": [sh.left], "r": [sh.right], "s": [sh.speed]}
                open_tracks.append(tr)
            else:
                unused.remove(best)
                step = sh.position - best["x"][-1]
                if s.periodic:
                    step = (step + 0.5 * period) % period - 0.5 * period
                best["t"].append(tn)
                best["x"].append(best["x"][-1] + step)
                best["l"].append(sh.left)
                best["r"].append(sh.right)
                best["s"].append(sh.speed)
        for tr in unused:  # tracks not continued in this snapshot end (merged or left the domain)
            open_tracks.remove(tr)
            closed.append(tr)
    tracks = tuple(
        ShockTrack(*(np.array(tr[k]) for k in ("t", "x", "l", "r", "s")))
        for tr in sorted(closed + open_tracks, key=lambda tr: (tr["t"][0], tr["x"][0]))
    )
    detected = np.flatnonzero(counts > 0)
    first = float(t[detected[0]]) if detected.size else math.nan
    # steepness fit on resolved pre-shock snapshots
    last = detected[0] if detected.size else t.size
    ranges = np.ptp(C, axis=1)
    with np.errstate(divide="ignore"):
        resolved = (steep > 0) & (ranges / np.where(steep > 0, steep, 1.0) >= s.resolved_cells * h)
    use = np.flatnonzero(resolved[:last])
    early = use[steep[use] <= s.fit_steepening * steep[use[0]]] if use.size else use
    if early.size >= 2:  # the early part of the line: least touched by (numerical) viscosity
        use = early
    formation = first
    if use.size >= 2:
        slope, intercept = line_fit(t[use], 1.0 / steep[use])
        if slope < 0:  # not clamped to first_detection: under-resolved steepening fires the indicator early
            formation = -intercept / slope
    m = _min_char_slope(Q[0], h, F, s.periodic)
    from_data = float(t[0] - 1.0 / m) if m < 0 else math.inf
    if counts[0] > 0:  # the first snapshot is not smooth: the shock is there from the start
        from_data = float(t[0])
    if use.size < 2 and t[0] < from_data <= first:
        # no line to fit: the outputs are sparser than the formation (burgers-sine to t = 50 has its first snapshot
        # at 0.625, after t* = 0.159, which was reported): the initial data's own t0 − 1/min c_x, exact for an
        # inviscid convex flux (a viscous one forms later, never before it)
        formation = from_data
    return ShockTracking(t, tracks, counts, steep, first, float(formation), from_data, int(use.size), given)


# -------------------------------------------------------------------------------- 2-D
def shock_mask(q, x, y, *, flux="burgers", settings: ShockSettings | None = None, **kwargs) -> np.ndarray:
    """Boolean mask of shock cells of a 2-D field ``q[i, j]`` at (x[i], y[j]).

    Every grid line along each axis is searched with :func:`find_shocks` (the strength threshold
    ``min_jump`` defaults to ``rel_jump`` × the range of the whole field); the two cells on each
    side of a shock's steepest face are marked.  ``mask.sum()`` counts shock cells.  With
    ``field="potential"`` the kinks of an HJ potential are searched along every line.
    """
    s = _settings(settings, kwargs)
    q = require_finite("q", q)
    if q.ndim != 2:
        raise SolverInputError(f"q: expected a 2-D field, found shape {q.shape}")
    xs, ys = _coordinates(x, q.shape[0]), _coordinates(y, q.shape[1])
    if s.min_jump is None:
        if s.field == "potential":  # the strength scale is that of the gradient
            span = max(float(np.ptp(gradient_samples(q.T, xs, s.periodic)[0])),
                       float(np.ptp(gradient_samples(q, ys, s.periodic)[0])))
        else:
            span = float(np.ptp(q))
        if span == 0.0:
            return np.zeros(q.shape, dtype=bool)
        s = replace(s, min_jump=s.rel_jump * span)
    mask = np.zeros(q.shape, dtype=bool)
    n0, n1 = q.shape
    for j in range(n1):
        for sh in find_shocks(q[:, j], xs, flux=flux, settings=s):
            mask[sh.face, j] = mask[(sh.face + 1) % n0, j] = True
    for i in range(n0):
        for sh in find_shocks(q[i, :], ys, flux=flux, settings=s):
            mask[i, sh.face] = mask[i, (sh.face + 1) % n1] = True
    return mask


def shock_cell_counts(snapshots, x, y, *, flux="burgers", settings: ShockSettings | None = None, **kwargs) -> np.ndarray:
    """Number of shock cells (:func:`shock_mask`) in each 2-D snapshot ``snapshots[n, i, j]``."""
    s = _settings(settings, kwargs)
    Q = require_finite("snapshots", snapshots)
    if Q.ndim != 3:
        raise SolverInputError(f"snapshots: expected shape (times, nx, ny), found {Q.shape}")
    return np.array([int(shock_mask(q, x, y, flux=flux, settings=s).sum()) for q in Q], dtype=np.int64)
