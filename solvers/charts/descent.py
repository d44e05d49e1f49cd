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
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["descent_paths", "descent_paths_reference", "first_departure"]

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
def _path(nodes, table, guess_scale, x0, rate, profile, steady, rule, mu, mirrored, lo, hi):
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
            if step == save:
                xs, vs = x, v
                save = steady + 2 * (save - steady) + 1
    return True, far, profile.size


@numba.njit(cache=True)
def _descent_kernel(nodes, table, x0, rates, profile, steady, rule, mu, mirrored, lo, hi, alive, peak, ran):
    guess_scale = (nodes.size - 1) / (nodes[nodes.size - 1] - nodes[0])
    for j in range(rates.size):
        stayed, far, steps = _path(nodes, table, guess_scale, x0, rates[j], profile, steady, rule, mu, mirrored,
                                   lo, hi)
        alive[j] = stayed
        peak[j] = far
        ran[j] = steps


@numba.njit(cache=True)
def _first_departure_kernel(nodes, table, x0, rates, stop, profile, steady, rule, mu, mirrored, lo, hi):
    guess_scale = (nodes.size - 1) / (nodes[nodes.size - 1] - nodes[0])
    for j in range(stop):
        stayed, _, _ = _path(nodes, table, guess_scale, x0, rates[j], profile, steady, rule, mu, mirrored, lo, hi)
        if not stayed:
            return j
    return stop


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
                    mirrored: bool = False, stop: int | None = None) -> int:
    """The index of the first of ``rates[:stop]`` whose path leaves (``stop`` if none does): what
    ``np.argmin(alive)`` of :func:`descent_paths` gives when some path leaves, with the rates after it not run."""
    nodes, table, rates, profile = _checked(nodes, table, rates, profile)
    rule = _rule(optimizer)
    mu = float(momentum) if rule != GD else 0.0
    stop = rates.size if stop is None else max(0, min(int(stop), rates.size))
    return int(_first_departure_kernel(nodes, table, float(x0), rates, stop, profile, _steady(profile), rule, mu,
                                       bool(mirrored), float(lo), float(hi)))


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
