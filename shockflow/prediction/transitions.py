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
5. **Peaks.** ``scipy.signal.find_peaks`` on e, padded with e = 0 at both ends (so a drop that
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
   ``max_rise_decades`` are slow relaxations and are not reported.

All steps reported are on the original step axis (interpolated, so they are floats).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
# scipy.ndimage and scipy.signal (about 1 s to import, scipy.stats with them) are imported in the
# functions that use them, so that importing the prediction package stays cheap.

__all__ = ["Transition", "TransitionSettings", "find_transitions", "transitions_table"]


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

    def to_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}

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

    def __post_init__(self):
        checks = [("bins_per_decade", self.bins_per_decade >= 10 and isinstance(self.bins_per_decade, int)),
                  ("smooth_decades", self.smooth_decades > 0),
                  ("midpoint_smooth_decades", self.midpoint_smooth_decades > 0),
                  ("plateau_decades", self.plateau_decades > 0), ("polyorder", 1 <= self.polyorder <= 5),
                  ("background_decades", self.background_decades > 0),
                  ("edge_fraction", 0 < self.edge_fraction < 1), ("min_drop", 0 < self.min_drop < 1),
                  ("min_prominence", self.min_prominence >= 0), ("noise_factor", self.noise_factor >= 0),
                  ("min_samples", isinstance(self.min_samples, int) and self.min_samples >= 1),
                  ("max_rise_decades", self.max_rise_decades > 0)]
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
        raise ValueError(f"find_transitions: need at least 8 positive steps spanning 0.2 decades, got "
                         f"{steps.size} from {steps[0] if steps.size else None} to "
                         f"{steps[-1] if steps.size else None}")
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
    from scipy.ndimage import median_filter
    from scipy.signal import savgol_coeffs

    res = np.abs(y - np.interp(u, grid, ys))
    med_abs, _ = _binned_median(u, res, grid, h)
    # local scatter, floored by the global one: where samples are sparse the smoothed curve
    # follows them and the residuals understate the noise.
    sigma = 1.4826 * np.maximum(median_filter(med_abs, size=bwin, mode="nearest"), np.median(res))
    rho = np.convolve(counts, np.ones(win) / win, mode="same")
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
    from scipy.ndimage import median_filter

    centred = median_filter(rate, size=bwin, mode="nearest")
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


def find_transitions(steps, loss, settings: TransitionSettings | None = None, **overrides) -> list[Transition]:
    """Detect plateau-then-drop transitions in (steps, loss); see the module docstring.

    ``settings`` (a ``TransitionSettings``) or keyword overrides of its fields set the detector.
    Returns the transitions ordered by step.
    """
    from scipy.signal import find_peaks, savgol_filter

    s = settings if settings is not None else TransitionSettings()
    if overrides:
        s = TransitionSettings(**{**asdict(s), **overrides})
    steps, loss = _validate(steps, loss)
    u_raw, y_raw = np.log(steps), np.log(loss)
    h = np.log(10.0) / s.bins_per_decade
    n_grid = int(np.floor((u_raw[-1] - u_raw[0]) / h)) + 1
    grid = u_raw[0] + h * np.arange(n_grid)
    y, counts = _binned_median(u_raw, y_raw, grid, h)

    # detection: smoothed drop rate, its background and its noise
    win = _odd_window(s.smooth_decades, s.bins_per_decade, s.polyorder, n_grid)
    ys = savgol_filter(y, win, s.polyorder, mode="interp")
    rate = -savgol_filter(y, win, s.polyorder, deriv=1, delta=h, mode="interp")
    bwin = max(3, int(round(s.background_decades * s.bins_per_decade)) | 1)
    bwin = min(bwin, n_grid - (1 - n_grid % 2))
    background = _background(rate, bwin)
    excess = rate - background
    sigma_rate = _rate_noise(u_raw, y_raw, grid, ys, counts, win, s.polyorder, h, bwin)

    padded = np.r_[0.0, excess, 0.0]
    peaks, props = find_peaks(padded, prominence=s.min_prominence)
    peaks = peaks - 1
    prom = props["prominences"]
    thresh = s.noise_factor * sigma_rate[peaks]
    keep = (prom >= thresh) & (excess[peaks] >= thresh)
    peaks, prom = peaks[keep], prom[keep]

    # edges on the linear-time excess rate q = e/t ∝ −d ln L/dt − background: for an interior
    # drop it peaks where e does; for a drop still running at the end of the log (e grows ∝ t)
    # it saturates, which puts the onset where the drop really starts.
    q = excess * np.exp(-grid)
    found = []
    min_log_drop = -np.log1p(-s.min_drop)
    for p, pr in sorted(zip(peaks, prom), key=lambda t: -t[1]):
        lo = p
        while lo > 0 and excess[lo - 1] > s.edge_fraction * excess[p]:
            lo -= 1
        qref = q[lo:p + 1].max()
        lo, hi = p, p
        while lo > 0 and q[lo - 1] > s.edge_fraction * qref:
            lo -= 1
        while hi < n_grid - 1 and q[hi + 1] > s.edge_fraction * qref:
            hi += 1
        if any(not (hi < a or lo > b) for a, b, *_ in found):
            continue  # overlaps a more prominent detection
        drop = float(np.trapezoid(excess[lo:hi + 1], dx=h)) if hi > lo else 0.0
        if drop < min_log_drop:
            continue
        if counts[lo:hi + 1].sum() < s.min_samples:
            continue
        if lo == 0:
            continue  # already dropping at the first logged step: no plateau seen before it
        found.append((lo, hi, p, drop))
    found.sort()

    # midpoint: half-amplitude crossing of the locally detrended loss (module doc, item 8)
    mwin = _odd_window(s.midpoint_smooth_decades, s.bins_per_decade, 3, n_grid)
    ym = savgol_filter(y, mwin, 3, mode="interp")
    reach = int(round(s.plateau_decades * s.bins_per_decade))
    out = []
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
        if (u_mid - grid[lo]) / np.log(10.0) > s.max_rise_decades:
            continue  # a slow relaxation, not a sudden drop
        out.append(Transition(onset=float(np.exp(grid[lo])), midpoint=float(np.exp(u_mid)),
                              end=float(np.exp(grid[hi])), steepest=float(np.exp(grid[p])),
                              loss_before=float(np.exp(ys[lo])), loss_after=float(np.exp(ys[hi])),
                              sharpness=float(excess[p]), drop=drop))
    return out
