"""The ``bbp`` case kind: validation errors name keys; a small run reproduces the theory."""

import pytest

import shockflow.spectra.case  # noqa: F401  (registers the kind)
from shockflow.cases import CaseError, RunOptions, get_kind, parse_case
from shockflow.storage.theory_results import read_theory_result

TEXT = """
kind = "bbp"
name = "bbp-small"
seed = 2
[teacher_student]
N = 120
M = 240
eps = [0.25, 0.8]
seeds = 3
[phase_diagram]
eps = [0.15, 0.9]
sigma_w = [0.5, 1.0]
"""


def test_small_case_runs_against_theory(tmp_path):
    case = parse_case(TEXT)
    out = get_kind("bbp").run(case, RunOptions(out=str(tmp_path), quiet=True, figures=False))
    d = out.as_dict()
    rows = d["teacher_student"]["rows"]
    # ε = 0.25 < ε_c = 0.457: disordered, q² at the random level; ε = 0.8: ordered, q² = 0.970
    assert not rows[0]["theory_ordered"] and rows[0]["q2"] < 0.1
    assert rows[1]["theory_ordered"] and rows[1]["q2"] == pytest.approx(rows[1]["theory_q2"], abs=0.03)
    assert d["phase_diagram"]["agreement"] == 1.0          # all four points far from the boundary
    saved = read_theory_result(tmp_path / "bbp-small-bbp.h5").document
    assert saved["teacher_student"]["eps_c"] == d["teacher_student"]["eps_c"]
    assert [r["q2"] for r in saved["teacher_student"]["rows"]] == [r["q2"] for r in rows]
    assert "ε_c(t) = 0.4568" in out.table()


def test_errors_name_the_keys():
    bad = TEXT.replace("N = 120", "N = 1").replace("sigma_w = [0.5, 1.0]", "") + "[finite_size]\nsizes = [64]\n"
    with pytest.raises(CaseError) as exc:
        parse_case(bad)
    text = str(exc.value)
    assert "teacher_student.N" in text and "finite_size.sizes" in text and "phase_diagram" in text
