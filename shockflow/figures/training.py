"""The training loss against the step, with predicted and observed phase transitions marked."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shockflow.figures.canvas import new_figure, save_png

__all__ = ["loss_figure"]


def loss_figure(steps, loss, path, *, predicted=(), observed=(), title: str = "") -> Path:
    """Loss (log scale) over ``steps``; dashed red lines at ``predicted`` steps, solid green at ``observed``."""
    steps = np.asarray(steps, dtype=np.float64)
    loss = np.asarray(loss, dtype=np.float64)
    if steps.shape != loss.shape or steps.ndim != 1:
        raise ValueError(f"loss_figure: expected steps and loss of equal 1-D shape, found {steps.shape} and {loss.shape}")
    fig = new_figure(7.0, 4.0)
    ax = fig.subplots()
    positive = loss > 0
    ax.semilogy(steps[positive], loss[positive], lw=1.2, color="C0", label="loss")
    for k, s in enumerate(predicted):
        ax.axvline(float(s), color="r", ls="--", lw=1, label="predicted" if k == 0 else None)
    for k, s in enumerate(observed):
        ax.axvline(float(s), color="g", ls="-", lw=1, alpha=0.7, label="observed" if k == 0 else None)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return save_png(fig, path)
