"""The figures drawn by helper processes (shockflow/figures/worker.py) are the figures drawn in-process, pixel for
pixel; a failure in a helper is an error naming the figure, with no file and no temporary left; the helpers are
reaped, also when the parent fails before it hands them the job."""

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


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)   # (0, 0): one still running; (pid, status): one not reaped
    except ChildProcessError:
        return True
    return False


def test_the_helpers_draw_the_same_figures_as_the_process_itself(tmp_path):
    result = read_result(V1_RUN)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    own = draw_result(result, here)
    with FigureWorker(start=True) as worker:
        assert worker.pid is not None
        theirs = worker.draw(result, there)
    assert [p.name for p in theirs] == [p.name for p in own]
    for a, b in zip(own, theirs):
        assert np.array_equal(_pixels(a), _pixels(b)), a.name
    assert sorted(p.name for p in there.iterdir()) == sorted(p.name for p in own)   # no temporary left
    assert _no_children_left()


def test_inside_a_group_the_helpers_files_are_committed_with_it(tmp_path):
    result = read_result(V1_RUN)
    with atomic_group():
        with FigureWorker(start=True) as worker:
            paths = worker.draw(result, tmp_path)
        assert not any(p.exists() for p in paths)       # staged: not visible before the group ends
    assert all(p.stat().st_size > 0 for p in paths)


def test_a_figure_that_fails_in_a_helper_is_an_error_naming_it_and_leaves_no_file(tmp_path, monkeypatch):
    result = read_result(V1_RUN)
    from shockflow.figures import landscape

    def broken(*args, **kwargs):
        raise ValueError("no charts to draw")

    monkeypatch.setattr(landscape, "landscape_figure", broken)   # before the fork: the helper inherits it
    with FigureWorker(start=True) as worker:
        with pytest.raises(FigureWorkerError, match=r"two-layer-staircase-landscape\.png: ValueError: no charts to draw"):
            worker.draw(result, tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert _no_children_left()


def test_a_parent_that_fails_before_the_job_stops_and_reaps_its_helper():
    with pytest.raises(KeyError):
        with FigureWorker(start=True) as worker:
            assert worker.pid is not None
            raise KeyError("the run failed")
    assert worker.pid is None and _no_children_left()


def test_without_a_helper_the_worker_draws_in_process(tmp_path):
    with FigureWorker(start=False) as worker:
        assert worker.pid is None
        paths = worker.draw(read_result(V1_RUN), tmp_path)
    assert [p.name for p in paths] == ["two-layer-staircase-loss.png", "two-layer-staircase.png",
                                       "two-layer-staircase-landscape.png"]


def test_by_default_a_helper_is_forked_only_on_an_idle_core(monkeypatch):
    for idle in (False, True):
        monkeypatch.setattr(worker_module, "_idle_core", lambda: idle)
        with FigureWorker() as worker:
            assert (worker.pid is not None) is idle
    assert _no_children_left()
