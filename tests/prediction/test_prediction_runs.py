"""Built-in network cases at reduced size through `shockflow run`, THE RULE, foreign logs, bad input."""

import json

import numpy as np
import pytest

from shockflow.cases import RunOptions, load_case
from shockflow.cli import main
from shockflow.runners.prediction import DEFAULT_CASE, run_prediction_case

REDUCED = {"two-layer-staircase": ["data.n=4096", "extraction.cells=401"]}


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    """`shockflow run --json` (no CASE: the default) at reduced size: (exit code, out dir, JSON)."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("run")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["run", "--out", str(out), "--json", "--no-figures",
                     *sum((["--set", s] for s in REDUCED[DEFAULT_CASE]), [])])
    return code, out, json.loads(buf.getvalue())


def test_default_case_predicts_its_drops_within_ten_percent(default_run, tmp_path, capsys):
    code, out, doc = default_run
    assert code == 0
    for key in ("case", "result_file", "shocks", "predicted", "observed", "matches", "median_relative_error"):
        assert key in doc
    assert doc["case"] == DEFAULT_CASE
    assert len(doc["observed"]) >= 3 and len(doc["matches"]) >= 3
    assert doc["median_relative_error"] <= 0.10
    # gamma* of each chart against -1/inf L'' of the population double well: 2/w_k for f = sum x u^2/4
    gammas = sorted(p["gamma_star"] for p in doc["predicted"])
    assert gammas[0] == pytest.approx(2 / 8.0, rel=0.05)
    assert {s["time"] for s in doc["shocks"]} >= {p["gamma_star"] for p in doc["predicted"]}
    # the comparison on a foreign CSV log of the same run reproduces the median
    from shockflow.logs import read_training_log

    rec = read_training_log(doc["log_file"])
    csv = tmp_path / "loss.csv"
    np.savetxt(csv, np.column_stack([rec.series["step"], rec.series["loss"]]), delimiter=",", header="step,loss", comments="")
    assert main(["compare", str(csv), "--prediction", doc["result_file"], "--json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["median_relative_error"] == pytest.approx(doc["median_relative_error"], rel=1e-9)


def test_the_prediction_does_not_see_the_loss(tmp_path, monkeypatch):
    """THE RULE: replacing the loss series of the training record leaves the prediction unchanged."""
    import shockflow.training as training

    case = load_case(DEFAULT_CASE, overrides=["data.n=1024", "extraction.cells=201", "training.steps=400",
                                               "extraction.charts=[0, 1]"])
    opts = RunOptions(out=str(tmp_path / "a"), quiet=True, progress=False, figures=False)
    first = run_prediction_case(case, opts)
    real = training.train

    def scrambled(*args, **kwargs):
        rec = real(*args, **kwargs)
        rec.series["loss"][:] = np.random.default_rng(1).uniform(0.1, 10.0, rec.series["loss"].size)
        return rec

    monkeypatch.setattr(training, "train", scrambled)
    second = run_prediction_case(case, RunOptions(out=str(tmp_path / "b"), quiet=True, progress=False, figures=False))
    assert [p.step for p in first.stage.predicted] == [p.step for p in second.stage.predicted]
    assert [t.midpoint for t in first.observed] != [t.midpoint for t in second.observed]


def test_interrupted_run_leaves_no_result_file(tmp_path, monkeypatch):
    import shockflow.storage.results as results

    def boom(*args, **kwargs):  # interrupted half-way through writing (the /extraction groups)
        raise KeyboardInterrupt

    monkeypatch.setattr(results, "_write_extraction", boom)
    code = main(["run", DEFAULT_CASE, "--out", str(tmp_path), "--quiet", "--no-figures", "--set", "data.n=512",
                 "--set", "training.steps=200", "--set", "extraction.cells=101", "--set", "extraction.charts=[0]"])
    assert code == 130
    assert not (tmp_path / f"{DEFAULT_CASE}.h5").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(f".{DEFAULT_CASE}.h5")]


def _case(tmp_path, geometry="gram", model="diagonal"):
    text = (f'kind = "network"\n[model]\nname = "{model}"\ninput_dim = 2\nform = "u2"\ninit = "constant"\n'
            f'init_scale = 1e-3\n[data]\nname = "power_law_covariance"\nn = 64\nd = 2\nexponent = 0.0\n'
            f'[training]\nsteps = 10\n[geometry]\nname = "{geometry}"\n')
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


def test_unknown_geometry_is_bad_input_naming_the_valid_ones(tmp_path, capsys):
    assert main(["run", str(_case(tmp_path, geometry="grahm")), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "geometry.name" in err and '"gram"' in err and "did you mean" in err


def test_unknown_model_is_bad_input(tmp_path, capsys):
    assert main(["run", str(_case(tmp_path, model="diagonl")), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "model.name" in err and '"diagonal"' in err


def test_geometry_that_does_not_fit_the_model_is_bad_input(tmp_path, capsys):
    path = _case(tmp_path)
    path.write_text(path.read_text().replace('form = "u2"', 'form = "uv"'))
    assert main(["run", str(path), "--out", str(tmp_path), "--no-figures"]) == 2
    assert "geometry" in capsys.readouterr().err


def test_log_without_transitions_is_bad_input(tmp_path, capsys, default_run):
    _, out, _ = default_run
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"step": list(range(0, 1000, 5)), "loss": [1.0 / (1 + 0.001 * s) for s in range(0, 1000, 5)]}))
    assert main(["compare", str(flat), "--prediction", str(out / f"{DEFAULT_CASE}.h5")]) == 2
    assert "no transitions" in capsys.readouterr().err


def test_compare_needs_a_result_with_predictions(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "missing.csv"), "--prediction", str(tmp_path / "none.h5")]) == 2
    assert "none.h5" in capsys.readouterr().err


def test_geometries_lists_names_and_symmetries(capsys):
    assert main(["geometries", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    names = {r["name"] for r in rows}
    assert {"flat", "gram", "rescaling"} <= names and all(r["symmetry"] for r in rows)


def test_run_of_a_network_case_without_geometry_names_the_missing_table(tmp_path, capsys):
    assert main(["run", "diagonal-staircase", "--out", str(tmp_path), "--set", "training.steps=5"]) == 2
    err = capsys.readouterr().err
    assert "geometry" in err and "shockflow train" in err
    assert not (tmp_path / "diagonal-staircase.h5").exists()


def test_run_of_a_pde_case_solves_it(tmp_path, capsys):
    assert main(["run", "burgers-riemann", "--out", str(tmp_path), "--json", "--no-figures",
                 "--set", "domain.cells=200"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # Riemann data u_L > u_R: one shock, present from the start
    assert doc["case"] == "burgers-riemann" and len(doc["shocks"]) == 1
