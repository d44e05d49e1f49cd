"""Which steps get logged: regular cadences and the log-spaced snapshot schedule.

All schedules run over steps 0..steps inclusive (step s = parameters after s updates) and
always contain step 0 and the last step.
"""

from __future__ import annotations

import numpy as np

__all__ = ["every", "log_spaced"]


def every(k: int, steps: int) -> np.ndarray:
    """0, k, 2k, …, plus ``steps`` (sorted, unique, int64)."""
    pts = np.arange(0, steps + 1, k, dtype=np.int64)
    if pts[-1] != steps:
        pts = np.append(pts, np.int64(steps))
    return pts


def log_spaced(count: int, steps: int) -> np.ndarray:
    """About ``count`` steps geometrically spaced in [1, steps], plus step 0 (unique, sorted).

    Rounding merges duplicates at small steps, so the result may hold fewer than ``count``
    entries; it always includes 0, 1 and ``steps``.
    """
    if steps < 1:
        return np.array([0], dtype=np.int64)
    pts = np.unique(np.round(np.geomspace(1, steps, max(count - 1, 2))).astype(np.int64))   # 1 and steps, at least
    return np.concatenate([[0], pts[pts > 0]]).astype(np.int64)
