"""The discrete descent on a 1-D chart: gradient descent, heavy ball or Nesterov iterated on a tabulated force.

The optimisers' update rules (docs/theory.md §6, "Optimisers") applied to a chart coordinate ``x`` with
the force ``f(x) = a ∂_x L̄`` given on a uniform table, for many learning rates at once:

    gd:          x ← x − η_t f(x)
    heavy ball:  v ← μ v + f(x);  x ← x − η_t v
    Nesterov:    v ← μ v + f(x);  x ← x − η_t (f(x) + μ v)

with ``η_t = rate · profile[t]``.  ``f`` between nodes is linear, with ``np.interp``'s arithmetic (so the
kernel and the reference agree to the last bit, which matters: past the first period doubling the
iteration is chaotic and amplifies any rounding), held at its end values outside the nodes.  On a mirrored chart (``L̄`` even in ``x``) the force at ``x`` is
``sign(x) f(|x|)``.  A path *leaves* when its iterate steps outside ``[lo, hi]`` (``|x| > hi`` when
mirrored) or stops being finite; it is then not followed further.  For each rate the kernel returns
whether the path stayed, and the farthest it reached from ``x0`` (from 0 when mirrored) while it did.

:func:`descent_paths` is the compiled kernel (one loop per rate, nothing allocated in it);
:func:`first_departure` runs the rates in order only until the first that leaves (the overshoot flag needs no
more).  Once the schedule is constant for the rest of the run, a path whose state ``(x, v)`` equals the one a
earlier one under that map (an exact fixed point or cycle in floating point; Brent's method) is stopped there:
it would repeat its cycle to the end, so ``alive`` and ``peak`` are exactly those of the full run;
:func:`descent_paths_reference` is the NumPy reference, all rates advanced together, that tests compare
it against.

**Trapping sets** (:func:`first_departure` only, which needs whether a path stays, not how far it reaches).  Once
the schedule is constant a path is also stopped, as staying, when it enters a set around a minimum ``x*`` of the
force (a zero from negative to positive, :func:`trapping_wells`) that the computed iteration provably never
leaves: within ``r`` of ``x*`` the piecewise-linear force is ``f(x*) + s (x − x*)`` with ``s`` in the range of
the table's slopes there, so the update of ``(x − x*, v)`` is a matrix ``M(s)`` affine in ``s``; an ellipse of
the Lyapunov norm of ``M`` at the middle slope, in which every ``M(s)`` of the range contracts by ``ρ < 1`` with
room for the rounding of a step (bounded at ``ROUNDING`` relative, some 10⁴ ulps), is never left
(:func:`_trap`).  For gradient descent also an interval ``[a, b]`` around ``x*`` on which ``x − η f(x)`` is
nondecreasing (``η s ≤ 1``) with ``f(a) < 0 < f(b)``: it maps into itself (:func:`_monotone_interval`), which
holds the whole escape at rates up to half the linear bound.  The sets are sufficient conditions: a path outside
every one runs on, so the first departure is that of the exhaustive run, bitwise (the tests compare the two);
the steps run fall from ~2000 per rate (an exact cycle, found only once the iterate has converged to the last
bit) to ~200 (heavy ball) or 1 (gradient descent).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["descent_paths", "descent_paths_reference", "first_departure", "trapping_wells"]

GD, HEAVY_BALL, NESTEROV = 0, 1, 2
_RULES = {"gd": GD, "sgd": GD, "momentum": HEAVY_BALL, "nesterov": NESTEROV}


def _rule(optimizer: str) -> int:
    if optimizer not in _RULES:
        raise ValueError(f"optimizer: expected one of {', '.join(sorted(_RULES))}, found {optimizer!r}")
    return _RULES[optimizer]


@numba.njit(cache=True)
def _table_value(nodes, table, guess_scale, p):
    """``np.interp(p, nodes, table)``, the same operations: the interval by a guess from the mean spacing
    corrected to ``nodes[j] <= p < nodes[j + 1]``, then ``slope (p − nodes[j]) + table[j]``."""
    last = nodes.size - 1
    if not p >= nodes[0]:
        return table[0] if p < nodes[0] else p          # p is NaN: NaN
    if p >= nodes[last]:
        return table[last]
    j = int((p - nodes[0]) * guess_scale)
    if j > last - 1:
        j = last - 1
    while j > 0 and nodes[j] > p:
        j -= 1
    while j < last - 1 and nodes[j + 1] <= p:
        j += 1
    slope = (table[j + 1] - table[j]) / (nodes[j + 1] - nodes[j])
    value = slope * (p - nodes[j]) + table[j]
    if np.isnan(value):
        value = slope * (p - nodes[j + 1]) + table[j + 1]
        if np.isnan(value) and table[j] == table[j + 1]:
            value = table[j]
    return value


@numba.njit(cache=True)
def _path(nodes, table, guess_scale, x0, rate, profile, steady, rule, mu, mirrored, lo, hi, traps):
    """``(stayed, far, steps run)`` of one rate's path.  From step ``steady`` on the schedule is constant, so the
    update is one fixed map of ``(x, v)``: a state equal to an earlier one reached under that map repeats its
    cycle forever (every state of it already checked inside the box and counted in ``far``), and the path
    stops there with the answer it would have had at the end of the run.  Cycles are found by Brent's method:
    the state is compared with one saved at steps ``steady + 2^k``, which finds any cycle within twice the
    larger of its period and the steps taken to enter it."""
    origin = 0.0 if mirrored else x0
    x = x0
    v = 0.0
    xs = np.nan   # the saved state, and the step at which the next one is saved
    vs = np.nan
    save = steady
    far = abs(x - origin)
    for step in range(profile.size):
        eta = rate * profile[step]
        if mirrored:
            g = _table_value(nodes, table, guess_scale, abs(x))
            if x < 0.0:
                g = -g
            elif x == 0.0:
                g = 0.0
        else:
            g = _table_value(nodes, table, guess_scale, x)
        if rule == 0:
            x -= eta * g
        else:
            v = mu * v + g
            if rule == 2:
                x -= eta * (g + mu * v)
            else:
                x -= eta * v
        out = (abs(x) > hi) if mirrored else (x > hi or x < lo)
        if out or not np.isfinite(x):
            return False, far, step + 1
        d = abs(x - origin)
        if d > far:
            far = d
        if step >= steady:
            if x == xs and v == vs:
                return True, far, step + 1
            for w in range(traps.shape[0]):   # inside a certified trapping set of a minimum: stays forever
                if traps[w, 0] == 1.0:
                    if traps[w, 1] <= x <= traps[w, 2]:
                        return True, far, step + 1
                else:
                    e = x - traps[w, 1]
                    if traps[w, 2] * e * e + 2.0 * traps[w, 3] * e * v + traps[w, 4] * v * v <= traps[w, 5]:
                        return True, far, step + 1
            if step == save:
                xs, vs = x, v
                save = steady + 2 * (save - steady) + 1
    return True, far, profile.size


@numba.njit(cache=True)
def _descent_kernel(nodes, table, x0, rates, profile, steady, rule, mu, mirrored, lo, hi, alive, peak, ran):
    guess_scale = (nodes.size - 1) / (nodes[nodes.size - 1] - nodes[0])
    for j in range(rates.size):
        stayed, far, steps = _path(nodes, table, guess_scale, x0, rates[j], profile, steady, rule, mu, mirrored,
                                   lo, hi, np.empty((0, 6)))
        alive[j] = stayed
        peak[j] = far
        ran[j] = steps


@numba.njit(cache=True)
def _first_departure_kernel(nodes, table, x0, rates, stop, profile, steady, rule, mu, mirrored, lo, hi, wells, cells,
                            slopes, ran):
    guess_scale = (nodes.size - 1) / (nodes[nodes.size - 1] - nodes[0])
    traps = np.empty((2 * wells.shape[0], 6))
    scale = 0.0
    for i in range(table.size):
        scale = max(scale, abs(table[i]))
    for j in range(stop):
        count = 0
        if steady < profile.size:   # the trapping sets of the constant map from `steady` on
            eta = rates[j] * profile[steady]
            for w in range(wells.shape[0]):
                if rule == 0:
                    a, b = _monotone_interval(eta, nodes, table, cells[w], slopes[w], scale, lo, hi, mirrored)
                    if a < b:
                        traps[count, 0] = 1.0
                        traps[count, 1] = a
                        traps[count, 2] = b
                        count += 1
                p, q, t, level = _trap(eta, mu, rule, wells[w])
                if level > 0.0:
                    traps[count, 0] = 0.0
                    traps[count, 1] = wells[w, 0]
                    traps[count, 2] = p
                    traps[count, 3] = q
                    traps[count, 4] = t
                    traps[count, 5] = level
                    count += 1
        stayed, _, steps = _path(nodes, table, guess_scale, x0, rates[j], profile, steady, rule, mu, mirrored, lo, hi,
                                 traps[:count])
        ran[j] = steps
        if not stayed:
            return j
    return stop


@numba.njit(cache=True)
def _monotone_interval(eta, nodes, table, cell, slopes, scale, lo, hi, mirrored):
    """``(a, b)``: nodes around the zero in ``cell`` such that gradient descent at ``eta`` maps ``[a, b]`` into itself
    (``a >= b``: none).  ``slopes[i]`` is the largest slope of the table between node ``i`` and the zero's cell.
    Where ``η s ≤ 1`` on every cell of ``[a, b]`` the map ``x − η f(x)`` is nondecreasing there, so it maps
    ``[a, b]`` into ``[a − η f(a), b − η f(b)]``; with ``f(a) < 0 < f(b)`` by more than the rounding of a step
    that is inside ``[a, b]``: the computed path never leaves it (and never the box, which holds it)."""
    n = nodes.size
    if not eta * slopes[cell] <= 1.0:
        return 1.0, 0.0
    # the leftmost node with η · (largest slope from it to the zero) ≤ 1: slopes[i] grows as i moves away
    i_lo, i_hi = 0, cell
    while i_lo < i_hi:
        mid = (i_lo + i_hi) // 2
        if eta * slopes[mid] <= 1.0:
            i_hi = mid
        else:
            i_lo = mid + 1
    ia = i_lo
    k_lo, k_hi = cell + 1, n - 1
    while k_lo < k_hi:
        mid = (k_lo + k_hi + 1) // 2
        if eta * slopes[mid] <= 1.0:
            k_lo = mid
        else:
            k_hi = mid - 1
    ib = k_lo
    bottom = 0.0 if mirrored else lo
    while ia <= cell and not (nodes[ia] > bottom and nodes[ia] < hi):
        ia += 1
    while ib > cell and not (nodes[ib] < hi and nodes[ib] > bottom):
        ib -= 1
    if ia > cell or ib <= cell:
        return 1.0, 0.0
    delta = ROUNDING * (abs(nodes[ia]) + abs(nodes[ib]) + eta * scale)
    while ia <= cell and not (-eta * table[ia] >= delta):
        ia += 1
    while ib > cell and not (eta * table[ib] >= delta):
        ib -= 1
    if ia > cell or ib <= cell:
        return 1.0, 0.0
    return nodes[ia], nodes[ib]


#: the rounding of one step, relative to the magnitudes it combines (a bound far above the few ulps it is)
ROUNDING = 1e-12


@numba.njit(cache=True)
def _update_matrix(eta, mu, rule, s):
    """The update of the deviation ``(x − x*, v)`` from a zero ``x*`` of the force where ``f(x) = s (x − x*)``."""
    if rule == 0:
        return 1.0 - eta * s, 0.0, s, 0.0
    if rule == 2:
        return 1.0 - eta * s * (1.0 + mu), -eta * mu * mu, s, mu
    return 1.0 - eta * s, -eta * mu, s, mu


@numba.njit(cache=True)
def _growth(p, q, t, a, b, c, d):
    """The largest ``λ`` with ``Mᵀ P M − λ P`` singular: ``‖M‖²`` in the norm ``zᵀPz`` (P positive definite)."""
    # A = Mᵀ P M
    a00 = a * (a * p + c * q) + c * (a * q + c * t)
    a01 = a * (b * p + d * q) + c * (b * q + d * t)
    a11 = b * (b * p + d * q) + d * (b * q + d * t)
    det_p = p * t - q * q
    lin = a00 * t + a11 * p - 2.0 * a01 * q
    const = a00 * a11 - a01 * a01
    disc = lin * lin - 4.0 * det_p * const
    return (lin + math.sqrt(max(disc, 0.0))) / (2.0 * det_p)


@numba.njit(cache=True)
def _det3(a, b, c, d, e, f, g, h, i):
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)


@numba.njit(cache=True)
def _trap(eta, mu, rule, well):
    """``(P00, P01, P11, level)``: an ellipse ``zᵀPz ≤ level`` around a zero ``x*`` of the force, ``z = (x − x*, v)``,
    that the computed iteration at the constant rate ``eta`` never leaves (``level ≤ 0``: none certified).

    ``well = (x*, |f(x*)| bound, then (r, k_lo, k_hi) per radius, largest first)``: within ``|x − x*| ≤ r`` the force
    is ``f(x*) + s (x − x*)`` with ``s ∈ [k_lo, k_hi]`` (a secant of the piecewise-linear table), so the update is
    ``z ← M(s) z`` up to rounding, with ``M`` affine in ``s``.  ``P`` solves the Lyapunov equation
    ``MᵀPM − P = −I`` at the middle slope; the norm ``zᵀPz`` being convex in ``M``, its growth ``ρ²`` over
    ``s ∈ [k_lo, k_hi]`` is the larger of the two ends.  With ``ρ < 1`` the ball of radius ``R`` (the largest whose
    ``x`` stays within ``r``) maps into ``ρR + δ ≤ R`` when the rounding ``δ`` of a step is that small: every
    later state stays within ``R``, hence within ``r`` of ``x*``, inside the box.  ``level = (R/2)²``: a path
    stopped there is decided with a margin against the rounding of the test itself."""
    xs = well[0]
    phi = well[1]
    for i in range((well.size - 2) // 3):
        r = well[2 + 3 * i]
        klo = well[3 + 3 * i]
        khi = well[4 + 3 * i]
        if not (r > 0.0 and klo > 0.0):
            continue
        if rule == 0:
            # v is not part of the state (it stays 0): the norm is |x − x*|, the update 1 − η s
            p, q, t, det_p = 1.0, 0.0, 1.0, 1.0
            rho = max(abs(1.0 - eta * klo), abs(1.0 - eta * khi))
        else:
            a, b, c, d = _update_matrix(eta, mu, rule, 0.5 * (klo + khi))
            # MᵀPM − P = −I for symmetric P = [[p, q], [q, t]]: three linear equations, by Cramer's rule
            m = (a * a - 1.0, 2.0 * a * c, c * c,
                 a * b, a * d + b * c - 1.0, c * d,
                 b * b, 2.0 * b * d, d * d - 1.0)
            det = _det3(m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
            if det == 0.0 or not math.isfinite(det):
                continue
            p = _det3(-1.0, m[1], m[2], 0.0, m[4], m[5], -1.0, m[7], m[8]) / det
            q = _det3(m[0], -1.0, m[2], m[3], 0.0, m[5], m[6], -1.0, m[8]) / det
            t = _det3(m[0], m[1], -1.0, m[3], m[4], 0.0, m[6], m[7], -1.0) / det
            det_p = p * t - q * q
            if not (p > 0.0 and det_p > 0.0):
                continue
            a1, b1, c1, d1 = _update_matrix(eta, mu, rule, klo)
            a2, b2, c2, d2 = _update_matrix(eta, mu, rule, khi)
            rho = math.sqrt(max(_growth(p, q, t, a1, b1, c1, d1), _growth(p, q, t, a2, b2, c2, d2)))
        rho += 1e-9                           # a margin on the computed contraction (its own rounding)
        if not rho < 1.0:
            continue
        R = r / math.sqrt(t / det_p)          # max |x − x*| on zᵀPz ≤ R² is R sqrt((P⁻¹)00) = r
        # the largest |v| on the ellipse, and the rounding of one step in the P-norm
        vbound = R * math.sqrt(p / det_p) if rule != 0 else 0.0
        gbound = max(abs(klo), abs(khi)) * r + phi
        dx = ROUNDING * (abs(xs) + r + eta * (vbound + 2.0 * gbound)) + 2.0 * eta * phi
        dv = ROUNDING * (vbound + gbound) + phi
        lam = 0.5 * (p + t) + math.sqrt(0.25 * (p - t) ** 2 + q * q)
        delta = math.sqrt(lam) * math.sqrt(dx * dx + dv * dv)
        if delta <= (1.0 - rho) * R:
            return p, q, t, 0.25 * R * R
    return 1.0, 0.0, 1.0, -1.0


def _steady(profile: np.ndarray) -> int:
    """The first step from which ``profile`` is constant (its last step if it never is before)."""
    if profile.size == 0:
        return 0
    changes = np.flatnonzero(profile[1:] != profile[:-1])
    return int(changes[-1]) + 1 if changes.size else 0


def _checked(nodes, table, rates, profile):
    nodes = np.ascontiguousarray(nodes, dtype=np.float64)
    table = np.ascontiguousarray(table, dtype=np.float64)
    rates = np.ascontiguousarray(rates, dtype=np.float64)
    profile = np.ascontiguousarray(profile, dtype=np.float64)
    if table.ndim != 1 or table.size < 2 or nodes.shape != table.shape:
        raise ValueError(f"table: expected at least two force values at as many nodes, found shapes "
                         f"{table.shape} and {nodes.shape}")
    if not np.all(np.diff(nodes) > 0):
        raise ValueError("table: expected strictly increasing nodes")
    return nodes, table, rates, profile


def descent_paths(nodes, table, x0: float, rates, profile, optimizer: str, momentum: float, lo: float, hi: float,
                  mirrored: bool = False, steps_run: bool = False):
    """``(alive, peak)`` per rate: the descent from ``x0`` on the force ``table`` at the increasing
    ``nodes``, under the schedule ``profile`` (η_t / rate); see the module docstring.  ``steps_run``: also
    the number of steps each path was iterated (to its departure, an exact cycle, or the end)."""
    nodes, table, rates, profile = _checked(nodes, table, rates, profile)
    rule = _rule(optimizer)
    mu = float(momentum) if rule != GD else 0.0
    alive = np.empty(rates.size, dtype=np.bool_)
    peak = np.empty(rates.size)
    ran = np.empty(rates.size, dtype=np.int64)
    _descent_kernel(nodes, table, float(x0), rates, profile, _steady(profile), rule, mu, bool(mirrored), float(lo),
                    float(hi), alive, peak, ran)
    return (alive, peak, ran) if steps_run else (alive, peak)


def first_departure(nodes, table, x0: float, rates, profile, optimizer: str, momentum: float, lo: float, hi: float,
                    mirrored: bool = False, stop: int | None = None, *, traps: bool = True, steps_run: bool = False):
    """The index of the first of ``rates[:stop]`` whose path leaves (``stop`` if none does): what
    ``np.argmin(alive)`` of :func:`descent_paths` gives when some path leaves, with the rates after it not run.
    ``traps``: stop a path, as staying, once it is inside a trapping ellipse of a minimum of the force
    (:func:`trapping_wells`; module docstring); ``steps_run``: also the steps each rate's path was iterated."""
    nodes, table, rates, profile = _checked(nodes, table, rates, profile)
    rule = _rule(optimizer)
    mu = float(momentum) if rule != GD else 0.0
    stop = rates.size if stop is None else max(0, min(int(stop), rates.size))
    if traps:
        wells, cells, slopes = trapping_wells(nodes, table, float(lo), float(hi), bool(mirrored))
    else:
        wells, cells, slopes = np.empty((0, 2)), np.empty(0, dtype=np.int64), np.empty((0, nodes.size))
    ran = np.zeros(rates.size, dtype=np.int64)
    first = int(_first_departure_kernel(nodes, table, float(x0), rates, stop, profile, _steady(profile), rule, mu,
                                        bool(mirrored), float(lo), float(hi), wells, cells, slopes, ran))
    return (first, ran) if steps_run else first


#: the radii at which a trapping ellipse is tried around a minimum: from (just inside) its distance to the nearer
#: end of the table and of the box, halved this many times
TRAP_RADII = 24


def trapping_wells(nodes, table, lo: float, hi: float, mirrored: bool = False) -> np.ndarray:
    """One row per stable zero ``x*`` of the piecewise-linear force (``f`` from negative to non-negative across a
    cell): ``x*``, a bound on ``|f(x*)|`` as computed, then ``(r, k_lo, k_hi)`` for radii ``r`` halving from the
    distance to the nearer end of the table and the box: the range of the table's slopes on the cells within
    ``r`` of ``x*`` (there ``f(x) = f(x*) + s (x − x*)`` with ``s`` in that range).  On a mirrored chart only
    zeros at ``x* > 0``, the radii below ``x*``."""
    nodes = np.asarray(nodes, dtype=np.float64)
    table = np.asarray(table, dtype=np.float64)
    slope = np.diff(table) / np.diff(nodes)
    cross = np.flatnonzero((table[:-1] < 0.0) & (table[1:] >= 0.0) & np.isfinite(slope))
    rows, cells, spans = [], [], []
    for j in cross:
        xs = min(max(nodes[j] - table[j] / slope[j], nodes[j]), nodes[j + 1])
        reach = min(xs - nodes[0], nodes[-1] - xs, hi - xs, (xs if mirrored else xs - lo))
        if not reach > 0.0:
            continue
        phi = abs(slope[j] * (xs - nodes[j]) + table[j]) + 1e-12 * (abs(table[j]) + abs(table[j + 1]))
        row = [xs, phi]
        r = 0.999 * reach
        for _ in range(TRAP_RADII):
            j0 = max(int(np.searchsorted(nodes, xs - r, side="right")) - 1, 0)
            j1 = min(int(np.searchsorted(nodes, xs + r, side="left")), slope.size)
            k = slope[j0:j1]
            row += [r, float(k.min()), float(k.max())] if k.size and np.all(np.isfinite(k)) else [0.0, 0.0, 0.0]
            r *= 0.5
        rows.append(row)
        cells.append(j)
        # the largest slope between each node and the zero's cell (both included)
        span = np.empty(nodes.size)
        span[: j + 1] = np.maximum.accumulate(slope[: j + 1][::-1])[::-1]
        span[j + 1:] = np.maximum.accumulate(slope[j:])
        spans.append(span)
    return (np.array(rows, dtype=np.float64).reshape(len(rows), 2 + 3 * TRAP_RADII), np.array(cells, dtype=np.int64),
            np.array(spans, dtype=np.float64).reshape(len(rows), nodes.size))


def descent_paths_reference(force_at, x0: float, rates, profile, optimizer: str, momentum: float,
                            lo: float, hi: float, mirrored: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """NumPy reference of :func:`descent_paths` for any vectorised ``force_at(x)`` (all rates at once)."""
    rates = np.asarray(rates, dtype=np.float64)
    rule = _rule(optimizer)
    mu = float(momentum) if rule != GD else 0.0
    x = np.full(rates.size, float(x0))
    v = np.zeros(rates.size)
    alive = np.ones(rates.size, dtype=bool)
    origin = 0.0 if mirrored else float(x0)
    peak = np.abs(x - origin)
    for scale in profile:
        eta = rates * scale
        g = np.sign(x) * force_at(np.abs(x)) if mirrored else force_at(x)
        g = np.where(alive, g, 0.0)
        if rule == GD:
            x = x - eta * g
        else:
            v = mu * v + g
            x = x - eta * (g + mu * v if rule == NESTEROV else v)
        with np.errstate(invalid="ignore"):
            out = (np.abs(x) > hi) if mirrored else (x > hi) | (x < lo)
        out |= ~np.isfinite(x)
        alive &= ~out
        x, v = np.where(alive, x, x0), np.where(alive, v, 0.0)
        peak = np.where(alive, np.maximum(peak, np.abs(x - origin)), peak)
    return alive, peak
