"""The saddle chain's event loop (shockflow.prediction.saddle_chain) on landscapes written down by hand,
and on the default network with correlated inputs against its training run."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from shockflow.prediction.mapping import ChartShock, Optimiser, predict_transitions
from shockflow.prediction.saddle_chain import SaddleData, chain_transitions


@dataclass
class _Chart:
    label: str
    x0: float
    mirrored: bool = True


class _Landscape:
    """Saddles given as tables: ``curvature[active]`` and ``exits[active]`` per chart index; a saddle not in
    the table has the values of its longest listed prefix.  It does not relax: the chain sits at each saddle."""

    relaxes = False

    def __init__(self, shocks, curvature, exits=None, profiles=None, shares=None, strengths=None):
        self.shocks = shocks
        self.charts = [_Chart(s.label, s.x0) for s in shocks]
        self._curvature, self._exits, self._profiles = curvature, exits or {}, profiles or {}
        self._shares = shares or {}
        self._strengths = strengths or {}     # active -> {chart: share of its origin strength}; else 1

    def strength_share(self, here, k):
        return self._strengths.get(here.active, {}).get(k, 1.0)

    def saddle(self, active):
        waiting = [k for k in range(len(self.shocks)) if k not in active]
        prefix = next(active[:i] for i in range(len(active), -1, -1) if active[:i] in self._curvature)
        kappa = self._curvature[prefix]
        exits = self._exits.get(prefix, {})
        return SaddleData(active, {}, 0.0, {k: kappa[k] for k in waiting},
                          {k: exits.get(k, self.shocks[k].distance(self.shocks[k].x_min)) for k in waiting}, {},
                          self._profiles.get(active, {}), self._shares.get(active, {}))


def _shock(label, gamma, x0=1e-3, x_min=1.0):
    x = np.geomspace(x0, x_min, 50)   # a linear landscape up to its minimum: the log form's exit is the minimum
    return ChartShock(label=label, x0=x0, x_min=x_min, nu=0.0, mobility_at_ridge=1.0, gamma_star=gamma,
                      location=0.0, strength=1.0, escape_x=x, escape_rate=x / gamma)


@pytest.mark.parametrize("name, momentum", [("gd", 0.0), ("momentum", 0.9), ("nesterov", 0.9)])
def test_independent_modes_give_the_single_escape_prediction(name, momentum):
    shocks = [_shock("a", 2.0), _shock("b", 5.0), _shock("c", 11.0)]
    opt = Optimiser(np.full(4000, 0.05), name, momentum)
    first = predict_transitions(shocks, opt)
    by = {p.chart: p for p in first}
    first = [by[s.label] for s in shocks]
    land = _Landscape(shocks, {(): [0.5, 0.2, 1 / 11.0]})   # the same curvature at every saddle
    steps, saddle_of, saddles, _ = chain_transitions(land, first, opt)
    # gd: exact; with momentum the later saddles use the settled root instead of the transient from rest
    assert steps == pytest.approx([p.step for p in first], rel=1e-9 if name == "gd" else 1e-3)
    assert saddle_of == [0, 1, 2] and [s.active for s in saddles] == [(), ("a",), ("a", "b"), ("a", "b", "c")]


def test_a_waiting_mode_accumulates_the_rate_of_each_saddle_it_sits_at():
    """Chart b grows at κ = 0.2 while a escapes, then at κ = 0.5 (gd: ln(1 + ηκ) per step)."""
    eta = 0.05
    shocks = [_shock("a", 2.0), _shock("b", 5.0)]
    opt = Optimiser(np.full(4000, eta))
    first = predict_transitions(shocks, opt)
    first = sorted(first, key=lambda p: p.chart)
    land = _Landscape(shocks, {(): [0.5, 0.2], (0,): [0.5, 0.5]})
    steps, _, _, _ = chain_transitions(land, first, opt)
    need = math.log(1.0 / 1e-3)
    n_a = need / math.log1p(eta * 0.5)
    covered = n_a * math.log1p(eta * 0.2)
    assert steps[0] == pytest.approx(n_a, rel=1e-9)
    assert steps[1] == pytest.approx(n_a + (need - covered) / math.log1p(eta * 0.5), rel=1e-9)


def test_a_mode_pushed_back_at_the_saddle_does_not_escape_and_a_moved_exit_counts():
    eta = 0.05
    shocks = [_shock("a", 2.0), _shock("b", 5.0), _shock("c", 8.0)]
    opt = Optimiser(np.full(2000, eta))
    first = sorted(predict_transitions(shocks, opt), key=lambda p: p.chart)
    # at the saddle of a: b is pushed back (κ < 0) and c's minimum moves twice as far from the ridge
    land = _Landscape(shocks, {(): [0.5, 0.2, 0.125], (0,): [0.5, -0.3, 0.125]}, exits={(0,): {2: 2.0}})
    steps, saddle_of, saddles, _ = chain_transitions(land, first, opt)
    assert math.isinf(steps[1])
    n_c = (math.log(2.0 / 1e-3)) / math.log1p(eta * 0.125)
    assert steps[2] == pytest.approx(n_c, rel=1e-9)
    assert saddles[1].rates["b"] == pytest.approx(-0.3 * 5.0 * 0.2, rel=1e-12)   # κ(S)/κ(∅) · 1/γ*


def test_a_mode_whose_minimum_a_saddle_moves_onto_its_ridge_does_not_escape_from_it():
    """At the saddle of a, chart b still curves upward (κ > 0) but its section's minimum is the ridge itself (exit
    distance 0): b has nothing left to learn there.  The chain neither takes log 0 nor lets b escape; c, whose exit
    the saddle leaves alone, escapes on its first-pass schedule."""
    eta = 0.05
    shocks = [_shock("a", 2.0), _shock("b", 5.0), _shock("c", 8.0)]
    opt = Optimiser(np.full(2000, eta))
    first = sorted(predict_transitions(shocks, opt), key=lambda p: p.chart)
    kappa = [0.5, 0.2, 0.125]
    land = _Landscape(shocks, {(): kappa, (0,): kappa}, exits={(0,): {1: 0.0}})
    steps, saddle_of, saddles, _ = chain_transitions(land, first, opt)
    assert steps[0] == pytest.approx(first[0].step, rel=1e-9)
    assert math.isinf(steps[1])
    assert steps[2] == pytest.approx(math.log(1.0 / 1e-3) / math.log1p(eta * 0.125), rel=1e-9)
    assert saddles[1].log_exit["b"] == -math.inf and math.isfinite(saddles[1].log_exit["c"])


@pytest.mark.parametrize("share, escapes", [(0.01, False), (-0.2, False), (0.6, True)])
def test_a_mode_forced_out_of_a_stable_ridge_escapes_only_if_its_minimum_holds_half_its_strength(share, escapes):
    """At the saddle of a, chart b's ridge is stable (κ < 0) and the learned mode's cross terms put its minimum
    closer to the ridge than b already is (exit 1e-4 < d_0 = 1e-3): b relaxes there.  Holding 1 % (or −20 %) of the
    strength its origin minimum holds, that is no transition and b waits (Landscape.strength_share); holding 60 % it
    is learned at once."""
    eta = 0.05
    shocks = [_shock("a", 2.0), _shock("b", 5.0)]
    opt = Optimiser(np.full(2000, eta))
    first = sorted(predict_transitions(shocks, opt), key=lambda p: p.chart)
    land = _Landscape(shocks, {(): [0.5, 0.2], (0,): [0.5, -0.3]}, exits={(0,): {1: 1e-4}},
                      strengths={(0,): {1: share}})
    steps, _, _, _ = chain_transitions(land, first, opt)
    assert steps[0] == pytest.approx(first[0].step, rel=1e-9)
    if escapes:
        assert steps[1] == pytest.approx(steps[0], rel=1e-12)
    else:
        assert math.isinf(steps[1])


def test_the_share_of_a_waiting_split_held_by_the_learned_units_is_lost_once():
    """Chart c keeps a quarter of its unit split orthogonal to a's at the saddle of a and an eighth at the saddle of
    a and b: its log-distance loses ln 4 on arriving at the first and ln 2 more at the second (gd, κ fixed)."""
    eta = 0.05
    shocks = [_shock("a", 2.0), _shock("b", 5.0), _shock("c", 8.0)]
    opt = Optimiser(np.full(2000, eta))
    first = sorted(predict_transitions(shocks, opt), key=lambda p: p.chart)
    kappa = [0.5, 0.2, 0.125]
    land = _Landscape(shocks, {(): kappa}, shares={(0,): {2: math.log(0.25)}, (0, 1): {2: math.log(0.125)}})
    steps, _, _, _ = chain_transitions(land, first, opt)
    need = math.log(1.0 / 1e-3)
    per = [math.log1p(eta * k) for k in kappa]
    assert steps[0] == pytest.approx(need / per[0], rel=1e-9)
    assert steps[1] == pytest.approx(need / per[1], rel=1e-9)     # b's split is all its own
    assert steps[2] == pytest.approx((need + math.log(8.0)) / per[2], rel=1e-9)


def test_escape_integral_charts_move_along_each_saddles_profile():
    """Two escape-integral charts with rate |a L̄'| = k x from 1e-6 to 1: a fast (k = 1); b at k = 0.1·s on the
    origin's profile and k = 0.1 once a is learned.  b covers ln(1e6)·0.1·s of its log-distance while a
    escapes, the rest at 0.1 (the former head start, now one step of the chain)."""
    x = np.geomspace(1e-6, 1.0, 4000)
    common = dict(x_min=1.2, nu=0.0, mobility_at_ridge=0.0, gamma_star=math.inf, location=0.0, strength=0.0, x0=1e-6)
    L = math.log(1e6)
    for scale in (1.0, 3.0):
        a = ChartShock(label="a", escape_x=x, escape_rate=1.0 * x, **common)
        b = ChartShock(label="b", escape_x=x, escape_rate=scale * 0.1 * x, **common)
        opt = Optimiser(np.full(10, 0.01))
        first = sorted(predict_transitions([a, b], opt), key=lambda p: p.chart)
        land = _Landscape([a, b], {(): [0.0, 0.0]}, profiles={(0,): {1: (x, 0.1 * x)}})
        steps, _, _, _ = chain_transitions(land, first, opt, horizon_factor=1e5)
        assert steps[0] * 0.01 == pytest.approx(L, rel=1e-4)
        covered = L * scale * 0.1
        assert steps[1] * 0.01 == pytest.approx(L + (L - covered) / 0.1, rel=1e-3)


# -- against training runs ------------------------------------------------------------------------------

def _run(name, overrides, tmp_path):
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    return run_prediction_case(load_case(name, overrides=overrides),
                               RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))


SMALL = ["data.n=2048", "data.d=3", "model.input_dim=3", "data.teacher_weights=[8.0, 3.0, 1.0]", "training.steps=2000",
         "extraction.cells=401"]


def test_correlated_inputs_three_modes_against_the_parameter_truth(tmp_path):
    """ρ = 0.3, three modes at reduced size: every mode within 10 % of its half-learned step with the chain;
    the chart of the slowest mode escapes from the saddle of the other two, and its rate there is lower
    than at the origin (the faster modes took part of its signal).  Without the chain (every chart
    escaping from the origin, extraction.sequential = false) the slowest mode comes far too early."""
    out = _run("diagonal-correlated", SMALL, tmp_path / "chain")
    c = out.comparison
    assert c.truth == "parameters" and c.recall == 1.0 and c.precision == 1.0
    assert max(m.relative_error for m in c.matches) <= 0.10
    last = max(out.stage.predicted, key=lambda p: p.step)
    assert last.saddle == 2
    origin, final = out.stage.saddles[0], out.stage.saddles[2]
    assert 0 < final.rates[last.chart] < 0.8 * origin.rates[last.chart]
    # the loss level of each saddle falls, and the last is the least-squares fit on every mode
    losses = [s.loss for s in out.stage.saddles]
    assert all(b < a for a, b in zip(losses, losses[1:])) and losses[-1] < 1e-3
    true = {t.chart: t.step for t in out.truth.transitions}
    alone = _run("diagonal-correlated", SMALL + ["extraction.sequential=false"], tmp_path / "alone")
    assert alone.stage.saddles == ()
    step = {p.chart: p.step for p in alone.stage.predicted}[last.chart]
    assert step < 0.7 * true[last.chart]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["diagonal-correlated", "diagonal-noncommuting"])
def test_saddle_chain_suite_cases_recall_and_median(name, tmp_path):
    """The issue's bar on the full-size suite cases: recall >= 90 %, median relative error <= 10 % over all
    true transitions (measured: correlated +2.0/+0.9/-0.8/-3.2 %, non-commuting +1.4/+0.8/-2.6/+1.1 %)."""
    out = _run(name, [], tmp_path)
    c = out.comparison
    assert c.truth == "parameters" and len(c.observed) == 4
    assert c.recall >= 0.9 and c.median_relative_error_all <= 0.10
    assert max(m.relative_error for m in c.matches) <= 0.10


# -- the saddles' loss levels -------------------------------------------------------------------------------

def _landscape(name, overrides, joint):
    from shockflow.cases import load_case
    from shockflow.prediction.saddle_chain import Landscape
    from shockflow.runners.prediction import predict_from_start
    from shockflow.runners.training import build_model_and_data

    case = load_case(name, overrides=overrides)
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    stage = predict_from_start(case, model.copy(), data, case.settings.training.train_settings(case.seed or 0))
    ex = stage.extraction
    land = Landscape(model, "auto", ex.geometry_kwargs, ex.chart_key, ex, stage.shocks, data.X, data.y, joint=joint)
    land.predicted = sorted(p.step for p in stage.predicted)
    return land, data


def _rank_k_levels(X, y, K):
    """The loss of the best rank-k linear map (the saddles of a two-layer linear net): Eckart–Young on
    B Σ^{1/2}, B the least-squares map, Σ the sample input covariance."""
    n = X.shape[0]
    B = np.linalg.lstsq(X, y, rcond=None)[0].T
    w, V = np.linalg.eigh(X.T @ X / n)
    R = (V * np.sqrt(w)) @ V.T
    U, s, Vt = np.linalg.svd(B @ R)
    out = []
    for k in range(1, K + 1):
        P = (U[:, :k] * s[:k]) @ Vt[:k] @ np.linalg.inv(R)
        out.append(0.5 * float(np.mean(np.sum((y - X @ P.T) ** 2, axis=1))))
    return out


def test_a_waiting_modes_rate_at_a_saddle_is_the_curvature_of_its_section_not_its_slope():
    """At a saddle of the chain a waiting mode's section has a slope at its ridge (the learned modes' cross terms):
    the rate is the curvature, read on the signed line through the ridge (both sides, every power up to r⁴ fitted);
    a central stencil on the mirrored chart's |r| took the slope for curvature (0.350 here, against 0.604)."""
    from shockflow.prediction.saddle_plateau import NetworkLoss

    land, data = _landscape("mlp-tanh-teacher", ["seed=2", "data.n=1024", "training.steps=800"], False)
    K = len(land.charts)
    active = tuple(range(K - 1))
    k = K - 1
    saddle = land.saddle(active)
    geo = land._geo(saddle.params, k, active)
    h = land._stencil[k]
    r = np.linspace(-2.0 * h, 2.0 * h, 41)
    fit = np.polyfit(r, NetworkLoss(land.model, data.X, data.y).along(geo._base, geo._direction, r), 4)
    kappa = -2.0 * fit[2]          # the chart's metric is 1 (|dθ/dr| = 1)
    assert abs(fit[3]) * h > 0.1 * kappa * h ** 2        # the slope is there: a stencil on |r| would be off by far
    assert abs(land._curvature(geo, k) / kappa - 1.0) <= 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [["seed=2"], ["data.seed=3"]])
def test_the_tanh_teachers_modes_are_all_matched_at_other_seeds(overrides, tmp_path):
    """``mlp-tanh-teacher`` away from its own seed meets the suite's bar with every mode matched.  Measured: 5/5,
    1.1 % and 1.1 % (the fifth mode −1.1 and +1.8 %; +25.7 and +17.3 % on its section, before the unit subspace).
    It was 4/5 at both while the chain read a waiting mode's rate from a stencil on |r| (the fifth mode at 1116 and
    913 against 445 and 434)."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    out = run_prediction_case(load_case("mlp-tanh-teacher", overrides),
                              RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    c = out.comparison
    assert c.truth == "parameters" and len(c.matches) == len(c.observed) == 5
    assert c.median_relative_error <= 0.10
    last = max(c.matches, key=lambda m: m.observed_step)           # the mode that waits at every saddle
    assert abs(last.relative_error) <= 0.10


def test_a_waiting_mode_in_its_unit_subspace_follows_gradient_descent_about_the_forced_stationary_point():
    """``_unit_growth``'s ln|c| at every step is gradient descent's own on ``L = L_0 + bᵀc − ½ cᵀAc`` (A with
    unstable and stable directions, a force b): ``c ← c − η (b − A c)``."""
    from shockflow.prediction.saddle_chain import _unit_growth

    rng = np.random.default_rng(3)
    m, eta, steps, t0 = 6, 0.05, 400, 7.0
    V = np.linalg.qr(rng.normal(size=(m, m)))[0]
    lam = np.array([1.1, 0.8, 0.3, -0.2, -0.9, -2.0])
    b = rng.normal(size=m) * 1e-2
    c = rng.normal(size=m) * 1e-3
    cum, X, i0, rate = _unit_growth((lam, V, V.T @ b), c, 1.0, Optimiser(np.full(steps, eta)), t0, steps)
    A = (V * lam) @ V.T
    x, expected = c.copy(), []
    for _ in range(steps - int(t0)):
        expected.append(np.log(np.linalg.norm(x)))
        x = x - eta * (b - A @ x)
    np.testing.assert_allclose(cum[int(t0):steps], expected, rtol=0, atol=1e-10)
    assert rate == pytest.approx(float(c @ A @ c / (c @ c)), rel=1e-12)
    np.testing.assert_allclose(V @ X[0], c, atol=1e-15)


LINEAR2 = ["data.n=1024", "training.steps=600", "extraction.cells=401"]


def test_the_joint_saddles_of_a_two_layer_linear_net_are_its_rank_k_fits():
    """linear2 on a rotated teacher, sample (not whitened) inputs: the saddle with k modes learned is the best
    rank-k fit, a known constrained minimiser.  The joint minimiser over the active modes' free parameters
    reaches its loss within 2 % and within a tenth of the gap the sections leave (measured: +0.07, +0.4,
    +1.8 %, +0.03 %; the waiting modes are held at their start, so the learned ones cannot rotate into their
    directions); the charts' 1-D sections (block coordinate descent, every mode along the origin's fixed
    direction) stay well above it (+3, +14, +61 %, and 0.31 for 0.0002 at the bottom)."""
    joint, data = _landscape("linear2-momentum", LINEAR2, True)
    sections, _ = _landscape("linear2-momentum", LINEAR2, False)
    K = len(joint.charts)
    truth = _rank_k_levels(data.X, data.y, K)
    for k in range(1, K + 1):
        active = tuple(range(k))
        level, block = joint.saddle(active).loss, sections.saddle(active).loss
        assert truth[k - 1] * (1 - 1e-9) <= level <= truth[k - 1] + 0.1 * (block - truth[k - 1])
        assert level == pytest.approx(truth[k - 1], rel=0.02)
    assert sections.saddle(tuple(range(K - 1))).loss > 1.3 * truth[K - 2]
    assert sections.saddle(tuple(range(K))).loss > 100 * truth[K - 1]
    # the waiting modes are held: their components are those of the start, in every unit
    from shockflow.models.units import unit_layout

    layout = unit_layout(joint.model)
    E = np.asarray(joint.kwargs["modes"])
    W0 = layout.unit_matrix(joint.model.parameter_vector())
    ref = joint.model.copy()
    for key, v in joint.saddle((0,)).params.items():
        ref.params[key][...] = v
    W = layout.unit_matrix(ref.parameter_vector())
    assert np.allclose(E[:, 1:].T @ W, E[:, 1:].T @ W0, atol=1e-12)


# -- the minimum search -----------------------------------------------------------------------------------

@pytest.mark.parametrize("f, a, b, x_true", [
    (lambda x: 0.5 * (x ** 2 / 4 - 3.0) ** 2, 3.3, 3.6, 2.0 * math.sqrt(3.0)),   # a double well, 2 scan cells
    (lambda x: np.cosh(x - 0.3) + 0.1 * (x - 0.3) ** 4, -1.0, 2.0, 0.3),
    (lambda x: (x - 1e-3) ** 2 * (1 + x), 0.0, 0.01, 1e-3),
])
def test_the_batched_minimum_search_agrees_with_brent(f, a, b, x_true):
    """refine_minimum (6 batched calls of 5 points) against scipy's bounded Brent (one call per point) at the
    tolerance the chain used, on brackets like the chain's (two cells of its 33-point scan): the same
    minimiser to 1e-7 of the bracket, values within rounding."""
    from scipy.optimize import minimize_scalar

    from shockflow.prediction.saddle_chain import refine_minimum

    calls = []

    def batched(x):
        calls.append(np.size(x))
        return f(np.asarray(x))

    x, value = refine_minimum(batched, a, b)
    ref = minimize_scalar(lambda t: float(f(np.array(t))), bounds=(a, b), method="bounded",
                          options={"xatol": 1e-9 * max(abs(b), 1e-300)})
    assert abs(x - x_true) <= 1e-7 * (b - a) and abs(ref.x - x_true) <= 1e-7 * (b - a)
    assert value <= float(f(np.array(x_true))) + 1e-12 * max(abs(value), 1e-300) + 1e-15
    assert len(calls) <= 6 < ref.nfev


def test_the_chain_on_batched_calls_gives_the_brent_chains_steps(tmp_path, monkeypatch):
    """The saddle chain of the correlated diagonal net with the batched minimum search and its warm starts, and
    with the bounded Brent search from a full scan every time that it replaced (patched back in): the same
    steps to 1e-6 and the same saddle levels, in fewer calls of the chart loss."""
    from scipy.optimize import minimize_scalar

    import shockflow.prediction.saddle_chain as sc
    from shockflow.geometry.base import Geometry

    counts = []
    original = Geometry.chart_loss

    def counted(self, *args, **kwargs):
        counts[-1] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Geometry, "chart_loss", counted)

    def brent(f, a, b, rounds=None):
        res = minimize_scalar(lambda x: float(f(np.array([x]))[0]), bounds=(a, b), method="bounded",
                              options={"xatol": 1e-9 * max(abs(b), 1e-300)})
        return float(res.x), float(res.fun)

    outs = []
    fast, warm = sc.refine_minimum, sc.Landscape._local_minimum
    for search, local in ((fast, warm), (brent, lambda *args: None)):   # the second: no warm starts
        monkeypatch.setattr(sc, "refine_minimum", search)
        monkeypatch.setattr(sc.Landscape, "_local_minimum", local)
        counts.append(0)
        outs.append(_run("diagonal-correlated", SMALL, tmp_path / search.__name__))
    fast, slow = outs
    assert [p.step for p in fast.stage.predicted] == pytest.approx([p.step for p in slow.stage.predicted], rel=1e-6)
    assert [s.loss for s in fast.stage.saddles] == pytest.approx([s.loss for s in slow.stage.saddles], rel=1e-6)
    assert counts[0] < counts[1]


def test_the_joint_saddles_levels_are_the_training_runs_plateaus():
    """The levels against a training run (read in this test only; the prediction never sees it): the plateau
    after three modes (the loss where it is flattest between the third and the fourth predicted transitions)
    and the final loss after four.  Measured at n = 1024: 0.50 against the run's 0.49 and 1.9e-4 against
    2.0e-4 (joint); the sections' 0.79 and 0.31."""
    from shockflow.cases import load_case
    from shockflow.runners.training import build_model_and_data
    from shockflow.training import train

    joint, data = _landscape("linear2-momentum", LINEAR2, True)
    sections, _ = _landscape("linear2-momentum", LINEAR2, False)
    case = load_case("linear2-momentum", overrides=LINEAR2)
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    record = train(model, data, case.settings.training.train_settings(case.seed or 0), log_path=None, quiet=True)
    steps, loss = np.asarray(record.series["step"]), np.asarray(record.series["loss"])
    p3, p4 = joint.predicted[2], joint.predicted[3]
    window = (steps > p3) & (steps < p4)
    speed = np.abs(np.gradient(np.log(loss), steps))
    plateau3 = float(loss[window][np.argmin(speed[window])])
    final = float(loss[-1])
    assert joint.saddle((0, 1, 2)).loss == pytest.approx(plateau3, rel=0.05)
    assert joint.saddle((0, 1, 2, 3)).loss == pytest.approx(final, rel=0.05)
    assert sections.saddle((0, 1, 2)).loss > 1.4 * plateau3 and sections.saddle((0, 1, 2, 3)).loss > 100 * final



def test_the_joint_saddles_of_a_net_with_frozen_biases_keep_them_at_rest():
    """The joint minimiser moves the free parameters of the active modes only: before, it moved the frozen biases
    of ``mlp-erf-frozen-bias`` (each unit to its own value) and the next chart refused the saddle (``'b' holds
    different values in different units``).  Its saddle is no higher than the sections' (it minimises over more)."""
    overrides = ["data.n=256", "training.steps=400", "model.width=8"]
    joint, _ = _landscape("mlp-erf-frozen-bias", overrides, True)
    sections, _ = _landscape("mlp-erf-frozen-bias", overrides, False)
    for active in ((0,), (0, 1)):
        here = joint.saddle(active)
        assert np.all(here.params["b"] == 0.0)
        assert here.loss <= sections.saddle(active).loss * (1.0 + 1e-9)


@pytest.mark.parametrize("seed, base", [(1, 0.083), (3, 0.190)])
def test_a_narrow_chain_escapes_on_its_modes_own_paths(seed, base, tmp_path):
    """``deep-linear-3`` with hidden widths 3 (three of the teacher's four modes fit): every mode's escape is read on
    its own path below the alignment radius (``AutoGeometry.aligned_escape``), not on the section through the random
    layers.  Every true transition predicted, median within 5 % (measured 0.8 % and 4.6 %; with the sections'
    profiles ``base``: 8.3 %, and 19.0 % with the third transition missed)."""
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    case = load_case("deep-linear-3", overrides=["model.widths=[3,3]"])
    out = run_prediction_case(case, RunOptions(out=str(tmp_path), seed=seed, quiet=True, progress=False,
                                               figures=False))
    c = out.comparison
    assert c.truth == "parameters" and len(c.observed) == 3
    assert c.recall == 1.0 and c.median_relative_error_all <= 0.05 < base


# -- the relaxing flow ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, overrides", [
    pytest.param("deep-mlp-tanh", ["data.n=256", "training.steps=400"], marks=pytest.mark.slow),   # ~30 s
    ("mlp-erf-frozen-bias", ["data.n=256", "training.steps=400", "model.width=8"]),
])
def test_the_relaxing_flow_holds_the_waiting_modes_and_lowers_the_loss(name, overrides):
    """From a saddle that holds a waiting mode back the chain follows the optimiser's flow with the waiting modes
    held (shockflow.prediction.saddle_chain._Flow): along it a chain's waiting modes keep ``W_1 v_k`` and
    ``u_kᵀ W_L``, a network of units keeps every unit's component along a waiting mode's direction, frozen
    parameters stay, and the loss falls from the block-coordinate saddle (it is not a stationary point)."""
    from shockflow.cases import load_case
    from shockflow.models.units import unit_layout
    from shockflow.prediction.saddle_chain import Landscape, _Flow
    from shockflow.runners.prediction import predict_from_start
    from shockflow.runners.training import build_model_and_data

    case = load_case(name, overrides=overrides)
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    settings = case.settings.training.train_settings(case.seed or 0)
    stage = predict_from_start(case, model.copy(), data, settings)
    ex = stage.extraction
    land = Landscape(model, "auto", ex.geometry_kwargs, ex.chart_key, ex, stage.shocks, data.X, data.y)
    assert land.relaxes
    opt = Optimiser(np.full(settings.steps, settings.lr), "gd")
    saddle = land.saddle((0,))
    flow = _Flow(land, saddle, (0,), 0.0, opt)
    after, start = flow.params_at(100.0), saddle.params
    assert land.measure(after, (0,)).loss < 0.999 * saddle.loss
    assert max(float(np.max(np.abs(after[k] - start[k]))) for k in start) > 1e-3
    E = np.asarray(ex.geometry_kwargs["modes"])
    if name.startswith("deep"):
        d = model.input_dim
        V, U = E[:d, 1:] / np.linalg.norm(E[:d, 1:], axis=0), E[d:, 1:] / np.linalg.norm(E[d:, 1:], axis=0)
        assert np.allclose(after["W1"] @ V, start["W1"] @ V, atol=1e-12)
        assert np.allclose(U.T @ after["W3"], U.T @ start["W3"], atol=1e-12)
    else:
        layout = unit_layout(model)

        def units(p):
            ref = model.copy()
            for k, v in p.items():
                ref.params[k][...] = v
            return layout.unit_matrix(ref.parameter_vector())

        assert np.allclose(E[:, 1:].T @ units(after), E[:, 1:].T @ units(start), atol=1e-12)
        assert np.array_equal(after["b"], start["b"])


@pytest.mark.slow
def test_the_tanh_chain_relaxes_where_its_fourth_mode_is_held_back(tmp_path, monkeypatch):
    """``deep-mlp-tanh`` at full size (~2 min): the fourth mode's section through every block-coordinate saddle
    rises from its position (Landscape.holds_back), so the chain follows the relaxing flow there; the fourth
    mode, 10 550 steps on the block saddle's profile for its truth 969, is predicted within a factor 2
    (measured −8.5, −9.3, −6.7, +28 %; recall 4/4, median 8.9 %).  The other chain cases' saddles hold no mode
    back and keep their block-coordinate predictions (README)."""
    from shockflow.prediction.saddle_chain import Landscape

    held = []
    original = Landscape.holds_back

    def spy(self, saddle, state):
        out = original(self, saddle, state)
        held.append((saddle.active, out))
        return out

    monkeypatch.setattr(Landscape, "holds_back", spy)
    out = _run("deep-mlp-tanh", [], tmp_path)
    c = out.comparison
    assert c.truth == "parameters" and len(c.observed) == 4
    assert held and all(h for _, h in held)
    true = {t.chart: t.step for t in out.truth.transitions}
    predicted = {p.chart: p.step for p in out.stage.predicted}
    for chart in ("r0", "r1", "r2"):
        assert abs(predicted[chart] / true[chart] - 1.0) <= 0.10
    assert 850 < true["r3"] < 1100 and true["r3"] < predicted["r3"] < 1.6 * true["r3"]
    assert c.recall == 1.0 and c.median_relative_error_all <= 0.10


def _kept_landscapes(monkeypatch):
    import shockflow.prediction.predict as predict

    lands = []
    inner = predict.follow_chain

    def kept(*args, **kwargs):
        out = inner(*args, **kwargs)
        lands.append(out[3])
        return out

    monkeypatch.setattr(predict, "follow_chain", kept)
    return lands


def test_a_mode_that_a_full_layer_only_forces_a_little_way_out_is_not_learned(tmp_path, monkeypatch):
    """A two-layer linear net 12 → 2 → 4 on a teacher of four singular values learns two modes, its rank.  At the
    saddle after them the two hidden units hold both learned modes: the third and fourth modes' unit subspaces are
    stable (every λ < 0), and the learned modes' cross terms pull them a little way out (the fourth mode's minimum
    there holds −0.2 % of its origin minimum's strength).  The chain read the fourth mode relaxing to that point as
    its escape, 11 steps after the second (precision 2/3); a mode short of half its origin strength escapes only by
    an instability, so it waits: 2/2, precision 1."""
    lands = _kept_landscapes(monkeypatch)
    out = _run("linear2-momentum", ["model.hidden=2"], tmp_path)
    steps = {p.chart: p.step for p in out.stage.predicted}
    assert math.isinf(steps["r2"]) and math.isinf(steps["r3"])
    land = lands[-1]
    labels = [c.label for c in land.charts]
    learned = tuple(sorted((labels.index("r0"), labels.index("r1"))))
    here = next(sd for key, sd in land._memo.items() if tuple(sorted(key)) == learned)
    for chart in ("r2", "r3"):
        k = labels.index(chart)
        assert np.all(here.subspace[k][0] < 0.0)
        assert abs(land.strength_share(here, k)) < 0.05
    c = out.comparison
    assert c.truth == "parameters" and c.recall == 1.0 and c.precision == 1.0
    assert c.median_relative_error_all <= 0.05


@pytest.mark.slow
def test_a_mode_forced_next_to_its_ridge_at_a_saddle_does_not_escape_there(tmp_path, monkeypatch):
    """``attention-qk-4x2`` at seed 2 (d_k = 2: two units, three charted modes).  Both units learn the first mode
    together; at that saddle the third mode's unit subspace is stable and its section's minimum holds 0.05 % of its
    origin strength: the chain counted it learned at once (and the truth, whose target is the minimum of the saddle a
    chart escapes from, a strength moving to 0.007 at step 628).  Now it waits; the second mode grows in the free unit
    combination and is predicted at 1106 against its truth 1084."""
    lands = _kept_landscapes(monkeypatch)
    out = _run("attention-qk-4x2", ["seed=2"], tmp_path)
    land = lands[-1]
    labels = [c.label for c in land.charts]
    first, third = labels.index("r0"), labels.index("r2")
    here = land._memo[(first,)]
    assert np.all(here.subspace[third][0] < 0.0) and abs(land.strength_share(here, third)) < 0.01
    steps = {p.chart: p.step for p in out.stage.predicted}
    assert math.isinf(steps["r2"])
    c = out.comparison
    assert c.truth == "parameters" and c.recall == 1.0 and c.precision == 1.0
    second = next(m for m in c.matches if m.observed_step > 900)
    assert abs(second.relative_error) <= 0.05
