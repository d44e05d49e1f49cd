"""`shockflow sweep` (serial scheduler): JSON summary, resume, failures with exit code 1, bad input with 2."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from shockflow.sweeps.command import add_parser
from shockflow.sweeps.index import read_index


def _run(argv, capsys):
    parser = argparse.ArgumentParser(prog="shockflow")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    code = args.run(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sweep_command_runs_resumes_and_reports(tmp_path, capsys):
    out = tmp_path / "amp"
    argv = ["sweep", "burgers-sine", "--set", "initial.amplitude=0.5,1.0", "--set", "domain.cells=200",
            "--set", "output.snapshots=41", "--scheduler", "serial", "--out", str(out), "--json"]
    code, stdout, _ = _run(argv, capsys)
    summary = json.loads(stdout)
    assert code == 0 and summary["tasks"] == 2 and summary["done"] == 2 and summary["failed"] == 0
    idx = read_index(summary["index"])
    exact = 1.0 / (2.0 * math.pi * idx["initial.amplitude"])
    assert np.max(np.abs(idx["formation_time"] / exact - 1.0)) < 0.01
    code, stdout, _ = _run(argv, capsys)
    assert code == 0 and json.loads(stdout)["reused"] == 2
    code, stdout, _ = _run(argv + ["--dry-run"], capsys)
    assert code == 0 and all(row["finished"] for row in json.loads(stdout)["tasks"])
    # growing an axis reuses the finished points and runs only the new one
    argv[3] = "initial.amplitude=0.5,0.75,1.0"
    code, stdout, _ = _run(argv, capsys)
    summary = json.loads(stdout)
    assert code == 0 and summary["reused"] == 2 and summary["done"] == 1


def test_failing_case_task_gives_exit_1_and_lists_it(tmp_path, capsys):
    x = (np.arange(100) + 0.5) / 100
    np.save(tmp_path / "good.npy", np.sin(2 * np.pi * x))
    case = tmp_path / "arrays.toml"
    case.write_text('kind = "pde"\n[equation]\nkind = "burgers"\n[domain]\nkind = "interval"\nlower = 0.0\n'
                    'upper = 1.0\ncells = 100\nboundary = "periodic"\n[initial]\nfunction = "array"\n'
                    'path = "good.npy"\n[output]\nt_end = 0.3\nsnapshots = 31\n\n'
                    '[sweep]\n[sweep.axes]\n"initial.path" = ["good.npy", "missing.npy"]\n')
    code, stdout, err = _run(["sweep", str(case), "--scheduler", "serial", "--out", str(tmp_path / "o")], capsys)
    assert code == 1
    assert "1 done, 0 reused, 1 failed" in stdout
    assert "FAILED task 1 (initial.path='missing.npy')" in stdout and "missing.npy" in stdout
    idx = read_index(tmp_path / "o" / "index.h5")
    assert list(idx["status"]) == ["done", "failed"]
    assert abs(idx["formation_time"][0] - 1 / (2 * math.pi)) < 0.01 and math.isnan(idx["formation_time"][1])


def test_bad_input_gives_exit_2_and_runs_nothing(tmp_path, capsys):
    out = tmp_path / "never"
    code, _, err = _run(["sweep", "burgers-sine", "--set", "initial.amplitude=logspace:0:1:3", "--out", str(out),
                         "--scheduler", "serial"], capsys)
    assert code == 2 and "initial.amplitude" in err and "a > 0 and b > 0" in err
    code, _, err = _run(["sweep", "burgers-sine", "--set", "domain.cells=100,-5", "--out", str(out),
                         "--scheduler", "serial"], capsys)
    assert code == 2 and "domain.cells" in err and "task 1: domain.cells=-5" in err
    # a bad key of every task is one problem naming the first task and the others (was one line, and one count, each)
    code, _, err = _run(["sweep", "burgers-sine", "--set", "domain.cells=100,-5,-6", "--out", str(out),
                         "--scheduler", "serial"], capsys)
    assert code == 2 and "2 problems" not in err and err.count("domain.cells: expected") == 1
    assert "(task 1: domain.cells=-5; the same key in task 2)" in err
    code, _, err = _run(["sweep", "no-such-case", "--out", str(out)], capsys)
    assert code == 2 and "built-in cases:" in err
    notes = tmp_path / "notes.txt"
    notes.write_text("not an address")
    for scheduler in (str(notes), "tcp://host-without-port", str(tmp_path / "absent.json")):
        code, _, err = _run(["sweep", "burgers-sine", "--set", "domain.cells=100,200", "--out", str(out),
                             "--scheduler", scheduler], capsys)
        assert code == 2 and "--scheduler:" in err   # (a text file as the address left --out behind)
    assert not out.exists()


def test_learning_rate_scan_of_a_network_case_through_the_cli(tmp_path, capsys):
    from shockflow.cli import main
    from shockflow.logs import read_training_log
    from shockflow.sweeps.records import read_task_record

    code = main(["sweep", "diagonal-staircase", "--set", "training.lr=0.05,0.1", "--set", "training.steps=1200",
                 "--scheduler", "serial", "--out", str(tmp_path), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["done"] == 2
    idx = read_index(summary["index"])
    assert list(idx["transition_count"]) == [3, 3]
    for row, (key, lr) in enumerate(zip(idx["key"], idx["training.lr"])):
        path = tmp_path / "tasks" / f"{key}.h5"
        log = read_training_log(path)  # the task file is the case's own training log
        assert log.series["step"][-1] == 1200 and log.seed == read_task_record(path).seed
        observed = [idx[f"transition_{k}"][row] for k in (1, 2, 3)]
        # logistic switch-on of mode w from eps^2 = 1e-6 under GD at rate lr (docs/theory.md §2)
        exact = [math.log((w - 1e-6) / 1e-6) / (2 * math.log1p(lr * w)) for w in (4.0, 1.0, 0.25)]
        np.testing.assert_allclose(observed, exact, rtol=0.10)  # measured: within 5 %


def test_sweep_prints_the_result_table(tmp_path, capsys):
    out = tmp_path / "amp"
    argv = ["sweep", "burgers-sine", "--set", "initial.amplitude=0.5,1.0", "--set", "domain.cells=200",
            "--set", "output.snapshots=41", "--scheduler", "serial", "--out", str(out)]
    code, stdout, _ = _run(argv, capsys)
    assert code == 0
    lines = stdout.splitlines()
    (head,) = [l for l in lines if l.split()[:2] == ["task", "initial.amplitude"]]
    assert "formation_time" in head.split()
    col = head.split().index("formation_time")
    rows = [l.split() for l in lines[lines.index(head) + 1:lines.index(head) + 3]]
    idx = read_index(out / "index.h5")
    assert [float(r[1]) for r in rows] == [0.5, 1.0]
    np.testing.assert_allclose([float(r[col]) for r in rows], idx["formation_time"], rtol=1e-5)


def test_a_cluster_sweep_without_dask_is_refused_before_anything_is_written(tmp_path, capsys, monkeypatch):
    """Without dask the command exited 1 with the Python API's hint (scheduler='serial') after writing sweep.json,
    index.h5 and tasks/ into shockflow-results/burgers-sine-sweep."""
    import sys

    import pytest

    from shockflow.cli import main
    from shockflow.sweeps.engine import MissingDistributed, run_sweep
    from shockflow.sweeps.sweep import case_sweep

    monkeypatch.setitem(sys.modules, "distributed", None)   # import distributed: ImportError, as when not installed
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "burgers-sine", "--set", "initial.amplitude=linspace:0.5:2:8"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'shockflow[sweep]'" in err and "--scheduler serial" in err and "scheduler='serial'" not in err
    assert main(["sweep", "burgers-sine", "--set", "initial.amplitude=0.5,1", "--out", "mine", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["exit_code"] == 2
    assert list(tmp_path.iterdir()) == []
    # from Python too: refused before the sweep directory is made, in Python's words
    with pytest.raises(MissingDistributed, match=r"scheduler='serial'"):
        run_sweep(case_sweep("burgers-sine", ["initial.amplitude=0.5,1"]), tmp_path / "py")
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_prints_a_line_per_finished_task_on_stderr_with_json_too(tmp_path, capsys):
    """A tester saw nothing on stderr for 16 s of four tasks (and --json turned progress off as well)."""
    argv = ["sweep", "burgers-sine", "--set", "initial.amplitude=0.5,1.0", "--set", "domain.cells=200",
            "--set", "output.snapshots=41", "--scheduler", "serial", "--out", str(tmp_path / "o")]
    code, stdout, err = _run([*argv, "--json"], capsys)
    assert code == 0 and json.loads(stdout)["done"] == 2          # stdout: the JSON object alone
    lines = err.splitlines()
    assert lines[0] == "sweep burgers-sine: started (0/2)"
    assert lines[1].startswith("sweep burgers-sine: 1/2 task 0 done in ") and "(initial.amplitude=0.5)" in lines[1]
    assert lines[2].startswith("sweep burgers-sine: 2/2 task 1 done in ") and "(initial.amplitude=1.0)" in lines[2]
    assert lines[-1].startswith("sweep burgers-sine: done 2/2 after ") and "task" not in lines[-1]
    code, _, err = _run([*argv[:-2], "--out", str(tmp_path / "q"), "--json", "--quiet"], capsys)
    assert code == 0 and err == ""                                  # --quiet silences it


def test_an_interrupted_sweep_says_so_once_and_leaves_no_scratch_directory(tmp_path, capsys, monkeypatch):
    """A tester's Ctrl-C gave two contradictory errors ('finished tasks are kept ... rerun to resume', then 'files
    finished before the interruption: index.h5, sweep.json; the unfinished ones were not written') and left the
    stopped worker's empty tasks/.work-... directory.  Here the second task is interrupted after its worker made its
    scratch directory and died (a pid that no longer runs)."""
    import signal
    import socket
    import subprocess
    import sys

    from shockflow.cli import main
    from shockflow.sweeps import engine

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    perform = engine.perform

    def stopped_at_the_second(task, execute, tasks_dir):
        if task.index == 1:
            from pathlib import Path

            (Path(tasks_dir) / f".work-{task.key}-{socket.gethostname()}-{dead.pid}-0123abcd").mkdir()
            signal.raise_signal(signal.SIGINT)   # Ctrl-C: the command line's handler raises KeyboardInterrupt
        return perform(task, execute, tasks_dir)

    monkeypatch.setattr(engine, "perform", stopped_at_the_second)
    out = tmp_path / "o"
    code = main(["sweep", "burgers-sine", "--set", "initial.amplitude=0.5,1.0", "--set", "domain.cells=200",
                 "--set", "output.snapshots=41", "--scheduler", "serial", "--out", str(out)])
    errors = [l for l in capsys.readouterr().err.splitlines() if l.startswith("shockflow: error:")]
    assert code == 130
    assert errors == [f"shockflow: error: interrupted; finished tasks are kept in {out}: rerun the same command to "
                      f"resume"]
    assert sorted(p.name for p in (out / "tasks").iterdir()) == [read_index(out / "index.h5")["key"][0] + ".h5"]
