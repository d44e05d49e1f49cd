"""The ``nqf`` case kind: TOML → validated settings → experiment → result file and figures."""

import pytest

import shockflow.nqf.case  # noqa: F401  (registers the kind)
from shockflow.cases import CaseError, RunOptions, parse_case
from shockflow.cases.kinds import get_kind
from shockflow.storage.theory_results import read_theory_result

FIVE_MODE = """
kind = "nqf"
name = "nqf-three-mode"
[experiment]
kind = "five_mode"
modes = 3
eps = 1e-4
lr = 0.01
"""


def test_five_mode_case_runs_and_writes(tmp_path):
    case = parse_case(FIVE_MODE)
    outcome = get_kind("nqf").run(case, RunOptions(out=str(tmp_path), quiet=True))
    data = read_theory_result(tmp_path / "nqf-three-mode.h5").document
    assert data.pop("experiment") == "five_mode" and data.pop("curves")["z"]
    assert data == outcome.as_dict()["result"]
    assert len(data["t_measured"]) == 3
    assert data["max_abs_relative_error"] < 0.02
    assert (tmp_path / "nqf-three-mode.png").stat().st_size > 10_000
    assert "rel.err" in outcome.table()


def test_shock_link_case_without_figures(tmp_path):
    case = parse_case('kind = "nqf"\nname = "link"\n[experiment]\nkind = "shock_link"\neps = 1e-8\n')
    outcome = get_kind("nqf").run(case, RunOptions(out=str(tmp_path), figures=False, quiet=True))
    assert outcome.figures == () and len(outcome.result["t_escape"]) == 5
    assert outcome.result["t_switch_on"][0] == pytest.approx(0.5 * (18.420680743952367 + 1.3862943611198906), rel=1e-8)


def test_bad_case_names_the_key():
    with pytest.raises(CaseError) as info:
        parse_case('kind = "nqf"\n[experiment]\nkind = "power_law"\nwindow = [50, 10]\n')
    assert "experiment.window" in str(info.value) and "k_lo < k_hi" in str(info.value)
    with pytest.raises(CaseError, match="experiment.alpha1: expected a number > 1, found 0.5"):
        parse_case('kind = "nqf"\n[experiment]\nkind = "power_law"\nalpha1 = 0.5\n')
    with pytest.raises(CaseError, match="five_mode"):
        parse_case('kind = "nqf"\n[experiment]\nkind = "five_modes"\n')
