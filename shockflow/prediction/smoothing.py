"""The 1-D signal operations of the loss-curve detector: Savitzky–Golay smoothing, running medians, peaks.

These are the four SciPy functions the detector used (``scipy.signal.savgol_coeffs``,
``savgol_filter`` with ``mode="interp"``, ``find_peaks`` with a prominence floor, and
``scipy.ndimage.median_filter`` with ``mode="nearest"``), written here in NumPy with the same
definitions. Importing ``scipy.signal`` costs about 0.5–0.9 s (it pulls in ``scipy.stats``) and
``scipy.ndimage`` another 0.4 s: more than the detector's own work on a log of 10⁴ rows, and a
third of a warm ``shockflow run``. tests/prediction/test_smoothing.py checks each function
against SciPy's on random inputs.

- :func:`savgol_coeffs`: the least-squares polynomial of degree ``polyorder`` through a window of
  ``window`` equally spaced points (spacing ``delta``), differentiated ``deriv`` times at the
  centre, as the weights of a convolution (reversed order, as SciPy returns them).
- :func:`savgol_filter`: that filter on the interior; within half a window of either end the
  polynomial fitted to the first (last) ``window`` points is evaluated instead (SciPy's "interp").
- :func:`running_median`: the median over a centred window of odd length, the ends padded by the nearest value.
- :func:`find_peaks`: local maxima (a flat top counts once, at its middle, rounded down), each with
  its topographic prominence: the height above the higher of the two lowest points met on the way
  to a higher sample (or the end of the signal) to its left and to its right.
"""

from __future__ import annotations

from math import factorial

import numpy as np

__all__ = ["savgol_coeffs", "savgol_filter", "running_median", "find_peaks"]


def _window(window: int, polyorder: int) -> int:
    window, polyorder = int(window), int(polyorder)
    if window < 1 or window % 2 == 0:
        raise ValueError(f"window: expected a positive odd length, found {window}")
    if not 0 <= polyorder < window:
        raise ValueError(f"polyorder: expected 0 ≤ polyorder < window = {window}, found {polyorder}")
    return window // 2


def savgol_coeffs(window: int, polyorder: int, deriv: int = 0, delta: float = 1.0) -> np.ndarray:
    """Convolution weights of the Savitzky–Golay filter (the ``deriv``-th derivative at the centre)."""
    half = _window(window, polyorder)
    if deriv > polyorder:
        return np.zeros(window)
    x = np.arange(-half, half + 1, dtype=np.float64)
    vander = np.vander(x, polyorder + 1, increasing=True)          # columns x^0 … x^p
    # row d of the pseudo-inverse gives the coefficient of x^d of the fitted polynomial
    row = np.linalg.pinv(vander)[deriv]
    return (factorial(deriv) / float(delta) ** deriv) * row[::-1]


def _edge_values(segment: np.ndarray, polyorder: int, deriv: int, delta: float, positions: np.ndarray) -> np.ndarray:
    """The polynomial fitted to ``segment`` (at 0, 1, …), differentiated ``deriv`` times, at ``positions``."""
    x = np.arange(segment.size, dtype=np.float64)
    poly = np.polynomial.Polynomial.fit(x, segment, polyorder, domain=[x[0], x[-1]], window=[x[0], x[-1]])
    return poly.deriv(deriv)(positions) / float(delta) ** deriv if deriv else poly(positions)


def savgol_filter(y, window: int, polyorder: int, deriv: int = 0, delta: float = 1.0) -> np.ndarray:
    """Savitzky–Golay smoothing (or derivative) of the 1-D ``y``, polynomial fits at the ends."""
    y = np.asarray(y, dtype=np.float64)
    half = _window(window, polyorder)
    if y.ndim != 1 or y.size < window:
        raise ValueError(f"y: expected a 1-D array of at least window = {window} values, found shape {y.shape}")
    weights = savgol_coeffs(window, polyorder, deriv, delta)
    out = np.empty_like(y)
    out[half:y.size - half] = np.convolve(y, weights, mode="valid")
    if half:
        head = np.arange(half, dtype=np.float64)
        out[:half] = _edge_values(y[:window], polyorder, deriv, delta, head)
        out[y.size - half:] = _edge_values(y[-window:], polyorder, deriv, delta, head + window - half)
    return out


def running_median(x, size: int) -> np.ndarray:
    """Median of ``x`` over a centred window of ``size`` points, the ends extended by their nearest value."""
    x = np.asarray(x, dtype=np.float64)
    size = int(size)
    if size < 1 or size % 2 == 0:
        raise ValueError(f"size: expected a positive odd window, found {size}")
    half = size // 2
    padded = np.concatenate([np.full(half, x[0]), x, np.full(half, x[-1])])
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, size), axis=1)


def find_peaks(x, min_prominence: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the local maxima of the 1-D ``x`` with prominence ≥ ``min_prominence``, and the prominences."""
    x = np.asarray(x, dtype=np.float64)
    peaks = []
    i, n = 1, x.size
    while i < n - 1:
        if x[i - 1] < x[i]:
            ahead = i + 1
            while ahead < n - 1 and x[ahead] == x[i]:
                ahead += 1
            if x[ahead] < x[i]:
                peaks.append((i + ahead - 1) // 2)
                i = ahead
        i += 1
    peaks = np.array(peaks, dtype=np.int64)
    prominences = np.empty(peaks.size)
    for k, p in enumerate(peaks):
        higher_left = np.flatnonzero(x[:p] > x[p])
        left = higher_left[-1] + 1 if higher_left.size else 0
        higher_right = np.flatnonzero(x[p + 1:] > x[p])
        right = p + 1 + higher_right[0] if higher_right.size else n
        prominences[k] = x[p] - max(x[left:p + 1].min(), x[p:right].min())
    keep = prominences >= min_prominence
    return peaks[keep], prominences[keep]
