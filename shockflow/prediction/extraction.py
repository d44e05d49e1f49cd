"""Extraction: a network, its data and its initial parameters -> 1-D PDE problems on quotient charts.

For each chart of a quotient geometry (docs/theory.md §1; one chart per mode or unit, chosen by a
geometry keyword such as ``modes`` for ``gram`` or ``unit`` for ``rescaling``) this module builds
the Hamilton–Jacobi problem

    ∂_γ u + ½ a(x) (∂_x u)² = ν Δ_g u,        u(x, 0) = L̄(x)

and everything a reader needs to see what was solved:

* **initial data** ``u0 = L̄`` at the cell centres, evaluated at the geometry's sections in one
  batched pass (:meth:`Geometry.chart_loss`); all other parameters are held at their *initial*
  values (the geometry is bound to the model at its initial parameters);
* **mobility** ``a = g^xx`` at the cell centres and the **conserved quantities** of the initial
  parameters (:meth:`Geometry.conserved`);
* the **initial coordinate** ``x0`` (the geometry's ``start_coordinate(params, X, y)`` where it has one: the
  point the escape starts from when it is not the coordinates of the initial parameters, e.g. the aligned
  start of a chain, docs/theory.md §6) and the **quotient trajectory** (the coordinates of the
  logged parameter snapshots; for figures and for the chart box only);
* the **landscape minimum** ``x_min`` of ``L̄`` along the chart on the side of ``x0`` (the first
  local minimum downhill from ``x0``; the global one on a mirrored chart; found by widening the
  chart until the minimum is interior) and the **escape profile**: ``|a ∂_x L̄|``
  sampled log-uniformly from ``x0`` towards ``x_min`` up to the point where the mode is half learned
  (the geometry's strength half way from ``x0``'s to ``x_min``'s: what the parameter truth reads; where
  ``L̄`` is quadratic in the strength, the point where it has fallen by 3/4 of ``L̄(x0) − L̄(x_min)``)
  (for a degenerate ridge's escape integral);
* the **viscosity** ``ν = T/2`` from the gradient-noise temperature *projected onto the chart*
  (docs/theory.md §1, "Temperature"): per-sample chart gradients ``g_i = ∂_x ℓ_i`` at ``x0`` (central
  differences of batched per-sample losses) give ``σ_x² = Var_i g_i``; one step moves ``x`` by
  ``-η a ḡ_B`` with variance ``η² a² σ_x² f/B`` (``f = (n−B)/(n−1)``, the finite-population factor:
  zero for full-batch GD), i.e. a diffusion ``T a`` with ``T = η a σ_x² f / (2B)``;
* the **ridge**: the cell of most negative quotient curvature ``sqrt(a) ∂_x(sqrt(a) ∂_x L̄)``,
  refined to the slowest point of the flat-coordinate flow ``|sqrt(a) ∂_x L̄|`` within two cells
  of it or of the flat bottom of the curvature (within 1% of its minimum) (the shock's place, to better than the grid; its speed there is ``ridge_speed``);
* the **metric along the chart**: ``g^xx`` on a log-refined set of points (quotient distances
  ``d = ∫ dx/sqrt(g^xx)`` for the prediction);
* the **chart box**: the hull of ``x0``, ``x_min`` and the trajectory, widened by ``margin``.

**Periodic charts** (``sphere``'s great circle) are unrolled to one period with the start a quarter
period from the wall behind it (downhill ahead), so the ridge next to it and the minimum are
interior points of the solver's non-periodic grid.

**Mirrored charts.**  A chart whose lower bound is 0 with an even mirror there (``gram`` in
``r = sqrt z``: ``L̄`` depends on ``r²``) is unfolded to ``[-R, R]`` with ``u0(x) = L̄(|x|)``, so the
ridge at ``r = 0`` — where the first shock forms — is an interior point rather than a wall.

**Later saddles.**  Every chart is extracted with the other parameters at their initial values (the
origin of the saddle chain); how each chart's rate and exit change at the saddles the network visits
later is :mod:`shockflow.prediction.saddle_chain`'s.

Nothing here reads the loss series of the training log (the trajectory is parameter snapshots).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from shockflow.geometry.base import Chart
from shockflow.geometry.chart_interpolant import chart_loss_at, probe
from shockflow.prediction.truth import strength_along, strength_of

__all__ = ["ChartData", "Extraction", "ExtractionError", "bind_geometry", "chart_geometry", "chart_temperature", "check_frozen",
           "downhill_index", "escape_points", "escape_profile", "extract"]

#: how many times the chart may be widened (x4 each) to find the landscape minimum
_WIDEN = 8


class ExtractionError(ValueError):
    """A chart could not be extracted (no minimum along the chart, a geometry refusing the model)."""


@dataclass(frozen=True, eq=False)
class ChartData:
    """One extracted 1-D chart (see the module docstring for every field's meaning)."""

    label: str
    geometry: str
    selector: Any
    coordinate: str
    x: np.ndarray              # cell centres (unfolded to [-R, R] when mirrored)
    u0: np.ndarray             # L̄ at x
    mobility: np.ndarray       # g^xx at x
    lower: float
    upper: float
    mirrored: bool
    x0: float                  # initial coordinate
    x_min: float               # landscape minimum on the side of x0
    loss_at_min: float
    escape_x: np.ndarray       # log-uniform points from x0 to x_min
    escape_rate: np.ndarray    # |a ∂_x L̄| at escape_x
    metric_x: np.ndarray       # sorted points of the chart box, log-refined around 0 and x0
    metric_a: np.ndarray       # g^xx there (quotient distance d = ∫ dx / sqrt(a))
    trajectory_steps: np.ndarray
    trajectory: np.ndarray
    conserved: dict = field(default_factory=dict)
    ridge: float = float("nan")        # where the quotient curvature of L̄ is most negative, refined
    ridge_speed: float = float("nan")  # |sqrt(a) ∂_x L̄| there: the flow speed in the flat coordinate
    gamma_data: float = float("inf")   # −1/min of the quotient curvature of u0 (inf: nowhere negative)
    sigma2: float = 0.0        # per-sample variance of the chart gradient at x0
    temperature: float = 0.0   # η a σ_x² f/(2B)
    nu: float = 0.0            # T/2
    trajectory_strength: np.ndarray | None = None  # the geometry's mode strength along the trajectory
    # ... and at the origin's x_min (the saddle chain moves ``x_min`` to the saddle the chart escapes from, not this:
    # the parameter truth's target, shockflow.prediction.truth)
    strength_at_min: float = float("nan")
    # the chart's own geometry settings where they are not the extraction's (a chart through a later saddle,
    # shockflow.prediction.saddle_plateau: its ``geometry`` built with these, no selector); None: the extraction's
    geometry_kwargs: dict | None = None

    @property
    def dx(self) -> float:
        return float(self.x[1] - self.x[0])


@dataclass(frozen=True, eq=False)
class Extraction:
    charts: tuple[ChartData, ...]
    geometry: str
    geometry_kwargs: dict
    log_temperature: float = float("nan")   # isotropic T of the log at step 0 (reference only)
    chart_key: str = "modes"                 # the geometry keyword that selects a chart


def _per_sample_losses(model, params, X, y) -> np.ndarray:
    """Per-sample losses ``(B, n)`` at ``B`` parameter sets."""
    from shockflow.geometry.batched_loss import batched_sample_losses

    return batched_sample_losses(model, params, X, y)


def chart_temperature(geo, x0: float, X, y, *, lr: float, batch_size: int, n_total: int,
                      samples: int = 512, seed: int = 0, mirrored: bool = False) -> tuple[float, float]:
    """``(σ_x², T)``: per-sample chart-gradient variance at ``x0`` and the projected temperature
    ``T = η a(x0) σ_x² f/(2B)`` (module docstring).  ``f = (n−B)/(n−1)``: 0 for full batch."""
    n = X.shape[0]
    idx = _noise_sample(n, int(samples), int(seed))
    m = idx.size
    lo, hi = geo.chart.lower[0], geo.chart.upper[0]
    h = 1e-5 * (hi - lo)
    centre = float(np.clip(abs(x0) if mirrored else x0, lo + h, hi - h))
    pts = np.array([[centre + h], [centre - h]])
    ell = _per_sample_losses(geo.model, geo.section(pts), X[idx], y[idx])
    g = (ell[0] - ell[1]) / (2 * h)
    sigma2 = float(np.var(g, ddof=1)) if m > 1 else 0.0
    a = float(geo.mobility(np.array([[centre]]))[0, 0, 0])
    f = (n_total - batch_size) / (n_total - 1) if n_total > 1 else 0.0
    return sigma2, lr * a * sigma2 * f / (2.0 * batch_size)


@functools.lru_cache(maxsize=8)
def _noise_sample(n: int, samples: int, seed: int) -> np.ndarray:
    """The sorted sample indices of :func:`chart_temperature` (the same for every chart of one extraction: a
    permutation of ``n`` drawn once, not once per chart); read-only."""
    m = min(samples, n)
    idx = np.sort(np.random.default_rng(seed).choice(n, size=m, replace=False)) if m < n else np.arange(n)
    idx.flags.writeable = False
    return idx


class _Centred:
    """A periodic 1-D chart unrolled to one period with the reference point ``c`` a quarter period
    from the wall behind it (downhill ahead: ``[c - P/4, c + 3P/4)`` if ``L̄`` falls towards larger
    coordinates, else ``[c - 3P/4, c + P/4)``), so the start, the ridge next to it and the minimum
    reached downhill are interior points of the non-periodic solver grid.  Points are wrapped into the
    geometry's own box; everything else is the geometry's."""

    def __init__(self, geo, X, y):
        self._geo = geo
        lo, hi = geo.chart.lower[0], geo.chart.upper[0]
        self._lo, self._period = lo, hi - lo
        c = float(geo.coordinates(geo.model.params)[0])
        h = 1e-6 * self._period
        up, down = geo.chart_loss(self._wrap(np.array([[c + h], [c - h]])), X, y)
        self._start = c - (0.25 if up <= down else 0.75) * self._period
        self.chart = Chart(geo.chart.names, (self._start,), (self._start + self._period,), periodic=(False,),
                           degenerate=geo.chart.degenerate)

    def _wrap(self, points):
        return self._lo + np.mod(np.asarray(points, dtype=np.float64) - self._lo, self._period)

    def coordinates(self, params):
        return self._start + np.mod(self._geo.coordinates(params) - self._start, self._period)

    def chart_loss(self, points, X, y):
        return self._geo.chart_loss(self._wrap(points), X, y)

    def mobility(self, points):
        return self._geo.mobility(self._wrap(points))

    def section(self, points):
        return self._geo.section(self._wrap(points))

    def __getattr__(self, name):
        return getattr(self._geo, name)


def chart_geometry(extraction, chart, chart_key: str | None = None) -> tuple[str, dict]:
    """``(geometry name, keyword arguments)`` that build ``chart``'s geometry: its own where it carries them
    (``ChartData.geometry_kwargs``), else the extraction's with the chart's selector under ``chart_key`` (default: the
    extraction's)."""
    if chart.geometry_kwargs is not None:
        return chart.geometry, dict(chart.geometry_kwargs)
    kwargs = dict(extraction.geometry_kwargs)
    if chart.selector is not None:
        kwargs[chart_key or extraction.chart_key] = chart.selector
    return extraction.geometry, kwargs


def bind_geometry(name: str, model, kwargs: dict, X, y):
    """The geometry ``name`` bound to ``model`` (its reference), periodic charts unrolled (:class:`_Centred`)."""
    from shockflow import geometry

    geo = geometry.build(name, model=model, **kwargs)
    if geo.dim == 1 and geo.chart.periodic[0]:
        return _Centred(geo, X, y)
    return geo


def downhill_index(geo, pts, L, x0: float, X, y) -> int:
    """Index of the first local minimum of the samples ``L`` at ``pts`` reached by walking downhill
    from ``x0`` (the side of ``x0`` where the flow goes, read from ``L̄`` at ``x0 ± 1e-3 |x0|``: a ridge
    with two basins — a ReLU unit's kink at ``q = 0`` — is left towards the one the flow enters, not the
    deeper one).  The global minimum if ``L̄`` is flat at ``x0``."""
    h = 1e-3 * abs(x0) if x0 != 0 else 1e-9 * (pts[-1] - pts[0])
    lo, hi = geo.chart.lower[0], geo.chart.upper[0]
    xm, xp = max(x0 - h, lo), min(x0 + h, hi)
    Lm, Lp = geo.chart_loss(np.array([[xm], [xp]]), X, y)
    if Lm == Lp:
        return int(np.argmin(L))
    if Lp < Lm:
        k = int(np.searchsorted(pts, x0, side="right"))
        while k + 1 < pts.size and L[k + 1] <= L[k]:
            k += 1
    else:
        k = int(np.searchsorted(pts, x0, side="left")) - 1
        while k - 1 >= 0 and L[k - 1] <= L[k]:
            k -= 1
    return min(max(k, 0), pts.size - 1)


def _find_minimum(name, model, kwargs, x0: float, mirrored: bool, X, y, samples: int = 129, geo=None,
                  reach: float | None = None):
    """Widen the chart (``extent`` x4) until the minimum of L̄ on the side of ``x0`` is interior.
    ``geo``: the geometry already bound with ``kwargs`` (bound here if not given).  ``reach``: where the previous
    chart's minimum lay (``|x_min|``): on a mirrored chart the boxes that end below it are passed without a look, as
    a probe passes them (below), and decided again the same way, so the box returned is the same; the slower modes'
    minima lie near the faster ones' (mlp-tanh-teacher: four of its five charts' first probes spared).

    A mirrored chart whose loss is interpolated first looks at each box through :func:`probe`'s 9 points (every
    other point of the interpolant's first grid, not evaluated again when it is fitted): where the lowest of them
    is the box's upper end, the box is taken to be too small and widened without its interpolant.  Once a box
    holds its minimum, each box skipped that way is decided again as the widening decides it (the minimum of its
    129 samples read from the larger box's interpolant, which holds it to 1e-13): the first box whose minimum is
    interior is the one returned, as without the probes (also where every probe misjudged its box: the last box
    is always fitted); the probes only spare the fits of the boxes the search passes (mlp-tanh-teacher's five
    charts: 251 chart-loss points instead of 347, the minima bit for bit).

    Returns ``(geometry, x_min, L̄(x_min))``."""
    kw = dict(kwargs)
    geo = bind_geometry(name, model, kw, X, y) if geo is None else geo
    skipped = []    # the geometries of the boxes passed unseen or on their probe alone
    for attempt in range(_WIDEN):
        lo, hi = geo.chart.lower[0], geo.chart.upper[0]
        pts = np.linspace(lo, hi, samples)
        passable = mirrored and _widens(geo, kw) and attempt < _WIDEN - 1
        below = passable and reach is not None and geo.chart.upper[0] < reach
        looked = probe(geo, X, y) if passable and not below else None
        if below or (looked is not None and int(np.argmin(looked[1])) == 0 and looked[1][0] < looked[1][1]):
            skipped.append(geo)
        else:
            L = chart_loss_at(geo, pts[:, None], X, y)
            k = int(np.argmin(L)) if mirrored else downhill_index(geo, pts, L, x0, X, y)
            found = _first_interior(skipped, geo, samples, X, y)
            if found is not None:    # a box passed on its probe holds the minimum after all: it decides
                geo = found
                pts = np.linspace(geo.chart.lower[0], geo.chart.upper[0], samples)
                L = chart_loss_at(geo, pts[:, None], X, y)
                return _zoomed(geo, pts, L, int(np.argmin(L)), samples, X, y)
            skipped.clear()
            if not (k >= samples - 3 or (k <= 2 and not mirrored)):
                return _zoomed(geo, pts, L, k, samples, X, y)
        if not _widens(geo, kw):
            break
        kw["extent"] = 4.0 * float(getattr(geo, "extent", kw.get("extent", 1.0)))
        geo = bind_geometry(name, model, kw, X, y)
    raise ExtractionError(
        f"geometry {name!r} chart {geo.chart.names[0]!r}: L̄ keeps decreasing away from x0 = {x0:.4g} up to "
        f"the chart edge {geo.chart.upper[0]:.4g} (widened {_WIDEN} times); no minimum to escape to")


def _first_interior(skipped, larger, samples: int, X, y):
    """The first of the ``skipped`` boxes (geometries of mirrored charts passed without their fits) whose
    minimum over its ``samples`` points is interior, read from the ``larger`` box's chart loss (its interpolant
    holds the smaller boxes); None if none is."""
    for geo in skipped:
        pts = np.linspace(geo.chart.lower[0], geo.chart.upper[0], samples)
        if int(np.argmin(chart_loss_at(larger, pts[:, None], X, y))) < samples - 3:
            return geo
    return None


def _widens(geo, kw) -> bool:
    """Whether :func:`_find_minimum` can widen ``geo``'s chart (an ``extent`` setting)."""
    return "extent" in kw or hasattr(geo, "extent")


def _zoomed(geo, pts, L, k: int, samples: int, X, y):
    """``(geo, x_min, L̄(x_min))`` from the samples ``L`` at ``pts`` and their minimum ``k``: zoom twice onto the
    bracket around the minimum (each 64x finer: a minimum next to the start, where the escape path is short, needs
    it), then the parabola through the three samples around the finest minimum: its vertex and its value there."""
    for _ in range(2):
        k = min(max(k, 1), samples - 2)
        pts = np.linspace(pts[k - 1], pts[k + 1], samples)
        L = chart_loss_at(geo, pts[:, None], X, y)
        k = int(np.argmin(L))
    k = min(max(k, 1), samples - 2)
    y0, y1, y2 = L[k - 1], L[k], L[k + 1]
    denom = y0 - 2 * y1 + y2
    # the vertex, kept inside its bracket [pts[k-1], pts[k+1]] (a nearly flat minimum would otherwise put
    # it beyond the chart's end: r < 0 on a mirrored chart)
    t = float(np.clip(0.5 * (y0 - y2) / denom, -1.0, 1.0)) if denom > 0 else 0.0
    xm = float(pts[k] + t * (pts[1] - pts[0]))
    return geo, xm, float(y1 + 0.5 * t * (y2 - y0) + 0.5 * t * t * denom)   # the parabola's value at xm


def escape_points(x0: float, x_min: float) -> np.ndarray:
    """The points of :func:`escape_profile`'s path from ``x0`` towards ``x_min`` (before it is cut where the mode is
    half learned): log-uniform, log-refined on both sides of 0 where the path crosses it."""
    a0, a1 = x0, x_min
    if a0 != 0 and a1 != 0 and np.sign(a0) == np.sign(a1):
        return np.sign(a1) * np.geomspace(abs(a0), abs(a1), 601)
    if a0 != 0 and a1 != 0:  # the path crosses 0: log-refine both sides of it
        tiny = 1e-4 * min(abs(a0), abs(a1))
        return np.concatenate([np.sign(a0) * np.geomspace(abs(a0), tiny, 120), [0.0],
                               np.sign(a1) * np.geomspace(tiny, abs(a1), 481)])
    return np.linspace(a0, a1, 601)


def escape_profile(geo, x0: float, x_min: float, L_min: float, X, y, *, path: np.ndarray | None = None,
                   path_loss: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The escape profile ``(x, |a ∂_x L̄|)``: log-uniform points from ``x0`` towards the minimum ``x_min``
    (the gradient by the geometry, not the grid), ending where the mode is half learned: the geometry's
    strength half way from its value at ``x0`` to the one at ``x_min`` (shockflow.prediction.truth reads the same
    point on the run).  Where ``L̄`` is quadratic in the strength (``L̄ = ½(s − z)²``) that is also where ``L̄`` has
    dropped by 3/4 of ``L̄(x0) − L̄(x_min)``, the loss detector's midpoint; where it is not (softmax attention in
    its QK form: the loss has lost 3/4 before the product is half learned) the strength decides; a chart whose
    strength does not move along the path falls back to the loss.  Coordinates as the geometry takes them
    (``|x|`` on a mirrored chart).  A geometry whose start coordinate was defined by a flow of its own (a chain's
    aligned start) gives the rates before that flow's end itself (its ``aligned_escape``).  ``path``,
    ``path_loss``: :func:`escape_points` ``(x0, x_min)`` and ``L̄`` there, where the caller has them already
    (evaluated in one batch with other points)."""
    ex = escape_points(x0, x_min) if path is None else np.asarray(path)
    L_path = chart_loss_at(geo, ex[:, None], X, y) if path_loss is None else np.asarray(path_loss)
    strength = _strength_on_path(geo, ex, X)
    half = strength[0] + 0.5 * (strength[-1] - strength[0])
    if np.all(np.isfinite(strength)) and strength[-1] != strength[0]:
        # the mode half learned (its strength half way to the minimum's): what the truth reads
        below = np.nonzero(np.sign(strength[-1] - strength[0]) * (strength - half) >= 0)[0]
    else:
        below = np.nonzero(L_path <= L_min + 0.25 * (L_path[0] - L_min))[0]
    end = max(int(below[0]) if below.size else ex.size - 1, 1)
    grad = np.gradient(L_path, ex)[:end + 1]  # second order on the path
    ex = ex[:end + 1]
    rate = np.abs(geo.mobility(ex[:, None])[:, 0, 0] * grad)
    aligned = getattr(geo, "aligned_escape", None)   # the mode's own path before its start's flow ends (chains)
    return ex, (rate if aligned is None else aligned(ex, rate, X, y))


#: points of the escape path at which a strength read from the network's function is evaluated before the
#: half-way crossing is searched (a forward pass each; interpolated in between).  The crossing, and so the profile's
#: end, is the same for any number where the strength is monotone between the coarse points: 5 points, then about
#: 3 of the interpolation search on a 601-point path (9 points and 7 bisection steps before, 25 and 5 before that)
_FUNCTION_STRENGTH_POINTS = 5


def _strength_on_path(geo, ex: np.ndarray, X) -> np.ndarray:
    """The mode strength along the escape path ``ex`` (:func:`shockflow.prediction.truth.strength_along`).  A
    strength read from the network's function is evaluated at :data:`_FUNCTION_STRENGTH_POINTS` of the path's
    points; its first half-way crossing between two of them is searched down to adjacent points (the strength is
    taken monotone there: :func:`_adjacent_crossing`), and the rest is interpolated linearly in the point index
    (the path is log-spaced): exact on both sides of the crossing, where :func:`escape_profile` ends."""
    if getattr(geo, "function_strength_at", None) is None or ex.size <= _FUNCTION_STRENGTH_POINTS:
        return strength_along(geo, ex[:, None], X)
    known = {}

    def at(indices):
        new = [int(i) for i in indices if int(i) not in known]
        if new:
            for i, v in zip(new, strength_along(geo, ex[new, None], X)):
                known[i] = float(v)
        return np.array([known[int(i)] for i in indices])

    coarse_at = np.unique(np.linspace(0, ex.size - 1, _FUNCTION_STRENGTH_POINTS).round().astype(int))
    coarse = at(coarse_at)
    half = coarse[0] + 0.5 * (coarse[-1] - coarse[0])
    sign = np.sign(coarse[-1] - coarse[0])
    crossed = np.flatnonzero(sign * (coarse - half) >= 0)
    if np.all(np.isfinite(coarse)) and crossed.size and crossed[0] > 0:
        # interpolated in ln|s − s(x0)| against ln|half − s(x0)|: the strength grows like a power of the distance
        # (exponentially in the log-spaced index) until it nears its end
        gap = math.log(abs(half - coarse[0])) if half != coarse[0] else -math.inf

        def log_gap(value: float) -> float:
            d = sign * (value - coarse[0])
            return math.log(d) - gap if d > 0 else -math.inf

        def side(i: int):
            value = float(at([i])[0])
            return bool(sign * (value - half) >= 0), log_gap(value)

        j = int(crossed[0])
        _adjacent_crossing(side, int(coarse_at[j - 1]), int(coarse_at[j]), log_gap(coarse[j - 1]), log_gap(coarse[j]))
    points = np.array(sorted(known))
    return np.interp(np.arange(ex.size), points, np.array([known[i] for i in points]))


def _adjacent_crossing(f, lo: int, hi: int, v_lo: float, v_hi: float) -> tuple[int, int]:
    """Adjacent indices ``(i, i + 1)`` between which ``f`` crosses, inside ``[lo, hi]``: ``f(i) -> (crossed, v)``,
    not crossed at ``lo``, crossed at ``hi`` and monotone between (``v_lo``, ``v_hi`` its ``v`` there).  ``v`` is a
    coordinate that crosses 0 where ``f`` does, about linear in the index: the last index before the crossing is
    interpolated in it and tried, then the next one (the pair, where the interpolation was right to one index).
    Two such rounds in a row that do not halve the bracket (or a ``v`` that cannot be interpolated) make the next
    round a bisection, after which one slow round is allowed before the next: at most about three evaluations per
    halving, against one for a bisection; about 3 in all where ``v`` is near linear, against 8 for a bisection of the
    150-point bracket between two of five coarse points of an escape path."""
    slow = 0
    while hi - lo > 1:
        span = hi - lo
        if slow >= 2 or not (math.isfinite(v_lo) and math.isfinite(v_hi) and v_hi > v_lo):
            i = (lo + hi) // 2
            crossed, v = f(i)
            lo, v_lo, hi, v_hi = (lo, v_lo, i, v) if crossed else (i, v, hi, v_hi)
            slow = 1
            continue
        k = min(max(lo + int(math.floor(span * (-v_lo) / (v_hi - v_lo))), lo + 1), hi - 1)
        for i in (k, k + 1):   # the last index before the interpolated crossing, then the one after it
            if i >= hi:
                break
            crossed, v = f(i)
            if crossed:
                hi, v_hi = i, v
                break
            lo, v_lo = i, v
        slow = slow + 1 if hi - lo > span // 2 else 0
    return lo, hi


def _extract_chart(base, init, sel, geometry, kwargs, chart_key, X, y, snapshots, lr, B, n, cells, margin,
                   noise_samples, seed, reach=None):
    """One chart (see :func:`extract`); returns ``(ChartData, geometry bound to base)``.  ``reach``: where the
    previous chart's minimum lay (:func:`_find_minimum`)."""
    from shockflow.geometry import GeometryError

    kw = dict(kwargs)
    if sel is not None:
        kw[chart_key] = sel
    geo = bind_geometry(geometry, base, kw, X, y)
    if geo.dim != 1:
        raise GeometryError(f"{chart_key}: each chart must be 1-D for the prediction, found a {geo.dim}-D "
                            f"chart ({', '.join(geo.chart.names)}) for {chart_key} = {sel!r}")
    start = getattr(geo, "start_coordinate", None)   # where the escape starts, if not at the coordinates
    x0 = float((start(init, X, y) if start is not None else geo.coordinates(init))[0])
    mirrored = geo.chart.lower[0] == 0.0 and not geo.chart.periodic[0]
    geo, x_min, L_min = _find_minimum(geometry, base, kw, x0, mirrored, X, y, geo=geo, reach=reach)
    steps = np.zeros(0, dtype=np.int64)
    traj = np.zeros(0)
    if snapshots is not None and "step" in snapshots:
        steps = np.asarray(snapshots["step"], dtype=np.int64)
        traj = np.array([geo.coordinates({k: snapshots[k][i] for k in init})[0] for i in range(steps.size)])
    pts = np.concatenate([[x0, x_min], traj])
    if mirrored:
        R = float(np.max(np.abs(pts))) * (1.0 + margin)
        R = min(R, geo.chart.upper[0])
        lower, upper = -R, R
    else:
        span = float(pts.max() - pts.min()) or abs(x_min) or 1.0
        lower = max(float(pts.min()) - margin * span, geo.chart.lower[0])
        upper = min(float(pts.max()) + margin * span, geo.chart.upper[0])
    h = (upper - lower) / cells
    x = lower + h * (np.arange(cells) + 0.5)
    xe = np.abs(x) if mirrored else x
    a0, a1 = (abs(x0), abs(x_min)) if mirrored else (x0, x_min)
    path = escape_points(a0, a1)
    # the initial data and the escape path in one evaluation of the chart loss
    both = chart_loss_at(geo, np.concatenate([xe, path])[:, None], X, y)
    u0 = both[:cells]
    mob = geo.mobility(xe[:, None])[:, 0, 0]
    ex, rate = escape_profile(geo, a0, a1, L_min, X, y, path=path, path_loss=both[cells:])
    # the ridge: most negative quotient curvature sqrt(a)(sqrt(a) u0')' on the grid, refined to the
    # slowest point of the flat-coordinate flow |sqrt(a) ∂_x L̄| near it (window below)
    ra = np.sqrt(mob)
    hess = ra * np.gradient(ra * np.gradient(u0, h), h)
    cut = max(int(0.05 * cells), 2)
    k = cut + int(np.argmin(hess[cut:-cut]))
    ridge, ridge_speed = float("nan"), float("nan")
    gamma_data = -1.0 / hess[k] if hess[k] < 0 else float("inf")
    if hess[k] < 0:
        # the window: at least two cells each side, and the whole flat bottom of the curvature (within
        # 1% of its minimum: for a cosine-like ridge the grid argmin wanders over many cells)
        lo_k, hi_k = k, k
        while lo_k > cut and hess[lo_k - 1] <= 0.99 * hess[k]:
            lo_k -= 1
        while hi_k < cells - cut - 1 and hess[hi_k + 1] <= 0.99 * hess[k]:
            hi_k += 1
        xr = np.linspace(x[min(lo_k, k - 2)] if lo_k >= 2 else x[k] - 2 * h,
                         x[max(hi_k, k + 2)] if hi_k + 2 < cells else x[k] + 2 * h, 321)
        xr_e = np.abs(xr) if mirrored else xr
        slope = np.gradient(chart_loss_at(geo, xr_e[:, None], X, y), xr)
        speed = np.abs(np.sqrt(geo.mobility(xr_e[:, None])[:, 0, 0]) * slope)
        j = int(np.argmin(speed))
        ridge, ridge_speed = float(xr[j]), float(speed[j])
    span = upper - lower
    fine = np.geomspace(1e-12 * span, span, 1500)
    mx = np.concatenate([np.linspace(lower, upper, 4001), fine, -fine, x0 + fine, x0 - fine, [0.0, x0, x_min]])
    mx = np.sort(mx[(mx >= lower) & (mx <= upper)], kind="stable")   # sorted runs: timsort merges them (np.unique
    mx = mx[np.concatenate(([True], mx[1:] != mx[:-1]))]               # quicksorts, 5x slower at these 10 000 points)
    ma = geo.mobility((np.abs(mx) if mirrored else mx)[:, None])[:, 0, 0]
    sigma2, T = chart_temperature(geo, x0, X, y, lr=lr, batch_size=B, n_total=n, samples=noise_samples,
                                  seed=seed, mirrored=mirrored)
    label = geo.chart.names[0]
    return ChartData(
        label=label, geometry=geometry, selector=sel, coordinate=geo.chart.names[0], x=x, u0=u0,
        mobility=mob, lower=lower, upper=upper, mirrored=mirrored, x0=x0, x_min=x_min,
        loss_at_min=L_min, escape_x=ex, escape_rate=rate, metric_x=mx, metric_a=ma, ridge=ridge, ridge_speed=ridge_speed,
        trajectory_steps=steps, trajectory=traj,
        trajectory_strength=(np.array([strength_of(geo, {k: snapshots[k][i] for k in init}, X)
                                       for i in range(steps.size)], dtype=np.float64)
                             if getattr(geo, "function_strength", None) is not None
                             else np.asarray(geo.strength(np.asarray(traj, dtype=np.float64).reshape(-1, 1)))[:, 0]),
        strength_at_min=float(strength_along(geo, np.array([[x_min]]), X)[0]),
        conserved={k: np.asarray(v).tolist() for k, v in geo.conserved(init).items()},
        sigma2=sigma2, temperature=T, nu=0.5 * T, gamma_data=gamma_data), geo


def check_frozen(geo, points, init: Mapping, frozen: Sequence[str], where: str) -> None:
    """Raise :class:`ExtractionError` if the geometry's section at chart ``points (k, 1)`` moves a frozen
    parameter away from its initial value in ``init`` (``where`` names the geometry and chart)."""
    if not frozen:
        return
    section = geo.section(np.asarray(points, dtype=np.float64).reshape(-1, 1))
    for key in frozen:
        ref = np.asarray(init[key])
        moved = float(np.max(np.abs(np.asarray(section[key]) - ref[None])))
        if moved > 1e-12 * max(1.0, float(np.max(np.abs(ref)))):
            raise ExtractionError(f"frozen: {where} moves the frozen parameter {key!r} (by up to {moved:.3g} along "
                                  f"its section), which training holds at its initial values, so its charts cannot "
                                  f"predict this run; unfreeze {key!r}, or chart it with a geometry that holds it "
                                  f"(the automatic charts: no [geometry] table)")


def extract(model, geometry: str, X, y, *, geometry_kwargs: Mapping | None = None,
            charts: Sequence = (None,), chart_key: str = "modes", snapshots: Mapping | None = None,
            lr: float, batch_size: int, cells: int = 801, margin: float = 0.25,
            noise_samples: int = 512, seed: int = 0, log_temperature: float = float("nan"),
            on_chart: Callable[[str, int, int], None] | None = None, frozen: Sequence[str] = ()) -> Extraction:
    """Extract one :class:`ChartData` per entry of ``charts``.

    ``model``: the network *at its initial parameters* (it is copied; the geometry is bound to the
    copy).  ``charts``: values of the geometry keyword ``chart_key`` (``None``: the geometry's own
    chart); each must give a 1-D chart.  ``snapshots``: the log's ``{"step": (k,), name: (k, ...)}``
    (the trajectory; optional).  ``lr``, ``batch_size`` (B) and ``X.shape[0]`` (n) enter the
    projected temperature.  Raises :class:`shockflow.geometry.GeometryError` for a bad geometry
    keyword and :class:`ExtractionError` when a chart has no minimum.  Every chart is extracted at the
    initial parameters; the saddles visited later are :mod:`shockflow.prediction.saddle_chain`'s.
    ``on_chart(label, done, total)``, if given, is called after each chart extraction.
    ``frozen``: parameters the training holds at their initial values.  A geometry with a ``frozen``
    setting (the automatic charts) is given them and charts the free parameters only; every chart's
    section is then checked to leave them at their initial values (:func:`check_frozen`), so a geometry
    that moves one is refused naming it.
    """
    base = model.copy()
    init = {k: np.array(v) for k, v in base.params.items()}
    kwargs = dict(geometry_kwargs or {})
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = X.shape[0]
    B = int(batch_size)
    raw = list(charts)
    frozen = tuple(frozen)
    if frozen:
        from dataclasses import fields as _fields

        from shockflow.geometry import geometry_class

        if any(f.name == "frozen" for f in _fields(geometry_class(geometry))):
            kwargs["frozen"] = frozen
    if raw == [None]:
        from shockflow.geometry import geometry_class

        found = geometry_class(geometry).discover_charts(base, X, y, kwargs)
        if found is not None:
            kwargs, raw, chart_key = found
    args = (geometry, kwargs, chart_key, X, y, snapshots, lr, B, n, cells, margin, noise_samples, seed)
    out, reached = [], None
    for sel in raw:
        chart, geo = _extract_chart(base, init, sel, *args, reach=reached)
        reached = abs(chart.x_min) if chart.mirrored else None
        ends = np.abs([chart.lower, chart.upper, chart.x0, chart.x_min]) if chart.mirrored else \
            np.array([chart.lower, chart.upper, chart.x0, chart.x_min])
        check_frozen(geo, ends, init, frozen, f"the {geometry!r} geometry's chart {chart.label}")
        out.append(chart)
        if on_chart is not None:
            on_chart(out[-1].label, len(out), len(raw))
    labels = [cd.label for cd in out]
    if len(set(labels)) < len(labels):
        # charts of one kind (rescaling's q0 of every unit): the label names the selector too
        out = [replace(cd, label=f"{cd.label}_{chart_key}{cd.selector}") for cd in out]
    return Extraction(tuple(out), geometry, kwargs, float(log_temperature), chart_key)
