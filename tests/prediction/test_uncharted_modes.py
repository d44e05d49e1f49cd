"""Unstable modes past the automatic charts' max_modes are reported (an abstention each, with its rate), never
silently dropped; the default cap charts every mode of a ten-mode Fourier target."""

import json

import numpy as np

from shockflow.cases import load_case
from shockflow.cli import main
from shockflow.geometry.auto import find_modes
from shockflow.runners.training import build_model_and_data


def test_modes_past_max_modes_are_counted_in_find_modes():
    case = load_case("linear2-momentum")
    model, _, data, _ = build_model_and_data(case, 0)
    every = find_modes(model, data.X, data.y)
    two = find_modes(model, data.X, data.y, max_modes=2)
    assert every.rates.size == 4 and (every.uncharted is None or every.uncharted.size == 0)
    assert two.rates.size == 2
    assert np.allclose(two.uncharted, every.rates[2:])      # the two left out, at their rates, in order


def test_a_run_reports_the_modes_it_did_not_chart(tmp_path, capsys):
    assert main(["run", "linear2-momentum", "--set", "geometry.name=auto", "--set", "geometry.max_modes=2", "--json",
                 "--no-figures", "--quiet", "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    left_out = {a["chart"]: a["reason"] for a in report["abstained"]}
    assert set(left_out) >= {"r2", "r3"}
    assert all("not charted" in left_out[c] and "max_modes" in left_out[c] for c in ("r2", "r3"))


def test_the_default_cap_charts_ten_fourier_modes(tmp_path, capsys):
    assert main(["run", "fourier-features", "--set", "model.modes=10", "--set", "data.n_modes=10", "--json",
                 "--no-figures", "--quiet", "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    charts = {p["chart"] for p in report["predicted"]} | {a["chart"] for a in report["abstained"]}
    assert {f"r{k}" for k in range(10)} <= charts
    assert not any("not charted" in a["reason"] for a in report["abstained"])


def test_a_chain_narrower_than_its_modes_says_so_and_not_max_modes(tmp_path, capsys):
    """A deep linear chain 10 → 3 → 3 → 4 carries three modes of the teacher's four: the fourth is reported as past
    the narrowest layer, with the advice to widen it; raising max_modes (the advice before) changed nothing."""
    for extra in ([], ["--set", "geometry.name=auto", "--set", "geometry.max_modes=4"]):
        assert main(["forecast", "deep-linear-3", "--set", "model.widths=[3,3]", *extra, "--json",
                     "--out", str(tmp_path / str(len(extra)))]) == 0
        report = json.loads(capsys.readouterr().out)
        reasons = [a["reason"] for a in report["abstained"] if "not charted" in a["reason"]]
        assert len(reasons) == 1 and "narrowest layer" in reasons[0] and "max_modes" not in reasons[0]
