"""Fixtures of the prediction tests."""

import importlib

import numpy as np
import pytest


@pytest.fixture
def count_line_points(monkeypatch):
    """``count() -> [n]``: from each call on, the points handed to ``batched_loss.line_losses`` are added to ``n`` (the
    chart-loss evaluations along lines); ``count`` can be called again after ``monkeypatch.undo()``."""
    def count() -> list:
        bl = importlib.import_module("shockflow.geometry.batched_loss")
        points, line = [0], bl.line_losses

        def counted(model, base, direction, r, X, y):
            points[0] += np.size(r)
            return line(model, base, direction, r, X, y)

        monkeypatch.setattr(bl, "line_losses", counted)
        return points

    return count
