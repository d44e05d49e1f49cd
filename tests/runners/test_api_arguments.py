"""The Python API's arguments, as a notebook user gives them: every one is checked before any work and a bad one
is a CaseError naming it (docs/api.md, "Errors") — never pathlib's or a builtin's bare error from deep inside —;
overrides are taken alike by every function; an unusable ``out`` is refused as the command line refuses it; and a
call that fails or is interrupted leaves no directory it created behind."""

from __future__ import annotations

import pytest

import shockflow
from shockflow.cases import CaseError
from shockflow.cases.errors import ArgumentTypeError
from shockflow.storage.outdir import OutDirError


class Net:
    """A user's network implementing the protocol (shockflow.models.protocol), given where a case is expected."""

    def get_params(self):
        return {}

    def set_params(self, params):
        pass

    def loss(self, X, y):
        return 0.0

    def grad(self, X, y):
        return {}


CASE_EXPECTED = "a built-in case name, a path to a case file (str or os.PathLike) or a Case from shockflow.load_case"


@pytest.mark.parametrize("call", ["run", "solve", "train", "forecast"])
@pytest.mark.parametrize("case", [123, b"two-layer-staircase", 2.5])
def test_a_case_that_is_no_case_names_the_case_argument(tmp_path, call, case):
    with pytest.raises(ArgumentTypeError) as info:
        getattr(shockflow, call)(case, out=tmp_path / "out")
    assert str(info.value).startswith(f"case: expected {CASE_EXPECTED}")
    assert isinstance(info.value, CaseError) and isinstance(info.value, TypeError)
    assert not (tmp_path / "out").exists()


def test_a_users_network_given_to_run_is_pointed_to_forecast(tmp_path):
    with pytest.raises(ArgumentTypeError) as info:
        shockflow.run(Net(), out=tmp_path)
    assert str(info.value).startswith("case: expected ") and "shockflow.forecast(model, (X, y), optimiser)" in str(info.value)


@pytest.mark.parametrize("log, prediction, named", [(123, "fc.h5", "log"), (None, "fc.h5", "log"),
                                                    ("log.csv", 123, "prediction")])
def test_monitor_names_a_path_argument_that_is_no_path(log, prediction, named):
    with pytest.raises(ArgumentTypeError, match=f"^{named}: expected the path of a "):
        shockflow.monitor(log, prediction)


@pytest.mark.parametrize("call", ["run", "forecast"])
def test_overrides_are_one_string_a_list_or_none_in_every_function(tmp_path, monkeypatch, call):
    """run and forecast took a bare string as one override and load_case split it into characters; None was
    'NoneType' object is not iterable.  The case each call runs is compared, the runner replaced."""
    from shockflow.runners import forecast, prediction

    seen = []
    monkeypatch.setattr(prediction, "run_prediction_case", lambda case, options: seen.append(case))
    monkeypatch.setattr(forecast, "forecast_case", lambda case, options, **kw: seen.append(case))
    for overrides in ("data.n=512", ["data.n=512"], ("data.n=512",), None):
        getattr(shockflow, call)("two-layer-staircase", overrides=overrides, out=tmp_path)
    assert [c.settings.data.kwargs()["n"] for c in seen[:3]] == [512, 512, 512]
    assert seen[3].settings == shockflow.load_case("two-layer-staircase").settings
    with pytest.raises(ArgumentTypeError, match=r"^overrides\[0\]: expected a 'KEY=VALUE' string, found 512"):
        getattr(shockflow, call)("two-layer-staircase", overrides=[512], out=tmp_path)


def test_overrides_of_a_case_already_loaded_name_the_argument():
    with pytest.raises(CaseError, match=r"^overrides: expected none with a Case already loaded"):
        shockflow.run(shockflow.load_case("burgers-sine"), overrides="domain.cells=100")


def test_an_out_that_is_a_file_or_cannot_be_created_is_refused_as_the_command_line_refuses_it(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("mine")
    with pytest.raises(OutDirError, match=rf"^out {str(afile)!r}: expected a directory, found a file$"):
        shockflow.solve("burgers-sine", out=afile, figures=False)
    assert afile.read_text() == "mine"
    with pytest.raises(OutDirError, match=r"^out '/proc/shockflow-x/y': cannot create the directory"):
        shockflow.run("burgers-sine", out="/proc/shockflow-x/y", figures=False)


@pytest.mark.parametrize("failure", [RuntimeError("a run failure"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_a_failed_or_interrupted_call_removes_the_directories_it_created(tmp_path, monkeypatch, failure):
    from shockflow.runners import prediction

    def fail(case, options):
        raise failure

    monkeypatch.setattr(prediction, "run_prediction_case", fail)
    with pytest.raises(type(failure)):
        shockflow.run("two-layer-staircase", out=tmp_path / "new" / "out")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "mine").mkdir()   # a directory that was there before stays
    with pytest.raises(type(failure)):
        shockflow.run("two-layer-staircase", out=tmp_path / "mine")
    assert (tmp_path / "mine").is_dir()


def test_a_failed_call_keeps_a_directory_it_wrote_into(tmp_path, monkeypatch):
    from shockflow.runners import prediction

    def half(case, options):
        (tmp_path / "out" / "finished.h5").write_bytes(b"x")
        raise RuntimeError("after one file")

    monkeypatch.setattr(prediction, "run_prediction_case", half)
    with pytest.raises(RuntimeError):
        shockflow.run("two-layer-staircase", out=tmp_path / "out")
    assert (tmp_path / "out" / "finished.h5").exists()


@pytest.mark.parametrize("options", [{"lr_scan": [-1.0]}, {"target_step": 200, "transition": 0},
                                     {"target_step": "abc"}], ids=["lr_scan", "transition", "target_step"])
def test_a_forecast_refused_leaves_no_out_behind(tmp_path, options):
    with pytest.raises(CaseError):
        shockflow.forecast("two-layer-staircase", out=tmp_path / "o", figures=False, **options)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("seed, found", [("abc", "'abc'"), (-1, "-1"), (1.5, "1.5"), (True, "True"),
                                         (2 ** 63, str(2 ** 63))])
def test_a_bad_seed_is_a_case_error_naming_seed(tmp_path, seed, found):
    with pytest.raises(CaseError, match=rf"^seed: expected a whole number (>= 0|below 2\*\*63), found {found}$"):
        shockflow.solve("burgers-sine", seed=seed, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("parameter, value", [("figures", "no"), ("quiet", "yes"), ("figures", 0), ("quiet", None)])
def test_figures_and_quiet_must_be_booleans(tmp_path, parameter, value):
    """figures="no" was taken as true (three PNGs drawn), quiet="yes" accepted."""
    with pytest.raises(ArgumentTypeError, match=rf"^{parameter}: expected True or False, found {value!r}$"):
        shockflow.solve("burgers-sine", out=tmp_path / "o", **{parameter: value})
    assert not (tmp_path / "o").exists()


def test_monitor_errors_are_case_errors_naming_the_log_in_pythons_words(tmp_path):
    from shockflow.storage import ResultFileError

    with pytest.raises(CaseError, match=r"^log: no such file '.*missing\.csv'"):
        shockflow.monitor(tmp_path / "missing.csv", tmp_path / "fc.h5")
    with pytest.raises(CaseError, match=r"^log: expected a training log file, found the directory"):
        shockflow.monitor(tmp_path, tmp_path / "fc.h5")
    notes = tmp_path / "notes.txt"
    notes.write_text("hello,world\n1,2\n")
    with pytest.raises(ResultFileError, match="fc.h5"):   # the forecast file: read first, its own error
        shockflow.monitor(notes, tmp_path / "fc.h5")
    forecast = shockflow.forecast("two-layer-staircase", overrides="data.n=256", out=tmp_path / "f", figures=False)
    with pytest.raises(CaseError) as info:
        shockflow.monitor(notes, forecast.forecast_file)
    assert str(info.value).startswith(f"log {str(notes)!r}: no loss column in header ['hello', 'world']")
    assert "loss_column=NAME" in str(info.value) and info.value.file == str(notes)
    with pytest.raises(CaseError, match=r"^max_ratio: expected a finite number > 1, found -1$"):
        shockflow.monitor(notes, tmp_path / "fc.h5", max_ratio=-1)
    with pytest.raises(ArgumentTypeError, match=r"^step_column: expected None or a column name"):
        shockflow.monitor(notes, tmp_path / "fc.h5", step_column=0)


@pytest.mark.parametrize("call", [shockflow.run, shockflow.solve, shockflow.train, shockflow.forecast])
def test_a_case_too_large_for_the_machine_is_refused_as_the_command_line_refuses_it(tmp_path, monkeypatch, call):
    """The command line refuses a case that needs more memory than is available (or a week of work) before anything
    runs, unless --allow-large; from Python it ran, and a notebook's kernel ran out of memory.  Now the same check,
    in Python's words, and nothing is created."""
    import shockflow.cases.cost as cost

    monkeypatch.setattr(cost, "available_memory", lambda: 1.0)      # a machine of one byte: every case is too large
    case = "burgers-sine" if call is shockflow.solve else "two-layer-staircase"
    out = tmp_path / "o"
    with pytest.raises(CaseError, match=r"more than the 1 B available; .* \(or pass allow_large=True\)"):
        call(case, out=out, figures=False)
    assert not out.exists()
    with pytest.raises(ArgumentTypeError, match="allow_large: expected"):
        call(case, out=out, figures=False, allow_large="yes")


def test_allow_large_lets_a_case_the_check_refuses_run(tmp_path, monkeypatch):
    import shockflow.cases.cost as cost

    monkeypatch.setattr(cost, "available_memory", lambda: 1.0)
    outcome = shockflow.solve("burgers-sine", overrides=["domain.cells=64"], out=tmp_path / "o", figures=False,
                              allow_large=True)
    assert outcome.report.shocks and outcome.result_file.exists()
