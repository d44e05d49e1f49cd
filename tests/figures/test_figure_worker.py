"""The figures drawn by two processes (shockflow/figures/worker.py) are the figures drawn by one, pixel for pixel;
a figure that fails in either process is an error naming it, with no file and no temporary left; the helper is
reaped; by default it is forked only on an idle core."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from shockflow.figures import draw_result
from shockflow.figures import worker as worker_module
from shockflow.figures.worker import FigureWorker, FigureWorkerError
from shockflow.storage import atomic_group, read_result

REPO = Path(__file__).resolve().parents[2]
V1_RUN = REPO / "tests" / "storage" / "data" / "result-v1-two-layer-staircase.h5"

pytestmark = pytest.mark.skipif(not worker_module._can_fork(), reason="no fork, or other threads running")


def _pixels(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA"))




def test_two_processes_draw_the_same_figures_as_one(tmp_path, monkeypatch, no_children_left):
    result = read_result(V1_RUN)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    own = draw_result(result, here)
    forks = []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    theirs = FigureWorker(start=True).draw(result, there)
    assert forks == [1]                                  # a helper drew some of them
    assert [p.name for p in theirs] == [p.name for p in own]
    for a, b in zip(own, theirs):
        assert np.array_equal(_pixels(a), _pixels(b)), a.name
    assert sorted(p.name for p in there.iterdir()) == sorted(p.name for p in own)   # no temporary left
    assert no_children_left()


def test_inside_a_group_the_helpers_files_are_committed_with_it(tmp_path):
    result = read_result(V1_RUN)
    with atomic_group():
        paths = FigureWorker(start=True).draw(result, tmp_path)
        assert not any(p.exists() for p in paths)       # staged: not visible before the group ends
    assert all(p.stat().st_size > 0 for p in paths)


@pytest.mark.parametrize("broken_figure", ["landscape", "training"])
def test_a_figure_that_fails_in_either_process_is_an_error_naming_it_and_leaves_no_file(
        tmp_path, monkeypatch, broken_figure, no_children_left):
    result = read_result(V1_RUN)
    from shockflow.figures import landscape, training

    module = {"landscape": landscape, "training": training}[broken_figure]
    name = {"landscape": "landscape_figure", "training": "loss_figure"}[broken_figure]
    file = {"landscape": "two-layer-staircase-landscape.png", "training": "two-layer-staircase-loss.png"}[broken_figure]

    def broken(*args, **kwargs):
        raise ValueError("nothing to draw")

    monkeypatch.setattr(module, name, broken)   # before the fork: the helper inherits it
    with pytest.raises(FigureWorkerError, match=rf"{file}: ValueError: nothing to draw"):
        FigureWorker(start=True).draw(result, tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert no_children_left()


def test_without_a_helper_the_worker_draws_in_process(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    paths = FigureWorker(start=False).draw(read_result(V1_RUN), tmp_path)
    assert [p.name for p in paths] == ["two-layer-staircase-loss.png", "two-layer-staircase.png",
                                       "two-layer-staircase-landscape.png"]


def test_by_default_a_helper_is_forked_only_on_an_idle_core(tmp_path, monkeypatch, no_children_left):
    result = read_result(V1_RUN)
    fork = os.fork
    for idle in (False, True):
        forks = []
        monkeypatch.setattr(worker_module, "idle_core", lambda: idle)
        monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
        (tmp_path / str(idle)).mkdir()
        FigureWorker().draw(result, tmp_path / str(idle))
        assert forks == ([1] if idle else [])
    assert no_children_left()


def test_when_no_process_can_be_forked_the_run_draws_them_all(tmp_path, monkeypatch):
    def refused():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    paths = FigureWorker(start=True).draw(read_result(V1_RUN), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths) and len(paths) == 3
