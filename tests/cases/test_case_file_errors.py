"""Bad case files: every error names the file, the key path, what was expected and what was found."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from shockflow.cases import CaseError, RunOptions, load_case, parse_case
from shockflow.cli import main

GOOD = """\
kind = "pde"
[equation]
kind = "hamilton_jacobi"
[domain]
kind = "interval"
lower = -0.5
upper = 0.5
cells = 64
[initial]
function = "cosine"
[output]
t_end = 0.01
snapshots = 3
"""


def write(tmp_path: Path, text: str, name: str = "case.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(path, *overrides) -> CaseError:
    with pytest.raises(CaseError) as info:
        load_case(path, overrides)
    return info.value


def test_good_case_loads_with_name_from_file(tmp_path):
    case = load_case(write(tmp_path, GOOD, "my-case.toml"))
    assert case.name == "my-case" and case.kind == "pde"
    assert case.settings.domain.cells == 64 and case.settings.method == "finite_difference"


def test_malformed_toml_names_file_line_and_column(tmp_path):
    path = write(tmp_path, GOOD.replace("cells = 64", "cells = = 64"))
    err = error_of(path)
    assert err.file == str(path)
    msg = str(err)
    assert str(path) in msg and "not valid TOML" in msg and "line 8" in msg and "column" in msg


def test_wrong_type_names_key_expected_and_found(tmp_path):
    err = error_of(write(tmp_path, GOOD.replace("cells = 64", 'cells = "64"')))
    assert err.keys == ("domain.cells",)
    assert 'domain.cells: expected an integer, found "64" (string)' in str(err)


def test_unknown_key_suggests_the_closest(tmp_path):
    err = error_of(write(tmp_path, GOOD.replace("t_end", "t_ned")))
    assert "output.t_ned" in err.keys
    assert "did you mean 't_end'?" in str(err)
    assert err.missing == ("output.t_end",)


def test_several_missing_keys_are_listed_together(tmp_path):
    text = 'kind = "pde"\n[equation]\nkind = "burgers"\n[domain]\nkind = "interval"\n[initial]\nfunction = "riemann"\n'
    err = error_of(write(tmp_path, text))
    assert set(err.missing) == {"domain.cells", "initial.left", "initial.right", "output.t_end"}
    assert str(err).count("missing required keys") == 1


def test_unknown_equation_and_kind_names_list_the_valid_ones(tmp_path):
    err = error_of(write(tmp_path, GOOD.replace('kind = "hamilton_jacobi"', 'kind = "hamilton_jacoby"')))
    assert err.keys == ("equation.kind",)
    assert 'did you mean "hamilton_jacobi"?' in str(err) and '"burgers"' in str(err)
    err = error_of(write(tmp_path, GOOD.replace('kind = "pde"', 'kind = "pdf"')))
    assert err.keys == ("kind",) and 'did you mean "pde"' in str(err)


def test_missing_file_names_the_file_and_the_builtin_cases(tmp_path):
    err = error_of(tmp_path / "nope.toml")
    assert "nope.toml" in str(err) and "no such case file" in str(err) and "burgers-riemann" in str(err)


def test_a_path_that_is_no_regular_file_says_what_it_is(tmp_path, capsys):
    """A tester's /dev/null, /dev/zero and a FIFO were 'no such case file, and no built-in case of that name'."""
    import os

    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    for path, kind in (("/dev/null", "a character device"), ("/dev/zero", "a character device"),
                       (str(fifo), "a named pipe")):
        err = error_of(path)
        assert f"is not a regular file ({kind}); expected a case file" in str(err) and "no such" not in str(err)
        for argv in (["validate", path], ["sweep", path, "--set", "a=1,2", "--dry-run"]):
            assert main(argv) == 2
            assert "is not a regular file" in capsys.readouterr().err
    assert main(["monitor", "/dev/zero", "--prediction", str(tmp_path / "f.h5")]) == 2
    assert "LOG '/dev/zero' is not a regular file (a character device)" in capsys.readouterr().err
    assert main(["compare", str(fifo), "--prediction", "/dev/null"]) == 2
    assert "'/dev/null' is not a regular file" in capsys.readouterr().err


def test_a_huge_case_file_is_refused_by_its_size_unread(tmp_path, monkeypatch):
    """A tester's 200 MB case file was read whole (400 MB of memory) before the character limit refused it."""
    from shockflow.cases import loading

    huge = tmp_path / "huge.toml"
    with open(huge, "wb") as fh:
        fh.truncate(200_000_000)   # sparse: no disk, no memory
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail("read whole"))
    reads = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: reads.append(p) or real_open(p, *a, **k))
    err = error_of(huge)
    assert f"expected a case file of at most {loading.MAX_CASE_BYTES} characters, found a file of 200000000 bytes " \
           "(not read)" in str(err)
    assert str(huge) not in map(str, reads)


def test_cross_field_rules(tmp_path):
    err = error_of(write(tmp_path, GOOD), "solver.limiter=mc", "equation.kind=burgers", "domain.kind=box")
    # burgers needs an interval; a box needs lists; limiter is fine for burgers
    assert "domain.cells" in err.keys or "domain.kind" in err.keys
    err = error_of(write(tmp_path, GOOD), "solver.limiter=mc")
    assert err.keys == ("solver.limiter",) and "burgers equations only" in str(err)
    err = error_of(write(tmp_path, GOOD), "initial.function=zonal")
    assert err.keys == ("initial.function",) and "icosphere" in str(err)


def test_override_syntax_errors_and_type_checks(tmp_path):
    path = write(tmp_path, GOOD)
    assert "expected KEY=VALUE" in str(error_of(path, "domain.cells"))
    err = error_of(path, "domain.cells.x=3")
    assert err.keys == ("domain.cells",)
    err = error_of(path, "domain.cells=abc")
    assert 'domain.cells: expected an integer, found "abc" (string)' in str(err)
    assert load_case(path, ["domain.cells=32"]).settings.domain.cells == 32


def test_array_file_errors_name_the_file(tmp_path):
    from shockflow.runners.pde import build_problem

    text = GOOD.replace('function = "cosine"', 'function = "array"\npath = "u0.npy"')
    path = write(tmp_path, text)
    with pytest.raises(CaseError) as info:
        build_problem(load_case(path))
    assert info.value.keys == ("initial.path",) and "u0.npy" in str(info.value) and "no such array file" in str(info.value)
    np.save(tmp_path / "u0.npy", np.zeros(10))
    with pytest.raises(CaseError) as info:
        build_problem(load_case(path))
    assert "expected an array of shape (64,)" in str(info.value) and "found shape (10,)" in str(info.value)
    np.savez(tmp_path / "u0.npz", a=np.zeros(64), b=np.ones(64))
    path = write(tmp_path, text.replace("u0.npy", "u0.npz"))
    with pytest.raises(CaseError) as info:
        build_problem(load_case(path))
    assert info.value.keys == ("initial.key",) and "a, b" in str(info.value)
    with pytest.raises(CaseError) as info:
        build_problem(load_case(path, ["initial.key=bb"]))
    assert 'did you mean "b"' in str(info.value)
    x = (np.arange(64) + 0.5) / 64 - 0.5
    np.savez(tmp_path / "u0.npz", a=np.cos(2 * np.pi * x), b=np.ones(64))
    problem = build_problem(load_case(path, ["initial.key=a"]))
    assert np.array_equal(problem.initial, np.cos(2 * np.pi * x))


def test_validate_command_exit_codes(tmp_path, capsys):
    good = write(tmp_path, GOOD)
    assert main(["validate", str(good)]) == 0
    assert "valid pde case" in capsys.readouterr().out
    bad = write(tmp_path, GOOD.replace("cells = 64", "cells = 2"), "bad.toml")
    assert main(["validate", str(bad), "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is False and out["errors"] == ["domain.cells: expected an integer >= 4, found 2 (integer)"]
    assert main(["solve", str(tmp_path / "missing.toml"), "--out", str(tmp_path)]) == 2
    assert "missing.toml" in capsys.readouterr().err


def test_interrupted_run_leaves_no_result_file(tmp_path, monkeypatch):
    import shockflow.runners.pde as pde_run

    case = parse_case(GOOD, file="x.toml")
    calls = []

    def interrupt(problem, progress=None):
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(pde_run, "solve_problem", interrupt)
    with pytest.raises(KeyboardInterrupt):
        pde_run.run_pde_case(case, RunOptions(out=str(tmp_path), figures=False))
    assert calls and list(tmp_path.iterdir()) == []


def test_interrupted_write_leaves_no_half_written_file(tmp_path, monkeypatch):
    import h5py

    import shockflow.runners.pde as pde_run

    case = parse_case(GOOD, file="x.toml")
    real = h5py.Group.create_dataset

    def create(self, name, *args, **kwargs):
        if name == "values":  # the snapshots: the file is half written at this point
            raise KeyboardInterrupt
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr(h5py.Group, "create_dataset", create)
    with pytest.raises(KeyboardInterrupt):
        pde_run.run_pde_case(case, RunOptions(out=str(tmp_path), figures=False))
    assert list(tmp_path.iterdir()) == []


def test_a_problem_at_a_key_an_override_set_names_the_override_and_the_others_do_not():
    from shockflow.cases import load_case

    with pytest.raises(CaseError) as err:
        load_case("mlp-tanh-teacher", ["training.lr=-0.01", "data.noise=0.02"])
    (problem,) = err.value.problems
    assert problem.key == "training.lr" and problem.message.endswith("(from the override 'training.lr=-0.01')")
    from shockflow.runners.training import build_model_and_data

    with pytest.raises(CaseError) as err:   # found when the network is built (CaseError.at)
        build_model_and_data(load_case("mlp-tanh-teacher", ["model.width=0", "data.noise=0.02"]), 0)
    (problem,) = err.value.problems      # the argument the model's error names, and the override that set it
    assert problem.key == "model.width" and problem.message.endswith("(from the override 'model.width=0')")
    # a problem the run finds later (CaseError.at) names it too, and a key no override touched does not
    case = load_case("mlp-tanh-teacher", ["training.steps=10"])
    assert "(from the override 'training.steps=10')" in str(CaseError.at(case, "training.steps", "too short"))
    assert "override" not in str(CaseError.at(case, "training.lr", "too large"))
    assert "override" not in str(CaseError.at(load_case("mlp-tanh-teacher"), "training.steps", "too short"))
