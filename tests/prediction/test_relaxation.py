"""Learned by the relaxation (shockflow/prediction/saddle_chain.py, ``Landscape.relaxation_crossings``; docs/theory.md
§6): after an escape the learned units relax from the saddle, and a waiting mode whose strength they carry half way to
its section minimum's is learned then, without an instability of its own."""

from __future__ import annotations

import json

from shockflow.cli import main

#: a query-key head with d_k = 3 on a rank-one teacher (nesterov): one column learns the teacher, and turning towards
#: it takes the second and third modes' strengths past half their minima's 35 and 60 steps after the first drop
#: (an unseen network of a tester's round, /tmp/r16 a04)
RANK_ONE_TEACHER = ["--set", "model.d_model=5", "--set", "model.d_k=3", "--set", "data.tokens=8",
                    "--set", "data.d_model=5", "--set", "data.teacher.d_model=5", "--set", "data.teacher.d_k=1",
                    "--set", "data.teacher.init_scale=2.0", "--set", "data.teacher.seed=204",
                    "--set", "training.optimizer=nesterov", "--set", "training.momentum=0.8",
                    "--set", "training.lr=0.15", "--seed", "104"]


def test_modes_the_learned_column_carries_as_it_relaxes_are_predicted_where_the_run_learns_them(tmp_path, capsys,
                                                                                                 monkeypatch):
    assert main(["run", "attention-qk-4x2", *RANK_ONE_TEACHER, "--json", "--no-figures", "--quiet",
                 "--out", str(tmp_path / "run")]) == 0
    report = json.loads(capsys.readouterr().out)
    true = {t["chart"]: t["step"] for t in report["truth"]}
    predicted = {p["chart"]: p["step"] for p in report["predicted"]}
    assert report["score"]["truth"] == "parameters" and set(true) == {"r0", "r1", "r2"}
    assert true["r0"] < true["r2"] < true["r1"] < true["r0"] + 100   # after the first drop, without a plateau
    for chart in ("r0", "r1", "r2"):
        assert abs(predicted[chart] / true[chart] - 1.0) < 0.1, (chart, predicted[chart], true[chart])
    assert report["score"]["recall"] == 1.0

    # the section's saddle alone: the two modes' unit subspaces grow at 0.001 there, past the run's end
    from shockflow.prediction.saddle_chain import Landscape

    monkeypatch.setattr(Landscape, "relaxation_crossings", lambda self, *args: {})
    assert main(["forecast", "attention-qk-4x2", *RANK_ONE_TEACHER, "--json", "--no-figures", "--quiet",
                 "--out", str(tmp_path / "forecast")]) == 0
    before = {p["chart"]: p["step"] for p in json.loads(capsys.readouterr().out)["predicted"]}
    assert before["r0"] == predicted["r0"]
    assert all(before[chart] is None or before[chart] > 1500 for chart in ("r1", "r2"))
