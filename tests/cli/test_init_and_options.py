"""`shockflow init` templates validate and run; each command takes only its own options; results
default to ./shockflow-results/."""

from __future__ import annotations

import json

import pytest

from shockflow.cli import build_parser, main


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_init_pde_template_validates_and_solves_to_the_exact_shock_time(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "pde", "sine", "--json"]) == 0
    written = _json(capsys)
    path = tmp_path / "sine.toml"
    assert written == {"case": "sine", "kind": "pde", "file": "sine.toml"} and path.is_file()
    text = path.read_text()
    assert text.count("#") >= 5  # commented
    assert main(["validate", str(path), "--json"]) == 0
    assert _json(capsys)["valid"] is True
    assert main(["solve", str(path), "--json", "--no-figures", "--out", str(tmp_path / "res")]) == 0
    shocks = _json(capsys)["shocks"]
    first = min(s["time"] for s in shocks)
    assert abs(first - 1 / (2 * 3.141592653589793)) < 0.02  # t* = 1/(2 pi A), A = 1, within a few steps


def test_init_network_template_validates_and_its_run_predicts_both_drops(tmp_path, capsys):
    assert main(["init", "network", "--out", str(tmp_path), "--quiet"]) == 0
    path = tmp_path / "my-network-case.toml"
    assert path.is_file() and capsys.readouterr().out == ""
    assert main(["validate", str(path), "--quiet"]) == 0
    assert main(["run", str(path), "--json", "--no-figures", "--out", str(tmp_path / "res")]) == 0
    result = _json(capsys)
    assert len(result["predicted"]) == 2 and len(result["matches"]) == 2
    assert result["median_relative_error"] < 0.05


def test_init_refuses_to_overwrite_and_bad_names(tmp_path, capsys):
    assert main(["init", "pde", "a", "--out", str(tmp_path), "--quiet"]) == 0
    assert main(["init", "pde", "a", "--out", str(tmp_path)]) == 2
    assert "a.toml: already exists" in capsys.readouterr().err
    assert main(["init", "pde", "../b", "--out", str(tmp_path)]) == 2
    assert "NAME: expected a plain file name" in capsys.readouterr().err
    assert main(["init", "pde", "a", "--out", str(tmp_path), "--force", "--quiet"]) == 0
    (tmp_path / "file").write_text("")
    assert main(["init", "pde", "a", "--out", str(tmp_path / "file")]) == 2
    assert "expected a directory, found a file" in capsys.readouterr().err     # not "(File exists)"
    with pytest.raises(SystemExit) as exc:
        main(["init", "mystery"])
    assert exc.value.code == 2


def test_init_refuses_the_names_validate_refuses_and_quotes_the_commands_it_suggests(tmp_path, capsys):
    """A tester's 'x y' was written and then refused by validate; the commands init printed for an --out with a
    space were not ones a shell runs."""
    import shlex

    for name in ("x y", "a*b", "a..b", "ケース"):
        assert main(["init", "pde", name, "--out", str(tmp_path)]) == 2
        assert "NAME: expected a file stem of letters, digits" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
    out = tmp_path / "my cases"
    assert main(["init", "pde", "ok", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    command = said.split("check it with `")[1].split("`")[0]
    assert shlex.split(command) == ["shockflow", "validate", str(out / "ok.toml")]
    assert main(shlex.split(command)[1:]) == 0


FIGURES = ("--no-figures", "--figure-format", "--dpi")  # the commands that draw figures
CASES = ("--set", "--allow-large")   # the commands that load a case (and check its cost against the machine)
OPTIONS = {  # what each command accepts besides --help (and --debug, which every command takes)
    "run": {"--out", "--seed", "--quiet", "--json", *CASES, *FIGURES},
    "solve": {"--out", "--seed", "--quiet", "--json", *CASES, *FIGURES},
    "train": {"--out", "--seed", "--quiet", "--json", *CASES, *FIGURES},
    "validate": {"--quiet", "--json", *CASES},
    "cases": {"--quiet", "--json"},
    "geometries": {"--quiet", "--json"},
    "show": {"--out", "--quiet", "--json", *FIGURES},
    "init": {"--out", "--quiet", "--json", "--force"},
    "version": {"--json"},
}


@pytest.mark.parametrize("command", sorted(OPTIONS))
def test_each_command_takes_exactly_its_options(command):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[command]
    flags = {s for a in sub._actions for s in a.option_strings if s.startswith("--")} - {"--help"}
    assert flags == OPTIONS[command] | {"--debug"}


def test_every_command_takes_debug_after_it():
    """Failures say "rerun with --debug", and a tester's `sweep CASE --debug` and `demo --debug` were 'unrecognized
    arguments' (only `shockflow --debug sweep` worked)."""
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    needs = {"run": [], "forecast": ["c"], "monitor": ["log", "--prediction", "p"], "compare": ["log", "--prediction", "p"],
             "spectra": ["log"], "solve": ["c"], "train": ["c"], "validate": ["c"], "init": ["pde"], "sweep": ["c"],
             "show": ["r"]}
    for command in commands:
        args = parser.parse_args([command, *needs.get(command, []), "--debug"])
        assert args.debug is True, command
        assert parser.parse_args([command, *needs.get(command, [])]).debug is False, command


@pytest.mark.parametrize("command, source", [("show", "RESULT"), ("spectra", "LOG")])
def test_the_help_of_show_and_spectra_says_where_they_write_by_default(command, source, capsys):
    """They write beside their input without --out (a sweep's task: into its tasks/), which --help did not say."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"--out DIR directory for result files and figures (default: the directory of {source}, beside it)" \
        in help_text


def test_an_option_that_means_nothing_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["cases", "--seed", "1"])
    assert exc.value.code == 2 and "unrecognized arguments: --seed" in capsys.readouterr().err


def test_out_defaults_to_shockflow_results_in_the_current_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["solve", "burgers-sine", "--set", "domain.cells=100", "--no-figures", "--json"]) == 0
    result = _json(capsys)
    assert (tmp_path / result["result_file"]).parent == tmp_path / "shockflow-results"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shockflow-results"]
