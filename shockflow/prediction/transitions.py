"""Find phase transitions (plateau, then a sudden drop) in a loss curve.

``find_transitions(steps, loss) -> list[Transition]``. The method, step by step:

1. **Log-log coordinates.** u = ln t, y = ln L (step 0 and exact zeros of the loss, e.g.
   underflow after a perfect fit, are dropped; negative or non-finite losses are errors).
   A pure power law L ∝ t^{-α} is a straight line, so its drop rate r(u) = −dy/du = α is constant; the drops of
   a staircase (docs/theory.md §2: switch-on at t*_k ≈ ln(1/ε)/(aζ_k), width ~1/(aζ_k)) all have
   about the same width ~1/ln(1/ε) in u, so one smoothing scale suits them all.
2. **Robust resampling.** y is binned on a uniform u-grid (``bins_per_decade``); each bin
   takes the *median* of its samples (robust to SGD noise and outliers); empty bins (sparse
   early steps) are filled by linear interpolation.
3. **Smoothing and rate.** A Savitzky–Golay filter (window ``smooth_decades``, polynomial
   order ``polyorder``) gives the smoothed y and r = −dy/du.
4. **Background.** b(u) = the smaller of the centred and the trailing running medians of r
   over ``background_decades``; the excess rate e = r − b is what a transition adds to the
   local (e.g. power-law) decay, so smooth power-law decay between drops has e ≈ 0. (The
   trailing median keeps a drop that never returns to a plateau, such as the last mode decaying
   to zero, whose rate grows like t, from becoming its own background.)
5. **Peaks.** the local maxima of e (``smoothing.find_peaks``), padded with e = 0 at both ends (so a drop that
   is still going at the end of the log still counts), with prominence ≥ ``min_prominence``;
   a peak must also exceed, in height and prominence, ``noise_factor`` standard deviations
   of the rate noise at that point. That noise is propagated from the scatter of the samples
   about the smoothed curve through the linear Savitzky–Golay filter, taking the local sample
   density into account (``_rate_noise``), so sparse, noisy early logs are not over-trusted.
6. **Extent.** onset/end = where the linear-time excess rate q = e/t falls below
   ``edge_fraction`` × its peak, walking out from the peak (for an interior drop q and e peak
   together; for a drop still running at the end q saturates, which puts the onset where the
   drop really starts). Detections whose extents overlap are merged (the more prominent wins).
7. **Minimum drop.** Keep a transition only if the loss it removes beyond the background,
   ∫ e du over [onset, end], is at least ln(1/(1 − ``min_drop``)), i.e. the loss falls by a
   fraction ``min_drop`` more than the background decay alone would give, and if at least
   ``min_samples`` logged points fall inside [onset, end]. A drop already under way at the first
   logged step (no plateau seen before it) is not reported.
8. **Midpoint.** For a squared-error loss a mode contributes V(1 − s)² with s its learned
   fraction (docs/theory.md §2, L = Σ V_k (1 − z_k/z_k∞)²), and the switch-on time is s = 1/2. So the
   midpoint is where L − L_after = (L_before − L_after)/4: the step at which half the drop's
   *amplitude* is learned. L_before/L_after are read on the plateaus, the points of least decay
   rate within ``plateau_decades`` before the onset / after the end, on a lightly smoothed
   curve (cubic, ``midpoint_smooth_decades``) from which the local background decay
   (min of the plateau rates and the background there, ≥ 0) is removed linearly in ln t.
   The steepest point of log L (``steepest``) lies later: for L = A + V(1−s)² with A/V = 0.1
   it sits at s ≈ 0.58, a bias of ≈0.3/(aζ) in time, several per cent of t*; we report both.
9. **Suddenness.** A logistic switch-on rises from onset to midpoint in a fraction
   ~3/ln(1/ε) of its time, well under half a decade for ε ≲ 10⁻²; an exponential relaxation
   L = A + V e^{−ct} takes a decade or more. Drops with log10(midpoint/onset) above
   ``max_rise_decades`` are slow relaxations and are not reported.  A staircase whose drops overlap (no plateau
   between them) can read as one such fall, the most prominent detection's extent running from the first onset to
   the last end: the peaks inside it that it had overlapped are then picked again beside the detections kept, each
   ending at the valleys of e between it and its neighbouring peaks (a tester's CNN, drops at 74, 161 and 378 by its
   parameter truth: nothing found before, 72.7 and 171.4 now; of 251 logs of earlier rounds three others change,
   two gaining drops the parameter truth has).

10. **Close drops and sparse logs** (issue 17).  Each detection is refitted on the logged points
   of its window (the plateau before to the plateau after, step 0 included) by the switch-on model
   of docs/theory.md §2, ln L = ln(A + Σ_k V_k (1 − σ(r_k (t − t_k)))²) − β ln(1 + t) (σ the logistic, exact
   for a mode of a two-layer net under gradient flow), by Levenberg–Marquardt with the model's analytic
   Jacobian (MINPACK's lmder through ``scipy.optimize.leastsq``; the model and its Jacobian compiled,
   :mod:`solvers.switch_on`, equal to its NumPy reference to the last bit).  A ladder of fits, K = 1, 2, …,
   each K started from the K − 1 fit (one more switch-on at its largest residual; the switch-on there split in
   two; the quantiles of the drop), climbs while each added
   switch-on lowers the residual sum of squares by more than ``split_factor`` (and to ``max_components`` + 1),
   then comes back down (each K refitted from the K + 1 fit without its smallest switch-on).  The count is
   the **elbow of the residual gains** G_K = rss_{K−1}/rss_K: K switch-ons where G_K ≥ ``split_factor`` and
   G_K ≥ ``split_factor`` × G_{K+1}, the largest such ratio first, among the fits whose switch-ons each carry
   at least ``min_share`` of the window's drop and lie inside the window; else one.  A single drop that is not
   a logistic switch-on (a direction on the sphere, a mean-field population, a Gompertz curve) is approximated
   better and better by more switch-ons with gains of one order after another (measured: sphere 38, 24, 20;
   mean-field 161, 117, 112, 8, elbow 14 at four; Saxe 160, 174, 18.5, elbow 9.4): no elbow, one transition.
   K close drops give one large gain at K and small ones after it (the teacher (8, 7, 6): 61, 2585, 3.9, elbow
   671 at three).  An elbow whose fit puts a switch-on outside the window (the next drop's onset) or one with
   less than ``min_share`` (the curvature of a plateau's end) is not a count.  Residuals are floored at
   ``_RMS_FLOOR`` (rounding), so an exact fit is an elbow; noise is a floor too: a switch-on is counted only
   where the fit without it misses ln L by several times the noise of the fitted points (three synthetic drops
   of the (8, 7, 6) shape with 2 % noise per logged step are two or one, ``docs/prediction.md``).  K > 1 switch-ons are reported as K transitions (midpoint t_k;
   onset/end where σ = 0.05/0.95) if each has ``min_samples`` logged points within its onset–end;
   otherwise (too sparse to place them), and where two midpoints are closer than half an e-folding
   time 1/(2 r), they cannot be told apart and are reported as ONE transition with ``count`` = the
   number it stands for.  For K = 1 the midpoint of item 8 stays, except where the
   log is sparser than the midpoint smoothing around the crossing: there the fit's t_1 is used
   (the logistic interpolates between the logged points exactly where the smoothed curve cannot).
   A detection running back to the first positive logged step is kept if the loss at step 0
   equals the smoothed loss there within the scatter (a plateau was logged before it).
11. **Consistency.** A midpoint always lies in [onset, end]: a half-amplitude crossing outside the
   drop's extent is searched again inside it, and failing that the steepest point is used.

12. **A rate the log cannot fix** (issue 17: the default case logged every 50th step, whose first drop is about
   25 steps wide and has two logged points inside it).  A switch-on has three parameters of its own (amplitude,
   midpoint, rate); where fewer than three logged points fall inside its onset–end the free fit is exact on any
   rate and its midpoint is arbitrary (it was 6 % late).  The switch-ons of one staircase share r_k t_k: a mode
   switches on at t_k ≈ ln(1/ε)/(aζ_k) with width ~1/(aζ_k) (docs/theory.md §2), so r_k t_k ≈ ln(1/ε) for all k
   (measured 14–19 on the four drops of the default case).  Such a switch-on is refitted with its rate tied to
   its midpoint, r = c / t_1, c the median r_k t_k of the curve's switch-ons that the log does determine; with
   none of those the free fit stays.

All steps reported are on the original step axis (interpolated, so they are floats).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from shockflow.prediction.smoothing import find_peaks, running_median, savgol_coeffs, savgol_filter

__all__ = ["CurveTooShort", "Transition", "TransitionSettings", "find_transitions", "transitions_table"]


@dataclass(frozen=True)
class Transition:
    """One detected drop. Steps are floats on the original step axis.

    onset, midpoint, end : start, half-amplitude point and end of the drop
    steepest : step of the largest excess drop rate −d ln L/d ln t
    loss_before, loss_after : smoothed loss at onset and at end (the midpoint uses the plateaus)
    sharpness : peak excess rate −d ln L/d ln t above the background (dimensionless)
    drop : ln(loss_before/loss_after) minus the background decay over the same interval
    """

    onset: float
    midpoint: float
    end: float
    steepest: float
    loss_before: float
    loss_after: float
    sharpness: float
    drop: float
    count: int = 1     # >1: a merged transition, the number of switch-ons it stands for (item 10)

    def to_dict(self) -> dict[str, float]:
        """The eight stable float columns (``count`` is an attribute of its own)."""
        return {k: float(v) for k, v in asdict(self).items() if k != "count"}

    def table(self) -> str:
        return transitions_table([self])


@dataclass(frozen=True)
class TransitionSettings:
    """Detector parameters (defaults in brackets; see the module docstring for their role)."""

    bins_per_decade: int = 200         # resolution of the log-step grid
    smooth_decades: float = 0.1        # Savitzky–Golay window for detection, in decades of steps
    polyorder: int = 2                 # Savitzky–Golay polynomial order for detection
    midpoint_smooth_decades: float = 0.05  # lighter cubic Savitzky–Golay window for the midpoint
    plateau_decades: float = 0.3       # how far beyond onset/end to look for the plateaus
    background_decades: float = 1.0    # running-median window of the background rate
    edge_fraction: float = 0.1         # onset/end where the excess rate < this × peak
    min_drop: float = 0.25             # minimum relative loss drop beyond the background
    min_prominence: float = 0.5        # absolute floor on the excess-rate prominence
    noise_factor: float = 6.0          # prominence ≥ this × robust noise of the excess rate
    min_samples: int = 8               # a transition must span at least this many logged points
    max_rise_decades: float = 0.5      # onset → midpoint must take at most this many decades
    max_components: int = 4            # switch-ons fitted per detection (1: no refit of close drops)
    split_factor: float = 20.0         # a switch-on counts if it lowers the residuals by this factor, and this
                                       # times more than the next one does (the elbow, item 10)
    min_share: float = 0.1             # ... and each must carry at least this share of the drop

    def __post_init__(self):
        checks = [("bins_per_decade", self.bins_per_decade >= 10 and isinstance(self.bins_per_decade, int)),
                  ("smooth_decades", self.smooth_decades > 0),
                  ("midpoint_smooth_decades", self.midpoint_smooth_decades > 0),
                  ("plateau_decades", self.plateau_decades > 0), ("polyorder", 1 <= self.polyorder <= 5),
                  ("background_decades", self.background_decades > 0),
                  ("edge_fraction", 0 < self.edge_fraction < 1), ("min_drop", 0 < self.min_drop < 1),
                  ("min_prominence", self.min_prominence >= 0), ("noise_factor", self.noise_factor >= 0),
                  ("min_samples", isinstance(self.min_samples, int) and self.min_samples >= 1),
                  ("max_rise_decades", self.max_rise_decades > 0),
                  ("max_components", isinstance(self.max_components, int) and self.max_components >= 1),
                  ("split_factor", self.split_factor > 1), ("min_share", 0 < self.min_share < 0.5)]
        for name, ok in checks:
            if not ok:
                raise ValueError(f"TransitionSettings: invalid {name} = {getattr(self, name)!r}")


def transitions_table(transitions: list[Transition]) -> str:
    """A fixed-width text table, one row per transition, stable column names."""
    cols = ["onset", "midpoint", "end", "steepest", "loss_before", "loss_after", "sharpness", "drop"]
    lines = ["  ".join(f"{c:>12s}" for c in cols)]
    for tr in transitions:
        d = tr.to_dict()
        lines.append("  ".join(f"{d[c]:12.5g}" for c in cols))
    return "\n".join(lines)


class CurveTooShort(ValueError):
    """A loss curve with too few usable rows, or too short a span of steps, for the detector (a log scale needs
    at least 8 rows with a positive step and loss over 0.2 decades)."""


def _validate(steps, loss) -> tuple[np.ndarray, np.ndarray]:
    steps = np.asarray(steps, dtype=np.float64)
    loss = np.asarray(loss, dtype=np.float64)
    if steps.ndim != 1 or loss.ndim != 1 or steps.shape != loss.shape:
        raise ValueError(f"find_transitions: steps and loss must be 1-D arrays of equal length, got shapes "
                         f"{steps.shape} and {loss.shape}")
    if not np.all(np.isfinite(steps)) or np.any(np.diff(steps) <= 0):
        raise ValueError("find_transitions: steps must be finite and strictly increasing")
    bad = ~np.isfinite(loss) | (loss < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"find_transitions: loss must be finite and >= 0; loss[{i}] = {loss[i]} "
                         f"at step {steps[i]:g}")
    keep = (steps > 0) & (loss > 0)   # log scale: step 0 and exact zeros (underflow) carry no slope
    steps, loss = steps[keep], loss[keep]
    if steps.size < 8 or steps[-1] / steps[0] < 10 ** 0.2:
        got = (f"{steps.size}, from step {steps[0]:g} to {steps[-1]:g}" if steps.size else
               "none (every loss is 0, or every step is 0)" if keep.size else "none")
        raise CurveTooShort(f"find_transitions: need at least 8 rows with a positive step and a positive loss, spanning "
                         f"0.2 decades of steps (the detector works on log scales); got {got}")
    return steps, loss


def _binned_median(u: np.ndarray, y: np.ndarray, grid: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Median of y in each u-bin (empty bins linearly interpolated) and the sample count per bin."""
    idx = np.clip(np.round((u - grid[0]) / h).astype(np.int64), 0, grid.size - 1)
    order = np.argsort(idx, kind="stable")
    idx_s, y_s = idx[order], y[order]
    starts = np.flatnonzero(np.r_[True, np.diff(idx_s) > 0])
    stops = np.r_[starts[1:], idx_s.size]
    filled = idx_s[starts]
    med = np.array([np.median(y_s[a:b]) for a, b in zip(starts, stops)])
    counts = np.zeros(grid.size)
    counts[filled] = stops - starts
    return np.interp(np.arange(grid.size), filled, med), counts


def _rate_noise(u, y, grid, ys, counts, win, polyorder, h, bwin) -> np.ndarray:
    """Standard deviation of the smoothed rate r at each bin, from the scatter of the samples.

    σ_s(u): robust scatter of ln L about the smoothed curve (1.4826 × running median of
    |residual|, at least the global median). A bin median of c samples has variance ≈ (π/2) σ_s²/c; where samples are
    sparser than bins, ρ = local mean count < 1 and each sample stands for 1/ρ bins, so we use
    var_bin = (π/2) σ_s²/ρ with ρ the count averaged over the smoothing window. The rate is
    a linear filter Σ_j c_j y_{i+j}, so var(r_i) = Σ_j c_j² var_bin(i+j).
    """
    res = np.abs(y - np.interp(u, grid, ys))
    med_abs, _ = _binned_median(u, res, grid, h)
    # local scatter, floored by the global one: where samples are sparse the smoothed curve
    # follows them and the residuals understate the noise.
    sigma = 1.4826 * np.maximum(running_median(med_abs, bwin), np.median(res))
    rho = np.convolve(counts, np.ones(win) / win, mode="same")
    # where the samples are further apart than the window, one sample per gap (a bin between two
    # samples is interpolated from them, it is not empty; issue 17: sparse logs)
    filled = np.flatnonzero(counts > 0)
    if filled.size >= 2:
        gap = np.diff(filled).astype(np.float64)
        k = np.clip(np.searchsorted(filled, np.arange(counts.size), side="right") - 1, 0, gap.size - 1)
        rho = np.maximum(rho, 1.0 / gap[k])
    rho = np.maximum(rho, 1e-12)
    var_bin = (np.pi / 2) * sigma ** 2 / rho
    c = savgol_coeffs(win, polyorder, deriv=1, delta=h)
    return np.sqrt(np.convolve(var_bin, c ** 2, mode="same"))


def _background(rate: np.ndarray, bwin: int) -> np.ndarray:
    """Background drop rate: the smaller of the centred and the trailing running medians.

    The centred median is the local power-law slope; the trailing one (window ending at the
    point) keeps a drop that never returns to a plateau (the last mode decaying to zero, whose
    rate −d ln L/d ln t grows without bound) from becoming its own background.
    """
    centred = running_median(rate, bwin)
    padded = np.r_[np.full(bwin - 1, rate[0]), rate]
    trailing = np.median(np.lib.stride_tricks.sliding_window_view(padded, bwin), axis=1)
    return np.minimum(centred, trailing)


def _crossing(u: np.ndarray, y: np.ndarray, level: float, lo: int, hi: int) -> float | None:
    """u where the decreasing curve y crosses ``level`` in [lo, hi] (first crossing from the left)."""
    seg = y[lo:hi + 1]
    below = np.flatnonzero(seg <= level)
    if below.size == 0 or below[0] == 0:
        return None
    j = lo + below[0]
    y0, y1 = y[j - 1], y[j]
    w = (y0 - level) / (y0 - y1) if y0 != y1 else 0.5
    return float(u[j - 1] + w * (u[j] - u[j - 1]))


def _odd_window(decades: float, bins_per_decade: int, polyorder: int, n_grid: int) -> int:
    win = max(polyorder + 2, int(round(decades * bins_per_decade)))
    win += 1 - win % 2
    if win > n_grid:
        win = n_grid - (1 - n_grid % 2)
    if win <= polyorder:
        raise ValueError(f"find_transitions: the log covers too few decades ({n_grid} bins) for a "
                         f"smoothing window of {decades} decades")
    return win


_LN19 = float(np.log(19.0))

#: Levenberg–Marquardt from a start next to the answer converges in a few evaluations per parameter; a fit
#: still moving after this many slides along a degenerate valley (a vanishing or duplicated switch-on)
_NFEV_PER_PARAMETER = 30

#: rms of ln L below which residuals are rounding, not shape (a single-precision log holds ln L to ~1e-7)
_RMS_FLOOR = 1e-6


def _switch_on_model(p: np.ndarray, t: np.ndarray, K: int, jacobian: bool = False) -> np.ndarray:
    """ln of A + Σ_k V_k (1 − σ(r_k (t − t_k)))², times (1 + t)^−β (item 10); with ``jacobian`` its analytic
    Jacobian instead, columns (ln A, β, then ln V_k, t_k, ln r_k per switch-on).

    With g_k = 1 − σ(x_k), x_k = r_k (t − t_k) and S the sum: ∂/∂ln A = A/S, ∂/∂β = −ln(1 + t),
    ∂/∂ln V_k = w_k := V_k g_k²/S, ∂/∂t_k = 2 r_k w_k (1 − g_k), ∂/∂ln r_k = −2 x_k w_k (1 − g_k)
    (dg/dx = −g (1 − g)).  Parameters are clipped to keep exp finite; a clipped one has derivative 0."""
    value, J = _switch_on_value_and_jacobian(p, t, K, jacobian)
    return J if jacobian else value


def _switch_on_value_and_jacobian(p: np.ndarray, t: np.ndarray, K: int, jacobian: bool = True,
                                  log1p_t: np.ndarray | None = None, columns: bool = False):
    """``(value, Jacobian)`` of :func:`_switch_on_model` from one evaluation of the terms (Jacobian None
    unless asked): Levenberg–Marquardt asks for the Jacobian at 85–90 % of the points it evaluates.
    ``log1p_t``: ln(1 + t), computed once per fit; ``columns``: the Jacobian transposed, one row per parameter
    (MINPACK's column-major layout, no copy).  NumPy (:func:`solvers.switch_on.switch_on_log_model`); the fits
    use its compiled twin, equal to the last bit."""
    from solvers.switch_on import switch_on_log_model

    value, J = switch_on_log_model(p, t, K, jacobian, log1p_t)
    return value, (None if J is None else J if columns else J.T)


def _chunk_medians(t: np.ndarray, y: np.ndarray, limit: int = 400) -> tuple[np.ndarray, np.ndarray]:
    m = int(np.ceil(t.size / limit))
    if m <= 1:
        return t, y
    n = (t.size // m) * m
    tt, yy = t[:n].reshape(-1, m), y[:n].reshape(-1, m)
    return np.r_[tt.mean(axis=1), t[n:]], np.r_[np.median(yy, axis=1), y[n:]]


def _fit_one(t, y, K: int, starts) -> tuple[float, np.ndarray] | None:
    """The least-squares fit of K switch-ons to (t, ln L) from each start (Levenberg–Marquardt, analytic
    Jacobian); the best as (residual sum of squares, parameters), or None.

    MINPACK's ``lmder`` through :func:`scipy.optimize.leastsq` with the settings of
    ``least_squares(method="lm")`` (ftol = xtol = gtol = 1e-8, step bound factor 100, the variables scaled by
    the Jacobian's column norms); ``least_squares`` calls the same routine, but through wrappers that cost more
    than the model itself on a fit of a few hundred points.  A start whose residuals are not finite is
    skipped, as ``least_squares`` refuses it."""
    from scipy.optimize import leastsq

    from solvers.switch_on import switch_on_log_model_fast

    log1p_t = np.log1p(t)
    last = {}

    def evaluated(p):
        """Residuals and Jacobian rows at p, computed once: the Jacobian is asked at the point just evaluated."""
        key = p.tobytes()
        if key not in last:
            last.clear()
            value, J = switch_on_log_model_fast(p, t, K, True, log1p_t)
            last[key] = (value - y, J)
        return last[key]

    best = None
    for p0 in starts:
        x0 = np.asarray(p0, dtype=np.float64)
        if not np.all(np.isfinite(evaluated(x0)[0])):
            continue
        try:
            x, *_, info = leastsq(lambda p: evaluated(p)[0], x0, Dfun=lambda p: evaluated(p)[1], full_output=True,
                                  col_deriv=True, ftol=1e-8, xtol=1e-8, gtol=1e-8,
                                  maxfev=_NFEV_PER_PARAMETER * (3 * K + 2), factor=100.0, diag=None)
        except (ValueError, TypeError, FloatingPointError):
            continue
        rss = float(np.sum(evaluated(x)[0] ** 2))
        if np.isfinite(rss) and (best is None or rss < best[0]):
            best = (rss, x)
    return best


def _count_switch_ons(rss: list[float], n: int, split_factor: float) -> list[tuple[int, float]]:
    """The counts K the ladder of fits supports, with their elbow ratios, best first (item 10).

    ``rss[K - 1]`` is the residual sum of squares of the K-switch-on fit.  The gain of the K-th switch-on is
    G_K = rss_{K-1}/rss_K (residuals floored at ``_RMS_FLOOR`` rms).  K > 1 is supported where G_K ≥
    ``split_factor`` (the K-th switch-on explains a real part of the curve) and G_K ≥ ``split_factor`` × G_{K+1}
    (an elbow: the next one adds far less).  A single drop that is not exactly logistic is approximated better
    and better by more switch-ons, with gains of the same order one after another (no elbow); K drops show one
    large gain at K and small ones after it.  A K whose G_{K+1} was not fitted is not supported."""
    floored = [max(r, n * _RMS_FLOOR ** 2) for r in rss]
    gain = [np.inf] + [floored[k - 1] / floored[k] for k in range(1, len(floored))]   # gain[K - 1] = G_K
    out = []
    for K in range(2, len(floored)):
        elbow = gain[K - 1] / gain[K]
        if gain[K - 1] >= split_factor and elbow >= split_factor:
            out.append((K, elbow))
    return sorted(out, key=lambda ke: -ke[1])


def _drops_within(comps, t) -> np.ndarray:
    """The drop ``V (g(t_0) − g(t_end))``, ``g = (1 − σ(r (t − t_k)))²``, each switch-on ``(ln V, t_k, ln r)`` of
    ``comps`` makes over the steps ``t`` (0 where it is not finite: a degenerate switch-on)."""
    from scipy.special import expit

    with np.errstate(all="ignore"):
        V, tk, r = np.exp(comps[:, 0]), comps[:, 1], np.exp(comps[:, 2])
        g0, g1 = ((1.0 - expit(r * (x - tk))) ** 2 for x in (t[0], t[-1]))
        d = V * (g0 - g1)
    return np.where(np.isfinite(d), d, 0.0)


def _choose_fit(t, y, t_lo: float, t_hi: float, onset: float, end: float, s: "TransitionSettings", t_raw=None):
    """A ladder of fits with K = 1, 2, … switch-ons on (t, ln L), each K + 1 started from the K fit with one
    more switch-on where the K fit's residual is largest, with the switch-on there split in two, and from the
    quantiles of the drop; it climbs while each switch-on lowers the residuals by ``split_factor`` and up to
    ``max_components`` + 1 (the gain after the last count decides its elbow).  The count is chosen by
    ``_count_switch_ons`` among the fits whose switch-ons each carry ``min_share`` of the drop and lie in
    (t_lo, t_hi) (item 10).  Returns (K, rss, params, merged) or None; merged > K: the residuals want
    ``merged`` switch-ons inside [onset, end], too few logged points to place them."""
    La, Lb = np.exp(np.min(y[-3:])), np.exp(np.max(y[:3]))
    drop = max(Lb - La, 1e-12 * Lb)
    f = (y[0] - np.minimum.accumulate(y)) / max(y[0] - y.min(), 1e-300)

    def quantile_start(K):
        r0 = 2.0 * _LN19 * K / max(end - onset, 1e-9)
        p0 = [np.log(La), 0.0]
        for q in (np.arange(K) + 0.5) / K:
            p0 += [np.log(drop / K), float(t[min(int(np.searchsorted(f, q)), t.size - 1)]), np.log(r0)]
        return p0

    def grown_starts(p, K):
        tk = float(t[int(np.argmax(np.abs(_switch_on_model(p, t, K - 1) - y)))])
        added = list(p) + [np.log(drop / K), tk, float(np.max(p[4::3][:K - 1]))]
        comps = np.asarray(p[2:2 + 3 * (K - 1)]).reshape(K - 1, 3)
        j = int(np.argmin(np.abs(comps[:, 1] - tk) * np.exp(comps[:, 2])))
        lv, tj, lr = comps[j]
        split = list(p[:2]) + list(np.delete(comps, j, axis=0).ravel()) + [
            lv - np.log(2.0), tj - np.exp(-lr), lr, lv - np.log(2.0), tj + np.exp(-lr), lr]
        return [added, split, quantile_start(K)]

    first = _fit_one(t, y, 1, [quantile_start(1)])
    if first is None:
        return None
    ladder = [first]
    floor = t.size * _RMS_FLOOR ** 2
    while (len(ladder) <= s.max_components and 2 * (3 * len(ladder) + 5) <= t.size
           and (len(ladder) == 1 or max(ladder[-2][0], floor) >= s.split_factor * max(ladder[-1][0], floor))):
        nxt = _fit_one(t, y, len(ladder) + 1, grown_starts(ladder[-1][1], len(ladder) + 1))
        if nxt is None:
            break
        ladder.append(nxt)
    # back down: each K fit started from the K + 1 fit without its smallest switch-on (a climb can miss the
    # K-switch-on minimum that the fit with one more, idle, switch-on finds); smallest by the drop it makes
    # over the fitted steps, so that a degenerate one (an infinite amplitude switched on long before the
    # first step: a constant) goes first, not a real switch-on of small amplitude
    for K in range(len(ladder) - 1, 0, -1):
        comps = np.asarray(ladder[K][1][2:2 + 3 * (K + 1)]).reshape(K + 1, 3)
        start = list(ladder[K][1][:2]) + list(np.delete(comps, int(np.argmin(_drops_within(comps, t))),
                                                        axis=0).ravel())
        back = _fit_one(t, y, K, [start])
        if back is not None and back[0] < ladder[K - 1][0]:
            ladder[K - 1] = back

    raw = t if t_raw is None else t_raw
    for K, _ in _count_switch_ons([r for r, _ in ladder], t.size, s.split_factor):
        rss, p = ladder[K - 1]
        V, times, rates = np.exp(p[2::3][:K]), p[3::3][:K], np.exp(p[4::3][:K])
        if not (np.all(V / V.sum() >= s.min_share) and np.all((times > t_lo) & (times < t_hi))):
            continue
        logged = [np.count_nonzero(np.abs(raw - tk) <= _LN19 / max(r, 1e-300)) for tk, r in zip(times, rates)]
        if min(logged) >= s.min_samples:
            return K, rss, p, K
        if np.all((times >= onset) & (times <= end)):
            return 1, *ladder[0], K   # K switch-ons inside this drop, too few points to place them
    return 1, *ladder[0], 1


def _confirmed_by_fit(t_all, y_all, t_lo, t_hi, onset, end, s: "TransitionSettings") -> bool:
    """One switch-on fits the logged points in [t_lo, t_hi] ``split_factor`` times better than a smooth
    decay ln L = ln A − β ln(1 + t), with its midpoint inside [onset, end] (item 10).  The points are
    those of [onset, end] and two more on each side, within [t_lo, t_hi]."""
    i0 = max(int(np.searchsorted(t_all, onset)) - 2, int(np.searchsorted(t_all, t_lo)))
    i1 = min(int(np.searchsorted(t_all, end, side="right")) + 2, int(np.searchsorted(t_all, t_hi, side="right")))
    inside = np.zeros(t_all.size, dtype=bool)
    inside[i0:i1] = True
    if inside.sum() < 5:
        return False
    t, y = _chunk_medians(t_all[inside], y_all[inside], 200)
    design = np.column_stack([np.ones_like(t), -np.log1p(t)])
    null = float(np.sum((design @ np.linalg.lstsq(design, y, rcond=None)[0] - y) ** 2))
    La, Lb = np.exp(np.min(y)), np.exp(np.max(y))
    r0 = 2.0 * _LN19 / max(end - onset, 1e-9)
    with np.errstate(all="ignore"):
        one = _fit_one(t, y, 1, [[np.log(La), 0.0, np.log(max(Lb - La, 1e-300)), 0.5 * (onset + end), np.log(r0)]])
    if one is None:
        return False
    return bool(one[0] * s.split_factor < null and onset <= one[1][3] <= end)


def find_transitions(steps, loss, settings: TransitionSettings | None = None, **overrides) -> list[Transition]:
    """Detect plateau-then-drop transitions in (steps, loss); see the module docstring.

    ``settings`` (a ``TransitionSettings``) or keyword overrides of its fields set the detector.
    Returns the transitions ordered by step.
    """
    s = settings if settings is not None else TransitionSettings()
    if overrides:
        s = TransitionSettings(**{**asdict(s), **overrides})
    all_steps, all_loss = np.asarray(steps, dtype=np.float64), np.asarray(loss, dtype=np.float64)
    steps, loss = _validate(steps, loss)
    logged = all_loss > 0
    t_fit, y_fit = all_steps[logged], np.log(all_loss[logged])   # step 0 included (item 10)
    u_raw, y_raw = np.log(steps), np.log(loss)
    h = np.log(10.0) / s.bins_per_decade
    n_grid = int(np.floor((u_raw[-1] - u_raw[0]) / h)) + 1
    grid = u_raw[0] + h * np.arange(n_grid)
    y, counts = _binned_median(u_raw, y_raw, grid, h)

    # detection: smoothed drop rate, its background and its noise
    win = _odd_window(s.smooth_decades, s.bins_per_decade, s.polyorder, n_grid)
    ys = savgol_filter(y, win, s.polyorder)
    rate = -savgol_filter(y, win, s.polyorder, deriv=1, delta=h)
    bwin = max(3, int(round(s.background_decades * s.bins_per_decade)) | 1)
    bwin = min(bwin, n_grid - (1 - n_grid % 2))
    background = _background(rate, bwin)
    excess = rate - background
    sigma_rate = _rate_noise(u_raw, y_raw, grid, ys, counts, win, s.polyorder, h, bwin)

    padded = np.r_[0.0, excess, 0.0]
    peaks, prom = find_peaks(padded, s.min_prominence)
    peaks = peaks - 1
    thresh = s.noise_factor * sigma_rate[peaks]
    strong = (prom >= thresh) & (excess[peaks] >= thresh)
    # a peak the rate-noise test cannot confirm (a sharp drop between sparse logged points inflates the
    # scatter about the smoothed curve, which is then read as noise) is kept only if the switch-on
    # model fits the logged points of its window far better than a smooth decay (item 10)
    order = sorted(range(peaks.size), key=lambda i: (not strong[i], -prom[i]))
    peaks, prom, strong = peaks[order], prom[order], strong[order]

    # edges on the linear-time excess rate q = e/t ∝ −d ln L/dt − background: for an interior
    # drop it peaks where e does; for a drop still running at the end of the log (e grows ∝ t)
    # it saturates, which puts the onset where the drop really starts.
    q = excess * np.exp(-grid)
    reach = int(round(s.plateau_decades * s.bins_per_decade))
    min_log_drop = -np.log1p(-s.min_drop)
    ordered = np.sort(peaks)

    def pick(candidates, bounded=(), found=()):
        """The detections (lo, hi, peak, drop) of the candidate peaks, the most prominent first (items 6-7), beside
        those ``found`` already; a peak in ``bounded`` has its extent end at the valleys of e between it and its
        neighbouring peaks."""
        found = list(found)
        for p, pr, confirmed in candidates:
            floor, ceiling = 0, n_grid - 1
            if p in bounded:
                k = int(np.searchsorted(ordered, p))
                floor = ordered[k - 1] + int(np.argmin(excess[ordered[k - 1]:p + 1])) if k > 0 else 0
                ceiling = p + int(np.argmin(excess[p:ordered[k + 1] + 1])) if k + 1 < ordered.size else n_grid - 1
            detection = _detection(p, confirmed, floor, ceiling, found)
            if detection is not None:
                found.append(detection)
        return sorted(found)

    def _detection(p, confirmed, floor, ceiling, found):
        """Peak ``p``'s detection, None where it overlaps one of ``found`` or fails items 7 and 10."""
        lo = p
        while lo > floor and excess[lo - 1] > s.edge_fraction * excess[p]:
            lo -= 1
        qref = q[lo:p + 1].max()
        lo, hi = p, p
        while lo > floor and q[lo - 1] > s.edge_fraction * qref:
            lo -= 1
        while hi < ceiling and q[hi + 1] > s.edge_fraction * qref:
            hi += 1
        if any(not (hi < a or lo > b) for a, b, *_ in found):
            return None  # overlaps a more prominent detection
        drop = float(np.trapezoid(excess[lo:hi + 1], dx=h)) if hi > lo else 0.0
        if drop < min_log_drop:
            return None
        sparse_ok = counts[max(lo - reach, 0):hi + reach + 1].sum() + (t_fit[0] == 0 and lo - reach <= 0) >= 4
        if counts[lo:hi + 1].sum() < s.min_samples:
            if not sparse_ok:
                return None  # too few points
            confirmed = False  # a sparse log's drop: kept if the switch-on fit confirms it (below)
        if lo == 0 and not (t_fit[0] == 0 and abs(y_fit[0] - ys[0]) <= max(0.1 * drop, 3 * float(np.median(
                np.abs(y_raw - np.interp(u_raw, grid, ys)))))):
            return None  # already dropping at the first logged step: no plateau seen before it
        if not confirmed:
            a = max([lo - reach, 0] + [e for _, e, *_ in found if e < lo])
            b = min([hi + reach, n_grid - 1] + [o for o, *_ in found if o > hi])
            t_a = 0.0 if a == 0 else float(np.exp(grid[a]))
            if not _confirmed_by_fit(t_fit, y_fit, t_a, float(np.exp(grid[b])), float(np.exp(grid[lo])),
                                     float(np.exp(grid[hi])), s):
                return None
        return lo, hi, p, drop

    # midpoint: half-amplitude crossing of the locally detrended loss (module doc, item 8)
    mwin = _odd_window(s.midpoint_smooth_decades, s.bins_per_decade, 3, n_grid)
    ym = savgol_filter(y, mwin, 3)

    def place(found):
        """``(windows, slow)``: each detection's transition and fitting window, and the detections item 9 drops as
        slow relaxations."""
        windows, slow = [], []
        for i, (lo, hi, p, drop) in enumerate(found):
            prev_end = found[i - 1][1] if i > 0 else 0
            next_start = found[i + 1][0] if i + 1 < len(found) else n_grid - 1
            a0 = max(prev_end, lo - reach)
            before = a0 + int(np.argmin(rate[a0:lo + 1]))
            b1 = min(next_start, hi + reach)
            after = hi + int(np.argmin(rate[hi:b1 + 1]))
            b_loc = max(0.0, min(rate[before], rate[after], background[before]))
            detrended = ym + b_loc * (grid - grid[before])
            Yb, Ya = detrended[before], detrended[after]
            level = np.logaddexp(Ya, np.log(0.25) + np.log(-np.expm1(Ya - Yb)) + Yb) if Yb > Ya else Yb
            u_mid = _crossing(grid, detrended, level, before, after)
            if u_mid is None:
                u_mid = grid[p]
            if not (grid[lo] <= u_mid <= grid[hi]):   # item 11: a crossing outside the drop's extent
                u_in = _crossing(grid, detrended, level, lo, hi)
                u_mid = u_in if u_in is not None else grid[p]
            if (u_mid - grid[lo]) / np.log(10.0) > s.max_rise_decades:
                slow.append((lo, hi, p))
                continue  # a slow relaxation, not a sudden drop
            base = Transition(onset=float(np.exp(grid[lo])), midpoint=float(np.exp(u_mid)),
                              end=float(np.exp(grid[hi])), steepest=float(np.exp(grid[p])),
                              loss_before=float(np.exp(ys[lo])), loss_after=float(np.exp(ys[hi])),
                              sharpness=float(excess[p]), drop=drop)
            t_lo = 0.0 if a0 == 0 else float(np.exp(grid[a0]))
            windows.append((base, t_lo, float(np.exp(grid[b1]))))
        return windows, slow

    candidates = list(zip(peaks, prom, strong))
    found = pick(candidates)
    windows, slow = place(found)
    if slow:
        # a staircase whose drops overlap can read as one slow fall, dropped whole (item 9) with the drops inside it
        # that it had overlapped: those are picked again beside the detections kept, each ending at the valleys of e
        # beside it
        dropped = {p for *_, p in slow}
        kept = [d for d in found if d[2] not in dropped]
        inside = [c for c in candidates if c[0] not in dropped and any(lo <= c[0] <= hi for lo, hi, _ in slow)
                  and all(c[0] != d[2] for d in kept)]
        if inside:
            windows, _ = place(pick(inside, bounded={c[0] for c in inside}, found=kept))
    # item 12: first every detection on its own; a switch-on the log samples too sparsely to fix its rate is
    # then refitted with the rate the curve's well-sampled switch-ons share (r t = const)
    fitted = {}   # a window's ladder of fits, for the refit below (the same points, the same ladder)
    refined = [_refine(base, t_fit, y_fit, t_lo, t_hi, s, memo=fitted) for base, t_lo, t_hi in windows]
    shared = [rt for _, fits in refined for rt, determined in fits if determined]
    out = []
    for (base, t_lo, t_hi), (found_here, fits) in zip(windows, refined):
        if shared and len(fits) == 1 and not fits[0][1]:
            found_here, _ = _refine(base, t_fit, y_fit, t_lo, t_hi, s, rate_time=float(np.median(shared)),
                                    memo=fitted)
        out.extend(found_here)
    return out


def _determined(t_all, t_k: float, r_k: float) -> bool:
    """Whether the logged points fix a switch-on's three parameters (amplitude, midpoint, rate): at least three
    of them inside its onset–end, t_k ± ln 19 / r_k (item 12)."""
    return int(np.count_nonzero(np.abs(np.asarray(t_all) - t_k) <= _LN19 / max(r_k, 1e-300))) >= 3


def _fit_tied(t, y, t0: float, rate_time: float, t_lo: float, t_hi: float):
    """One switch-on fitted with its rate tied to its midpoint, r = ``rate_time`` / t_1 (item 12); ``(t_1, r)`` or None."""
    from scipy.optimize import least_squares

    La, Lb = np.exp(np.min(y)), np.exp(np.max(y))

    def resid(q):
        tk = min(max(q[3], 1e-300), 1e300)
        return _switch_on_model(np.array([q[0], q[1], q[2], tk, np.log(rate_time / tk)]), t, 1) - y

    best = None
    for start in (t0, 0.5 * (t_lo + t_hi)):
        try:
            res = least_squares(resid, [np.log(La), 0.0, np.log(max(Lb - La, 1e-300)), start], method="lm", max_nfev=400)
        except (ValueError, FloatingPointError):
            continue
        if np.all(np.isfinite(res.fun)) and (best is None or res.cost < best.cost):
            best = res
    if best is None or not (t_lo < best.x[3] < t_hi):
        return None
    return float(best.x[3]), rate_time / float(best.x[3])


def _refine(base: Transition, t_all, y_all, t_lo: float, t_hi: float, s: TransitionSettings,
            rate_time: float | None = None,
            memo: dict | None = None) -> tuple[list[Transition], list[tuple[float, bool]]]:
    """Item 10: the switch-on fit of one detection's window: close drops split, sparse logs interpolated.

    Returns the transitions and, per fitted switch-on, ``(r_k t_k, whether the logged points determine it)``
    (item 12).  ``rate_time``: refit a single switch-on with its rate tied to ``rate_time / t_1``.  ``memo``: the
    ladder's choice per window, kept from the first call for the second (it depends on the window alone)."""
    from dataclasses import replace

    inside = (t_all >= t_lo) & (t_all <= t_hi)
    if s.max_components < 1 or inside.sum() < 5:
        return [base], []
    t, y = _chunk_medians(t_all[inside], y_all[inside], 200)
    key = (t_lo, t_hi, base.onset, base.end)
    if memo is not None and key in memo:
        chosen = memo[key]
    else:
        with np.errstate(all="ignore"):
            chosen = _choose_fit(t, y, t_lo, t_hi, base.onset, base.end, s, t_all[inside])
        if memo is not None:
            memo[key] = chosen
    if chosen is None:
        return [base], []
    K, _, p, merged = chosen
    if merged > K:
        return [replace(base, count=int(merged))], []   # drops that the log cannot tell apart
    with np.errstate(over="ignore"):   # a fit's log-amplitude or log-rate past exp's range: inf, checked below
        V, times, rates = np.exp(p[2::3][:K]), p[3::3][:K], np.exp(p[4::3][:K])
    fits = [(float(r * tk), _determined(t_all, tk, r)) for tk, r in zip(times, rates)]
    if K == 1:
        # sparse around the crossing: the logistic interpolates between the logged points
        j = int(np.searchsorted(t_all, base.midpoint))
        gap = (np.log10(t_all[j] / t_all[j - 1]) if 0 < j < t_all.size and t_all[j - 1] > 0 else np.inf)
        if gap > s.midpoint_smooth_decades and t_lo < times[0] < t_hi and np.isfinite(rates[0]):
            mid, rate = float(times[0]), float(rates[0])
            if rate_time is not None and not fits[0][1]:
                with np.errstate(all="ignore"):
                    tied = _fit_tied(t, y, mid, rate_time, t_lo, t_hi)
                if tied is not None:
                    mid, rate = tied
            return [replace(base, midpoint=mid, onset=float(min(base.onset, mid - _LN19 / rate)),
                            end=float(max(base.end, mid + _LN19 / rate)))], fits
        return [base], fits
    order = np.argsort(times)
    V, times, rates = V[order], times[order], rates[order]
    groups = [[0]]
    for k in range(1, K):
        prev = groups[-1][-1]
        if times[k] - times[prev] < 0.5 / max(rates[k], rates[prev]):
            groups[-1].append(k)    # closer than half an e-folding time: not told apart
        else:
            groups.append([k])
    out = []
    for g in groups:
        g = np.array(g)
        w = V[g] / V[g].sum()
        mid = float(np.sum(w * times[g]))
        onset = float(max(np.min(times[g] - _LN19 / rates[g]), t_lo))
        end = float(min(np.max(times[g] + _LN19 / rates[g]), t_hi))
        onset, end = min(onset, mid), max(end, mid)
        model = np.exp(_switch_on_model(p, np.array([onset, mid, end]), K))
        out.append(Transition(onset=onset, midpoint=mid, end=end, steepest=mid, loss_before=float(model[0]),
                              loss_after=float(model[2]), sharpness=base.sharpness,
                              drop=float(base.drop * V[g].sum() / V.sum()), count=int(g.size)))
    return out, fits
