"""Learning-rate schedules η(t), t = 0..steps-1 the index of the update (see settings.py)."""

from __future__ import annotations

import math

from .settings import TrainSettings

__all__ = ["learning_rate"]


def learning_rate(settings: TrainSettings, t: int) -> float:
    """η at update t under ``settings.schedule``."""
    s = settings
    if s.schedule == "constant":
        return s.lr
    if s.schedule == "step":
        return s.lr * s.gamma ** (t // s.step_every)
    # cosine over the whole run
    return s.lr_min + 0.5 * (s.lr - s.lr_min) * (1.0 + math.cos(math.pi * t / s.steps))
