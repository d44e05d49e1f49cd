"""Figures (PNG).  matplotlib is imported inside the functions that draw, never at import time."""

from shockflow.figures.canvas import can_draw
from shockflow.figures.solution import solution_figure
from shockflow.figures.training import loss_figure

__all__ = ["can_draw", "solution_figure", "loss_figure"]
