"""The five-mode NQF case can state the design's r_k and C directly, and the Fourier network's grid."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shockflow.cases import CaseError, parse_case
from shockflow.cli import main
from shockflow.nqf import experiments as ex
from shockflow.nqf import mode_analysis

DESIGN = [1.0, 0.5, 0.25, 0.125, 0.0625]


def _case(body: str):
    return parse_case('kind = "nqf"\n[experiment]\nkind = "five_mode"\n' + body, file="design.toml")


def test_the_default_design_has_r_equal_twice_the_strengths_and_c_one_half():
    s = ex.halving_strengths(5)
    data = ex.five_mode_data(s)
    an = mode_analysis(ex._five_mode_model("diagonal", 5, 1e-6), data.X, data.y)
    assert sorted(an["r"], reverse=True) == pytest.approx([2 * v for v in s], rel=1e-12)
    assert np.diag(an["C"]) == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("coupling", [1.0, 0.2])
def test_design_strengths_give_the_requested_rates_and_coupling(coupling):
    strengths, scale = ex.design_strengths(DESIGN, coupling)
    data = ex.five_mode_data(strengths, input_scale=scale)
    an = mode_analysis(ex._five_mode_model("diagonal", 5, 1e-6), data.X, data.y)  # measured from the data
    assert sorted(an["r"], reverse=True) == pytest.approx(DESIGN, rel=1e-12)
    assert np.diag(an["C"]) == pytest.approx(coupling, rel=1e-12)


def test_a_case_with_rates_and_coupling_runs_that_design(tmp_path, capsys):
    path = tmp_path / "design.toml"
    path.write_text('kind = "nqf"\n[experiment]\nkind = "five_mode"\nrates = [1.0, 0.5, 0.25, 0.125, 0.0625]\n'
                    'coupling = 1.0\nlr = 0.02\n')
    assert main(["run", str(path), "--json", "--no-figures", "--out", str(tmp_path / "out")]) == 0
    result = json.loads(capsys.readouterr().out)["result"]
    assert result["rates"] == pytest.approx(DESIGN, rel=1e-12)
    assert result["self_interaction"] == pytest.approx([1.0] * 5, rel=1e-12)
    assert result["max_abs_relative_error"] < 0.01  # network switch-on times against the closed form


def test_design_keys_are_checked_by_key():
    with pytest.raises(CaseError) as exc:
        _case('network = "fourier"\ncoupling = 1.0\n')
    assert "experiment.coupling" in str(exc.value) and "design.toml" in str(exc.value)
    with pytest.raises(CaseError) as exc:
        _case('network = "fourier"\nmodes = 5\ngrid = 10\n')
    assert "experiment.modes" in str(exc.value) and "10 points" in str(exc.value)
    with pytest.raises(CaseError) as exc:
        _case('rates = [1.0, -0.5]\n')
    assert "experiment.rates" in str(exc.value)


def test_the_fourier_grid_key_reaches_the_data():
    case = _case('network = "fourier"\nmodes = 5\ngrid = 24\namplitude = 0.01\n')
    assert case.settings.experiment.grid == 24
    data = ex.five_mode_data(ex.halving_strengths(5), "fourier", grid=case.settings.experiment.grid)
    assert data.X.shape == (24, 1)
    # the cosine features stay orthogonal on the grid: (1/grid) Σ ψ_j ψ_k = δ_jk
    k = np.arange(1, 6)
    psi = np.sqrt(2.0) * np.cos(2 * np.pi * np.outer(data.X[:, 0], k))
    assert psi.T @ psi / 24 == pytest.approx(np.eye(5), abs=1e-12)
    with pytest.raises(CaseError) as exc:
        _case('grid = 2\n')
    assert "experiment.grid" in str(exc.value)


@pytest.mark.parametrize("lr", ["5e-324", "1e-310"])
def test_a_learning_rate_that_underflows_the_step_estimate_is_refused_by_key(lr, capsys):
    # lr × (the weakest mode's strength) underflows to 0: the estimate must not divide by it (found by the fuzz)
    code = main(["validate", "nqf-five-mode", "--set", f"experiment.lr={lr}"])
    err = capsys.readouterr().err
    assert code == 2 and "experiment.lr" in err and "Traceback" not in err
