"""BLAS threads under training (one plus one per idle core) and prediction (one), unless the user chose
(shockflow.blas_threads)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from shockflow.blas_threads import blas_thread_limit, blas_threads


def _blas_threads() -> dict[str, int]:
    """The thread count of every loaded BLAS library, by file (a library loaded while a test had set
    OPENBLAS_NUM_THREADS=1 stays at most 1: compare each with its own count, not with a number)."""
    return {lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}


def _machine(monkeypatch, competing: float):
    """No user choice of threads, and ``competing`` runnable tasks besides this process on 2 cores (skips where
    threadpoolctl controls no BLAS library)."""
    if not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can control")
    for name in ("SHOCKFLOW_BLAS_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    import solvers.conservation.thread_policy as policy

    monkeypatch.setattr(policy, "competing_tasks", lambda: competing)
    monkeypatch.setattr(policy, "usable_cores", lambda: 2)


def _recording(function, seen: list):
    """``function``, appending the BLAS thread counts to ``seen`` at every call."""
    def recording(*args, **kwargs):
        seen.append(_blas_threads())
        return function(*args, **kwargs)

    return recording


@pytest.mark.parametrize("environ, expected", [
    ({}, 1),
    ({"SHOCKFLOW_BLAS_THREADS": "3"}, 3),
    ({"OPENBLAS_NUM_THREADS": "4"}, None),
    ({"OMP_NUM_THREADS": "2"}, None),
    ({"MKL_NUM_THREADS": "2", "SHOCKFLOW_BLAS_THREADS": "1"}, 1),
    ({"OPENBLAS_NUM_THREADS": " "}, 1),
])
def test_the_users_choice_wins(environ, expected):
    # 2 cores, one busy competitor: the policy alone would say 1
    assert blas_thread_limit(environ, cores=2, competing=1) == expected


@pytest.mark.parametrize("cores, competing, expected", [(2, 0, 2), (2, 1, 1), (2, 3.5, 1), (8, 2, 6), (8, 0, 8),
                                                        (1, 0, 1), (4, 0.5, 3)])
def test_one_thread_plus_one_per_idle_core(cores, competing, expected):
    assert blas_thread_limit({}, cores=cores, competing=competing) == expected


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_shockflow_blas_threads_is_refused_by_name(value):
    with pytest.raises(ValueError, match="SHOCKFLOW_BLAS_THREADS"):
        blas_thread_limit({"SHOCKFLOW_BLAS_THREADS": value})


@pytest.mark.parametrize("environ, expected", [({}, 1), ({"SHOCKFLOW_BLAS_THREADS": "2"}, 2),
                                                ({"OPENBLAS_NUM_THREADS": "2"}, None)])
def test_interleaved_work_takes_one_thread_on_idle_cores_unless_the_user_chose(environ, expected):
    assert blas_thread_limit(environ, cores=8, competing=0, interleaved=True) == expected


def test_the_prediction_runs_with_one_blas_thread_on_an_idle_machine(monkeypatch):
    _machine(monkeypatch, competing=0.0)                              # every core idle
    import shockflow.prediction.extraction as extraction
    from shockflow.cases import load_case
    from shockflow.runners.forecast import forecast_stage

    seen = []
    monkeypatch.setattr(extraction, "extract", _recording(extraction.extract, seen))
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        forecast_stage(load_case("two-layer-staircase", ["training.steps=200"]), 0)
        after = _blas_threads()
    assert seen and all(set(s.values()) == {1} for s in seen)
    assert {k: after[k] for k in before} == before    # (a library the forecast loaded is new, not restored)


def test_the_geometrys_checks_before_a_run_or_a_forecast_run_with_one_blas_thread(monkeypatch):
    """``verify_geometry`` (the intercept's QR of the automatic charts, a few forward passes) does the prediction's
    kind of work, before ``predict_case`` takes one thread: it takes one itself, in ``run`` and ``forecast`` alike
    (a 4096 × 100 QR took 0.25-0.6 s with two threads beside another process, 11 ms with one)."""
    _machine(monkeypatch, competing=0.0)
    import shockflow.geometry.auto as auto
    from shockflow.cases import load_case
    from shockflow.runners.training import build_model_and_data, verify_geometry

    seen = []
    monkeypatch.setattr(auto, "intercept_directions", _recording(auto.intercept_directions, seen))
    case = load_case("committee-erf-frozen", ["training.steps=50"])
    model, _, data, _ = build_model_and_data(case, 0)
    with threadpool_limits(limits=2, user_api="blas"):
        verify_geometry(case, model, data)
    assert seen and all(set(s.values()) == {1} for s in seen)


def test_training_beside_a_busy_core_runs_with_one_blas_thread_and_restores_the_count_after(monkeypatch):
    _machine(monkeypatch, competing=64.0)                             # every core busy
    from shockflow import models
    from shockflow.data import Dataset
    from shockflow.training import TrainSettings, train

    seen = []
    model = models.build("mlp", input_dim=6, width=8, output_dim=2, activation="tanh", seed=0)
    monkeypatch.setattr(model, "loss_and_grad", _recording(model.loss_and_grad, seen))
    rng = np.random.default_rng(0)
    data = Dataset(rng.normal(size=(64, 6)), rng.normal(size=(64, 2)))
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        train(model, data, TrainSettings(optimizer="gd", lr=0.01, steps=5), quiet=True)
        after = _blas_threads()
    assert seen and all(set(s.values()) == {1} for s in seen)
    assert after == before


def test_the_users_choice_is_left_alone(monkeypatch):
    if not _blas_threads():
        pytest.skip("no BLAS library that threadpoolctl can control")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    monkeypatch.delenv("SHOCKFLOW_BLAS_THREADS", raising=False)
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with blas_threads():
            inside = _blas_threads()
    assert inside == before
    np.testing.assert_equal(blas_thread_limit(), None)


def test_a_scaling_cases_paths_run_with_one_blas_thread_beside_a_busy_core(monkeypatch, tmp_path):
    # scaling-data-limited (d = 100: FISTA's eigendecompositions and products) ran 14x slower with OpenBLAS's two
    # threads while another process held a core; its paths now follow the training loop's count
    _machine(monkeypatch, competing=64.0)
    import shockflow.scaling.sweeps as sweeps
    from shockflow.cases import RunOptions, load_case
    from shockflow.scaling.case import run_scaling_case

    seen = []
    monkeypatch.setattr(sweeps, "run_path", _recording(sweeps.run_path, seen))
    case = load_case("scaling-data-limited", overrides=["scaling.grid.d=[8]", "scaling.grid.n=[40, 80, 160]", "scaling.fit.regime=none",
                                                        "scaling.grid.seeds=2", "scaling.grid.lam=[0.5, 0.2]"])
    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        run_scaling_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
        after = _blas_threads()
    assert len(seen) == 6 and all(set(s.values()) == {1} for s in seen)
    assert after == before
