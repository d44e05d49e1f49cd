"""The training of ``shockflow run`` in a second process beside the prediction (shockflow/forking.py): the same
files and numbers as in one process; values and exceptions cross; a process that cannot answer is replaced by the
same work here; nothing is left running."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from shockflow import forking
from shockflow.cases import RunOptions, load_case
from shockflow.cases.errors import CaseError, Problem
from shockflow.forking import Beside
from shockflow.training.loop import TrainingDiverged

pytestmark = pytest.mark.skipif(not forking.can_fork(), reason="no fork, or other threads running")




def _pid_and(value):
    return os.getpid(), value


def test_the_value_comes_from_a_second_process_and_without_a_fork_from_this_one(no_children_left):
    with Beside(_pid_and, np.arange(5.0), start=True) as beside:
        assert beside.forked
        pid, value = beside.result()
    assert pid != os.getpid() and np.array_equal(value, np.arange(5.0)) and no_children_left()
    calls = []
    with Beside(lambda: calls.append(os.getpid()) or "here", start=False) as beside:
        assert calls == [os.getpid()] and not beside.forked   # ran at once, in the constructor
        assert beside.result() == "here" and calls == [os.getpid()]


def _raise(exc):
    raise exc


@pytest.mark.parametrize("exc", [CaseError("case.toml", [Problem("training.lr", "expected a positive number")]),
                                 TrainingDiverged("training diverged at step 12: training loss is inf", 12,
                                                  "training loss")])
def test_an_exception_crosses_with_its_type_and_fields(exc, no_children_left):
    with Beside(_raise, exc, start=True) as beside, pytest.raises(type(exc)) as raised:
        beside.result()
    assert str(raised.value) == str(exc) and vars(raised.value).keys() >= (vars(exc).keys() - {"__notes__"})
    assert any("process beside" in note for note in raised.value.__notes__)
    file, line, function = raised.value.raised_in[-1]      # where the failure is named (the command line's message)
    assert file.endswith("test_training_beside.py") and function == "_raise" and line > 0
    if isinstance(exc, TrainingDiverged):
        assert (raised.value.step, raised.value.quantity) == (12, "training loss")
    else:
        assert raised.value.keys == ("training.lr",)
    assert no_children_left()


class _Unpicklable(RuntimeError):
    def __init__(self, message):
        super().__init__(message)
        self.lock = threading.Lock()   # no pickle takes it, whatever handles exceptions (tblib, installed by dask)


def _fails_oddly(calls):
    calls.append(os.getpid())
    raise _Unpicklable("odd")


def _dies_beside(parent):
    if os.getpid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)
    return "computed here"


def test_a_process_that_cannot_answer_is_replaced_by_the_same_work_here_and_says_so(caplog, no_children_left):
    calls = []
    with Beside(_fails_oddly, calls, start=True) as beside, pytest.raises(_Unpicklable, match="odd"):
        beside.result()
    assert calls == [os.getpid()]   # the parent's own call (the child's list is its own)
    with caplog.at_level("WARNING", logger="shockflow"):
        with Beside(_dies_beside, os.getpid(), start=True) as beside:
            assert beside.result() == "computed here"
    assert any("did not answer (it ended by signal 9)" in r.getMessage() for r in caplog.records)
    assert no_children_left()


_PARENT = """
import time
from shockflow.forking import Beside
beside = Beside(time.sleep, 60, start=True)
print(beside.pid, flush=True)
time.sleep(60)
"""


def test_the_process_beside_ends_with_its_parent_however_the_parent_ends(tmp_path):
    import subprocess
    import sys

    for how in (signal.SIGKILL, signal.SIGTERM):
        parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
        child = int(parent.stdout.readline())
        parent.send_signal(how)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(child, signal.SIGKILL)
            pytest.fail(f"the process beside outlived its parent ({how!r})")


def test_check_takes_an_ended_process_s_answer_without_waiting_for_a_running_one(no_children_left):
    with Beside(_raise, TrainingDiverged("diverged at step 3", 3, "training loss"), start=True) as beside:
        deadline = time.monotonic() + 10
        with pytest.raises(TrainingDiverged, match="step 3"):
            while time.monotonic() < deadline:
                beside.check()            # raises once the process has ended
                time.sleep(0.01)
    with Beside(time.sleep, 0.3, start=True) as beside:
        start = time.perf_counter()
        beside.check()                    # still sleeping: returns at once
        assert time.perf_counter() - start < 0.2
        time.sleep(0.5)
        beside.check()                    # ended: its answer taken and the process reaped
        assert beside.pid is None and beside.result() is None
    assert no_children_left()


def test_leaving_the_block_early_kills_and_reaps_the_process(no_children_left):
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        with Beside(time.sleep, 60, start=True):
            raise KeyboardInterrupt
    assert time.perf_counter() - start < 10 and no_children_left()



def test_a_signal_while_waiting_for_the_answer_kills_the_process_instead_of_waiting_for_it(no_children_left):
    """A SIGINT or SIGTERM sent to this process alone (kill, timeout, a scheduler) while result() waits: the process
    beside is killed, not waited for (a tester's run waited 21.8 s for its training to finish first)."""
    beside = Beside(time.sleep, 60, start=True)
    assert beside.forked
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            beside.result()
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 10 and no_children_left()

def _blas_setting():
    return os.environ.get("SHOCKFLOW_BLAS_THREADS")


def test_the_process_beside_takes_one_blas_thread_unless_the_user_chose(monkeypatch):
    for name in ("SHOCKFLOW_BLAS_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    with Beside(_blas_setting, start=True) as beside:
        assert beside.result() == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    with Beside(_blas_setting, start=True) as beside:
        assert beside.result() is None
    assert os.environ.get("SHOCKFLOW_BLAS_THREADS") is None   # this process's environment is left alone


def test_a_run_trained_beside_writes_what_a_run_in_one_process_writes(tmp_path, no_children_left):
    from shockflow.logs import read_training_log
    from shockflow.runners.prediction import run_prediction_case
    from shockflow.storage import read_result

    case = load_case("two-layer-staircase", ["data.n=1024", "training.steps=800", "extraction.cells=201"])
    outcomes = {flag: run_prediction_case(case, RunOptions(out=str(tmp_path / str(flag)), quiet=True, progress=False,
                                                           figures=False, train_beside=flag))
                for flag in (False, True)}
    one, two = outcomes[False], outcomes[True]
    assert [p.step for p in one.stage.predicted] == [p.step for p in two.stage.predicted]
    assert [t.midpoint for t in one.observed] == [t.midpoint for t in two.observed] and one.observed
    assert one.truth.steps == two.truth.steps and one.comparison.score() == two.comparison.score()
    assert read_training_log(one.log_file).same_as(read_training_log(two.log_file))
    a, b = read_result(one.result_file), read_result(two.result_file)
    for group in ("predicted", "observed", "matches"):
        for key, column in a.transitions[group].items():
            assert np.array_equal(column, b.transitions[group][key]), (group, key)
    names = {flag: sorted(p.name for p in (tmp_path / str(flag)).iterdir()) for flag in (False, True)}
    assert names[True] == names[False]
    assert no_children_left()


def test_a_training_that_diverges_beside_the_prediction_is_exit_1_with_its_step(tmp_path, capsys, monkeypatch,
                                                                                  no_children_left):
    import shockflow.runners.prediction as prediction
    from shockflow.cli import main

    monkeypatch.setattr(prediction, "BESIDE_FROM_SECONDS", 0.0)   # beside whatever the size
    monkeypatch.setattr(forking, "idle_core", lambda: True)
    import shockflow.prediction.predict as predict

    forks, chains = [], []
    fork = os.fork
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or fork())
    solve = predict._solve_charts
    monkeypatch.setattr(predict, "_solve_charts", lambda *a, **k: time.sleep(1.0) or solve(*a, **k))   # slow
    monkeypatch.setattr(predict, "follow_chain", lambda *a, **k: chains.append(1))
    code = main(["run", "two-layer-staircase", "--out", str(tmp_path), "--quiet", "--no-figures",
                 "--set", "data.n=512", "--set", "training.steps=300", "--set", "training.lr=5.0"])
    err = capsys.readouterr().err
    assert forks == [1] and code == 1
    assert "training diverged at step" in err and "training/loop.py" in err and "Traceback" not in err
    assert chains == []     # the failure stopped the prediction at its next phase, before the chain
    assert list(tmp_path.iterdir()) == [] and no_children_left()


@pytest.mark.parametrize("existing", [False, True])
def test_a_sigterm_to_a_run_training_beside_is_exit_143_and_leaves_no_file_and_no_process(tmp_path, existing):
    # the training beside writes its live log into --out (shockflow.logs.live) and is killed with the run: its file
    # goes too, whether the run made --out (taken away again) or it was there before (left as it was)
    import subprocess
    import sys

    code = ("import shockflow.forking as f, shockflow.runners.prediction as p, sys; f.idle_core = lambda: True; "
            "p.BESIDE_FROM_SECONDS = 0.0; from shockflow.cli import main; sys.exit(main(sys.argv[1:]))")
    out = tmp_path / "out"
    if existing:
        out.mkdir()
    run = subprocess.Popen([sys.executable, "-c", code, "run", "mlp-tanh-teacher", "--no-figures", "--out", str(out),
                            "--set", "training.steps=20000"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and "train: started" not in (line := run.stderr.readline()):
        pass
    while time.monotonic() < deadline and not list(out.glob(".*.live.tmp")):   # the live log is there
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    err = line + run.stderr.read()
    assert run.wait(timeout=30) == 143
    assert "terminated (SIGTERM); no file was written" in err and "Traceback" not in err
    if existing:
        assert list(out.iterdir()) == []
    else:
        assert not out.exists()        # the run made it and wrote nothing there: taken away again
    listing = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True).stdout
    assert not [l for l in listing.splitlines() if str(out) in l]


def test_the_expected_training_time_is_timed_on_a_bounded_sample_and_scales_with_the_batch(monkeypatch):
    import shockflow.runners.prediction as prediction
    from shockflow.runners.training import build_model_and_data

    monkeypatch.setattr(prediction, "TIMED_ROWS", 2048)
    monkeypatch.setattr(prediction, "TIMED_REPEATS", 3)
    monkeypatch.setattr(prediction, "TIMED_BUDGET", 0.7)
    case = load_case("two-layer-staircase", ["data.n=8192"])
    model, _, data, _ = build_model_and_data(case, 0)
    settings = case.settings.training.train_settings(0)
    rows = []
    real = model.loss_and_grad
    monkeypatch.setattr(model, "loss_and_grad", lambda X, y: rows.append(X.shape[0]) or real(X, y))
    # on the timed rows 0.5 and 0.25 s (then past the budget: no third), on half of them 0.2, 0.15 and 0.3 s:
    # 0.25 s there, 0.1 s more per 1024 samples
    times = iter([0.0, 0.5, 1.0, 1.25, 2.0, 2.2, 3.0, 3.15, 4.0, 4.3])
    monkeypatch.setattr(prediction.time, "perf_counter", lambda: next(times))
    expected = prediction.expected_training_seconds(model, data, settings)
    assert rows == [2048, 2048, 1024, 1024, 1024]
    assert expected == pytest.approx((0.25 + (0.25 - 0.15) / 1024 * (8192 - 2048)) * settings.steps)
