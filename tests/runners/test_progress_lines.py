"""Progress shows everywhere: plain phase lines when stderr is a pipe (nohup, CI logs), a tqdm bar
in a terminal, nothing with --quiet."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from shockflow.progress import progress, status


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def _solve(tmp_path, *extra):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "shockflow.cli", "solve", "burgers-sine", "--set", "domain.cells=64",
                           "--set", "output.snapshots=9", "--out", str(tmp_path), *extra],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300, env=env)


@pytest.mark.slow  # two fresh interpreters (~3 s each on an idle machine); the in-process sibling below is fast
def test_a_piped_run_logs_every_phase_and_quiet_leaves_stderr_empty(tmp_path):
    done = _solve(tmp_path / "a")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "\r" not in done.stderr                       # plain lines, not a redrawn bar
    for phase in ("build burgers-sine", "solve burgers-sine", "shocks", f"write {tmp_path / 'a' / 'burgers-sine.h5'}",
                  "figures"):
        assert any(l.startswith(f"{phase}: started") for l in lines), (phase, lines)
        assert any(l.startswith(f"{phase}: done") and l.endswith(" s") for l in lines), (phase, lines)
    assert any(l.startswith("solve burgers-sine: done 8/8 after") for l in lines)
    quiet = _solve(tmp_path / "b", "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == "" and quiet.stdout == ""
    assert (tmp_path / "b" / "burgers-sine.h5").is_file()


def test_an_in_process_run_logs_its_phases_to_a_non_terminal_stderr(tmp_path, capsys):
    from shockflow.cli import main

    args = ["solve", "burgers-sine", "--set", "domain.cells=64", "--set", "output.snapshots=9", "--no-figures"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "build burgers-sine: started" and "solve burgers-sine: started (0/8)" in err
    assert any(l.startswith("solve burgers-sine: done 8/8 after ") for l in err)
    assert any(l.startswith("shocks: done after ") for l in err)
    assert main([*args, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_json_keeps_the_progress_lines_on_stderr_and_its_object_alone_on_stdout(tmp_path, capsys):
    """A tester's `run --json` had an empty stderr: --json turned the progress off although stdout holds the JSON."""
    import json

    from shockflow.cli import main

    args = ["solve", "burgers-sine", "--set", "domain.cells=64", "--set", "output.snapshots=9", "--no-figures", "--json"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["case"] == "burgers-sine"
    assert "solve burgers-sine: started (0/8)" in captured.err.splitlines()
    assert main([*args, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["case"] == "burgers-sine" and captured.err == ""


def test_progress_draws_tqdm_in_a_terminal_lines_in_a_pipe_and_nothing_when_disabled():
    tty, pipe, off = FakeTTY(), io.StringIO(), io.StringIO()
    for stream, enabled in ((tty, True), (pipe, True), (off, False)):
        with progress(4, "solve", stream=stream, enabled=enabled, unit="chart") as bar:
            for _ in range(4):
                bar.update(1)
            bar.set_postfix_str("chart r3")
    assert "\r" in tty.getvalue() and "4/4" in tty.getvalue() and "chart" in tty.getvalue()
    assert pipe.getvalue().splitlines()[0] == "solve: started (0/4)"
    assert pipe.getvalue().splitlines()[-1].startswith("solve: done 4/4 after ")
    assert off.getvalue() == ""


def test_a_terminal_bar_leaves_no_thread_behind():
    """tqdm's bar starts a monitor thread by default (tqdm_monitor, alive for the process): shockflow's bars run
    without it, so a process that showed a progress bar stays unthreaded (the figure helper forks only then)."""
    import threading

    before = {t.ident for t in threading.enumerate()}
    with progress(3, "train", stream=FakeTTY()) as bar:
        bar.update(3)
    assert {t.ident for t in threading.enumerate()} <= before
    assert "tqdm_monitor" not in {t.name for t in threading.enumerate()}


def test_a_notebook_without_ipywidgets_gets_the_text_bar_and_no_warning(monkeypatch):
    """In a Jupyter kernel without ipywidgets, tqdm.auto tried the notebook's widget, printed a TqdmWarning
    ("IProgress not found. Please update jupyter and ipywidgets") into the notebook on the first call and fell back to
    the text bar.  shockflow now takes the text bar itself (a tester saw the warning on a wheel install)."""
    import importlib.util
    import warnings

    import shockflow.progress as progress_module

    import tqdm.std

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else real(name, *a))
    monkeypatch.setattr(progress_module, "_interactive", lambda stream: True)   # as in a kernel
    for name in ("tqdm.auto", "tqdm.autonotebook"):      # the modules whose notebook branch warns
        monkeypatch.delitem(sys.modules, name, raising=False)
    progress_module._bar_class.cache_clear()
    try:
        assert issubclass(progress_module._bar_class(), tqdm.std.tqdm)
        assert "tqdm.autonotebook" not in sys.modules and "tqdm.auto" not in sys.modules
        stream = io.StringIO()
        with warnings.catch_warnings():
            warnings.simplefilter("error")                  # a TqdmWarning would fail the test
            with progress(3, "train", stream=stream) as bar:
                bar.update(3)
        assert "3/3" in stream.getvalue()
    finally:
        progress_module._bar_class.cache_clear()


def test_a_phase_that_fails_says_where_it_stopped():
    pipe = io.StringIO()
    with pytest.raises(RuntimeError):
        with progress(10, "train", stream=pipe) as bar:
            bar.update(3)
            raise RuntimeError("diverged")
    assert pipe.getvalue().splitlines()[-1].startswith("train: stopped at 3/10 after ")
    pipe = io.StringIO()
    with status("write out/x.h5", stream=pipe):
        pass
    assert pipe.getvalue().splitlines() == ["write out/x.h5: started", pipe.getvalue().splitlines()[1]]
    assert pipe.getvalue().splitlines()[1].startswith("write out/x.h5: done after ")


def test_an_extraction_reports_one_line_per_chart_with_its_label_and_duration():
    """The hook of shockflow.prediction.extraction.extract through step_callback: in a log one line
    per chart extracted (3 charts), and the extraction's numbers are the same with and without it."""
    import numpy as np

    from shockflow import models
    from shockflow.data.power_law import power_law_covariance
    from shockflow.prediction.extraction import extract
    from shockflow.progress import step_callback

    net = models.build("diagonal", input_dim=3, form="u2", init="constant", init_scale=1e-3, seed=0)
    data = power_law_covariance(512, 3, 0.0, teacher_weights=np.array([8.0, 3.0, 1.0]), seed=2)
    kw = dict(geometry_kwargs={"coordinate": "r"}, charts=(0, 1, 2), lr=0.01, batch_size=512, cells=201)
    calls, pipe = [], io.StringIO()
    with progress(None, "extract the charts (gram)", stream=pipe, unit="chart", each=True) as bar:
        hook = step_callback(bar)
        hooked = extract(net, "gram", data.X, data.y, on_chart=lambda *a: (calls.append(a), hook(*a)), **kw)
    plain = extract(net, "gram", data.X, data.y, **kw)
    assert [c[1:] for c in calls] == [(k, 3) for k in range(1, 4)]
    assert [c[0] for c in calls] == ["r0", "r1", "r2"]
    lines = pipe.getvalue().splitlines()
    assert lines[0] == "extract the charts (gram): started" and len(lines) == 5
    for k, (label, _, _) in enumerate(calls, start=1):
        assert lines[k].startswith(f"extract the charts (gram): {k}/3 chart {label} in ") and "elapsed)" in lines[k]
    assert lines[-1].startswith("extract the charts (gram): done 3/3 after ")
    assert [c.gamma_data for c in hooked.charts] == [c.gamma_data for c in plain.charts]
    tty = FakeTTY()
    with progress(None, "extract", stream=tty, unit="chart", each=True) as bar:
        step_callback(bar)("r0", 1, 2)
        step_callback(bar)("r1", 2, 2)
    assert "2/2" in tty.getvalue() and "chart r1" in tty.getvalue()


@pytest.mark.slow  # a network run in a fresh interpreter (~15 s on an idle machine)
def test_a_piped_network_run_logs_each_chart_of_the_extraction(tmp_path):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "shockflow.cli", "run", "two-layer-staircase", "--no-figures",
                           "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    charts = [l for l in lines if l.startswith("extract the charts (gram): ") and " chart r" in l and " in " in l]
    assert [l.split(": ", 1)[1].split(" chart ")[0] for l in charts] == [f"{k}/4" for k in range(1, 5)]
    assert [l.split(" chart ")[1].split()[0] for l in charts] == ["r0", "r1", "r2", "r3"]
    solves = [l for l in lines if l.startswith("solve the charts of two-layer-staircase: ") and "γ*" in l and " in " in l]
    assert len(solves) == 4


def test_a_heartbeat_of_a_phase_without_a_count_says_it_is_still_running(monkeypatch):
    """A tester saw 'write ...: 1/None after 0:10': a phase whose total is unknown shows no count in its heartbeat."""
    import io

    from shockflow import progress

    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    stream = io.StringIO()
    lines = progress._Lines(None, "write x.h5", stream)
    lines.update(1)
    text = stream.getvalue()
    assert "write x.h5: still running after" in text and "None" not in text
