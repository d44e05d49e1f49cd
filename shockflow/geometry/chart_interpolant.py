"""The loss along a 1-D chart from a Chebyshev interpolant of known accuracy.

The extraction reads ``L̄`` along a chart many times: a minimum search on 129-point grids that
zoom in twice, the 801 cell centres of the PDE's initial data, a 601-point escape profile and a
321-point ridge window.  ``L̄`` along a chart of a smooth network (tanh, gelu, sigmoid; any
analytic section) is analytic on the chart box, so a Chebyshev interpolant through a few dozen
values represents it to rounding level, and every later read costs a polynomial evaluation
instead of a forward pass over the data.

**Construction** (:class:`ChartInterpolant`).  ``L̄`` at the Chebyshev points
``x_j = c + h cos(πj/N)`` of the chart box ``[c − h, c + h]`` (``N = 16, 32, …, 256``, nested: each
doubling reuses every earlier value), coefficients ``a_k`` of ``p_N = Σ a_k T_k`` by the discrete
cosine transform, Clenshaw evaluation (``numpy.polynomial.chebyshev.chebval``).

**Accuracy.**  For ``f = Σ_k a_k T_k`` with absolutely summable coefficients the interpolant obeys
``‖f − p_N‖∞ ≤ 2 Σ_{k>N} |a_k|`` (Trefethen, *Approximation Theory and Approximation Practice*,
Thm 4.2).  The tail is estimated from the computed coefficients: the interpolant is accepted when
the last eighth of them (at least four) sum to at most ``tol · max|L̄|`` (``tol = 1e-13``); with the
geometric decay of an analytic function the unseen tail is smaller still, and ``bound = 2 × that
sum`` is what :attr:`ChartInterpolant.bound` reports.  A loss whose coefficients do not decay that
fast by ``N = 256`` (a ReLU network's kinks, a landscape with features finer than the box / 100)
is not interpolated: :func:`chart_loss_at` then evaluates it directly, so the fast path never
trades accuracy for speed.  ``tests/geometry/test_chart_interpolant.py`` checks the interpolant
against the direct evaluation on a tanh network's chart, and that a kinked loss is refused.

**On a bracket** (:func:`interpolated_reader`): the saddle chain searches the minimum of a chart at every
saddle on a bracket of it, once per chart and saddle (a new reference each time, so nothing is reused
between searches).  The reader fits the interpolant on the bracket (from ``N = 8``, doubled up to
``max_degree``), reads the bracket's points from it and evaluates any point outside the bracket directly;
a search then costs the fit's ``N + 1`` network passes however many points it reads (the 33-point scan and six
3-point refinement rounds it replaced: 57).  ``None`` where the fit does not converge by ``max_degree``:
the caller evaluates directly.

**Probes** (:func:`probe`): the extraction's minimum search widens a chart's box until its minimum is interior
(:func:`shockflow.prediction.extraction._find_minimum`).  It first reads each box at the 9 Chebyshev points of
degree 8, every other point of the interpolant's first grid (``N = 16``): a fit that follows starts from them and
evaluates the other 8 only, with the same points and values, so the same coefficients bit for bit; a box the probe
shows too small is widened without its fit.

**Where it is not used.**  Models whose loss follows from data moments
(:mod:`shockflow.geometry.moments`) are already exact at ``O(o d²)`` per point; charts of more
than one axis are evaluated directly.
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["ChartInterpolant", "chart_loss_at", "interpolable", "interpolated_reader", "probe", "TOLERANCE",
           "MAX_DEGREE", "PROBE_DEGREE"]

#: accepted tail of the Chebyshev coefficients, relative to max |L̄| on the box
TOLERANCE = 1e-13
#: the largest degree tried (257 loss evaluations) before falling back to direct evaluation
MAX_DEGREE = 256


def _coefficients(values: np.ndarray) -> np.ndarray:
    """Chebyshev coefficients of the interpolant through ``values`` at ``cos(πj/N)``, j = 0..N."""
    N = values.size - 1
    ext = np.concatenate([values, values[-2:0:-1]])
    c = np.fft.rfft(ext).real / N
    c[0] /= 2.0
    c[N] /= 2.0
    return c[:N + 1]


class ChartInterpolant:
    """``L̄`` on a 1-D chart box ``[lower, upper]`` as a Chebyshev series (module docstring).

    ``ChartInterpolant.fit(loss, lower, upper)`` with ``loss(points (m, 1)) -> (m,)`` returns the
    interpolant, or ``None`` if the coefficients have not decayed to ``tol`` by ``max_degree``."""

    def __init__(self, lower: float, upper: float, coefficients: np.ndarray, bound: float, evaluations: int):
        self.lower, self.upper = float(lower), float(upper)
        self.coefficients = coefficients
        self.bound = float(bound)            # estimated max |L̄ − p_N| on the box
        self.evaluations = int(evaluations)  # loss evaluations spent on the fit

    @classmethod
    def fit(cls, loss, lower: float, upper: float, *, tol: float = TOLERANCE,
            max_degree: int = MAX_DEGREE, start: int = 16, probed: np.ndarray | None = None):
        """``probed``: the loss at the ``start // 2 + 1`` Chebyshev points of degree ``start // 2`` (a
        :func:`probe`), the first grid's every other point: only the others are evaluated, and the fit is the
        one without them bit for bit (the same points, the same values)."""
        centre, half = 0.5 * (lower + upper), 0.5 * (upper - lower)
        N = start
        if probed is not None and start % 2 == 0 and np.size(probed) == start // 2 + 1:
            values = np.empty(N + 1)
            values[0::2] = probed
            values[1::2] = loss((centre + half * np.cos(np.pi * np.arange(1, N, 2) / N))[:, None])
        else:
            values = loss((centre + half * np.cos(np.pi * np.arange(N + 1) / N))[:, None])
        while True:
            if not np.all(np.isfinite(values)):
                return None
            c = _coefficients(values)
            tail = float(np.sum(np.abs(c[-max(4, (N + 1) // 8):])))
            scale = float(np.max(np.abs(values)))
            if tail <= tol * scale:
                return cls(lower, upper, c, 2.0 * tail, N + 1)
            if 2 * N > max_degree:
                return None
            # the doubled grid: the even points are the old ones, only the odd ones are new
            odd = centre + half * np.cos(np.pi * np.arange(1, 2 * N, 2) / (2 * N))
            new = np.empty(2 * N + 1)
            new[0::2] = values
            new[1::2] = loss(odd[:, None])
            values, N = new, 2 * N

    def __call__(self, points) -> np.ndarray:
        """``p_N`` at chart points ``(..., 1)``: shape ``points.shape[:-1]``."""
        x = np.asarray(points, dtype=np.float64)[..., 0]
        t = (2.0 * x - (self.lower + self.upper)) / (self.upper - self.lower)
        return np.polynomial.chebyshev.chebval(np.clip(t, -1.0, 1.0), self.coefficients)


_FITS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _interpolant(geo, X, y):
    """The interpolant of ``geo``'s chart loss on ``(X, y)`` (cached per geometry object and data
    arrays), or ``None`` where it does not apply or does not converge."""
    from shockflow.geometry.moments import moments_apply

    if geo.dim != 1 or moments_apply(geo.model):
        return None
    try:
        fits = _FITS.setdefault(geo, {})
    except TypeError:   # a geometry that cannot be weakly referenced: no cache, no interpolant
        return None
    key = (id(X), id(y))
    if key in fits and fits[key][0]() is X and fits[key][1]() is y:
        return fits[key][2]
    lo, hi = geo.chart.lower[0], geo.chart.upper[0]
    probed = _PROBES.get(geo, {}).get(key)
    probed = probed[2] if probed is not None and probed[0]() is X and probed[1]() is y else None
    fit = ChartInterpolant.fit(lambda p: geo.chart_loss(p, X, y), lo, hi, probed=probed)
    try:
        fits[key] = (weakref.ref(X), weakref.ref(y), fit)
    except TypeError:
        pass
    return fit


#: the degree of :func:`probe`'s points: every other point of the first grid of a chart's interpolant
PROBE_DEGREE = 8

_PROBES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def probe(geo, X, y) -> tuple[np.ndarray, np.ndarray] | None:
    """``(points, L̄ there)``: ``geo``'s chart loss at the :data:`PROBE_DEGREE` + 1 Chebyshev points of its chart box
    (descending: the box's upper end first), the first grid's every other point of the chart's interpolant, which
    starts from them when it is fitted (:meth:`ChartInterpolant.fit`, ``probed``): a look at the box for
    :data:`PROBE_DEGREE` + 1 passes that the fit does not pay again.  None where the chart is not
    :func:`interpolable` or cannot be weakly referenced."""
    if not interpolable(geo):
        return None
    lo, hi = geo.chart.lower[0], geo.chart.upper[0]
    N = PROBE_DEGREE
    points = 0.5 * (lo + hi) + 0.5 * (hi - lo) * np.cos(np.pi * np.arange(N + 1) / N)
    values = np.asarray(geo.chart_loss(points[:, None], X, y), dtype=np.float64).reshape(-1)
    try:
        _PROBES.setdefault(geo, {})[(id(X), id(y))] = (weakref.ref(X), weakref.ref(y), values)
    except TypeError:
        return None
    return points, values


def chart_loss_at(geo, points, X, y) -> np.ndarray:
    """``geo.chart_loss(points, X, y)``, read from the chart's interpolant where one of the stated
    accuracy exists (1-D chart, smooth loss; module docstring), evaluated directly otherwise."""
    fit = _interpolant(geo, X, y)
    if fit is None:
        return geo.chart_loss(points, X, y)
    return fit(geo.chart.check(points))


def interpolable(geo) -> bool:
    """Whether ``geo``'s chart loss is worth interpolating: a 1-D chart whose loss is not evaluated from data
    moments (those cost ``O(o d²)`` per point, a few dozen interpolation nodes would cost more)."""
    from shockflow.geometry.moments import moments_apply

    return geo.dim == 1 and not moments_apply(geo.model)


def interpolated_reader(loss, lower: float, upper: float, *, start: int = 8, max_degree: int = 64):
    """``read(xs (m,)) -> (m,)``: the loss at chart points ``xs``, from a Chebyshev interpolant on ``[lower, upper]``
    of stated accuracy (:class:`ChartInterpolant`, :data:`TOLERANCE`) for the points inside it, by ``loss(points
    (m, 1))`` for the points outside it (module docstring, "On a bracket"); ``None`` if the interpolant does not
    converge by ``max_degree``.  ``read.interpolant`` is the fit."""
    if not upper > lower:
        return None
    fit = ChartInterpolant.fit(loss, lower, upper, start=start, max_degree=max_degree)
    if fit is None:
        return None

    def read(xs) -> np.ndarray:
        x = np.asarray(xs, dtype=np.float64).reshape(-1)
        inside = (x >= fit.lower) & (x <= fit.upper)
        out = np.empty(x.size)
        out[inside] = fit(x[inside, None])
        if not np.all(inside):
            out[~inside] = loss(x[~inside, None])
        return out

    read.interpolant = fit
    return read
