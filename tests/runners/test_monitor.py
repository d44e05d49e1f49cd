"""``shockflow monitor``: complete rows only from a log being written, transitions reported as they appear."""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from shockflow.cli import main
from shockflow.logs.tail import LogTail

WRITER = Path(__file__).with_name("log_writer.py")
sys.path.insert(0, str(WRITER.parent))
from log_writer import loss as writer_loss  # noqa: E402


def _forecast_file(path, steps=(105.0, 290.0, 820.0), horizon=1200):
    """A result file holding only predicted transitions (what monitor reads of a forecast)."""
    from shockflow.storage import Result, write_result

    result = Result(case_name="synthetic", case_kind="network", case_text="", settings={"training": {"steps": horizon}},
                    times=np.array([0.0]), values=np.zeros((1, 2)), coordinates={"x": np.array([0.0, 1.0])},
                    transitions={"predicted": {"chart": np.array([f"r{k}" for k in range(len(steps))], dtype=object),
                                               "step": np.asarray(steps, dtype=np.float64)}})
    return write_result(result, path)


def test_a_row_cut_in_the_middle_is_left_for_the_next_read(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n0,1.5\n1,1.25\n2,0.5")      # row 2 is still being written: "0.5" of "0.53"
    tail = LogTail(log)
    assert tail.read() and tail.rows == 2
    assert not tail.read()                                 # nothing complete was added
    with open(log, "a") as fh:
        fh.write("3\n3,0.25\n")
    assert tail.read()
    steps, loss = tail.series()
    assert steps.tolist() == [0, 1, 2, 3] and loss.tolist() == [1.5, 1.25, 0.53, 0.25]   # 0.53, never 0.5


def test_json_lines_and_a_replaced_log(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text('{"iteration": 0, "train_loss": 2.0}\n{"iteration": 5, "train_loss": 1.0}\n{"iterat')
    tail = LogTail(log)
    tail.read()
    assert tail.series()[0].tolist() == [0, 5]
    log.write_text('{"iteration": 0, "train_loss": 3.0}\n')   # a new run in its place: shorter than what was read
    tail.read()
    assert tail.restarted == 1 and tail.series()[1].tolist() == [3.0]



def test_a_json_list_of_records_is_read_whole_once_it_parses(tmp_path):
    """A tester's ``json.dump`` of a list of records (no newline anywhere) was "no rows read", exit 0, where `compare`
    read it: taken in whole once it is complete JSON, nothing while it is being written, again whole when rewritten."""
    log = tmp_path / "log.json"
    records = [{"step": s, "loss": 1.0 / (1 + s)} for s in range(5)]
    log.write_text(json.dumps(records)[:-10])            # cut short: still being written
    tail = LogTail(log)
    assert tail.read() is False and tail.rows == 0
    log.write_text(json.dumps(records))
    assert tail.read() is True and tail.series()[0].tolist() == [0, 1, 2, 3, 4]
    assert tail.read() is False
    log.write_text(json.dumps(records + [{"step": 7, "loss": 0.1}]))
    assert tail.read() is True and tail.series()[0].tolist() == [0, 1, 2, 3, 4, 7]
    columns = tmp_path / "columns.json"
    columns.write_text(json.dumps({"step": [0, 2, 4], "loss": [1.0, 0.5, 0.25]}))
    tail = LogTail(columns)
    assert tail.read() is True and tail.series()[1].tolist() == [1.0, 0.5, 0.25]
    one = tmp_path / "one.json"                           # one record on its line: JSON lines, not a document
    one.write_text('{"step": 0, "loss": 1.0}\n')
    tail = LogTail(one)
    assert tail.read() is True and tail.series()[0].tolist() == [0]

@pytest.mark.parametrize("text, message", [("step,loss\n0,1\nx,2\n", "data row 2"),
                                           ("step,loss\n0,1\n0,0.5\n", "strictly increasing"),
                                           ("step,loss\n0,1\n1.5,2\n", "non-negative integers")])
def test_a_complete_bad_row_is_an_error_naming_the_row(tmp_path, capsys, text, message):
    log = tmp_path / "log.csv"
    log.write_text(text)
    pred = _forecast_file(tmp_path / "f.h5")
    assert main(["monitor", str(log), "--prediction", str(pred)]) == 2
    err = capsys.readouterr().err
    assert message in err and "log.csv" in err and "Traceback" not in err


def test_one_shot_reports_each_transition_against_the_forecast(tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n" + "".join(f"{t},{writer_loss(t)!r}\n" for t in range(1201)))
    pred = _forecast_file(tmp_path / "f.h5")
    assert main(["monitor", str(log), "--prediction", str(pred), "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    from shockflow.prediction import find_transitions

    t = np.arange(1201.0)
    detected = [d.midpoint for d in find_transitions(t, np.array([writer_loss(s) for s in t]))]
    assert [e["chart"] for e in events] == ["r0", "r1", "r2"]
    for e, mid, forecast in zip(events, detected, (105, 290, 820)):
        assert e["step"] == pytest.approx(mid)                        # the detector's own midpoints
        assert e["offset"] == pytest.approx(e["step"] - forecast)     # early (< 0) or late (> 0) by this much


def test_a_log_that_stops_growing_ends_the_follow(tmp_path, capsys):
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n" + "".join(f"{t},{writer_loss(t)!r}\n" for t in range(400)))
    pred = _forecast_file(tmp_path / "f.h5")
    start = time.monotonic()
    assert main(["monitor", str(log), "--prediction", str(pred), "--follow", "--idle", "0.6"]) == 0
    assert time.monotonic() - start < 5.0
    out = capsys.readouterr().out
    assert "the log stopped growing" in out and "last step 399 of 1200 planned" in out


@pytest.mark.slow
def test_follow_reports_each_transition_within_one_update_interval(tmp_path):
    # a separate process appends 100 rows every 0.4 s (each update cut mid-row for 50 ms); monitor --follow
    # must report each transition at most one update interval after the write that first shows it
    from shockflow.prediction import find_transitions

    interval = 0.4
    log, stamps_path = tmp_path / "log.csv", tmp_path / "stamps.json"
    pred = _forecast_file(tmp_path / "f.h5")
    monitor = subprocess.Popen([sys.executable, "-m", "shockflow.cli", "monitor", str(log), "--prediction", str(pred),
                                "--follow", "--json", "--interval", "0.2", "--idle", "20"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    first = json.loads(monitor.stdout.readline())          # ready: the writer starts only now
    assert first["kind"] == "start"
    writer = subprocess.Popen([sys.executable, str(WRITER), str(log), str(stamps_path), "100", str(interval)])
    try:
        out, err = monitor.communicate(timeout=60)
    finally:
        writer.wait(timeout=60)
    assert monitor.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["kind"] == "end" and "the run ended" in events[-1]["message"]
    found = [e for e in events if e["kind"] == "transition"]
    assert [e["chart"] for e in found] == ["r0", "r1", "r2"]
    # offline: the first write after which the complete rows show each transition
    stamps = json.loads(stamps_path.read_text())
    t = np.arange(1201.0)
    curve = np.array([writer_loss(s) for s in t])
    for e in found:
        shown = None
        for when, rows in stamps:
            try:
                mids = [d.midpoint for d in find_transitions(t[:rows], curve[:rows])]
            except ValueError:
                continue
            if any(abs(np.log(m / e["step"])) < np.log(1.25) for m in mids):
                shown = when
                break
        assert shown is not None
        lag = e["read_at"] - shown     # the read that took the rows in; the report follows the detector's run
        assert 0.0 <= lag <= interval, (e, lag)
        assert e["time"] >= e["read_at"]


def test_one_shot_on_a_missing_log_is_bad_input(tmp_path, capsys):
    pred = _forecast_file(tmp_path / "f.h5")
    assert main(["monitor", str(tmp_path / "absent.csv"), "--prediction", str(pred)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_log_with_a_non_finite_loss_is_a_run_that_diverged_there(tmp_path, capsys):
    """An .h5 training log another program wrote with a NaN loss: monitor reported every chart "not seen" with exit
    0, and compare read it.  compare refuses it (exit 2) naming the file and the row, as it refuses a CSV; monitor,
    which watches a run, says the run diverged at that row's step, reports the transitions before it and exits 1
    (a run that blew up), in every format."""
    from shockflow.logs import TrainingRecord, write_training_log

    steps = np.arange(1201)
    loss = np.array([writer_loss(t) for t in steps])
    loss[600] = np.nan
    log = tmp_path / "log.h5"
    write_training_log(TrainingRecord(series={"step": steps.astype(np.int64), "loss": loss}), log)
    csv = tmp_path / "log.csv"
    csv.write_text("step,loss\n" + "".join(f"{t},{float(v)!r}\n" for t, v in zip(steps, loss)))
    pred = _forecast_file(tmp_path / "f.h5")
    assert main(["compare", str(log), "--prediction", str(pred)]) == 2
    err = capsys.readouterr().err
    assert "log.h5" in err and "not finite at data row 601" in err and "Traceback" not in err
    for path in (log, csv):
        assert main(["monitor", str(path), "--prediction", str(pred), "--json"]) == 1
        out, err = capsys.readouterr()
        events = [json.loads(line) for line in out.splitlines()]
        assert [e["kind"] for e in events] == ["diverged", "transition", "transition"]
        assert events[0]["last_step"] == 600 and "diverged at step 600 (loss nan)" in err and "Traceback" not in err
        assert [e["chart"] for e in events[1:]] == ["r0", "r1"]      # the drops before it, not the one after


def test_a_transition_reported_before_its_drop_ended_is_reported_again_revised(tmp_path):
    """The detector places a drop seen before its end early; once the rows show the end, the monitor reports the
    transition again (``kind="revised"``, with the step it said before) where its midpoint has moved by more than
    ``REVISE``; the last report of each transition is the detector's midpoint on the whole log."""
    from shockflow.prediction import find_transitions
    from shockflow.runners.monitor import REVISE, monitor_log

    t = np.arange(1201)
    curve = [writer_loss(s) for s in t]
    log = tmp_path / "log.csv"
    pred = _forecast_file(tmp_path / "f.h5")
    log.write_text("step,loss\n")
    monitor = monitor_log(log, pred)
    events = []
    for rows in range(100, 1202, 25):
        with open(log, "a") as fh:
            fh.write("".join(f"{s},{curve[s]!r}\n" for s in t[rows - 25 if rows > 100 else 0:min(rows, 1201)]))
        events += monitor.update()
    revised = [e for e in events if e.kind == "revised"]
    assert revised and all(abs(e.step - e.revises) > REVISE * e.revises for e in revised)
    final = [d.midpoint for d in find_transitions(t.astype(float), np.array(curve))]
    last = {}
    for e in events:
        last[e.chart] = e.step
    assert sorted(last.values()) == pytest.approx(sorted(final), rel=REVISE)


def test_a_log_rewritten_from_its_start_is_said_to_be_restarted_and_read_again(tmp_path):
    """A tester's writer restarted during a follow: the new run's rows were read on as the old run's, and its first
    transition came out as 'transition revised from step 734.9 to 672.3'.  Here the new run has written past the
    place the old one was read to (the log did not shrink), and its transitions come 10 % earlier."""
    from shockflow.runners.monitor import monitor_log

    t = np.arange(1201)
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n" + "".join(f"{s},{writer_loss(s)!r}\n" for s in t[:900]))
    monitor = monitor_log(log, _forecast_file(tmp_path / "f.h5"))
    first = monitor.update()
    assert [e.kind for e in first] and all(e.kind == "transition" for e in first)
    log.write_text("step,loss\n" + "".join(f"{s},{writer_loss(1.1 * s)!r}\n" for s in t))   # longer than before
    events = monitor.update()
    assert events[0].kind == "restarted" and events[0].line().startswith("the log was restarted: ")
    assert monitor.tail.restarted == 1 and monitor.tail.rows == 1201
    assert [e.kind for e in events[1:]] == ["transition"] * len(events[1:]) and len(events) > 1   # none "revised"
    assert events[1].step < first[0].step
    assert monitor.update() == []                                  # appended to, it is not restarted again
    with open(log, "a") as fh:
        fh.write(f"1201,{writer_loss(1.1 * 1201)!r}\n")
    assert all(e.kind != "restarted" for e in monitor.update()) and monitor.tail.restarted == 1


def test_a_log_read_whole_that_no_longer_begins_with_the_rows_read_is_restarted(tmp_path):
    """A training log (.h5) and a JSON document are read whole: another run's in their place is a restart too."""
    from shockflow.logs import TrainingRecord, write_training_log

    h5 = tmp_path / "log.h5"
    write_training_log(TrainingRecord(series={"step": np.arange(5), "loss": np.ones(5)}), h5)
    tail = LogTail(h5)
    assert tail.read() and tail.rows == 5 and tail.restarted == 0
    write_training_log(TrainingRecord(series={"step": np.arange(3), "loss": np.full(3, 2.0)}), h5)
    assert tail.read() and tail.rows == 3 and tail.restarted == 1
    doc = tmp_path / "log.json"
    doc.write_text(json.dumps({"step": [0, 1, 2], "loss": [1.0, 0.5, 0.25]}))
    tail = LogTail(doc)
    assert tail.read() and tail.restarted == 0
    doc.write_text(json.dumps({"step": [0, 1, 2, 3], "loss": [1.0, 0.5, 0.25, 0.2]}))   # grown: the same run
    assert tail.read() and tail.restarted == 0
    doc.write_text(json.dumps({"step": [0, 1, 2, 3, 4], "loss": [3.0, 2.0, 1.0, 0.5, 0.4]}))
    assert tail.read() and tail.restarted == 1 and tail.rows == 5


def test_following_a_path_where_no_log_ever_appears_says_so_and_is_exit_2(tmp_path, capsys):
    """It ended with exit 0 and "the log stopped growing", the table saying "last step nan"."""
    pred = _forecast_file(tmp_path / "f.h5")
    code = main(["monitor", str(tmp_path / "absent.csv"), "--prediction", str(pred), "--follow", "--idle", "0.5"])
    out, err = capsys.readouterr()
    assert code == 2 and "the log never appeared" in out and "absent.csv" in err and "nan" not in out



def test_a_followed_log_that_turns_bad_ends_the_json_stream_with_an_error_event(tmp_path, capsys):
    """monitor --follow --json printed its start event, then only stderr: the stream had no last event.  A row that
    cannot be read ends it with {"kind": "error", "message", "exit_code"} (exit 2, the same message on stderr)."""
    pred = _forecast_file(tmp_path / "f.h5")
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n0,1.0\n1,0.9\n2,x\n")
    assert main(["monitor", str(log), "--prediction", str(pred), "--follow", "--json", "--idle", "0.5"]) == 2
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert events[0]["kind"] == "start" and events[-1]["kind"] == "error" and events[-1]["exit_code"] == 2
    assert "cannot read numbers" in events[-1]["message"] and "cannot read numbers" in err
    log.write_text("step,loss\n0,1.0\n1,0.9\n2,nan\n3,0.5\n")      # a run that blew up: said so, exit 1
    assert main(["monitor", str(log), "--prediction", str(pred), "--follow", "--json", "--idle", "5"]) == 1
    out, err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["kind"] for e in events] == ["start", "diverged", "end"] and events[-1]["rows"] == 2
    assert "the run diverged at step 2 of 1200 planned (loss nan)" in events[-1]["message"]

@pytest.mark.slow
def test_follow_reads_a_shockflow_training_run_while_it_trains(tmp_path):
    # `shockflow train` in another process writes its HDF5 log only at the end; monitor --follow on that log's
    # path reads the run's live file, so its transitions are reported before the log exists
    out = tmp_path / "out"
    log = out / "mlp-tanh-teacher.h5"
    pred = _forecast_file(tmp_path / "f.h5", steps=(105.0, 286.0, 446.0), horizon=3000)
    monitor = subprocess.Popen([sys.executable, "-m", "shockflow.cli", "monitor", str(log), "--prediction", str(pred),
                                "--follow", "--json", "--interval", "0.2", "--idle", "60"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert json.loads(monitor.stdout.readline())["kind"] == "start"
    trainer = subprocess.Popen([sys.executable, "-m", "shockflow.cli", "train", "mlp-tanh-teacher", "--out", str(out),
                                "--no-figures", "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        stdout, err = monitor.communicate(timeout=300)
    finally:
        trainer.wait(timeout=300)
    assert monitor.returncode == 0, err
    assert trainer.returncode == 0, trainer.stderr.read()
    events = [json.loads(line) for line in stdout.splitlines()]
    assert events[-1]["kind"] == "end" and "the run ended: step 3000 of 3000" in events[-1]["message"]
    found = [e for e in events if e["kind"] == "transition"]
    assert [e["chart"] for e in found] == ["r0", "r1", "r2"]
    committed = log.stat().st_mtime                  # the log's file was written after training ended
    assert all(e["read_at"] < committed and e["last_step"] < 3000 for e in found)
    assert not list(out.glob(".*.live.tmp"))


def test_a_follow_waits_for_a_log_not_there_yet_longer_than_for_a_pause(tmp_path):
    """A tester: a monitor started before its run gave up after 2 s ("the log never appeared"); a log not there yet
    is waited for APPEAR_SECONDS (on a fake clock here), a log that pauses for the usual ten update intervals."""
    from shockflow.runners import monitor as M

    now = [0.0]
    mon = M.monitor_log(tmp_path / "absent.csv", _forecast_file(tmp_path / "f.h5"))
    end = M.follow(mon, emit=lambda e: None, clock=lambda: now[0], sleep=lambda dt: now.__setitem__(0, now[0] + dt))
    assert "the log never appeared" in end.message and f"within {M.APPEAR_SECONDS:.1f} s" in end.message
    assert M.APPEAR_SECONDS <= now[0] <= M.APPEAR_SECONDS + 1.0
