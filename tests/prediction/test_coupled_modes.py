"""Coupled modes (shockflow.prediction.coupled, docs/theory.md §6 "Coupled modes"): the coupling test, the 2-D
block chart's first shock against the Hessian of its initial data and against the 1-D charts, and the reasons a
block is left to the chain's reduction."""

import json
import math
import h5py
import numpy as np
import pytest

from shockflow.cases import load_case
from shockflow.cli import main
from shockflow.data import Dataset
from shockflow.prediction import coupled
from shockflow.runners.forecast import forecast_stage
from shockflow.runners.training import build_model_and_data

PAIR = "diagonal-coupled-pair"


@pytest.fixture(scope="module")
def pair():
    case = load_case(PAIR)
    stage, model, data, settings = forecast_stage(case, case.seed or 0)
    return case, stage, model, data


def test_the_block_chart_first_shock_is_the_hessian_and_the_fastest_chart(pair):
    case, stage, model, data = pair
    (block,) = stage.blocks
    assert block.method == "block chart" and block.charts == ("r0", "r1")
    assert block.coupling > 0.5            # ρ = 0.4 with the teacher (3, 1): the second mode's depth moves by 76 %
    # the first shock of the 2-D solve, extrapolated from two grids, against −1/inf λ_min(Hess_g L̄) and the 1-D chart
    assert abs(block.gamma_star / block.gamma_hessian - 1) < 5e-3
    assert abs(block.gamma_star / block.gamma_charts - 1) < 5e-3
    # it forms at the ridge, the origin of both mirrored charts (within a cell of the 96² grid)
    cell = [2 * c.upper / coupled.BLOCK_CELLS for c in stage.extraction.charts]
    assert all(abs(v) <= h for v, h in zip(block.location, cell))


def test_the_block_chart_converges_at_first_order(pair):
    case, stage, model, data = pair
    secs = coupled._sections(model, "auto", stage.extraction, data.X, data.y)
    exact = min(s.gamma_star for s in stage.shocks)
    errors = []
    for cells in (48, 96):
        gamma, _, _ = coupled._block_shock(model, secs[0], secs[1], data.X, data.y, cells, 1.5, 41, 0.5, exact)
        errors.append(abs(gamma - exact) / exact)
    assert errors[1] < errors[0] / 1.4     # first order: the error halves with the cell


def test_commuting_data_give_no_block(pair):
    """Inputs whose sample covariance is exactly the identity: the diagonal net's loss separates over the modes,
    the cross term vanishes, and no block is formed; with the case's correlated inputs it is."""
    case, stage, model, data = pair
    X = np.asarray(data.X, dtype=np.float64)
    X = X - X.mean(axis=0)
    C = X.T @ X / X.shape[0]
    w, V = np.linalg.eigh(C)
    X = X @ V @ np.diag(w ** -0.5) @ V.T        # exactly whitened: XᵀX/n = I
    y = X @ np.array([3.0, 1.0]) + 0.01 * np.random.default_rng(1).standard_normal(X.shape[0])
    white = Dataset(X, y, {"name": "whitened"})
    model0 = build_model_and_data(case, 0)[0]
    stage_w, *_ = forecast_stage(case, 0, network=(model0, white))
    C_w, _ = coupled.coupling_matrix(model0, "auto", stage_w.extraction, white.X, white.y)
    assert C_w[0, 1] < 1e-8
    assert stage_w.blocks == ()
    C_c, ortho = coupled.coupling_matrix(model, "auto", stage.extraction, data.X, data.y)
    assert C_c[0, 1] > 0.5 and ortho[0, 1]


def test_more_than_two_coupled_charts_are_left_to_the_reduction_by_name():
    case = load_case("diagonal-correlated")
    stage, *_ = forecast_stage(case, case.seed or 0)
    (block,) = stage.blocks
    assert block.method == "reduction" and len(block.charts) == 4
    assert "4 coupled charts" in block.reason and math.isnan(block.gamma_star)


def test_the_forecast_reports_and_stores_the_blocks(tmp_path, capsys):
    assert main(["forecast", PAIR, "--json", "--no-figures", "--quiet", "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    (block,) = report["blocks"]
    assert block["method"] == "block chart" and block["charts"] == ["r0", "r1"]
    with h5py.File(report["forecast_file"], "r") as f:
        assert coupled.read_blocks(f) == report["blocks"]


def test_the_coupled_pair_is_predicted_against_its_training_run(tmp_path, capsys):
    assert main(["run", PAIR, "--json", "--no-figures", "--quiet", "--out", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["score"]["recall"] == 1.0 and report["score"]["precision"] == 1.0
    assert report["score"]["median_relative_error_all"] < 0.05        # measured 1.9 % (README)
    assert [b["method"] for b in report["blocks"]] == ["block chart"]
