"""The chart of the saddle chain's last saddle (shockflow/prediction/saddle_plateau.py, docs/theory.md §6 "Plateaus
away from the origin"): its stationary point, its unstable directions, the escape followed by the update rule half
way to its learned end, and the second stage it predicts on the committee machine with a trainable readout and the
tanh MLP on a nonlinear teacher."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shockflow import models
from shockflow.data.committee import committee_teacher
from shockflow.prediction import saddle_plateau as sp
from shockflow.prediction.comparison import UNCHARTED
from shockflow.prediction.mapping import Optimiser
from shockflow.prediction.truth import specialisation, specialisation_step


class _SexticWell:
    """A two-parameter "network" whose loss is ``−κ θ₀²/2 + θ₀⁶/6 + θ₁²/2``: a saddle at 0, minima at
    ``θ₀ = ±κ^(1/4)``; along θ₀ the loss has fallen half way to the minimum at ``t κ^(1/4)``, ``t² = 0.3473`` the
    root of ``x³ − 3x + 1`` in (0, 1) (the quadratic top), and the curvature is negative out to ``(κ/5)^(1/4)``."""

    kappa = 0.25

    def __init__(self, theta):
        self.params = {"w": np.array(theta, dtype=np.float64)}

    def copy(self):
        return _SexticWell(self.params["w"])

    def parameter_vector(self):
        return self.params["w"].copy()

    def set_parameter_vector(self, v):
        self.params["w"][...] = v

    def grad_vector(self, grads):
        return np.asarray(grads["w"], dtype=np.float64).copy()

    def loss_and_grad(self, X, y):
        t0, t1 = self.params["w"]
        value = -0.5 * self.kappa * t0 ** 2 + t0 ** 6 / 6.0 + 0.5 * t1 ** 2
        return float(value), {"w": np.array([-self.kappa * t0 + t0 ** 5, t1])}


def test_a_chain_saddle_past_the_quadratic_top_is_not_waiting_at_the_stationary_point():
    """The chain's saddle θ_S next to the sextic well's saddle: at θ₀ = 0.05 (0.12 tops out) the network waits there
    and the escape is followed; at θ₀ = 0.44, past the top (0.4167) but inside the negative curvature (0.473), it has
    already passed the escape: no chart (attention-qk-4x2's last saddle, 2.2 tops out, charted the second mode's
    escape a second time)."""
    top = math.sqrt(0.3472963553) * _SexticWell.kappa ** 0.25
    optimiser = Optimiser(np.full(4000, 0.1))
    X, y = np.zeros((1, 1)), np.zeros(1)
    near = _SexticWell([0.05, 0.2])
    escape = sp.saddle_escape(near, near.parameter_vector(), 10.0, optimiser, X, y)
    assert escape is not None
    assert np.linalg.norm(escape.theta) <= 1e-3 and escape.top == pytest.approx(top, abs=2e-3)
    assert escape.d_arrive == pytest.approx(0.05, abs=1e-3)
    assert escape.line_minimum == pytest.approx(_SexticWell.kappa ** 0.25, abs=4e-3)
    far = _SexticWell([0.44, 0.2])
    assert sp.negative_curvature(sp.NetworkLoss(far, X, y), far.parameter_vector())[1].shape[1] == 1
    why = []
    assert sp.saddle_escape(far, far.parameter_vector(), 10.0, optimiser, X, y, why=why) is None
    (reason,) = why              # said, with the distances (the forecast reports it as the chart's abstention)
    import re

    said = float(re.search(r"past their quadratic top \(([0-9.]+)\)", reason).group(1))
    assert said == pytest.approx(top, abs=2e-3) and "arrives 0.44 out" in reason
    assert "no later transition" in reason
    class _Bowl(_SexticWell):
        kappa = -1.0             # the origin a minimum of the well: no unstable direction

        def copy(self):
            return _Bowl(self.params["w"])

    minimum = _Bowl([0.0, 0.2])
    why = []
    assert sp.saddle_escape(minimum, minimum.parameter_vector(), 10.0, optimiser, X, y, why=why) is None
    assert len(why) == 1 and "has no unstable direction" in why[0] and "a minimum" in why[0]


def _well_iteration(theta, eta, mu=0.0, steps=5000):
    """The sextic well's coordinate θ₀ under gradient descent (heavy ball with ``mu``) from rest, iterated here in
    closed form (θ₁ does not enter θ₀'s gradient): the sequence the followed escape must reproduce."""
    kappa = _SexticWell.kappa
    t, v, out = float(theta), 0.0, [float(theta)]
    for _ in range(steps):
        v = mu * v + (-kappa * t + t ** 5)
        t -= eta * v
        out.append(t)
    return np.array(out)


def _exact_or_modelled(modelled, monkeypatch):
    """The escape's steps to compare with the rule's own iteration: to 1e-9 where it runs on the network at every step
    (no modelled stretch: ``MIN_STRETCH`` beyond any escape), to ``LINEAR_TOLERANCE`` relative where stretches of the
    plateau run on the gradient's first-order model."""
    if not modelled:
        monkeypatch.setattr(sp, "MIN_STRETCH", 10 ** 9)
        return dict(abs=1e-9)
    return dict(rel=sp.LINEAR_TOLERANCE)


@pytest.mark.parametrize("modelled", [False, True])
@pytest.mark.parametrize("name, eta, mu", [("gd", 0.1, 0.0), ("momentum", 0.02, 0.9)])
def test_the_escape_crosses_half_way_to_the_learned_end_as_the_update_rule_does(name, eta, mu, modelled, monkeypatch):
    """From θ_S = (0.05, 0.2) next to the sextic well's saddle, reached at step 10: the followed escape's learned end
    is the well's minimum κ^(1/4) (L-BFGS from the iterate past the line's minimum), its exit half way from the
    initial distance to it, and its step the crossing of that distance by the rule's own iteration (computed here
    independently, interpolated linearly between the two steps around it); the linear region ends at the first step
    past LINEAR_FRACTION of the quadratic top."""
    tolerance = _exact_or_modelled(modelled, monkeypatch)
    optimiser = Optimiser(np.full(4000, eta), name, mu)
    X, y = np.zeros((1, 1)), np.zeros(1)
    near = _SexticWell([0.05, 0.2])
    escape = sp.saddle_escape(near, near.parameter_vector(), 10.0, optimiser, X, y)
    centre = float(escape.theta[0])
    x = np.abs(_well_iteration(0.05, eta, mu) - centre)
    assert escape.ended == "exit"
    # to L-BFGS's default gradient tolerance, 1e-5: the curvature there is 4κ = 1, so 1e-5 in the distance
    assert escape.learned == pytest.approx(_SexticWell.kappa ** 0.25 - centre, abs=1e-5)
    exit_ = 0.5 * (abs(0.05 - centre) + escape.learned)
    assert escape.exit == pytest.approx(exit_, rel=1e-12)
    j = int(np.flatnonzero(x >= exit_)[0])
    assert escape.exit_step == pytest.approx(10 + j - 1 + (exit_ - x[j - 1]) / (x[j] - x[j - 1]), **tolerance)
    end = 10 + int(np.flatnonzero(x >= sp.LINEAR_FRACTION * escape.top)[0])
    assert escape.end_step == end if not modelled else abs(escape.end_step - end) <= 1
    p = sp.saddle_transition(escape, _NoShock(), optimiser, 1)
    assert p.step == escape.exit_step and p.method == "update_rule" and p.d_exit == escape.exit


@pytest.mark.parametrize("name, eta, mu", [("gd", 0.1, 0.0), ("nesterov", 0.02, 0.9)])
def test_a_long_plateau_is_crossed_on_the_first_order_model_at_a_fraction_of_the_gradients(name, eta, mu, monkeypatch):
    """From θ_S = (1e-12, 0.2), about 1100 steps of the linear region: the escape with the plateau's stretches run on
    the gradient's first-order model about θ* gives the exit step of the escape run on the network at every step to
    ``LINEAR_TOLERANCE`` (relative), in under a fifth of the rule's gradients (the learned end's L-BFGS, the same
    on both, not counted)."""
    optimiser = Optimiser(np.full(6000, eta), name, mu)
    X, y = np.zeros((1, 1)), np.zeros(1)
    counts, steps = [], []
    for modelled in (False, True):
        with monkeypatch.context() as m:
            if not modelled:
                m.setattr(sp, "MIN_STRETCH", 10 ** 9)
            calls, following = [0], [False]
            evaluate, follow, learned_end = sp.NetworkLoss._evaluate, sp.follow_escape, sp._learned_end

            def counted(self, theta):
                calls[0] += following[0]
                return evaluate(self, theta)

            def within(fn, flag):
                def wrapped(*args, **kwargs):
                    before, following[0] = following[0], flag
                    try:
                        return fn(*args, **kwargs)
                    finally:
                        following[0] = before
                return wrapped

            m.setattr(sp.NetworkLoss, "_evaluate", counted)
            m.setattr(sp, "follow_escape", within(follow, True))
            m.setattr(sp, "_learned_end", within(learned_end, False))
            near = _SexticWell([1e-12, 0.2])
            escape = sp.saddle_escape(near, near.parameter_vector(), 10.0, optimiser, X, y)
        assert escape.ended == "exit"
        counts.append(calls[0])
        steps.append(escape.exit_step)
    assert steps[1] == pytest.approx(steps[0], rel=sp.LINEAR_TOLERANCE)
    assert steps[0] > 300
    assert counts[1] < 0.2 * counts[0], counts


class _NoShock:
    """A chart's shock that formed none (γ* inf), for the transition's fields."""

    gamma_star, location, strength, nu = math.inf, 0.0, 0.0, 0.0


@pytest.mark.parametrize("modelled", [False, True])
def test_an_escape_still_on_the_plateau_at_the_horizon_is_extrapolated_past_it(modelled, monkeypatch):
    """With the run ending 20 steps after θ_S, the iterate is still in the linear region: the predicted step is the
    horizon plus the saddle's linear growth (1 + ηκ a step) from the last iterate to half way towards the line's
    minimum, beyond the run."""
    tolerance = _exact_or_modelled(modelled, monkeypatch)
    tolerance = dict(rel=1e-9) if not modelled else tolerance
    eta, horizon = 0.1, 30
    optimiser = Optimiser(np.full(horizon, eta))
    X, y = np.zeros((1, 1)), np.zeros(1)
    near = _SexticWell([0.05, 0.2])
    escape = sp.saddle_escape(near, near.parameter_vector(), 10.0, optimiser, X, y)
    centre = float(escape.theta[0])
    x_last = abs(_well_iteration(0.05, eta, steps=horizon - 10)[-1] - centre)
    kappa = float(escape.rates.max())
    assert escape.ended == "horizon" and math.isnan(escape.learned)
    exit_ = 0.5 * (abs(0.05 - centre) + escape.line_minimum)
    expected = horizon + math.log(exit_ / x_last) / math.log1p(eta * kappa)
    assert escape.exit_step == pytest.approx(expected, **tolerance) and escape.exit_step > horizon


def _readout_committee(d=6, n=256, seed=0):
    data = committee_teacher(n, d, 3, seed=seed)
    model = models.build(name="mlp", input_dim=d, width=3, activation="tanh", bias=False, init_scale=0.3, seed=seed)
    return model, data


def test_the_unstable_directions_are_eigenvectors_of_the_hessian_dense_and_lanczos_alike(monkeypatch):
    """At random weights of a tanh committee with its readout, the directions returned are eigenvectors of the
    finite-difference Hessian (the dense path) with eigenvalue −κ, every κ at least FAST of the fastest; the Lanczos
    path (DENSE = 0) finds the same rates."""
    model, data = _readout_committee()
    loss = sp.NetworkLoss(model, data.X, data.y)
    theta = np.zeros(model.num_parameters)   # the origin: the readout and the weights' bilinear saddle
    theta += 0.05 * np.random.default_rng(1).standard_normal(theta.size)
    vals, V, kappas = sp.negative_curvature(loss, theta)
    assert V.shape[1] >= 1 and np.all(kappas >= sp.FAST * kappas.max() - 1e-12)
    for j in range(V.shape[1]):
        Hv = loss.hv(theta, V[:, j])
        assert np.linalg.norm(Hv + kappas[j] * V[:, j]) <= 1e-5 * max(1.0, kappas[j])
    monkeypatch.setattr(sp, "DENSE", 0)
    _, _, lanczos = sp.negative_curvature(loss, theta)
    assert np.sort(lanczos) == pytest.approx(np.sort(kappas), rel=1e-5)


def test_frozen_parameters_carry_no_unstable_direction():
    model, data = _readout_committee()
    loss = sp.NetworkLoss(model, data.X, data.y, frozen=("a",) if "a" in model.params else (list(model.params)[-1],))
    theta = 0.05 * np.random.default_rng(1).standard_normal(model.num_parameters)
    _, V, _ = sp.negative_curvature(loss, theta)
    assert np.all(V[~loss.free] == 0.0)


def test_the_stationary_point_search_finds_the_saddle_it_starts_next_to():
    """The origin of the tanh committee (readout and weights zero) is a stationary point: from a small displacement
    the search brings |∇L| below STATIONARY of its start, back next to it."""
    model, data = _readout_committee()
    loss = sp.NetworkLoss(model, data.X, data.y)
    start = 1e-2 * np.random.default_rng(2).standard_normal(model.num_parameters)
    theta, residual = sp.stationary_point(loss, start)
    assert residual <= sp.STATIONARY
    assert np.linalg.norm(loss.grad(theta)) <= sp.STATIONARY * np.linalg.norm(loss.grad(start))
    assert np.linalg.norm(theta) < np.linalg.norm(start)


def test_the_saddle_charts_strength_is_the_distance_in_the_span_of_the_unstable_directions():
    """The saddle geometry (shockflow/geometry/saddle.py): on its line the strength is |x|; off it, |Vᵀ(θ − θ*)|, the
    same for a point rotated within the span of V (a degenerate group of unstable directions); a direction outside
    the span is refused."""
    from shockflow import geometry
    from shockflow.geometry import GeometryError

    model, data = _readout_committee()
    n = model.num_parameters
    Q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((n, 3)))
    origin = np.random.default_rng(4).standard_normal(n)
    u = Q @ np.array([0.6, 0.8, 0.0])
    geo = geometry.build("saddle", model=model, directions=u[None, :], origin=origin, basis=Q.T, extent=2.0)
    x = np.array([[-0.7], [0.2], [1.1]])
    assert geo.function_strength_at(x, data.X) == pytest.approx(np.abs(x[:, 0]), rel=1e-12)
    other = origin + Q @ np.array([0.0, 0.3, -0.4]) + 0.5 * (np.eye(n)[0] - Q @ (Q.T @ np.eye(n)[0]))
    params = {k: v for k, v in zip(model.params, np.split(other, np.cumsum([v.size for v in model.params.values()])[:-1]))}
    params = {k: v.reshape(model.params[k].shape) for k, v in params.items()}
    assert geo.function_strength(params, data.X) == pytest.approx(0.5, rel=1e-12)
    with pytest.raises(GeometryError, match="span"):
        geometry.build("saddle", model=model, directions=np.eye(n)[:1], origin=origin, basis=Q.T)
    # a line through another point of the plateau (where the escape leaves the linear region): the strength is
    # still measured from θ*
    off = 0.5 * (np.eye(n)[1] - Q @ (Q.T @ np.eye(n)[1]))   # outside the span of V
    moved = geometry.build("saddle", model=model, directions=u[None, :], origin=origin + off, centre=origin,
                           basis=Q.T, extent=2.0)
    assert moved.function_strength_at(x, data.X) == pytest.approx(np.abs(x[:, 0]), rel=1e-12)
    assert moved.function_strength(params, data.X) == pytest.approx(0.5, rel=1e-12)
    line = {k: v[0] for k, v in moved.section(np.array([[0.3]])).items()}
    point = np.concatenate([np.ravel(line[k]) for k in model.params])
    assert moved.function_strength(line, data.X) == pytest.approx(0.3, rel=1e-12)
    assert np.allclose(point, origin + off + 0.3 * u)
    with pytest.raises(GeometryError, match="centre"):   # the line's point displaced along V: refused
        geometry.build("saddle", model=model, directions=u[None, :], origin=origin + Q[:, 2], centre=origin,
                       basis=Q.T)


def test_a_chain_that_ends_at_a_minimum_gets_no_chart(tmp_path):
    """two-layer-staircase: the chain's last saddle (every mode learned) has no unstable direction: no saddle chart,
    the prediction is the chain's (source "charts")."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    out = run_prediction_case(load_case("two-layer-staircase"),
                              RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    assert sp.LABEL not in [c.label for c in out.stage.extraction.charts] and out.stage.source == "charts"
    assert out.comparison.recall == 1.0


def _run(case_name, seed, tmp_path):
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    case = load_case(case_name, [f"seed={seed}"])
    return case, run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))


def _second_stage(out):
    """``(predicted step, the chart's truth, the teacher-free specialisation's step, the W snapshots)`` of the saddle
    chart of a run, the snapshots read from the run's own training log."""
    from shockflow.logs import read_training_log

    snapshots = read_training_log(out.log_file).snapshots
    W = np.asarray(snapshots["W"])
    step, _ = specialisation_step(np.asarray(snapshots["step"]), W)
    saddle = {t.chart: t.step for t in out.truth.transitions}[sp.LABEL]
    return {p.chart: p.step for p in out.stage.predicted}[sp.LABEL], saddle, step, W


@pytest.mark.slow
def test_the_committee_with_a_trainable_readout_has_its_specialisation_charted(tmp_path):
    """committee-tanh-readout (tanh K = 3 with its readout, on a 3-unit tanh teacher), seed 0: the origin's mode r0,
    then the chart of the chain's last saddle (four unstable directions at rates 0.097-0.112).  Measured (2 cores,
    load 0.5-1): 163.0 against the chart's truth 165.7 (−1.6 %), the run's teacher-free specialisation half way at
    155.8 (+4.6 %); before this chart the second stage was an uncharted loss drop (211.9), a miss: recall 1/2,
    median 52 %."""
    _, out = _run("committee-tanh-readout", 0, tmp_path)
    c = out.comparison
    assert [p.chart for p in out.stage.predicted] == ["r0", sp.LABEL] and out.stage.source == "saddle"
    assert not [t for t in out.truth.transitions if t.chart == UNCHARTED]   # the second stage is the chart's
    assert c.recall == 1.0 and c.median_relative_error <= 0.1
    predicted, saddle, step, _ = _second_stage(out)
    assert abs(predicted / saddle - 1) <= 0.15
    assert abs(math.log(predicted / step)) < math.log(1.3)      # against the teacher-free truth too


@pytest.mark.slow
def test_the_nonlinear_teachers_second_stage_is_charted(tmp_path):
    """mlp-tanh-nonlinear-teacher (tanh 20 -> 8 -> 1 on a 3-unit tanh committee), seed 0: r0, then the chart of the
    chain's last saddle (six unstable directions at rates 0.060-0.096).  Measured (load 0.5-1): 376.2 against the
    chart's truth 453.8 (−17.1 %); the teacher-free specialisation 469.8 (−19.9 %).  Before the learned end (the
    exit half way to the line's minimum): 360.3 (−20.6 %); before the chart: an uncharted drop, recall 1/2,
    median 51 %."""
    _, out = _run("mlp-tanh-nonlinear-teacher", 0, tmp_path)
    c = out.comparison
    assert [p.chart for p in out.stage.predicted] == ["r0", sp.LABEL]
    assert not [t for t in out.truth.transitions if t.chart == UNCHARTED]
    assert c.recall == 1.0 and c.median_relative_error <= 0.10
    predicted, saddle, step, W = _second_stage(out)
    assert abs(predicted / saddle - 1) <= 0.2
    assert specialisation(W)[-1] > 0.4 and abs(math.log(predicted / step)) < math.log(1.3)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_the_nonlinear_teacher_meets_the_bar_at_other_seeds(seed, tmp_path):
    """Seeds 1 and 2 (measured: 408.8 / 390.2 against 442.0 / 435.7, −7.5 / −10.4 %; median 5.0 / 6.4 %; before the
    learned end 12.2 / 11.8 %, a strict xfail)."""
    _, out = _run("mlp-tanh-nonlinear-teacher", seed, tmp_path)
    assert out.comparison.recall == 1.0 and out.comparison.median_relative_error <= 0.10
    predicted, saddle, _, _ = _second_stage(out)
    assert abs(predicted / saddle - 1) <= 0.15


def test_lanczos_that_does_not_converge_is_the_saddle_charts_abstention_not_the_runs_failure(monkeypatch):
    # a linear net's last saddle (every mode learned) is a minimum with a cluster of zero eigenvalues (its hidden
    # rotations): ARPACK ran 10881 iterations and raised ArpackNoConvergence, which ended the run with exit 1 and
    # lost every chart's prediction (linear2, input_dim 24 to 64)
    import scipy.sparse.linalg as sla

    from shockflow import models
    from shockflow.prediction.saddle_plateau import NetworkLoss, SaddlePlateauError, negative_curvature

    monkeypatch.setattr(sp, "DENSE", 0)                     # the Lanczos path
    net = models.build("linear2", input_dim=40, hidden=12, output_dim=2, init_scale=0.1, seed=0)
    X = np.random.default_rng(0).standard_normal((64, 40))
    loss = NetworkLoss(net, X, X[:, :2])

    def stuck(*args, **kwargs):
        raise sla.ArpackNoConvergence("ARPACK error -1: No convergence", np.zeros(0), np.zeros((0, 0)))

    monkeypatch.setattr(sla, "eigsh", stuck)
    with pytest.raises(SaddlePlateauError, match="Lanczos.*No convergence"):
        negative_curvature(loss, net.parameter_vector())


def test_lanczos_stops_within_its_budget_of_hessian_vector_products_and_the_dense_path_takes_its_place_below_dense(
        monkeypatch):
    # a 16 -> 20 -> 6 linear net at its last saddle (440 parameters, a cluster of zero eigenvalues: the hidden
    # rotations): Lanczos took 49 334 products (35 s) and did not converge; the dense Hessian takes 440
    from shockflow import models

    net = models.build("linear2", input_dim=16, hidden=20, output_dim=6, init_scale=0.1, seed=0)
    X = np.random.default_rng(0).standard_normal((256, 16))
    loss = sp.NetworkLoss(net, X, X[:, :6] @ np.diag([6.0, 4.0, 3.0, 2.0, 1.2, 0.7]))
    calls = []
    hv = loss.hv
    monkeypatch.setattr(loss, "hv", lambda theta, v: calls.append(1) or hv(theta, v))
    p = net.num_parameters
    assert p <= sp.DENSE
    vals, _, _ = sp.negative_curvature(loss, net.parameter_vector())
    assert len(calls) == p
    H = np.column_stack([hv(net.parameter_vector(), e) for e in np.eye(p)])
    assert vals == pytest.approx(np.linalg.eigvalsh(0.5 * (H + H.T))[:vals.size], abs=1e-10)
    monkeypatch.setattr(sp, "DENSE", 0)
    calls.clear()
    try:
        sp.negative_curvature(loss, net.parameter_vector())
    except sp.SaddlePlateauError:
        pass                                                # did not converge within the budget: an abstention
    ncv = max(2 * sp.EIGENPAIRS + 1, 20)
    # the SA search's budget (its last iteration may take a full basis) and the largest |eigenvalue|'s search
    assert len(calls) <= sp.LANCZOS_PRODUCTS * p + ncv + 10 * ncv


def test_a_last_saddle_whose_escape_cannot_be_followed_abstains_and_the_charts_before_it_keep_their_predictions(
        tmp_path, capsys, monkeypatch):
    # a gelu MLP 20 -> 32 -> 5: the line of the last saddle's unstable direction had no minimum, and the run failed
    # with exit 1 after 43-57 s, every chart's prediction lost
    import json

    from shockflow.cli import main

    def no_escape(*args, **kwargs):
        raise sp.SaddlePlateauError("the escape from the chain's last saddle: the loss falls without a minimum")

    monkeypatch.setattr(sp, "saddle_escape", no_escape)
    assert main(["forecast", "committee-tanh-readout", "--out", str(tmp_path), "--json", "--no-figures"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["chart"] for p in out["predicted"]] == ["r0"]
    (abstained,) = out["abstained"]
    assert abstained["chart"] == "saddle" and "without a minimum" in abstained["reason"]


def test_a_last_saddle_without_a_stationary_point_next_to_it_abstains_with_the_residual(tmp_path, capsys):
    # committee-tanh-readout at seed 8: the search for the stationary point next to the chain's last saddle, Newton's
    # steps included, stops at a residual of 0.0073 (the bound is 5e-3); a specialisation after it (the loss detector
    # sees a drop at step 373) was then missed with nothing in `abstained` to say why.  (Seed 6, this test's case
    # before Newton's steps, now reaches its saddle: test_a_specialisation_whose_stationary_point_...)
    import json

    from shockflow.cli import main

    assert main(["forecast", "committee-tanh-readout", "--seed", "8", "--out", str(tmp_path), "--json",
                 "--no-figures"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p["chart"] for p in out["predicted"]] == ["r0"]
    (abstained,) = out["abstained"]
    assert abstained["chart"] == "saddle" and "no stationary point next to it" in abstained["reason"]
    residual = float(abstained["reason"].split("norm down to ")[1].split(" ")[0])
    assert sp.STATIONARY < residual < 1.0


def test_a_last_saddle_that_sits_at_the_minimum_of_its_escape_line_abstains_instead_of_solving_a_box_of_no_width(
        tmp_path, capsys, monkeypatch):
    # deep-linear-4 with hidden widths 4 on 128 samples once put the chain's last saddle 0.101052 from the stationary
    # point next to it, at the minimum of the line it would escape along (0.101052 within 1e-9); the chart's box had a
    # width of 1.8e-9, its grid was not uniform in floating point, and the run failed (exit 1), every prediction lost.
    # The chain's steps have moved since (its escapes below the alignment radius), so the last saddle's chart is put
    # at its line's minimum here: it abstains, and the four charts before it keep their predictions
    import json
    from dataclasses import replace

    import shockflow.prediction.saddle_plateau as plateau
    from shockflow.cli import main

    real = plateau.saddle_extraction
    monkeypatch.setattr(plateau, "saddle_extraction", lambda *a, **k: replace(c := real(*a, **k), x_min=c.x0))
    assert main(["forecast", "deep-linear-4", "--seed", "1", "--set", "model.widths=[4,4,4]", "--set", "data.n=128",
                 "--out", str(tmp_path), "--json", "--no-figures"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(p["chart"] for p in out["predicted"]) == ["r0", "r1", "r2", "r3"]
    assert all(p["step"] is not None and p["step"] > 0 for p in out["predicted"])
    (abstained,) = out["abstained"]
    assert abstained["chart"] == "saddle" and "is the minimum of its line" in abstained["reason"]


def test_the_newton_polish_reaches_the_stationary_point_where_the_squared_gradient_search_stalls():
    """A saddle with curvatures 1e3 apart (a cubic term besides): from a point where |∇L| is above the bound
    ``STATIONARY`` of its start, the Levenberg–Marquardt steps of ``_newton_polish`` bring it below the bound,
    nearer the saddle (not to another stationary point)."""
    rng = np.random.default_rng(4)
    n = 12
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    lam = np.concatenate([[-2.0, -0.5], np.geomspace(1e-3, 1.0, n - 2)])
    H = (Q * lam) @ Q.T
    star = rng.normal(size=n)

    class Cubic:
        free = np.ones(n, dtype=bool)

        def grad(self, theta):
            d = theta - star
            return H @ d + 0.05 * d ** 2

        def hv(self, theta, v):
            return H @ v + 0.1 * (theta - star) * v

    loss = Cubic()
    start = star + 1e-1 * rng.normal(size=n)
    g0 = float(np.linalg.norm(loss.grad(start)))
    near = star + 0.03 * (start - star)
    assert float(np.linalg.norm(loss.grad(near))) / g0 > sp.STATIONARY       # where the first search stopped
    calls = [0]
    grad = loss.grad

    def counted(theta):
        calls[0] += 1
        return grad(theta)

    loss.grad = counted
    theta, res = sp._newton_polish(loss, near, g0)
    assert res <= sp.STATIONARY
    assert np.linalg.norm(theta - star) < np.linalg.norm(near - star)          # the same saddle, nearer
    # from the start itself, two steps: one dense Hessian (n gradients), then the secant update, not a second
    # Hessian (27 gradients with a Hessian a step, 15 now)
    calls[0] = 0
    _, res = sp._newton_polish(loss, start, g0)
    assert res <= sp.STATIONARY
    assert calls[0] < 2 * n + 1


def test_the_secant_update_is_symmetric_and_maps_the_step_to_the_gradients_change():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(6, 6))
    H = A + A.T
    s, y = rng.normal(size=6), rng.normal(size=6)
    H1 = sp._secant_update(H, s, y)
    np.testing.assert_allclose(H1, H1.T, atol=1e-13)
    np.testing.assert_allclose(H1 @ s, y, atol=1e-12)
    t = rng.normal(size=6)
    t -= (t @ s) / (s @ s) * s
    np.testing.assert_allclose(t @ H1 @ t, t @ H @ t, rtol=1e-12)            # unchanged across the step


class _Quadratic:
    """``∇L(θ) = H θ + b`` with gradient and Hessian–vector products counted (``calls``: gradients, two a product)."""

    def __init__(self, H, b):
        self.H, self.b, self.free, self.calls = H, b, np.ones(b.size, dtype=bool), 0

    def grad(self, theta):
        self.calls += 1
        return self.H @ theta + self.b

    def hv(self, theta, v):
        self.calls += 2
        return self.H @ v


def _spectrum(n, lowest, seed):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    return Q, np.concatenate([lowest, np.geomspace(1e-3 if len(lowest) == 1 else 1e-2, 1.0, n - len(lowest))])


def test_a_search_whose_residual_has_stopped_falling_ends_long_before_its_iterations_run_out(monkeypatch):
    """A loss that goes on falling along a flat direction (``H e = 0``, ``b = ε e``): no stationary point, ``|∇L| ≥ ε``,
    here 0.0076 of the start (above ``STATIONARY``, below ``PROGRESS``).  The search used to spend its
    ``STATIONARY_ITERATIONS`` on it (2591 gradients, 738 now); at the rate of its latter half it cannot reach the bound, and it
    stops with the same residual."""
    monkeypatch.setattr(sp, "POLISH_DENSE", 0)            # the search alone
    n = 20
    Q, lam = _spectrum(n, [-1.0, 0.0], seed=5)
    loss = _Quadratic((Q * lam) @ Q.T, 1e-2 * Q[:, 1])
    start = np.random.default_rng(1).normal(size=n)
    floor = 1e-2 / np.linalg.norm(loss.grad(start))
    assert sp.STATIONARY < floor < sp.PROGRESS
    loss.calls = 0
    _, residual = sp.stationary_point(loss, start)
    assert residual == pytest.approx(floor, rel=1e-3)
    assert loss.calls < 2 * sp.STATIONARY_ITERATIONS     # four gradients an iteration: under half of them


def test_a_slowly_converging_search_is_not_stopped_by_its_rate():
    """A saddle with curvatures 1e3 apart: L-BFGS on ½|∇L|² needs about 200 iterations, slower and slower, and still
    reaches the bound: the rate rule leaves it running."""
    n = 60
    Q, lam = _spectrum(n, [-1.0], seed=3)
    rng = np.random.default_rng(1)
    star = rng.normal(size=n)
    H = (Q * lam) @ Q.T
    loss = _Quadratic(H, -H @ star)
    _, residual = sp.stationary_point(loss, star + 0.3 * rng.normal(size=n))
    assert residual <= sp.STATIONARY
    assert loss.calls > 3 * sp.PROGRESS_ITERATIONS        # past the point where the rule is first asked


def test_the_rate_rule_projects_the_latter_half_of_the_search():
    """``_stalled``: from ``PROGRESS_ITERATIONS`` on, the residual's rate over the latter half of the iterations, kept
    up for the iterations left, must reach ``STATIONARY``."""
    k = sp.PROGRESS_ITERATIONS
    fast_then_flat = [0.5 ** (i + 1) for i in range(k // 2)] + [0.02] * (k - k // 2)
    assert sp._stalled([max(r, 0.02) for r in fast_then_flat])
    assert not sp._stalled(fast_then_flat[:k - 1])                          # not asked before PROGRESS_ITERATIONS
    steady = list(np.geomspace(1.0, 0.02, k))                              # ln(50)/k a step: reaches the bound
    assert not sp._stalled(steady)
    left = sp.STATIONARY_ITERATIONS - k
    slow = list(np.geomspace(1.0, 0.02, k // 2)) + list(0.02 * np.exp(-0.5 * np.log(4.0) / left * np.arange(1, k - k // 2 + 1)))
    assert sp._stalled(slow)                                               # half the rate it needs


@pytest.mark.parametrize("seed, overrides", [(6, []), (11, ["data.n=2048"])])
def test_a_specialisation_whose_stationary_point_the_first_search_stopped_short_of_is_charted(seed, overrides,
                                                                                              tmp_path):
    """``committee-tanh-readout`` at seed 6 (L-BFGS on ½|∇L|² stalled at 0.058 of the start, the bound 0.005) and at
    seed 11 on 2048 samples (0.0091): the specialisation abstained, a miss (recall 1/2).  Newton's steps from where
    it stopped reach the saddle: measured 111 against the truth's 121 (seed 6), 117 against 121 (seed 11)."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    out = run_prediction_case(load_case("committee-tanh-readout", [f"seed={seed}", *overrides]),
                              RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    assert [p.chart for p in out.stage.predicted] == ["r0", "saddle"]
    c = out.comparison
    assert c.truth == "parameters" and len(c.matches) == len(c.observed) == 2
    assert all(abs(m.relative_error) <= 0.10 for m in c.matches)
