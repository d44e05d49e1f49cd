"""The live file of a training run (shockflow.logs.live): what ``shockflow monitor`` follows while a run trains."""

import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from shockflow.logs import live
from shockflow.logs.live import FINISHED, STOPPED, TRAINING, LiveLog, LiveReader, live_logs_of
from shockflow.logs.tail import LogTail
from shockflow.storage.atomic import atomic_group, remove_stale_temporaries

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from shockflow.logs.live import LiveLog
    log = LiveLog(Path(sys.argv[1]), ["step", "loss", "lr"], 3000)
    for t in range(3001):
        log.append((t, 1.0 / (1.0 + t), 0.1))
        if t % 7 == 0:
            time.sleep(0.001)
    log.close()
""")


def test_a_reader_in_another_process_sees_complete_rows_only_then_the_status(tmp_path):
    # a separate writer appends 3001 rows over about half a second (flushed every FLUSH_SECONDS); every read the
    # reader makes holds a prefix of the rows, each row whole (its loss is that of its step), and ends FINISHED
    target = tmp_path / "run.h5"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
    reads, status = [], None
    reader = None
    deadline = time.monotonic() + 60
    try:
        while status != FINISHED and time.monotonic() < deadline:
            if reader is None:
                found = live_logs_of(target)
                try:
                    reader = LiveReader(found[0]) if found else None
                except OSError:        # the writer is still setting the file up
                    reader = None
                if reader is None:
                    time.sleep(0.01)
                    continue
            steps, loss, status = reader.read()
            reads.append(steps.size)
            np.testing.assert_array_equal(steps, np.arange(steps.size))
            np.testing.assert_array_equal(loss, 1.0 / (1.0 + steps))
            time.sleep(0.02)
    finally:
        writer.wait(timeout=60)
    assert writer.returncode == 0
    assert status == FINISHED and reads[-1] == 3001
    assert reads == sorted(reads) and len(set(reads)) >= 2    # rows seen arriving, never lost
    reader.close()


def _run(tmp_path, **overrides):
    from shockflow.cases import load_case
    from shockflow.runners.training import build_model_and_data

    case = load_case("two-layer-staircase", [f"{k}={v}" for k, v in overrides.items()])
    model, _, data, _ = build_model_and_data(case, 0)
    return model, data, case.settings.training.train_settings(0)


def test_the_live_file_lasts_until_the_log_is_committed(tmp_path, monkeypatch):
    from shockflow.training import train

    model, data, settings = _run(tmp_path)
    closed = []
    monkeypatch.setattr(LiveLog, "close", lambda self, status=FINISHED, diverged=None, _close=LiveLog.close:
                        (closed.append(status), _close(self, status, diverged)))
    log = tmp_path / "a.h5"
    with atomic_group():
        train(model.copy(), data, settings, log_path=log, quiet=True)
        assert not log.exists() and len(live_logs_of(log)) == 1     # staged: the live file stands in for it
        reader = LiveReader(live_logs_of(log)[0])
        steps, loss, status = reader.read()
        assert status == TRAINING and steps[-1] == settings.steps   # every row there; finished once committed
    assert reader.read()[2] == FINISHED and closed == [FINISHED]
    assert log.exists() and live_logs_of(log) == []
    record_steps = LogTail(log)
    assert record_steps.read() and record_steps.series()[1] == pytest.approx(loss, rel=0, abs=0)
    assert record_steps.status == "finished"
    other = tmp_path / "b.h5"                                         # outside a group: removed at once
    train(model.copy(), data, settings, log_path=other, quiet=True)
    assert other.exists() and live_logs_of(other) == [] and closed[-1] == FINISHED
    third = tmp_path / "c.h5"                                         # a command that fails after training
    with pytest.raises(ValueError, match="refused after training"):
        with atomic_group():
            train(model.copy(), data, settings, log_path=third, quiet=True)
            reader = LiveReader(live_logs_of(third)[0])
            raise ValueError("refused after training")
    assert reader.read()[2] == STOPPED and closed[-1] == STOPPED and not third.exists() and not live_logs_of(third)


def test_a_run_that_diverges_leaves_neither_file_and_says_stopped(tmp_path, monkeypatch):
    from shockflow.training import TrainingDiverged, train

    model, data, settings = _run(tmp_path, **{"training.lr": 500.0})
    closed = []
    monkeypatch.setattr(LiveLog, "close", lambda self, status=FINISHED, diverged=None, _close=LiveLog.close:
                        (closed.append(status), _close(self, status, diverged)))
    log = tmp_path / "a.h5"
    with pytest.raises(TrainingDiverged):
        with atomic_group():
            train(model.copy(), data, settings, log_path=log, quiet=True)
    assert closed == [STOPPED]
    assert not log.exists() and live_logs_of(log) == [] and [p.name for p in tmp_path.iterdir()] == []


def test_the_live_file_of_a_killed_run_is_removed_as_a_stale_temporary(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".a.h5.pid{dead.pid}.live.tmp"
    stale.write_bytes(b"")
    assert live_logs_of(tmp_path / "a.h5") == []          # a killed run's file is no run training there
    assert remove_stale_temporaries(tmp_path) == [stale] and not stale.exists()


def test_a_tail_of_a_log_not_yet_written_reads_the_live_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(live, "FLUSH_SECONDS", 0.0)                  # every row flushed as it comes
    log = tmp_path / "run.h5"
    tail = LogTail(log)
    assert not tail.read() and tail.modified() is None
    writer = LiveLog(log, ["step", "loss"], 100)
    for t in range(40):
        writer.append((t, 2.0 - t / 100))
    assert tail.read() and tail.rows == 40 and tail.status == "training" and tail.modified() is not None
    writer.append((40, 1.5))
    writer.close(STOPPED)
    writer.path.unlink()                                             # removed: the tail holds it open
    assert tail.read() and tail.rows == 41 and tail.status == "stopped"


def test_a_new_run_training_where_an_earlier_one_left_its_log_is_the_one_read(tmp_path, monkeypatch):
    import os

    from shockflow.logs import write_training_log

    monkeypatch.setattr(live, "FLUSH_SECONDS", 0.0)
    model, data, settings = _run(tmp_path)
    from shockflow.training import train

    log = tmp_path / "run.h5"
    train(model.copy(), data, settings, log_path=log, quiet=True)            # the earlier run's log
    os.utime(log, ns=(10**18, 10**18))                                        # written "long ago"
    tail = LogTail(log)
    writer = LiveLog(log, ["step", "loss"], 100)                              # a new run, training now
    for t in range(5):
        writer.append((t, 9.0 - t))
    assert tail.read() and tail.series()[1].tolist() == [9.0, 8.0, 7.0, 6.0, 5.0] and tail.status == "training"
    writer.close()
    write_training_log(train(model.copy(), data, settings, quiet=True), log)   # its log committed: read whole
    writer.path.unlink()
    assert tail.read() and tail.status == "finished" and tail.rows == settings.steps + 1


def test_a_log_the_caller_writes_has_its_live_file_while_training_only(tmp_path):
    # shockflow run trains (perhaps in a forked process) with log_path=None and writes the log itself afterwards:
    # live_path keeps the live file beside that log while training and removes it at the end of training
    from shockflow.training import train

    model, data, settings = _run(tmp_path)
    log = tmp_path / "run-log.h5"
    seen = []
    with atomic_group():
        train(model.copy(), data, settings, live_path=log, quiet=True,
              observables={"live": lambda m: seen.append(len(live_logs_of(log))) or 0.0})
        assert live_logs_of(log) == [] and not log.exists()
    assert seen and set(seen) == {1}


def test_a_run_that_diverges_says_where_in_its_live_file(tmp_path):
    # a tester: a shockflow run that blew up came out of monitor as "stopped ... (it diverged, failed or was
    # interrupted)", exit 0; the live file now holds the status DIVERGED and the step and loss, as a CSV's NaN row
    from shockflow.logs.live import DIVERGED
    from shockflow.training import TrainingDiverged, train

    model, data, settings = _run(tmp_path, **{"training.lr": 500.0})
    log = tmp_path / "a.h5"
    readers = []

    def hold(m):
        if not readers:
            readers.append(LiveReader(live_logs_of(log)[0]))
        return 0.0

    with pytest.raises(TrainingDiverged) as blew:
        train(model.copy(), data, settings, log_path=log, quiet=True, observables={"hold": hold})
    steps, loss, status = readers[0].read()
    assert status == DIVERGED and readers[0].diverged()[0] == blew.value.step
    tail = LogTail(log)
    tail._live = readers[0]                                   # what a monitor holding the file open reads
    tail.read()
    assert tail.status == "diverged" and tail.diverged[0] == blew.value.step and not live_logs_of(log)


def test_a_killed_writers_file_reads_as_stopped_and_a_live_one_as_writing(tmp_path, monkeypatch):
    monkeypatch.setattr(live, "FLUSH_SECONDS", 0.0)
    log = tmp_path / "run.h5"
    writer = LiveLog(log, ["step", "loss"], 100)
    writer.append((0, 1.0))
    tail = LogTail(log)
    assert tail.read() and tail.writing() and tail.source == writer.path
    before = tail.modified()
    assert before == writer.path.stat().st_mtime_ns
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    monkeypatch.setattr(live, "writer_pid", lambda path: dead.pid)   # as if its writer had been killed
    tail.read()
    assert tail.status == "stopped" and not tail.writing()
    writer.close()
