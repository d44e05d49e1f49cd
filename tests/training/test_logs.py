"""HDF5 training logs (exact round trip, atomic writes) and imported loss curves."""

import json
import os

import h5py
import numpy as np
import pytest

from shockflow import models
from shockflow.data import teacher_student, train_test_split
from shockflow.logs import TrainingRecord, read_loss_curve, read_training_log, write_training_log
from shockflow.logs import hdf5 as hdf5_module
from shockflow.training import TrainSettings, train


def a_record(tmp_path=None):
    teacher = models.build("linear", input_dim=3, seed=9)
    data = teacher_student(120, 3, teacher, noise=0.1, seed=0)
    tr, te = train_test_split(data, 0.25, seed=1)
    m = models.build("mlp", input_dim=3, width=64, seed=2)
    s = TrainSettings(optimizer="adam", lr=0.01, steps=3000, batch_size=10, noise_every=500, observe_every=50)
    return train(m, tr, s, observables={"n": lambda mod: np.linalg.norm(mod.params["W"]),
                                        "a2": lambda mod: mod.params["a"][:2].copy()},
                 test=te, quiet=True, log_path=None if tmp_path is None else tmp_path / "run.h5")


def test_write_read_round_trip_is_exact(tmp_path):
    rec = a_record(tmp_path)
    back = read_training_log(tmp_path / "run.h5")
    assert back.same_as(rec)
    assert back.wall_time == rec.wall_time
    assert back.model_spec["name"] == "mlp" and back.settings["optimizer"] == "adam"
    assert set(back.versions) >= {"python", "numpy", "scipy", "h5py", "shockflow"}
    with h5py.File(tmp_path / "run.h5") as f:
        assert f["series/loss"].compression == "gzip"           # 3001 float64 values: compressed
        assert f["snapshots/W"].shape == (len(rec.snapshots["step"]), 64, 3)
        assert json.loads(f.attrs["data_spec"])["train"]["name"] == "teacher_student"
        assert set(f["noise"]) >= {"step", "trace", "sigma2", "temperature"}


def test_interrupted_write_leaves_no_file(tmp_path, monkeypatch):
    rec = a_record()
    calls = {"n": 0}
    original = hdf5_module._write_array

    def failing(group, name, a):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt("simulated interrupt")
        original(group, name, a)

    monkeypatch.setattr(hdf5_module, "_write_array", failing)
    target = tmp_path / "run.h5"
    with pytest.raises(KeyboardInterrupt):
        write_training_log(rec, target)
    assert os.listdir(tmp_path) == []
    # an existing complete file survives an interrupted overwrite untouched
    monkeypatch.setattr(hdf5_module, "_write_array", original)
    write_training_log(rec, target)
    before = target.read_bytes()
    calls["n"] = 0
    monkeypatch.setattr(hdf5_module, "_write_array", failing)
    with pytest.raises(KeyboardInterrupt):
        write_training_log(rec, target)
    assert target.read_bytes() == before and os.listdir(tmp_path) == ["run.h5"]


def test_reader_errors_name_the_file(tmp_path):
    (tmp_path / "x.h5").write_text("not hdf5")
    with pytest.raises(ValueError, match=r"x\.h5.*is not an HDF5 file"):
        read_training_log(tmp_path / "x.h5")
    with h5py.File(tmp_path / "y.h5", "w") as f:
        f.attrs["format"] = "something-else"
    with pytest.raises(ValueError, match=r"y\.h5.*not a shockflow training log"):
        read_training_log(tmp_path / "y.h5")
    with pytest.raises(FileNotFoundError, match="nope.h5"):
        read_training_log(tmp_path / "nope.h5")


@pytest.mark.parametrize("text,steps,loss", [
    ("epoch,step,train_loss\n0,0,1.5\n0,10,0.5\n1,20,0.25\n", [0, 10, 20], [1.5, 0.5, 0.25]),
    ("# exported\nStep\tLoss\n1\t2.0\n2\t1.0\n", [1, 2], [2.0, 1.0]),
    ("0 3.0\n5 2.0\n9 1.0\n", [0, 5, 9], [3.0, 2.0, 1.0]),
    ("0.9\n0.8\n0.7\n", [0, 1, 2], [0.9, 0.8, 0.7]),
    ("loss\n0.9\n0.8\n", [0, 1], [0.9, 0.8]),
])
def test_csv_import(tmp_path, text, steps, loss):
    p = tmp_path / "curve.csv"
    p.write_text(text)
    # a header without a step column: row numbers only when asked for (issue 17)
    rec = read_loss_curve(p, step_column="row") if text.startswith("loss") else read_loss_curve(p)
    np.testing.assert_array_equal(rec.steps, steps)
    np.testing.assert_array_equal(rec.loss, loss)
    assert rec.source == str(p) and rec.steps.dtype == np.int64


@pytest.mark.parametrize("obj", [
    {"step": [0, 4, 8], "loss": [1.0, 0.5, 0.1]},
    [{"step": 0, "loss": 1.0}, {"step": 4, "loss": 0.5}, {"step": 8, "loss": 0.1}],
])
def test_json_import(tmp_path, obj):
    p = tmp_path / "curve.json"
    p.write_text(json.dumps(obj))
    rec = read_loss_curve(p)
    np.testing.assert_array_equal(rec.steps, [0, 4, 8])
    np.testing.assert_array_equal(rec.loss, [1.0, 0.5, 0.1])
    # an imported curve is a TrainingRecord that the HDF5 writer can store
    write_training_log(rec, tmp_path / "imported.h5")
    assert read_training_log(tmp_path / "imported.h5").same_as(rec)


@pytest.mark.parametrize("name,text,match", [
    ("a.csv", "step,accuracy\n0,0.1\n1,0.2\n", r"a\.csv.*no loss column in header \['step', 'accuracy'\]"),
    ("b.csv", "1,2,3\n4,5,6\n", r"b\.csv.*3 columns and no header"),
    ("c.csv", "step,loss\n0,1.0\n0,0.5\n", r"c\.csv.*strictly increasing \(data row 2: 0 after 0\)"),
    ("d.csv", "step,loss\n0,1.0\n1,abc\n", r"d\.csv', data row 2: cannot read numbers from \['1', 'abc'\]"),
    ("e.json", '{"steps": [0, 1], "acc": [1, 2]}', r"e\.json.*no loss key"),
    ("f.json", '{"step": [0, 1, 2], "loss": [1, 2]}', r"f\.json.*equal length"),
    ("g.json", '{"step": [0, 1], "loss": [1, NaN]}', r"g\.json.*not finite at data row 2"),
    ("h.xlsx", "", r"h\.xlsx.*unknown extension"),
])
def test_import_errors_name_the_file_and_what_was_expected(tmp_path, name, text, match):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_loss_curve(p)


def test_record_validation():
    with pytest.raises(ValueError, match="series/loss has 2 entries but series/step has 3"):
        TrainingRecord(series={"step": np.arange(3), "loss": np.ones(2)})


@pytest.mark.parametrize("text,steps,loss", [
    ("epoch,train_loss\n1,2.0\n2,1.0\n3,0.5\n", [1, 2, 3], [2.0, 1.0, 0.5]),
    ("iteration,loss\n0,2.0\n7,1.0\n", [0, 7], [2.0, 1.0]),
    ("iter;loss\n3;2.0\n9;1.0\n", [3, 9], [2.0, 1.0]),
    ("global_step,epoch,loss\n10,0,2.0\n20,0,1.0\n", [10, 20], [2.0, 1.0]),
    ("Step,Value\n5,2.0\n6,1.0\n", [5, 6], [2.0, 1.0]),
])
def test_recognised_step_columns(tmp_path, text, steps, loss):
    p = tmp_path / "curve.csv"
    p.write_text(text)
    rec = read_loss_curve(p)
    np.testing.assert_array_equal(rec.steps, steps)
    np.testing.assert_array_equal(rec.loss, loss)


def test_no_step_column_names_the_columns_found_unless_one_is_given(tmp_path):
    p = tmp_path / "run.csv"
    p.write_text("wall_time,batch,train_loss,acc\n0.1,4,2.0,0.1\n0.2,8,1.0,0.2\n0.3,12,0.5,0.3\n")
    with pytest.raises(ValueError, match=r"run\.csv.*no step column among the columns of the header "
                                         r"\['wall_time', 'batch', 'train_loss', 'acc'\]"):
        read_loss_curve(p)
    rec = read_loss_curve(p, step_column="batch")
    np.testing.assert_array_equal(rec.steps, [4, 8, 12])
    np.testing.assert_array_equal(rec.loss, [2.0, 1.0, 0.5])
    rec = read_loss_curve(p, step_column="batch", loss_column="acc")
    np.testing.assert_array_equal(rec.loss, [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"run\.csv.*step column 'epoch' is not among the columns"):
        read_loss_curve(p, step_column="epoch")
    j = tmp_path / "run.json"
    j.write_text(json.dumps({"batch": [4, 8], "objective": [2.0, 1.0]}))
    rec = read_loss_curve(j, step_column="batch", loss_column="objective")
    np.testing.assert_array_equal(rec.steps, [4, 8])


@pytest.mark.parametrize("name,text,match", [
    ("empty.csv", "", r"empty\.csv' holds no data rows \(data row 1 missing\)"),
    ("header.csv", "step,loss\n", r"header\.csv' has a header but no data rows \(data row 1 missing\)"),
    ("one.csv", "step,loss\n0,1.0\n", r"one\.csv' holds only data row 1; need at least 2"),
    ("nan.csv", "step,loss\n0,1.0\n1,0.5\n2,nan\n", r"nan\.csv'.*not finite at data row 3"),
    ("back.csv", "step,loss\n0,1.0\n5,0.5\n3,0.2\n", r"back\.csv'.*data row 3: 3 after 5\): steps going back"),
    ("dup.csv", "step,loss\n0,1.0\n5,0.5\n5,0.2\n", r"dup\.csv'.*data row 3: 5 after 5\): a repeated step"),
    ("frac.csv", "step,loss\n0,1.0\n0.5,0.5\n", r"frac\.csv'.*data row 2 has step 0.5"),
    ("empty.json", "[]", r"empty\.json' holds no data rows"),
])
def test_bad_logs_name_the_file_and_the_row(tmp_path, name, text, match):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_loss_curve(p)


@pytest.mark.parametrize("text, option", [("wall_time,batch,train_loss\n0.1,4,2.0\n0.2,8,1.0\n", "step_column"),
                                          ("step,accuracy,error\n0,0.1,2\n1,0.2,1\n", "loss_column")],
                         ids=["step", "loss"])
def test_a_missing_column_is_named_with_the_argument_and_the_command_line_option(tmp_path, text, option):
    """The reader serves shockflow.monitor / read_loss_curve (step_column=) and the command line (--step-column):
    its hint said only '--step-column', a flag a Python caller has no use for."""
    from shockflow.logs.tail import LogTail

    p = tmp_path / "run.csv"
    p.write_text(text)
    flag = "--" + option.replace("_", "-")
    with pytest.raises(ValueError) as info:
        read_loss_curve(p)
    assert f"{option}=NAME (on the command line {flag} NAME)" in str(info.value)
    tail = LogTail(p)
    with pytest.raises(ValueError) as info:
        tail.read()
    assert str(info.value).startswith(f"log {str(p)!r}: ") and f"{option}=NAME" in str(info.value)
