"""docs/theory.md §3 linear teacher–student: GD conventions, critical steps, simulation versus theory."""

import math

import numpy as np
import pytest

from shockflow.spectra.bulk_fit import fit_bulk
from shockflow.spectra.outliers import detect_outliers
from shockflow.spectra.teacher_student import (critical_step, critical_steps, critical_time,
                                               initial_weights, make_teacher,
                                               population_gd, population_theory, simulate_point,
                                               train_linear_student)


def test_population_gd_is_the_closed_form():
    rng = np.random.default_rng(0)
    u, v = make_teacher(30, 50, rng)
    W0 = initial_weights(30, 50, 1.3, rng)
    for eps, t in ((0.3, 5), (1.4, 3), (0.05, 40)):
        s = (1 - eps) ** t
        assert np.allclose(population_gd(W0, u, v, eps, t), (1 - s) * np.outer(u, v) + s * W0,
                           atol=1e-12)


@pytest.mark.parametrize("loss, factor", [("half_mse", 1.0), ("mse", 2.0)])
def test_shockflow_training_matches_population_gd(loss, factor):
    # whitened inputs (XᵀX/n = I exactly): full-batch GD on the 'linear' model is population GD
    # with step factor·η — half_mse is the convention of docs/theory.md §3, mse doubles the step
    from shockflow import models
    from shockflow.data import teacher_student
    from shockflow.training import TrainSettings, train

    N, M, eta, steps = 12, 20, 0.15, 6
    rng = np.random.default_rng(1)
    u, v = make_teacher(N, M, rng)
    teacher = models.build("linear", input_dim=M, output_dim=N)
    teacher.params["W"][...] = np.outer(u, v)
    data = teacher_student(60, M, teacher, whiten=True, seed=3)
    spec = {"name": "linear", "input_dim": M, "output_dim": N, "loss": loss, "init_scale": 0.8, "seed": 4}
    rec = train(spec, data, TrainSettings(lr=eta, steps=steps, n_snapshots=steps + 1), quiet=True)
    W0 = rec.snapshots["W"][0]
    assert W0.std() * math.sqrt(M) == pytest.approx(0.8, rel=0.15)     # N(0, σ_W²/M) initialisation
    for k, step in enumerate(rec.snapshots["step"]):
        s = (1 - factor * eta) ** step
        assert np.allclose(rec.snapshots["W"][k], (1 - s) * np.outer(u, v) + s * W0, atol=1e-12)


def test_critical_steps_sit_on_the_threshold():
    r = 0.5
    for t, sw in ((1, 1.0), (1, 2.0), (2, 0.5), (3, 2.0), (4, 0.4)):
        roots = critical_steps(t, sw, r)
        for eps in [roots["lower"], *roots["upper"]]:
            th = population_theory(eps, t, sw, r)
            assert th["theta2"] == pytest.approx(math.sqrt(r), rel=1e-10)
        # ordered just above the lower root, disordered just below
        e = roots["lower"]
        assert population_theory(e * 1.01, t, sw, r)["ordered"]
        assert not population_theory(e * 0.99, t, sw, r)["ordered"]
        # the critical time at ε_c(t) is t
        assert critical_time(e, sw, r) == pytest.approx(t, rel=1e-12)
    # docs/theory.md's ε_c^n = 1 − (1 − κ)^{−1/t} (real odd root) exists only for κ > 1 at odd t
    k = 2.0 * r**0.25
    assert critical_steps(3, 2.0, r)["upper"] == [pytest.approx(1 - np.cbrt(1 - k) ** -1)]
    assert critical_steps(1, 0.5, r)["upper"] == []
    assert critical_step(1, 1.0, r) == pytest.approx(1 - 1 / (1 + r**0.25))


def _mean_errors(N, cases, seeds):
    out = []
    for k, (eps, t, sw) in enumerate(cases):
        rows = [simulate_point(N, 2 * N, eps, t, sw, seed=1000 * k + s) for s in seeds]
        out.append((np.mean([r["rel_error_top"] for r in rows]), np.mean([r["rel_error_q2"] for r in rows])))
    return np.array(out)


# θ/θ_c = 1.45, 2.77, 2.28, 1.85: ordered, outside the N^{-1/3} window at N >= 200
CASES = [(0.55, 1, 1.0), (0.7, 1, 1.0), (0.3, 3, 1.0), (0.25, 2, 0.5)]


def test_simulation_matches_theory_reduced_size():
    # The outlier and its overlap fluctuate by O(M^{-1/2}) (≈4% and ≤6% per run at N = 200): the
    # goal of 3% at N = 800 becomes 3%·sqrt(800/200) = 6% here, on the mean of 4 seeds.
    err = _mean_errors(200, CASES, range(4))
    assert np.all(np.abs(err) < 0.06), err


@pytest.mark.slow
def test_simulation_matches_theory_N800():
    # docs/theory.md §3 goal: within 3% at N = 800, M = 1600. Literal GD runs, 24 independent seeds per
    # case (per-run sd ≈ 2% for λ_top, ≤ 5% for q² here: standard errors ≤ 1%).
    err = _mean_errors(800, CASES, range(24))
    print("N=800 dense, mean relative errors (top, q2):", err.tolist())
    assert np.all(np.abs(err) < 0.03), err


@pytest.mark.slow
def test_simulation_matches_theory_N800_exact_law_sampler():
    # the same goal with 200 draws each from the reduced sampler (exact in law), which reaches
    # standard errors of ≈ 0.15% (λ_top) and ≈ 0.4% (q²), including a case near threshold
    from shockflow.spectra.finite_size import sample_overlaps

    for k, (eps, t, sw) in enumerate(CASES + [(0.2, 2, 0.5)]):
        th = population_theory(eps, t, sw, 0.5)
        d = sample_overlaps(800, 1600, eps, t, sw, 200, seed=k)
        e_top = d["top_eigenvalue"].mean() / th["lambda_top"] - 1
        e_q2 = d["q2"].mean() / th["q2"] - 1
        print(f"N=800 exact-law sampler eps={eps} t={t} sigma_w={sw}: top {e_top:+.4f}, q2 {e_q2:+.4f}")
        assert abs(e_top) < 0.03 and abs(e_q2) < 0.03


def test_no_outlier_below_threshold():
    N, M = 200, 400
    for eps in (0.15, 0.3):          # ε_c(1) = 0.457 for σ_W = 1, r = 1/2
        rng = np.random.default_rng(int(eps * 100))
        u, v = make_teacher(N, M, rng)
        W = population_gd(initial_weights(N, M, 1.0, rng), u, v, eps, 1)
        lam, vec = np.linalg.eigh(W @ W.T)
        assert detect_outliers(lam, fit_bulk(lam, ratio=0.5)).count == 0
        assert (vec[:, -1] @ u) ** 2 < 0.1      # random level ~ O(1/N) up to edge enhancement


def test_finite_sample_gd_and_sgd_approach_population():
    # n = 50 M samples: the empirical covariance deviates by O(sqrt(M/n)) = 14% per entry but
    # the spike and bulk scale stay within a few percent after a few steps
    N, M = 100, 200
    for method, batch in (("gd", None), ("sgd", 2000)):
        rows = [simulate_point(N, M, 0.25, 4, 1.0, seed=s, method=method, n=10000, batch=batch)
                for s in range(3)]
        assert abs(np.mean([r["rel_error_q2"] for r in rows])) < 0.06, method
        assert abs(np.mean([r["rel_error_top"] for r in rows])) < 0.08, method


def test_train_linear_student_snapshots_follow_theory():
    rec, u, v = train_linear_student(40, 80, 0.3, 6, 1.0, n=200, n_snapshots=7)
    W0 = rec.snapshots["W"][0]
    for k, step in enumerate(rec.snapshots["step"]):
        s = 0.7**step
        assert np.allclose(rec.snapshots["W"][k], (1 - s) * np.outer(u, v) + s * W0, atol=1e-12)


def test_bad_input():
    rng = np.random.default_rng(0)
    u, v = make_teacher(5, 7, rng)
    with pytest.raises(ValueError, match="2-D"):
        population_gd(np.ones(5), u, v, 0.1, 1)
    with pytest.raises(ValueError, match="u, v"):
        population_gd(np.ones((5, 6)), u, v, 0.1, 1)
    with pytest.raises(ValueError, match="method"):
        simulate_point(10, 20, 0.5, 1, 1.0, method="adam")
    with pytest.raises(ValueError, match="sigma_w"):
        population_theory(0.5, 1, -1.0, 0.5)
    with pytest.raises(ValueError, match="eps"):
        critical_time(1.5, 1.0, 0.5)
    with pytest.raises(ValueError, match="n"):
        simulate_point(10, 20, 0.5, 1, 1.0, method="gd")
