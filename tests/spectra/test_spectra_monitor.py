"""Spectral monitor over training logs, .npz and HDF5 stacks; analyse_spectra's stable output."""

import json
import math

import h5py
import numpy as np
import pytest

from shockflow.spectra.monitor import (analyse_spectra, load_weight_stack, read_spectral_trace,
                                       spectral_monitor)
from shockflow.spectra.teacher_student import critical_time, population_theory, train_linear_student

KEYS = {"format", "N", "M", "level", "step", "sigma2", "ratio", "lambda_plus", "threshold",
        "top_eigenvalue", "n_outliers", "theta", "q2_predicted", "q2", "fit_ok", "fit_errors",
        "first_outlier_step", "source", "param", "output", "figure"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("spectra")
    log = d / "run.h5"
    rec, u, v = train_linear_student(120, 240, 0.35, 10, 1.0, n=300, n_snapshots=11, log_path=log)
    return d, log, rec, u, v


def test_training_log_analysis_follows_theory(run):
    d, log, rec, u, v = run
    out = analyse_spectra(log, teacher=u, output=d / "trace.h5", figure=d / "spectra.png")
    assert set(out) == KEYS
    json.dumps(out)                                      # JSON-able
    # ε = 0.35, σ_W = 1, r = 1/2: t_c = 1.41; θ/θ_c = 0.64 at step 1 and 1.63 at step 2, both outside
    # the finite-size window, so the outlier appears at the first logged step after t_c
    tc = critical_time(0.35, 1.0, 0.5)
    assert out["first_outlier_step"] == min(s for s in out["step"] if s > tc)
    for k, s in enumerate(out["step"]):
        th = population_theory(0.35, max(s, 1), 1.0, 0.5)
        if s == 0:
            th = population_theory(0.0, 1, 1.0, 0.5)
        assert out["sigma2"][k] == pytest.approx(th["a"], rel=0.05)          # fitted bulk = (1−ε)^{2t} σ_W²
        if th["ordered"] and th["theta2"] > 1.5 * math.sqrt(0.5):
            assert out["q2"][k] == pytest.approx(th["q2"], abs=0.08)
        if th["theta2"] > 3 * math.sqrt(0.5):
            # from the spectrum alone (outlier → θ → q²); dλ/dθ vanishes at θ_c, so the inversion
            # amplifies the O(N^{-1/2}) outlier fluctuations near threshold: checked deeper in
            assert out["q2_predicted"][k] == pytest.approx(th["q2"], abs=0.08)
    trace = read_spectral_trace(d / "trace.h5")
    assert np.array_equal(trace.step, out["step"]) and np.allclose(trace.sigma2, out["sigma2"])
    assert (d / "spectra.png").read_bytes()[:4] == b"\x89PNG"


def test_npz_and_plain_hdf5_give_the_same_answer(run, tmp_path):
    d, log, rec, u, v = run
    ref = analyse_spectra(log, teacher=u)
    np.savez(tmp_path / "w.npz", W=rec.snapshots["W"], step=rec.snapshots["step"], teacher=u)
    with h5py.File(tmp_path / "w.h5", "w") as f:
        f["layers/W"] = rec.snapshots["W"]
        f["step"] = rec.snapshots["step"]
    a = analyse_spectra(tmp_path / "w.npz")                           # teacher read from the file
    b = analyse_spectra(tmp_path / "w.h5", param="layers/W", teacher=u)
    for k in ("step", "top_eigenvalue", "sigma2", "n_outliers", "q2"):
        assert np.allclose(np.array(a[k], float), np.array(ref[k], float))
        assert np.allclose(np.array(b[k], float), np.array(ref[k], float))


def test_failed_fit_is_reported_not_invented():
    rng = np.random.default_rng(0)
    stack = np.stack([rng.normal(0, 0.1, (60, 120)), np.zeros((60, 120))])
    tr = spectral_monitor(stack)
    assert tr.fit_ok.tolist() == [True, False]
    assert np.isnan(tr.sigma2[1]) and "non-zero" in tr.fit_errors[1]
    assert tr.summary()["sigma2"][1] is None


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="2-D weight matrix"):
        spectral_monitor(np.ones((2, 3, 4, 5)))
    with pytest.raises(ValueError, match="ratio.*inconsistent"):
        spectral_monitor(np.ones((10, 20)), ratio=2.0)
    with pytest.raises(ValueError, match="teacher"):
        spectral_monitor(np.random.default_rng(0).normal(size=(30, 60)), teacher=np.ones(7))
    np.savez(tmp_path / "two.npz", A=np.ones((2, 3, 4)), B=np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"name the weight stack among \['A', 'B'\]"):
        load_weight_stack(tmp_path / "two.npz")
    with pytest.raises(ValueError, match="no array 'C'"):
        load_weight_stack(tmp_path / "two.npz", param="C")
    with pytest.raises(FileNotFoundError):
        load_weight_stack(tmp_path / "missing.h5")
    with pytest.raises(ValueError, match="NaN"):
        spectral_monitor(np.full((20, 40), np.nan))


def test_a_vector_parameter_of_a_log_is_refused_naming_it_not_a_shape_of_steps(tmp_path):
    """`spectra LOG --param u` on a log whose u is a vector said 'steps: expected 1 steps for 1 snapshots'."""
    from shockflow.logs import TrainingRecord, write_training_log
    from shockflow.spectra.monitor import load_weight_stack

    steps = np.arange(5)
    record = TrainingRecord(series={"step": steps, "loss": np.ones(5)},
                            snapshots={"step": steps, "u": np.ones((5, 4)), "W": np.ones((5, 3, 2))})
    write_training_log(record, tmp_path / "log.h5")
    with pytest.raises(ValueError, match=r"'u' is not a matrix .*shape \(5, 4\).*one of \['W'\]"):
        load_weight_stack(tmp_path / "log.h5", "u")
    assert load_weight_stack(tmp_path / "log.h5", "W")[1].shape == (5, 3, 2)
