"""Items 6 and 8 of issue 21: every failure is an exit code and one message; a traceback only with --debug."""

import pytest

from shockflow.cases import get_kind


@pytest.mark.parametrize("args, key", [
    (["solve", "burgers-sine", "--set", "initial.amplitude=1e308"], "initial"),
    (["solve", "hj-cosine-ridge", "--set", "initial.amplitude=1e307"], "initial"),
    (["run", "nqf-five-mode", "--set", "experiment.lr=1e16"], "experiment.lr"),
    (["run", "nqf-five-mode", "--set", "experiment.lr=100"], "experiment.lr"),
    (["run", "nqf-five-mode", "--set", "experiment.lr=1e-12"], "experiment.lr"),
    (["train", "two-layer-staircase", "--set", "training.steps=5", "--no-figures"], "training.steps"),
    (["validate", "two-layer-staircase", "--set", "geometry.coordinate=banana"], "geometry.coordinate"),
    (["validate", "two-layer-staircase", "--set", "extraction.charts=[0, 9]"], "extraction.charts"),
    (["validate", "two-layer-staircase", "--set", "extraction.nonsense=1"], "extraction.nonsense"),
    (["validate", "two-layer-staircase", "--set", "data.teacher_weights=[1.0, nan, 1.0, 1.0]"], "data.teacher_weights[1]"),
    (["validate", "cnn-relu-channels", "--set", "data.teacher.init_scale=inf"], "data.teacher.init_scale"),
])
def test_bad_values_are_exit_2_naming_file_and_key(cli, workdir, small_memory, args, key):
    code, out, err = cli(*args, *(["--out", "out"] if args[0] != "validate" else []))
    assert code == 2, err
    assert f"{key}:" in err and ".toml'" in err and "Traceback" not in err
    assert "np.float64" not in err


def test_seed_beyond_64_bits_is_refused_before_the_run(cli, workdir):
    code, _, err = cli("solve", "burgers-sine", "--seed", str(2 ** 64), "--out", "out")
    assert code == 2 and "--seed: expected a whole number below 2**63" in err
    assert not any((workdir / "out").iterdir())


def test_case_file_seed_beyond_64_bits_names_the_key(cli, workdir):
    (workdir / "c.toml").write_text(f"seed = {2 ** 63}\n" + open(_case("burgers-sine")).read())
    code, _, err = cli("validate", "c.toml")
    assert code == 2 and "seed: expected an integer in [0, 2**63 - 1]" in err


def _case(name):
    from shockflow.cases.builtin import builtin_case_path

    return builtin_case_path(name)


def test_toml_nested_1000_deep_and_a_huge_dotted_key_are_bad_input_at_once(cli, workdir):
    import time

    (workdir / "deep.toml").write_text("x = " + "[" * 1000 + "]" * 1000 + "\n")
    (workdir / "dotted.toml").write_text('kind = "pde"\n' + ".".join(["a"] * 50000) + " = 1\n")
    for name in ("deep.toml", "dotted.toml"):
        start = time.perf_counter()
        code, _, err = cli("validate", name)
        assert code == 2 and name in err and "at most 32" in err, err
        assert time.perf_counter() - start < 2.0
    code, _, err = cli("validate", "burgers-sine", "--set", ".".join(["a"] * 50000) + "=1")
    assert code == 2 and "at most 32 parts" in err and len(err) < 1000


def test_brackets_and_dots_inside_strings_and_comments_are_not_nesting(cli, workdir):
    """The pre-parse depth check reads TOML outside strings and comments: "[[[[" in a string is text."""
    lines = open(_case("burgers-sine")).read().splitlines()
    assert lines[1].startswith("description = ")
    deep, dotted = "[" * 100, ".".join(["a"] * 50)
    for value in (f'"{deep} \\" {"{" * 70} {dotted}"', f"'{deep}'", f"\'\'\'\n{deep}\n{dotted} = 1\n\'\'\'",
                  f'"""\n{deep} \\""" ""{"]" * 3}"""'):
        text = "\n".join([lines[0], f"description = {value} # {deep} {dotted}", *lines[2:]]) + "\n"
        (workdir / "s.toml").write_text(text)
        code, _, err = cli("validate", "s.toml")
        assert code == 0, (value, err)
    # the same brackets outside a string are still refused before parsing
    (workdir / "d.toml").write_text("\n".join(lines) + f"\nx = {deep}{']' * 100}\n")
    code, _, err = cli("validate", "d.toml")
    assert code == 2 and "nested at most 32 deep, found 100 levels" in err


def test_a_utf8_byte_order_mark_is_accepted(cli, workdir):
    (workdir / "bom.toml").write_bytes(b"\xef\xbb\xbf" + open(_case("burgers-sine"), "rb").read())
    assert cli("validate", "bom.toml")[0] == 0


def test_sweep_axes_keys_and_values_are_checked_by_validate(cli, workdir):
    text = open(_case("burgers-sine")).read()
    (workdir / "s.toml").write_text(text + '\n[sweep.axes]\n"domain.cells" = [100, 3]\n"solver.nonsense" = [1]\n')
    code, _, err = cli("validate", "s.toml")
    assert code == 2
    assert "sweep.axes.domain.cells: value 3: expected an integer >= 4" in err
    assert "sweep.axes.solver.nonsense: value 1: unknown key" in err
    (workdir / "ok.toml").write_text(text + '\n[sweep.axes]\n"domain.cells" = [100, 200]\n')
    assert cli("validate", "ok.toml")[0] == 0


def test_out_that_is_a_file_or_unwritable_is_refused_before_any_work(cli, workdir, monkeypatch):
    (workdir / "afile").write_text("x")
    code, _, err = cli("solve", "burgers-sine", "--out", "afile")
    assert code == 2 and "--out 'afile': expected a directory, found a file" in err
    code, _, err = cli("solve", "burgers-sine", "--out", "afile/sub")
    assert code == 2 and "--out 'afile/sub'" in err
    import os

    monkeypatch.setattr(os, "access", lambda path, mode: False)
    code, _, err = cli("solve", "burgers-sine", "--out", "out")
    assert code == 2 and "not writable" in err


@pytest.mark.parametrize("argv, text", [
    (["demo", "--cells", "3"], "--cells: expected at least 4"),
    (["demo", "--offset", "nan"], "--offset: expected a finite number"),
    (["demo", "--t-end", "0.1"], "--t-end: the demo measures the first shock"),
    (["demo", "--amplitude", "inf"], "expected a finite positive number"),
])
def test_demo_arguments(cli, argv, text):
    code, _, err = cli(*argv)
    assert code == 2 and text in err and "Traceback" not in err


# -- the error boundary ----------------------------------------------------------------------------
def _failing_run(exc):
    def run(case, options):
        raise exc
    return run


def test_an_internal_failure_is_exit_1_with_place_and_reason_and_a_traceback_only_with_debug(cli, workdir, monkeypatch):
    import dataclasses

    import importlib

    kinds = importlib.import_module("shockflow.cases.kinds")

    kind = get_kind("pde")
    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(kind, run=_failing_run(ZeroDivisionError("boom"))))
    code, _, err = cli("solve", "burgers-sine", "--out", "out")
    assert code == 1 and "Traceback" not in err
    assert "ZeroDivisionError: boom" in err and "test_failures.py" not in err and "--debug" in err
    with pytest.raises(ZeroDivisionError):
        cli("--debug", "solve", "burgers-sine", "--out", "out")
    with pytest.raises(ZeroDivisionError):
        cli("solve", "burgers-sine", "--out", "out", "--debug")


def test_a_failed_command_takes_away_the_directories_it_created_and_left_empty(cli, workdir, monkeypatch):
    """A failure (exit 1) or an interruption (130) leaves no ``--out`` it created and wrote nothing into, nor the
    parents it created for it; a directory that was there before, or one a file was finished in, stays."""
    import dataclasses
    import importlib

    from shockflow.storage import atomic_open

    kinds = importlib.import_module("shockflow.cases.kinds")
    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(get_kind("pde"), run=_failing_run(ZeroDivisionError("boom"))))
    code, _, _ = cli("solve", "burgers-sine", "--out", "new/deeper/out")
    assert code == 1 and not (workdir / "new").exists()
    code, _, _ = cli("solve", "burgers-sine", "--out", "out")
    assert code == 1 and (workdir / "out").is_dir()          # there before: stays

    def interrupted(case, options):
        raise KeyboardInterrupt

    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(get_kind("pde"), run=interrupted))
    code, _, _ = cli("solve", "burgers-sine", "--out", "out/new")
    assert code == 130 and not (workdir / "out" / "new").exists() and (workdir / "out").is_dir()

    def writes_then_fails(case, options):
        with atomic_open(f"{options.out}/{case.name}.h5") as fh:
            fh.write("result")
        raise ZeroDivisionError("after the write")

    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(get_kind("pde"), run=writes_then_fails))
    code, _, _ = cli("solve", "burgers-sine", "--out", "kept/out")
    assert code == 1 and [p.name for p in (workdir / "kept" / "out").iterdir()] == ["burgers-sine.h5"]


def test_ctrl_c_is_exit_130_and_the_message_tells_what_was_written(cli, workdir, monkeypatch):
    import dataclasses
    import importlib

    from shockflow.storage import atomic_open
    from shockflow.storage.atomic import committed_together

    kinds = importlib.import_module("shockflow.cases.kinds")

    def writes_then_interrupted(case, options):  # its result written, interrupted while drawing the figure
        with atomic_open(f"{options.out}/{case.name}.h5") as fh:
            fh.write("result")
        raise KeyboardInterrupt

    # as the runners are: the result is committed with its figure or not at all
    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(get_kind("pde"), run=committed_together(writes_then_interrupted)))
    code, _, err = cli("solve", "burgers-sine", "--out", "out")
    assert code == 130 and "interrupted; no file was written" in err
    assert not any((workdir / "out").iterdir())
    # a writer that commits file by file: the message names what was finished
    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(get_kind("pde"), run=writes_then_interrupted))
    code, _, err = cli("solve", "burgers-sine", "--out", "out")
    assert code == 130 and "files finished before the interruption: burgers-sine.h5" in err
    assert [p.name for p in (workdir / "out").iterdir()] == ["burgers-sine.h5"]


def test_ctrl_c_while_a_real_solve_draws_its_figure_leaves_no_result(cli, workdir, monkeypatch):
    """The interruption of the issue: the result file is written, the figure is being drawn."""
    import shockflow.figures as figures

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(figures, "draw_result", interrupted)  # every runner draws through draw_result
    monkeypatch.setattr(figures, "can_draw", lambda: True)
    code, _, err = cli("solve", "burgers-sine", "--set", "domain.cells=64", "--set", "output.snapshots=3", "--out", "out")
    assert code == 130 and "interrupted; no file was written" in err
    assert list((workdir / "out").iterdir()) == []  # neither the result nor a temporary


def test_show_and_compare_blame_the_damaged_file(cli, workdir):
    (workdir / "bad.h5").write_text("not hdf5")
    (workdir / "log.csv").write_text("step,loss\n" + "".join(f"{s},{1.0 / (1 + s)}\n" for s in range(1, 50)))
    code, _, err = cli("show", "bad.h5")
    assert code == 2 and "'bad.h5'" in err
    code, _, err = cli("compare", "log.csv", "--prediction", "bad.h5")
    assert code == 2 and "--prediction" in err and "LOG" not in err
    code, _, err = cli("compare", "missing.csv", "--prediction", "bad.h5")
    assert code == 2 and "bad.h5" in err  # the prediction file is read (and blamed) first


# -- item 7: crashes of the prediction become clean errors -----------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cnn_seeds_whose_chart_runs_towards_smaller_coordinates_are_predicted(cli, workdir, seed):
    # these seeds failed with "formation time -0.02": a chart whose escape runs towards smaller coordinates
    code, out, err = cli("run", "cnn-relu-channels", "--seed", seed, "--set", "data.n=1024", "--set",
                         "extraction.cells=401", "--out", "out", "--no-figures", "--json")
    assert code == 0, err
    assert "Traceback" not in err and (workdir / "out" / "cnn-relu-channels.h5").is_file()


def test_a_failing_saddle_is_exit_1_naming_the_saddle_and_the_chart(cli, workdir, monkeypatch):
    from shockflow.prediction import saddle_chain

    def broken(self, geo, k):
        if self.charts[k].label == "r1":
            raise FloatingPointError("overflow in the chart loss")
        return 1.0

    monkeypatch.setattr(saddle_chain.Landscape, "_curvature", broken)
    code, _, err = cli("run", "two-layer-staircase", "--set", "data.n=512", "--set", "training.steps=300",
                       "--set", "extraction.cells=201", "--set", "extraction.charts=[0, 1]", "--out", "out",
                       "--no-figures", "--quiet")
    assert code == 1, err
    assert "SaddleFailure" in err and "saddle chain" in err and "chart r1" in err and "overflow" in err
    assert "Traceback" not in err


def test_show_checks_its_output_directory_only_when_it_draws(cli, workdir, monkeypatch):
    import os

    code, _, err = cli("solve", "burgers-sine", "--set", "domain.cells=64", "--set", "output.snapshots=3", "--out", "out",
                       "--no-figures", "--quiet")
    assert code == 0, err
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as if out/ were read-only
    code, out, err = cli("show", "out/burgers-sine.h5", "--no-figures")
    assert code == 0 and "burgers-sine" in out
    code, _, err = cli("show", "out/burgers-sine.h5")
    assert code == 2 and "not writable" in err


def test_a_ctrl_c_swallowed_by_a_library_is_still_exit_130(cli, workdir, monkeypatch):
    """SIGINT while a library closes a file: the library may swallow the KeyboardInterrupt; the run must not exit 0."""
    import dataclasses
    import importlib
    import signal

    kinds = importlib.import_module("shockflow.cases.kinds")

    def swallows(case, options):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            pass  # as an exception raised inside a C callback or __del__ is dropped
        return None

    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(get_kind("pde"), run=swallows))
    code, _, err = cli("solve", "burgers-sine", "--out", "out")
    assert code == 130 and "interrupted" in err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is restored


def test_with_json_a_failed_command_prints_one_object_naming_the_error_and_the_exit_code(cli, workdir):
    import json

    code, out, err = cli("run", "mlp-tanh-teacher", "--set", "training.lr=-1", "--json", "--out", "out")
    assert code == 2 and "training.lr" in err
    (line,) = out.strip().splitlines()
    obj = json.loads(line)
    assert obj == {"error": err.strip().removeprefix("shockflow: error: "), "exit_code": 2}
    # a command whose own object reports the failure (validate's "valid": false) prints that one only
    code, out, _ = cli("validate", "mlp-tanh-teacher", "--set", "training.lr=-1", "--json")
    (line,) = out.strip().splitlines()
    assert code == 2 and json.loads(line)["valid"] is False
    # without --json nothing goes to stdout
    code, out, _ = cli("run", "mlp-tanh-teacher", "--set", "training.lr=-1", "--out", "out")
    assert code == 2 and out == ""
    # an argument the command line refuses before any case is read: the same object (argparse's usage on stderr)
    for args in (["run", "mlp-tanh-teacher", "--seed", "abc"], ["forecast", "linear2-momentum", "--lr-scan", "0:1:5"]):
        code, out, err = cli(*args, "--json", "--out", "out")
        (line,) = out.strip().splitlines()
        obj = json.loads(line)
        assert code == 2 and obj["exit_code"] == 2 and obj["error"].split(": ", 1)[1] in err and "usage:" in err
    code, out, _ = cli("run", "mlp-tanh-teacher", "--seed", "abc")
    assert code == 2 and out == ""


def test_a_sigterm_is_exit_143_and_the_run_s_files_are_committed_together_or_not_at_all(cli, workdir, monkeypatch):
    import dataclasses
    import importlib
    import signal

    from shockflow.storage import atomic_open
    from shockflow.storage.atomic import committed_together

    kinds = importlib.import_module("shockflow.cases.kinds")

    def writes_then_terminated(case, options):   # a job scheduler's SIGTERM while the run writes
        with atomic_open(f"{options.out}/{case.name}.h5") as fh:
            fh.write("result")
        signal.raise_signal(signal.SIGTERM)

    monkeypatch.setitem(kinds._KINDS, "pde", dataclasses.replace(get_kind("pde"),
                                                                 run=committed_together(writes_then_terminated)))
    code, _, err = cli("solve", "burgers-sine", "--out", "out")
    assert code == 143 and "terminated (SIGTERM); no file was written" in err
    assert not any((workdir / "out").iterdir())                        # no temporary left either
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL          # the handler is restored


def test_a_refused_sweep_prints_its_error_object_with_json(cli, workdir):
    """Every command with --json prints one object on stdout, a sweep whose axis is refused included (it printed
    nothing there; the message was on stderr only)."""
    import json

    code, out, err = cli("sweep", "burgers-sine", "--set", "initial.amplitude=range:3:3", "--scheduler", "serial",
                         "--json", "--out", "out/sweep")
    assert code == 2 and "the range is empty" in err
    (line,) = out.strip().splitlines()
    assert json.loads(line) == {"error": err.strip().removeprefix("shockflow: error: "), "exit_code": 2}
    code, out, _ = cli("sweep", "burgers-sine", "--set", "initial.amplitude=range:3:3", "--scheduler", "serial",
                       "--out", "out/sweep")
    assert code == 2 and out == ""


def test_a_command_does_not_replace_another_commands_file_of_the_same_name(cli, workdir):
    """`train` writes its log as CASE.h5, the name of `run`'s result: into one --out it replaced the run's result
    without a word.  Each refuses the other's file (exit 2, before any work, naming the file and both kinds); each
    replaces its own earlier output as before."""
    small = ["--set", "data.n=256", "--set", "training.steps=300", "--no-figures", "--quiet"]
    assert cli("run", "two-layer-staircase", *small, "--out", "out/a")[0] == 0
    result = (workdir / "out" / "a" / "two-layer-staircase.h5").read_bytes()
    code, _, err = cli("train", "two-layer-staircase", *small, "--out", "out/a")
    assert code == 2 and "already holds 'two-layer-staircase.h5', a result file" in err and "Traceback" not in err
    assert (workdir / "out" / "a" / "two-layer-staircase.h5").read_bytes() == result
    assert cli("train", "two-layer-staircase", *small, "--out", "out/b")[0] == 0
    assert cli("train", "two-layer-staircase", *small, "--out", "out/b")[0] == 0          # its own: replaced
    code, _, err = cli("run", "two-layer-staircase", *small, "--out", "out/b")
    assert code == 2 and "a training log" in err and not (workdir / "out" / "b" / "two-layer-staircase-log.h5").exists()


def test_a_directory_where_a_file_is_expected_is_said_to_be_one(cli, workdir):
    (workdir / "d.h5").mkdir()
    (workdir / "d.csv").mkdir()
    for args in (["show", "d.h5"], ["compare", "d.csv", "--prediction", "d.h5"], ["monitor", "d.csv", "--prediction",
                                                                                   "d.h5", "--follow"]):
        code, _, err = cli(*args)
        assert code == 2 and "is a directory" in err and "no such file" not in err and "Traceback" not in err, args


def test_a_csv_log_with_a_byte_order_mark_is_read_as_without_one(tmp_path):
    from shockflow.logs import read_loss_curve
    from shockflow.logs.tail import LogTail

    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text("step,loss\n0,1.0\n1,0.5\n2,0.25\n")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    for path in (plain, marked):
        tail = LogTail(path)
        tail.read()
        assert [list(a) for a in tail.series()] == [[0.0, 1.0, 2.0], [1.0, 0.5, 0.25]]
    assert list(read_loss_curve(marked).series["loss"]) == [1.0, 0.5, 0.25]


def test_the_python_api_takes_one_override_given_as_a_string_as_one(tmp_path):
    import shockflow

    a = shockflow.forecast("two-layer-staircase", out=tmp_path / "a", overrides="data.n=256", figures=False)
    b = shockflow.forecast("two-layer-staircase", out=tmp_path / "b", overrides=["data.n=256"], figures=False)
    assert [p["step"] for p in a.predicted] == [p["step"] for p in b.predicted]


def test_reader_messages_name_what_is_wrong(cli, workdir, tmp_path):
    """A matching factor of 1 is the option's fault, not the log's; a log of zero losses says why the detector has
    nothing to read; a training log without its loss series names the dataset, not h5py's words."""
    import h5py
    import numpy as np

    from shockflow.logs import TrainingRecord, write_training_log

    code, _, err = cli("compare", "x.csv", "--prediction", "y.h5", "--max-ratio", "1")
    assert code == 2 and "argument --max-ratio: expected a finite number > 1, found '1'" in err
    zero = workdir / "zero.csv"
    zero.write_text("step,loss\n" + "".join(f"{s},0\n" for s in range(50)))
    assert cli("forecast", "two-layer-staircase", "--set", "data.n=256", "--out", "out", "--no-figures",
               "--quiet")[0] == 0
    code, _, err = cli("compare", "zero.csv", "--prediction", "out/two-layer-staircase-forecast.h5")
    assert code == 2 and "every loss is 0" in err and "None" not in err
    log = workdir / "log.h5"
    steps = np.arange(100)
    write_training_log(TrainingRecord(series={"step": steps, "loss": np.exp(-steps / 30.0)}), log)
    with h5py.File(log, "r+") as f:
        del f["series/loss"]
    code, _, err = cli("compare", "log.h5", "--prediction", "out/two-layer-staircase-forecast.h5")
    assert code == 2 and "lacks /series/loss" in err and "synchronously" not in err and "Traceback" not in err


def test_compare_reads_json_lines_and_monitor_says_what_it_reads(cli, workdir):
    """`compare` read JSON documents only (a .jsonl log: 'unknown extension'; JSON lines named .json: 'Extra data');
    both forms now.  `monitor` follows JSON lines and reads a JSON document (a list of records) whole once it
    parses (it had refused one, then read a list without a newline as no rows)."""
    import json

    import numpy as np

    assert cli("forecast", "two-layer-staircase", "--set", "data.n=256", "--out", "out", "--no-figures",
               "--quiet")[0] == 0
    pred = "out/two-layer-staircase-forecast.h5"
    t = np.arange(1, 3001)
    loss = 1.0 + 4.0 / (1.0 + np.exp((t - 300.0) / 20.0))
    rows = [{"step": int(s), "loss": float(v)} for s, v in zip(t, loss)]
    lines = "\n".join(json.dumps(r) for r in rows) + "\n"
    (workdir / "log.jsonl").write_text(lines)
    (workdir / "log.json").write_text(lines)
    (workdir / "doc.json").write_text(json.dumps(rows, indent=1))
    outs = []
    for name in ("log.jsonl", "log.json", "doc.json"):
        code, out, err = cli("compare", name, "--prediction", pred, "--json")
        assert code == 0, err
        outs.append(json.loads(out)["observed"])
    assert outs[0] == outs[1] == outs[2] and outs[0]
    code, out, err = cli("monitor", "doc.json", "--prediction", pred)
    assert code == 0 and "doc.json: 3000 rows" in out, (out, err)


def test_show_on_a_training_log_says_which_commands_read_one(cli, workdir):
    assert cli("train", "two-layer-staircase", "--set", "data.n=256", "--set", "training.steps=300", "--out", "out",
               "--no-figures", "--quiet")[0] == 0
    code, _, err = cli("show", "out/two-layer-staircase.h5")
    assert code == 2 and "is a shockflow training log, not a result file" in err and "compare" in err


@pytest.mark.parametrize("sets", [["domain.upper=1e-300"], ["domain.lower=1e300", "domain.upper=1.0000001e300"]])
def test_a_domain_whose_cells_are_too_small_or_large_for_a_double_is_bad_input(cli, workdir, sets):
    """Cells 1e-303 or 1e290 wide: a ZeroDivisionError or OverflowError of the Courant check (exit 1)."""
    args = sum((["--set", s] for s in sets), [])
    code, _, err = cli("solve", "burgers-sine", *args, "--out", "out", "--no-figures")
    assert code == 2 and "domain: cells" in err and "not a usable double" in err and "Traceback" not in err


def test_an_empty_scaling_grid_axis_is_bad_input_naming_it(cli, workdir):
    code, _, err = cli("validate", "scaling-data-limited", "--set", "scaling.grid.n=[]", "--set",
                       "scaling.fit.regime=none")
    assert code == 2 and "scaling.grid.n: expected at least one value" in err


def test_an_nqf_initial_scale_past_the_switch_on_is_bad_input_at_its_key(cli, workdir):
    """eps = 0.5 (within its documented (0, 1)): exit 1, 'zeta: a switch-on needs ζ > C z0 > 0'."""
    (workdir / "sl.toml").write_text('kind = "nqf"\nname = "sl"\n[experiment]\nkind = "shock_link"\neps = 0.5\n'
                                     'rho = 0.999\n')
    code, _, err = cli("run", "sl.toml", "--out", "out", "--no-figures")
    assert code == 2 and "experiment.eps: 0.5 starts a mode at or past its learned value" in err


def test_initial_data_the_grid_does_not_resolve_are_refused_before_the_solve(cli, workdir):
    """burgers-sine on 8 cells reported a shock at t = 0 (exact t* = 0.159), and at frequency 1000 on 800 cells about
    200 of them (exact t* = 1.6e-4), exit 0 with a warning after the solve: the grid cannot tell the sine's descent
    from a jump.  Now exit 2 at domain.cells from validate and solve, before any work; burgers-riemann's jump at t = 0
    is the data's (it is one 64 times finer too): it runs."""
    for override in ("domain.cells=8", "initial.frequency=1000"):
        for args in (("validate",), ("solve", "--out", "out", "--no-figures")):
            code, _, err = cli(args[0], "burgers-sine", *args[1:], "--set", override)
            assert code == 2 and "domain.cells: " in err and "do not resolve the initial data" in err, err
            assert "sampled 64 times finer, they are smooth" in err and "solve burgers-sine: started" not in err
    assert list((workdir / "out").iterdir()) == []
    assert cli("validate", "burgers-sine", "--set", "domain.cells=64")[0] == 0
    code, _, err = cli("solve", "burgers-riemann", "--out", "out", "--no-figures")
    assert code == 0 and "resolve" not in err


def test_a_full_disk_while_writing_is_exit_1_saying_so_and_leaves_nothing(cli, tmp_path, monkeypatch, listing):
    """A tester's run on a 300 KiB file system: 148 tracebacks of h5py's finalisers on stderr and HDF5's buffer details
    in the last line.  The file system's "no space left" (here as a finished file is closed, as HDF5 gives it: the
    errno in its text only) is one line saying so, and --out keeps nothing of the command."""
    import errno

    from shockflow.storage import atomic

    def full(path, mode):
        raise OSError(f"Can't close file (file write failed: errno = {errno.ENOSPC}, error message = 'No space left "
                      f"on device', buf = 0x5653bdc50770)")

    monkeypatch.setattr(atomic.os, "chmod", full)
    out = tmp_path / "out"
    code, _, err = cli("solve", "burgers-sine", "--no-figures", "--out", out)
    assert code == 1 and "Traceback" not in err
    assert "no space left on the device" in err and "buf = 0x" not in err
    assert not out.exists() or not listing(out)


def test_h5py_finalisers_errors_are_not_printed_while_a_command_runs(capsys):
    """Cython prints an error of h5py's ``ObjectID._dealloc`` through sys.excepthook and sys.unraisablehook; within a
    command those are counted, anything else is printed as before, and the hooks are restored after."""
    import sys

    from shockflow.cli import _QuietH5pyFinalisers

    namespace = {}
    exec(compile("def _dealloc():\n    raise RuntimeError('Can\\'t close dataset')\n", "h5py/_objects.pyx", "exec"),
         namespace)

    def raised(function):
        try:
            function()
        except RuntimeError as exc:
            return type(exc), exc, exc.__traceback__

    def other():
        raise RuntimeError("something else")

    before = (sys.excepthook, sys.unraisablehook)
    with _QuietH5pyFinalisers() as quiet:
        sys.excepthook(*raised(namespace["_dealloc"]))
        assert capsys.readouterr().err == ""
        sys.excepthook(*raised(other))
        assert "something else" in capsys.readouterr().err
    assert quiet.dropped == 1 and (sys.excepthook, sys.unraisablehook) == before


@pytest.mark.parametrize("name, content", [("garbage.npz", b"not a zip file at all"), ("one.npy", None)])
def test_an_initial_file_that_is_no_npz_is_bad_input_at_its_key(cli, tmp_path, name, content):
    """A tester's non-zip .npz and a .npy as [training] initial were exit 1 ("the run failed in ... BadZipFile",
    "TypeError ... context manager"): bad input, exit 2 at training.initial."""
    import numpy as np

    path = tmp_path / name
    if content is None:
        np.save(path, np.ones(4))
    else:
        path.write_bytes(content)
    code, _, err = cli("validate", "two-layer-staircase", "--set", f"training.initial={path}")
    assert code == 2 and "training.initial" in err and "not a readable .npz file" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["validate", "forecast", "train"])
def test_a_batch_larger_than_the_data_is_bad_input_at_its_key_for_every_command(cli, tmp_path, command):
    """validate passed a batch_size above n, train refused it (exit 2) and forecast failed (exit 1): all exit 2 now."""
    extra = [] if command == "validate" else ["--no-figures", "--out", tmp_path / "o"]
    code, _, err = cli(command, "two-layer-staircase", "--set", "training.optimizer=sgd",
                       "--set", "training.batch_size=100000", *extra)
    assert code == 2 and "training.batch_size: expected at most the data set's 8192 samples" in err


def test_array_files_that_are_no_npz_are_bad_input_naming_the_key(cli, tmp_path):
    """A tester's non-zip .npz as [data] arrays, as a PDE's initial array and as spectra's source were exit 1 (the
    run failed in ... BadZipFile); an .npz without X and y was a KeyError: all exit 2, said plainly."""
    import numpy as np

    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"no zip here")
    np.savez(tmp_path / "keys.npz", A=np.ones((4, 2)), B=np.ones(4))
    for path, expected in ((garbage, "cannot read"), (tmp_path / "keys.npz", "has no array 'X'")):
        (tmp_path / "case.toml").write_text(f'kind = "network"\n[model]\nname = "linear2"\ninput_dim = 2\nhidden = 2\n'
                                            f'output_dim = 1\n[data]\nname = "arrays"\npath = "{path}"\n')
        code, _, err = cli("validate", tmp_path / "case.toml")
        assert code == 2 and "data" in err and expected in err and "Traceback" not in err, err
    pde = (tmp_path / "pde.toml")
    pde.write_text('kind = "pde"\n[equation]\nkind = "burgers"\n[domain]\nkind = "interval"\nlower = 0.0\nupper = 1.0\n'
                   f'cells = 100\nboundary = "periodic"\n[initial]\nfunction = "array"\npath = "{garbage}"\n'
                   '[output]\nt_end = 0.1\nsnapshots = 5\n')
    code, _, err = cli("solve", pde, "--no-figures", "--out", tmp_path / "o")
    assert code == 2 and "initial.path" in err and "not a NumPy" in err
    code, _, err = cli("spectra", garbage, "--out", tmp_path / "s")
    assert code == 2 and "not a readable .npz archive" in err


@pytest.mark.parametrize("args, message", [
    (["run", "two-layer-staircase", "--dpi", "1"], "--dpi: expected a resolution from 10 to 1200"),
    (["run", "two-layer-staircase", "--dpi", "100000"], "--dpi: expected a resolution from 10 to 1200"),
    (["monitor", "log.csv", "--prediction", "f.h5", "--interval", "1e308"], "--interval: expected a number of seconds"),
    (["monitor", "log.csv", "--prediction", "f.h5", "--idle", "1e300"], "--idle: expected a number of seconds"),
    (["init", "pde", "a" * 300], "NAME: expected at most 100 characters"),
    (["init", "pde", "x y"], "NAME: expected a file stem"),
])
def test_options_that_would_fail_after_the_work_are_refused_before_it(cli, tmp_path, args, message):
    """A tester's --dpi 1 and 100000 failed after the whole run and lost its results (committed with the figures),
    --interval 1e308 overflowed the clock, a 300-character init name was 'the run failed ... File name too long' and
    init wrote names validate then refuses: exit 2 before any work, nothing written."""
    code, _, err = cli(*args, "--out", tmp_path / "o")
    assert code == 2 and message in err and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()


def test_a_result_whose_header_is_damaged_is_bad_input_for_every_reader(cli, tmp_path):
    """A tester zeroed bytes 600-4000 of a result: show and monitor were exit 1 (KeyError: Unable to synchronously open
    object), compare exit 2, read_result a bare h5py KeyError.  Now exit 2 saying the file is damaged, and the
    documented ResultFileError from Python."""
    from shockflow.storage import ResultFileError, read_result

    assert cli("forecast", "two-layer-staircase", "--set", "data.n=512", "--no-figures", "--quiet",
               "--out", tmp_path)[0] == 0
    damaged = tmp_path / "damaged.h5"
    data = bytearray((tmp_path / "two-layer-staircase-forecast.h5").read_bytes())
    data[600:4000] = bytes(3400)
    damaged.write_bytes(bytes(data))
    log = tmp_path / "log.csv"
    log.write_text("step,loss\n0,1.0\n1,0.9\n")
    for args in (["show", damaged, "--no-figures"], ["monitor", log, "--prediction", damaged],
                 ["compare", log, "--prediction", damaged]):
        code, _, err = cli(*args)
        assert code == 2 and "damaged" in err and "Traceback" not in err, (args, err)
    with pytest.raises(ResultFileError, match="damaged"):
        read_result(damaged)



def test_an_empty_out_is_refused_not_read_as_the_current_directory(cli, tmp_path, monkeypatch):
    """--out "" (an unset shell variable) wrote into the current directory."""
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("solve", "burgers-sine", "--no-figures", "--out", "")
    assert code == 2 and "found an empty one" in err and not list(tmp_path.iterdir())
