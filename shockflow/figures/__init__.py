"""Figures (PNG).  matplotlib is imported inside the functions that draw, never at import time."""

from shockflow.figures.solution import solution_figure
from shockflow.figures.training import loss_figure

__all__ = ["solution_figure", "loss_figure"]
