"""Task files of function sweeps (figures, arrays, nested results) and what counts as finished (serial engine)."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest

from shockflow.sweeps import function_sweep, read_index, run_sweep
from shockflow.sweeps.records import read_task_record


def power_fit(params: dict) -> dict:
    x = np.arange(1.0, 9.0)
    y = params["c"] * x ** params["alpha"]
    slope, intercept = np.polyfit(np.log(x), np.log(y), 1)
    return {"fit": {"exponent": float(slope), "prefactor": float(np.exp(intercept))}, "y": y,
            "labels": ["a", "b"], "seed_seen": params["seed"]}


def test_function_task_file_holds_figures_arrays_and_the_rest(tmp_path):
    sweep = function_sweep(power_fit, {"alpha": [-0.5, -1.0, -2.0]}, fixed={"c": 3.0}, seed=1)
    summary = run_sweep(sweep, tmp_path, scheduler="serial", progress=False)
    assert summary.ok
    idx = read_index(summary.index_path)
    np.testing.assert_allclose(idx["fit.exponent"], idx["alpha"], rtol=1e-12)
    np.testing.assert_allclose(idx["fit.prefactor"], 3.0, rtol=1e-12)
    assert list(idx["seed_seen"]) == list(idx["seed"]) == [t.seed for t in sweep.tasks]
    for t in sweep.tasks:
        with h5py.File(tmp_path / "tasks" / t.filename) as f:
            np.testing.assert_allclose(f["values/y"][()], 3.0 * np.arange(1.0, 9.0) ** t.params_dict["alpha"])
            assert json.loads(f["sweep"].attrs["summary"]) == {"labels": ["a", "b"]}


def test_damaged_or_stale_task_files_are_rerun_and_replaced(tmp_path):
    sweep = function_sweep(power_fit, {"alpha": [-0.5, -1.0, -2.0]}, fixed={"c": 3.0})
    run_sweep(sweep, tmp_path, scheduler="serial", progress=False)
    tasks = tmp_path / "tasks"
    (tasks / sweep.tasks[0].filename).write_bytes(b"")              # a truncated file
    with h5py.File(tasks / sweep.tasks[1].filename, "r+") as f:     # a file of another task definition
        f["sweep"].attrs["task_hash"] = "0" * 64
    again = run_sweep(sweep, tmp_path, scheduler="serial", progress=False)
    assert [r.status for r in again.reports] == ["done", "done", "reused"]
    assert all(read_task_record(tasks / t.filename).hash == t.hash for t in sweep.tasks)
    # a changed fixed value changes every hash but keeps the file names: all rerun, nothing accumulates
    changed = function_sweep(power_fit, {"alpha": [-0.5, -1.0, -2.0]}, fixed={"c": 5.0})
    third = run_sweep(changed, tmp_path, scheduler="serial", progress=False)
    assert third.count("done") == 3 and len(list(tasks.glob("t-*.h5"))) == 3
    np.testing.assert_allclose(read_index(third.index_path)["fit.prefactor"], 5.0, rtol=1e-12)


def interrupted_at_3(params: dict) -> dict:
    from pathlib import Path

    if params["x"] == 3 and Path(params["flag"]).exists():
        raise KeyboardInterrupt  # Ctrl-C while task 3 runs
    return {"x2": params["x"] ** 2}


def test_interrupt_keeps_finished_tasks_writes_the_index_and_resumes(tmp_path):
    import pytest

    flag = tmp_path / "interrupt"
    flag.touch()
    sweep = function_sweep(interrupted_at_3, {"x": list(range(6))}, fixed={"flag": str(flag)})
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(sweep, out, scheduler="serial", progress=False)
    idx = read_index(out / "index.h5")
    assert list(idx["status"]) == ["done"] * 3 + ["missing"] * 3
    # nothing half-written: exactly the finished tasks' files, no scratch directory or temporary file
    assert sorted(p.name for p in (out / "tasks").iterdir()) == sorted(t.filename for t in sweep.tasks[:3])
    flag.unlink()
    resumed = run_sweep(sweep, out, scheduler="serial", progress=False)
    assert [r.status for r in resumed.reports] == ["reused"] * 3 + ["done"] * 3
    assert list(read_index(out / "index.h5")["x2"]) == [x * x for x in range(6)]


def test_read_index_names_the_file_and_what_it_expected(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_index(tmp_path / "absent.h5")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f.attrs["format"] = "shockflow-result"
    with pytest.raises(ValueError, match=r"other\.h5.*'shockflow-result', expected 'shockflow-sweep-index'"):
        read_index(other)


def test_the_key_figures_of_a_runner_without_its_own_are_its_numbers_at_every_level():
    """A theory case's outcome holds its figures in a nested ``result`` table: a sweep's index held only
    ``figures_count`` for it."""
    from shockflow.sweeps.records import scalar_figures

    summary = {"case": "c", "seconds": 1.5, "figures": ["a.png"], "result": {"max_abs_relative_error": 0.02,
               "ok": True, "t": [1.0, 2.0], "fit": {"exponent": -1.25, "deeper": {"x": 1.0, "y": {"z": 2.0}}}}}
    got = scalar_figures(summary)
    assert got == {"seconds": 1.5, "figures_count": 1, "result.max_abs_relative_error": 0.02, "result.ok": True,
                   "result.t_count": 2, "result.fit.exponent": -1.25}        # three levels: not fit.deeper
