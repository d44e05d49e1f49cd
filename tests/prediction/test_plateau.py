"""Plateaus away from the origin (shockflow/prediction/plateau.py, docs/theory.md §6): the symmetric plateau
of a network whose origin is sloped, its unstable symmetry-breaking directions and its predicted exit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shockflow import models
from shockflow.data.committee import committee_teacher, teacher_vectors
from shockflow.prediction.mapping import Optimiser
from shockflow.prediction.plateau import PlateauError, UnitLandscape, linear_growth, plateau_escape
from shockflow.prediction.truth import specialisation, specialisation_step


def _committee(d=8, n=512, seed=0, eps=1e-3):
    data = committee_teacher(n, d, 3, seed=seed)
    student = models.build(name="mlp", input_dim=d, width=3, activation="erf", init_scale=eps, readout=1.0, seed=seed)
    return student, data


def _dense_hessian(land, theta, h=1e-5):
    cols = []
    for j in range(theta.size):
        e = np.zeros_like(theta)
        e[j] = h
        cols.append((land.grad(theta + e) - land.grad(theta - e)) / (2 * h))
    H = np.column_stack(cols)
    return 0.5 * (H + H.T)


def test_the_committee_teacher_is_an_orthonormal_frame_with_readout_one():
    data = committee_teacher(2000, 10, 3, seed=4)
    B = teacher_vectors(10, 3, seed=4)
    assert B @ B.T == pytest.approx(np.eye(3), abs=1e-12)
    from scipy.special import erf

    assert data.y == pytest.approx(erf(data.X @ B.T / math.sqrt(2)).sum(axis=1), abs=1e-12)


def test_the_readout_keyword_sets_every_readout_weight_and_is_checked():
    net = models.build(name="mlp", input_dim=4, width=3, output_dim=2, readout=0.5, seed=1)
    assert np.all(net.params["a"] == 0.5) and net.spec()["readout"] == 0.5
    assert models.build(**net.spec()).params["a"] == pytest.approx(net.params["a"])
    assert "readout" not in models.build(name="mlp", input_dim=4, width=3).spec()   # the default spec is unchanged
    with pytest.raises(ValueError, match="readout"):
        models.build(name="mlp", input_dim=4, width=3, readout=float("nan"))


@pytest.mark.parametrize("d", [8, 30])    # 8: the dense eigenproblem; 30: Lanczos on Hessian-vector products
def test_the_plateau_is_a_symmetric_stationary_point_and_its_unstable_rates_are_the_hessians(d):
    student, data = _committee(d=d)
    res = plateau_escape(student, data.X, data.y, Optimiser(np.full(100, 0.5)), frozen=("a",))
    land = UnitLandscape(student, data.X, data.y, ("a",))
    W = res.theta[land.index][:, land.free]
    assert np.ptp(W, axis=0).max() == 0.0                       # every unit the same
    assert np.linalg.norm(land.grad(res.theta)) < 1e-6          # stationary in every direction, not only the symmetric
    assert res.loss < res.start_loss
    # the lowest eigenvalues of the symmetry-breaking block against a dense finite-difference Hessian
    H = _dense_hessian(land, res.theta)
    free = np.flatnonzero(~land.held)
    P = np.column_stack([land.breaking(e) for e in np.eye(res.theta.size)])[np.ix_(free, free)]
    values = np.linalg.eigvalsh(P @ H[np.ix_(free, free)] @ P)
    values = values[np.abs(values) > 1e-9]                      # the symmetric subspace's zeros are not breaking
    assert res.eigenvalues[:4] == pytest.approx(values[:4], rel=1e-4)
    assert res.eigenvalues[0] < 0 and res.curvature == pytest.approx(-res.eigenvalues[0], rel=1e-4)
    # the permutations of 3 units act on a breaking direction by their 2-D representation: eigenvalues in pairs
    assert res.eigenvalues[1] == pytest.approx(res.eigenvalues[0], rel=1e-6)


def test_the_linear_escape_is_the_log_of_the_distance_ratio_over_the_log_gain():
    # one unstable direction at κ, gradient descent at η: n = ln(d/d0)/ln(1 + ηκ) exactly
    kappa, eta = 0.05, 0.5
    opt = Optimiser(np.full(50, eta))
    n, grown = linear_growth(np.array([1e-4]), np.array([kappa]), 0.3, opt)
    assert n == pytest.approx(math.log(0.3 / 1e-4) / math.log1p(eta * kappa), rel=1e-9)
    assert grown == pytest.approx([0.3])
    # a slower second direction adds its share to the distance: the exit comes a little earlier, and the grown
    # perturbation leans towards the faster direction
    n2, grown2 = linear_growth(np.array([1e-4, 1e-4]), np.array([kappa, 0.01]), 0.3, opt)
    assert n2 < n and grown2[0] > 10 * grown2[1] and np.linalg.norm(grown2) == pytest.approx(0.3)


def test_an_exactly_symmetric_start_and_unequal_frozen_values_are_refused_naming_why():
    student, data = _committee()
    student.params["W"][...] = student.params["W"][:1]
    with pytest.raises(PlateauError, match="exactly symmetric"):
        plateau_escape(student, data.X, data.y, Optimiser(np.full(10, 0.5)), frozen=("a",))
    student, data = _committee()
    student.params["a"][0] = 2.0
    with pytest.raises(PlateauError, match="differ between units"):
        plateau_escape(student, data.X, data.y, Optimiser(np.full(10, 0.5)), frozen=("a",))


def specialisation_truth(steps, W, B):
    """The step at which the student's units specialise (the truth of the committee machine's plateau exit): the
    order parameter S = mean over student units of (max_m R_km − the mean of the other R_km), R_km = w_k·B_m/|w_k|
    (0 at the symmetric plateau, 1 when every unit has its own teacher unit), half way from its minimum (on the
    plateau) to its final value, linearly interpolated between the two snapshots around the crossing."""
    R = W @ B.T / np.linalg.norm(W, axis=2, keepdims=True)
    r = np.sort(R, axis=2)
    S = (r[:, :, -1] - r[:, :, :-1].mean(axis=2)).mean(axis=1)
    j0 = int(np.argmin(S))
    half = 0.5 * (S[j0] + S[-1])
    j = j0 + int(np.flatnonzero(S[j0:] >= half)[0])
    w = (half - S[j - 1]) / (S[j] - S[j - 1])
    return float(steps[j - 1] + w * (steps[j] - steps[j - 1])), S


def test_the_specialisation_is_zero_for_units_along_one_line_and_one_for_orthogonal_units():
    rng = np.random.default_rng(3)
    v = rng.standard_normal(7)
    line = np.array([0.3 * v, -2.0 * v, 1.1 * v])            # unequal norms and a sign flip: still one direction
    frame = np.linalg.qr(rng.standard_normal((7, 3)))[0].T    # three orthonormal units
    assert specialisation(line) == pytest.approx(0.0, abs=1e-12)
    assert specialisation(frame) == pytest.approx(1.0, abs=1e-12)
    # a run that leaves the line for the frame: the half-way step of S between the snapshots around it
    tau = np.linspace(0.0, 1.0, 21)
    W = np.array([(1 - t) * line + t * frame for t in tau])
    steps = 10.0 * np.arange(tau.size)
    S = specialisation(W)
    step, bracket = specialisation_step(steps, W)
    j = int(np.flatnonzero(S >= 0.5 * (S[0] + S[-1]))[0])
    assert bracket == (steps[j - 1], steps[j]) and bracket[0] <= step <= bracket[1]
    # the plateau is where S is least: a run that first falls onto the line (its escape from the origin) reads from there
    W2 = np.concatenate([np.array([frame * 0.5 + line * 0.5]), W])
    assert specialisation_step(np.concatenate([[-10.0], steps]), W2)[0] == pytest.approx(step)
    assert specialisation_step(steps, W[::-1]) is None       # units that merge do not specialise
    with pytest.raises(ValueError, match="units >= 2"):
        specialisation(v[None, :])


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_committee_machines_plateau_exit_is_predicted_against_the_specialisation_of_its_units(seed):
    """Measured (n = 4096, d = 50, η = 0.5, 2 cores at load ~1.5): seeds 0-5 are predicted +9.0, -2.4, +3.6, +6.5,
    +2.5, +7.1 % against the half-way step of the specialisation (the prediction reads half the parameter distance
    from the plateau to where the descent stalls, which comes a few per cent after half the specialisation).  The
    exit along the straight line instead (half the loss drop to the line's minimum) was -3.4, -21, -18 %."""
    from shockflow.cases import load_case
    from shockflow.runners.training import refuse_unmodelled
    from shockflow.runners.training import build_model_and_data
    from shockflow.training import train
    from shockflow.training.schedules import learning_rate

    case = load_case("committee-erf-frozen", [f"seed={seed}"])
    refuse_unmodelled(case)
    model, _, data, _ = build_model_and_data(case, seed)
    settings = case.settings.training.train_settings(seed)
    optimiser = Optimiser(np.array([learning_rate(settings, i) for i in range(settings.steps)]), settings.optimizer,
                          settings.momentum)
    predicted = plateau_escape(model, data.X, data.y, optimiser, frozen=settings.frozen)   # before any training
    record = train(model.copy(), data, settings, quiet=True)
    snaps = record.snapshots
    truth, S = specialisation_truth(np.asarray(snaps["step"]), np.asarray(snaps["W"]),
                                    teacher_vectors(case.settings.data.kwargs()["d"], 3, seed))
    assert S[-1] > 0.9                                   # the units did specialise within the run
    assert np.all(np.asarray(snaps["a"]) == 1.0)         # the readout was held
    error = abs(predicted.step - truth) / truth
    print(f"seed {seed}: predicted {predicted.step:.1f} (reach {predicted.reach_steps:.1f}), truth {truth:.1f}, "
          f"error {100 * (predicted.step / truth - 1):+.2f} %")
    assert error <= 0.10                                 # one true transition: recall 100 % and median = this error
    # the teacher-free truth (the units' mutual alignment, shockflow.prediction.truth.specialisation): measured
    # +3.3, +2.0, +2.4, +2.3, +2.3, +2.3 % at seeds 0-5 (load 6-8)
    free, _ = specialisation_step(np.asarray(snaps["step"]), np.asarray(snaps["W"]))
    assert abs(predicted.step / free - 1) <= 0.05
    # the landscape-only exit (the escape integral along the line section, docs/theory.md §6): measured -10.7,
    # -20.2, -20.7, -16.3, -18.0, -18.3 % against it, early at every seed (the line's minimum is half specialised, at
    # loss 0.015; the run's path curves on to the specialised minimum): recorded, not adopted
    assert predicted.section_step < predicted.step and -0.25 <= predicted.section_step / free - 1 <= -0.05


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_trainable_readouts_committee_escapes_the_origin_as_predicted_and_its_plateau_is_no_equal_units_point(
        tmp_path, seed):
    """committee-tanh-readout (tanh K = 3, readout trained).  Measured (load 6-10): `shockflow run` charts the origin's
    one mode (r0) and predicts its escape within 4 % of its chart truth (seeds 0, 1: 19.8 against 19.0 and 19.9 against
    19.2, +3.8 and +3.6 %, since the truth and the exit read the learned strength; 0.4 % against the weight strength
    r², seed 0: 20.35 against 20.27); the units then specialise (teacher-free truth, seeds 0-2: 155.8, 125.5, 134.0),
    well after r0: that second stage is the chart of the chain's last saddle
    (tests/prediction/test_saddle_plateau.py).  The symmetric plateau with the readout shared is refused: the units
    arrive at the plateau with unequal scales, d0 = 3.4 along its unstable direction, past the quadratic top."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case
    from shockflow.runners.training import build_model_and_data
    from shockflow.training import train
    from shockflow.training.schedules import learning_rate

    case = load_case("committee-tanh-readout", [f"seed={seed}"])
    out = run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    true_r0 = {t.chart: t.step for t in out.truth.transitions}["r0"]
    assert out.stage.predicted[0].chart == "r0" and abs(out.stage.predicted[0].step / true_r0 - 1) <= 0.05
    model, _, data, _ = build_model_and_data(case, seed)
    settings = case.settings.training.train_settings(seed)
    record = train(model.copy(), data, settings, quiet=True)
    S = specialisation(np.asarray(record.snapshots["W"]))
    step, _ = specialisation_step(np.asarray(record.snapshots["step"]), np.asarray(record.snapshots["W"]))
    assert S[-1] > 0.95 and step > 4 * out.stage.predicted[0].step      # a second transition, well after the first
    optimiser = Optimiser(np.array([learning_rate(settings, i) for i in range(settings.steps)]))
    with pytest.raises(PlateauError, match="past the quadratic top"):
        plateau_escape(model, data.X, data.y, optimiser)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shockflow_run_predicts_the_committee_machines_exit_against_its_plateau_chart_truth(tmp_path, seed):
    """`shockflow run` on the case (one `plateau` chart, the parameter truth its coordinate's half-way step).
    Measured (2 cores, load ~1.5), seeds 0-5: 0.0, 0.0, 0.1, 0.1, 0.1, 0.2 %: past the linear region the
    prediction runs the update rule on the real loss (full batch), the iteration training performs, so these
    figures test the approach and the linear growth (reach + Lanczos rates + d0) and little else."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    case = load_case("committee-erf-frozen", [f"seed={seed}"])
    out = run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    c = out.comparison
    assert [p.method for p in out.stage.predicted] == ["plateau"] and c.truth == "parameters"
    assert c.recall >= 0.9 and c.median_relative_error <= 0.10


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_a_nonlinear_teachers_second_stage_is_the_units_specialisation(tmp_path, seed):
    """mlp-tanh-nonlinear-teacher (tanh 20 -> 8 -> 1 on a 3-unit tanh committee).  Measured (load 6-10): stage one, the
    origin's one mode r0, predicted at 40.1 and 41.1 (2.3 and 3.3 % from its chart truth); stage two, the units'
    specialisation (teacher-free truth 469.8 and 443.9; S from 0 on the plateau to 0.54 and 0.47: eight units on
    three teacher directions), well after it: the chart of the chain's last saddle
    (tests/prediction/test_saddle_plateau.py)."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case
    from shockflow.runners.training import build_model_and_data
    from shockflow.training import train

    case = load_case("mlp-tanh-nonlinear-teacher", [f"seed={seed}"])
    out = run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    true_r0 = {t.chart: t.step for t in out.truth.transitions}["r0"]
    assert out.stage.predicted[0].chart == "r0" and abs(out.stage.predicted[0].step / true_r0 - 1) <= 0.05
    model, _, data, _ = build_model_and_data(case, seed)
    record = train(model.copy(), data, case.settings.training.train_settings(seed), quiet=True)
    W, steps = np.asarray(record.snapshots["W"]), np.asarray(record.snapshots["step"])
    step, _ = specialisation_step(steps, W)
    assert specialisation(W)[-1] > 0.4 and step > 8 * out.stage.predicted[0].step      # the second stage

def test_a_learning_rate_the_plateau_cannot_hold_is_refused_at_once_and_a_smaller_one_arrives():
    """A committee at a learning rate just above the update rule's stability limit on its plateau (the largest
    curvature within the equal-units subspace) circles across the plateau: the approach ran its 200 000-step budget
    (400 s on a tester's d = 40 committee) and failed as a run failure; it now stops within STALL_STEPS of its last
    descent, naming the rate and the limit (PlateauUnstable: training.lr, exit 2).  At half the limit it arrives."""
    from shockflow.prediction import plateau as P

    student, data = _committee()
    land = UnitLandscape(student, data.X, data.y, ("a",))
    theta0 = student.parameter_vector()
    theta_p, L_p = P.symmetric_minimum(land, theta0)
    H = _dense_hessian(land, theta_p)
    sym = np.array([land.symmetric(e) for e in np.eye(theta_p.size)]).T      # the projector on equal units
    sym[land.held, :] = 0.0
    lam = float(np.linalg.eigvalsh(sym.T @ H @ sym).max())
    limit = P.stability_limit(lam, Optimiser(np.array([1.0]), "gd", 0.0))
    assert limit == pytest.approx(2.0 / lam)
    # the forecast's flag where the plateau is its start (stability_lr): the same limit, from the initial parameters
    flag = P.plateau_stability_rate(student, data.X, data.y, Optimiser(np.array([1.0]), "gd", 0.0), ("a",))
    assert flag == pytest.approx(limit, rel=1e-2)
    steps = 4 * P.STALL_STEPS
    with pytest.raises(P.PlateauUnstable, match="above its stability limit") as refused:
        P.approach(land, theta0, L_p, Optimiser(np.full(steps, 1.1 * limit), "gd", 0.0), theta_p)
    import re

    said = float(re.search(r"stability limit ([0-9.]+)", str(refused.value)).group(1))
    assert said == pytest.approx(limit, rel=1e-2)      # power iteration on finite differences against the dense H
    stopped = int(re.search(r"; step (\d+)\)", str(refused.value)).group(1))
    assert P.STALL_STEPS < stopped < 2 * P.STALL_STEPS     # not the budget's 200 000
    reach, _ = P.approach(land, theta0, L_p, Optimiser(np.full(steps, 0.5 * limit), "gd", 0.0), theta_p)
    assert 0 < reach < P.STALL_STEPS
