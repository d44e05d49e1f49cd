"""The built-in theory cases (nqf, bbp, scaling), run through `shockflow run` at a reduced size."""

import json

import h5py
import numpy as np
import pytest

from shockflow.cli import main
from shockflow.storage.theory_results import read_theory_result


def run(name, tmp_path, capsys, *overrides):
    args = ["run", name, "--out", str(tmp_path), "--json", "--no-figures", "--quiet"]
    for o in overrides:
        args += ["--set", o]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_nqf_five_mode_switch_on_times_match_the_closed_form(tmp_path, capsys):
    out = run("nqf-five-mode", tmp_path, capsys, "experiment.modes=3", "experiment.eps=1e-4")
    result = out["result"]
    assert len(result["t_measured"]) == 3
    assert result["max_abs_relative_error"] < 0.02
    # the result file: the same numbers per mode, and the curves behind them
    back = read_theory_result(out["result_file"])
    assert back.document["t_measured"] == result["t_measured"] and back.document["rates"] == result["rates"]
    curves = back.document["curves"]
    assert np.asarray(curves["z"]).shape == (len(curves["t"]), 3) and len(curves["loss"]) == len(curves["loss_t"])
    with h5py.File(out["result_file"]) as f:
        assert [d[0].name for d in f["t_measured"].dims] == ["/mode"]
        assert [d[0].name for d in f["curves/z"].dims] == ["/curves/t", "/curves/mode"]


def test_bbp_linear_outlier_and_overlap_follow_theory(tmp_path, capsys):
    out = run("bbp-linear", tmp_path, capsys, "teacher_student.N=120", "teacher_student.M=240",
              "teacher_student.eps=[0.25, 0.8]", "teacher_student.seeds=3",
              "phase_diagram.eps=[0.15, 0.9]", "phase_diagram.sigma_w=[0.5, 1.0]", "finite_size.sizes=[]")
    rows = out["teacher_student"]["rows"]
    assert not rows[0]["theory_ordered"] and rows[0]["q2"] < 0.1          # below eps_c = 0.457
    assert rows[1]["theory_ordered"] and rows[1]["q2"] == pytest.approx(rows[1]["theory_q2"], abs=0.03)
    assert out["phase_diagram"]["agreement"] == 1.0


def test_scaling_data_limited_error_falls_with_samples(tmp_path, capsys):
    out = run("scaling-data-limited", tmp_path, capsys, "scaling.grid.d=[8]", "scaling.grid.n=[16, 32, 48, 64]",
              "scaling.grid.lam=[0.3, 0.1]", "scaling.grid.seeds=2", "scaling.fit.margin=1.0",
              "scaling.target.gamma=1.5", "scaling.target.noise=0.1")
    fit = out["fit"]
    assert fit["n_points"] == 4 and fit["exponent"] < 0
    assert fit["predicted"] == pytest.approx(-1 + 1 / 3)
