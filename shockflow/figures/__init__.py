"""Figures: matplotlib's object API only (no pyplot state, never ``matplotlib.use``); every drawing
function takes an optional ``ax``/``fig`` and returns the Figure, and :func:`save_figure` writes
it (PNG, SVG or PDF) atomically.  matplotlib is imported inside the functions that draw."""

from shockflow.figures.canvas import (DEFAULT_DPI, FIGURE_FORMATS, PALETTE, can_draw, field_colours, figure_of,
                                      new_figure, save_figure)
from shockflow.figures.result import draw_result
from shockflow.figures.solution import solution_figure, steepness_panel
from shockflow.figures.training import loss_figure

__all__ = ["DEFAULT_DPI", "FIGURE_FORMATS", "PALETTE", "can_draw", "draw_result", "field_colours", "figure_of",
           "new_figure", "save_figure", "solution_figure", "steepness_panel", "loss_figure"]
