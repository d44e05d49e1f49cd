"""The training loop's recorders, checks and errors."""

import numpy as np
import pytest

from shockflow import models
from shockflow.data import teacher_student, train_test_split
from shockflow.training import TrainingDiverged, TrainSettings, log_spaced, train


def regression(n=300, d=4, noise=0.1, seed=0):
    teacher = models.build("linear", input_dim=d, seed=99)
    return teacher_student(n, d, teacher, noise=noise, seed=seed), teacher


def test_recorded_series_snapshots_and_observables_are_consistent():
    data, _ = regression()
    train_set, test_set = train_test_split(data, 0.25, seed=0)
    m = models.build("mlp", input_dim=4, width=10, seed=1)
    s = TrainSettings(optimizer="sgd", lr=0.05, steps=200, batch_size=16, log_every=7, observe_every=20,
                      n_snapshots=12)
    rec = train(m, train_set, s, observables={"norm_W": lambda mod: np.linalg.norm(mod.params["W"]),
                                              "a": lambda mod: mod.params["a"].copy()},
                test=test_set, quiet=True)
    assert rec.steps[0] == 0 and rec.steps[-1] == 200 and np.all(np.diff(rec.steps[:-1]) == 7)
    snap = rec.snapshots
    assert snap["step"][0] == 0 and snap["step"][-1] == 200
    np.testing.assert_array_equal(snap["step"], log_spaced(12, 200))
    # last snapshot is the trained model; losses recomputed from snapshots match the series
    np.testing.assert_array_equal(snap["W"][-1], m.params["W"])
    probe = m.copy()
    for i, step in enumerate(snap["step"]):
        j = np.searchsorted(rec.steps, step)
        if j < len(rec.steps) and rec.steps[j] == step:
            probe.params["W"][...] = snap["W"][i]
            probe.params["a"][...] = snap["a"][i]
            assert rec.loss[j] == pytest.approx(probe.loss(train_set.X, train_set.y), rel=1e-12)
            assert rec.test_loss[j] == pytest.approx(probe.loss(test_set.X, test_set.y), rel=1e-12)
            k = np.searchsorted(rec.observables["step"], step)
            if k < len(rec.observables["step"]) and rec.observables["step"][k] == step:
                assert rec.observables["norm_W"][k] == pytest.approx(np.linalg.norm(snap["W"][i]))
    np.testing.assert_array_equal(rec.observables["step"], np.r_[np.arange(0, 201, 20)])
    assert rec.observables["a"].shape == (11, 10)
    assert rec.loss[-1] < 0.5 * rec.loss[0]


def test_full_batch_loss_series_is_the_gradient_evaluation_loss():
    data, _ = regression()
    m = models.build("linear", input_dim=4, seed=2)
    rec = train(m, data, TrainSettings(optimizer="gd", lr=0.1, steps=50), quiet=True)
    np.testing.assert_array_equal(rec.series["loss"], rec.series["batch_loss"])
    assert rec.loss[-1] == m.loss(data.X, data.y)


def test_noise_temperature_matches_label_noise_at_the_teacher():
    # linear student at W = W*, y = W* x + σ ξ, x ~ N(0, I_d): per-sample gradient g = −σ ξ x,
    # so Σ = σ² I, tr Σ = d σ², σ_g² = tr Σ / P = σ² and T = η σ² / (2B) (docs/theory.md §1).
    d, sigma, n = 5, 0.5, 20_000
    data, teacher = regression(n=n, d=d, noise=sigma, seed=3)
    m = models.build("linear", input_dim=d, seed=0)
    m.params["W"][...] = teacher.params["W"]
    eta, B = 0.01, 32
    rec = train(m, data, TrainSettings(optimizer="sgd", lr=eta, steps=1, batch_size=B, noise_every=1,
                                       noise_batch=n), quiet=True)
    nz = rec.noise
    assert nz["step"][0] == 0
    # relative sampling error of tr Σ̂ over n samples is ≈ sqrt(2(1 + 2/d)/ (n d))... use 5 %
    assert nz["sigma2"][0] == pytest.approx(sigma ** 2, rel=0.05)
    assert nz["trace"][0] == pytest.approx(d * nz["sigma2"][0], rel=1e-12)
    assert nz["temperature"][0] == pytest.approx(eta * nz["sigma2"][0] / (2 * B), rel=1e-12)
    assert nz["temperature_trace"][0] == pytest.approx(d * nz["temperature"][0], rel=1e-12)
    assert nz["temperature_fpc"][0] == pytest.approx(nz["temperature"][0] * (n - B) / (n - 1), rel=1e-12)


def test_divergence_stops_with_step_and_quantity():
    data, _ = regression()
    m = models.build("linear", input_dim=4, seed=2)
    with pytest.raises(TrainingDiverged, match=r"training diverged at step \d+: training loss is (inf|nan); .*largest parameter array: 'W'") as err:
        train(m, data, TrainSettings(optimizer="gd", lr=50.0, steps=2000), quiet=True)
    assert err.value.step > 0 and err.value.quantity == "training loss"


def test_shape_mismatch_is_reported_before_training():
    data, _ = regression(d=4)
    # the model's own message is about the one sample forwarded (its (1, 4)), and says so
    with pytest.raises(ValueError, match=r"cannot take training data inputs of shape \(4,\) per sample \(one sample "
                                         r"forwarded\)"):
        train(models.build("linear", input_dim=3), data, TrainSettings(steps=1), quiet=True)
    with pytest.raises(ValueError, match=r"cannot score training data targets of shape \(1,\).*\(1, 2\)"):
        train(models.build("linear", input_dim=4, output_dim=2), data, TrainSettings(steps=1), quiet=True)


def test_init_scale_passes_to_the_builder_and_mismatch_is_refused():
    data, _ = regression()
    spec = {"name": "linear2", "input_dim": 4, "hidden": 6}
    rec = train(spec, data, TrainSettings(steps=3, init_scale=1e-3, seed=4), quiet=True)
    assert rec.model_spec["init_scale"] == 1e-3 and rec.model_spec["seed"] == 4
    W = rec.snapshots["W1"][0]
    assert 0.2e-3 < W.std() * np.sqrt(4) < 5e-3           # entries ~ N(0, ε²/d)
    with pytest.raises(ValueError, match="init_scale = 0.001 but the model instance was built with init_scale = 1.0"):
        train(models.build("linear2", input_dim=4, hidden=6), data, TrainSettings(steps=3, init_scale=1e-3),
              quiet=True)


def test_bad_observable_and_bad_arguments():
    data, _ = regression()
    m = models.build("linear", input_dim=4)
    with pytest.raises(RuntimeError, match="observable 'boom' failed at step 0"):
        train(m, data, TrainSettings(steps=3), observables={"boom": lambda mod: 1 / 0}, quiet=True)
    with pytest.raises(TypeError, match="settings must be a TrainSettings"):
        train(m, data, {"lr": 0.1}, quiet=True)
    with pytest.raises(TypeError, match="data must be a shockflow.data.Dataset"):
        train(m, (data.X, data.y), TrainSettings(), quiet=True)


@pytest.mark.parametrize("count", [1, 2, 3, 12])
def test_the_snapshot_schedule_holds_the_first_and_the_last_step(count):
    # count = 2 gave steps 0 and 1 only: the trained model was never snapshotted, so every chart read "not learned"
    steps = log_spaced(count, 3000)
    assert steps[0] == 0 and steps[-1] == 3000 and 1 in steps and np.all(np.diff(steps) > 0)
