"""The ``scaling`` case kind: file validation with key paths, and a small run with stable keys."""

import numpy as np
import pytest

import shockflow.scaling.case as scaling_case
from shockflow.cases.errors import CaseError
from shockflow.cases.kinds import RunOptions, get_kind
from shockflow.cases.loading import load_case
from shockflow.storage.theory_results import read_theory_result

CASE = """kind = "scaling"
name = "tiny"
[scaling.target]
gamma = 1.5
noise = 0.1
[scaling.grid]
d = [8]
n = {n}
lam = [0.3, 0.1]
seeds = 2
[scaling.fit]
regime = "data"
margin = 1.0
"""


def _write(tmp_path, text):
    path = tmp_path / "case.toml"
    path.write_text(text)
    return path


def test_small_scaling_case_runs_with_stable_keys(tmp_path):
    case = load_case(_write(tmp_path, CASE.format(n="[16, 32, 48, 64]")))
    out = get_kind("scaling").run(case, RunOptions(out=str(tmp_path / "out"), figures=False))
    data = out.as_dict()
    assert tuple(data) == scaling_case.RESULT_KEYS
    on_disk = read_theory_result(tmp_path / "out" / "scaling.h5").document
    assert tuple(on_disk) == ("points", "optimal_lambda", "regime_map", "fit", "predicted_exponents")
    assert len(on_disk["points"]) == 8 and on_disk["fit"] == data["fit"]
    assert all(all(p["converged"]) for p in on_disk["points"])
    f = data["fit"]
    assert f["n_points"] == 4 and np.isfinite(f["exponent"]) and f["exponent"] < 0    # more data, less error
    assert f["predicted"] == pytest.approx(-1 + 1 / 3)
    assert "exponent (data)" in out.table()


@pytest.mark.parametrize("n, edit, match", [
    ("[16, 32, 48, 64]", ("gamma = 1.5", "gamma = 0.5"), r"scaling\.target\.gamma: expected a number > 0\.5"),
    ("[40, 60, 80, 120]", None, r"scaling\.grid\.n: the data window .* holds 2 of the sample sizes"),
    ("[16, 32, 48, 64]", ("seeds = 2", "seeds = 1"), r"scaling\.grid\.seeds: an exponent fit bootstraps"),
    ("[16, 32, 48, 64]", ("d = [8]", "d = [8]\np = [-1]"), r"scaling\.grid\.p"),
])
def test_bad_scaling_case(tmp_path, n, edit, match):
    text = CASE.format(n=n)
    if edit:
        text = text.replace(*edit)
    with pytest.raises(CaseError, match=match):
        load_case(_write(tmp_path, text))
