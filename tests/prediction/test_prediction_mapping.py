"""The shock -> transition mapping (docs/theory.md §1 [model]) on charts with known answers."""

import math

import numpy as np
import pytest

from shockflow.prediction import ChartData
from shockflow.prediction.predict import _solve, formation_time, hessian_g, initial_gamma
from shockflow.prediction import ChartShock, Optimiser, PredictionError, predict_transitions
from shockflow.geometry.base import Chart


def _chart(L, dL, R, x0, x_min, cells=801):
    h = 2 * R / cells
    x = -R + h * (np.arange(cells) + 0.5)
    ex = np.geomspace(x0, x_min, 2001)
    Lp = L(ex)
    ex = ex[: int(np.nonzero(Lp <= Lp[-1] + 0.25 * (Lp[0] - Lp[-1]))[0][0]) + 1]
    return ChartData(label="r", geometry="test", selector=None, coordinate="r", x=x, u0=L(np.abs(x)),
                     mobility=np.ones(cells), lower=-R, upper=R, mirrored=True, x0=x0, x_min=x_min,
                     loss_at_min=float(L(x_min)), escape_x=ex, escape_rate=np.abs(dL(ex)),
                     trajectory_steps=np.zeros(0, int), trajectory=np.zeros(0), metric_x=x, metric_a=np.ones(cells))


@pytest.mark.parametrize("s", [0.5, 2.0])
def test_hj_solve_finds_the_double_well_shock_at_minus_one_over_inf_curvature(s):
    # L(r) = 1/2 (s - r^2)^2: L''(0) = -2s is the infimum of L'' -> gamma* = 1/(2s)
    chart = _chart(lambda r: 0.5 * (s - r * r) ** 2, lambda r: -2 * r * (s - r * r), 1.6 * math.sqrt(s), 1e-3, math.sqrt(s))
    exact = 1.0 / (2 * s)
    assert initial_gamma(chart) == pytest.approx(exact, rel=1e-3)
    times = np.linspace(0.0, 2.0 * exact, 41)
    sol = _solve(chart, times, 0.0, 0.5)
    gamma, where = formation_time(times, sol.u, chart)
    assert gamma == pytest.approx(exact, rel=0.02)
    assert abs(where) < 2 * chart.dx


def _discrete_half_learned_step(s, z0, lr):
    r, n = math.sqrt(z0), 0
    while r * r < s / 2:
        r += lr * 2 * r * (s - r * r)
        n += 1
    # linear interpolation in z between the last two steps
    r_prev = r
    return n, r_prev


@pytest.mark.parametrize("lr", [1e-3, 0.05])
def test_worked_check_reproduces_the_logistic_switch_on_step(lr):
    s, z0 = 2.0, 1e-8
    shock = ChartShock(label="r", x0=math.sqrt(z0), x_min=math.sqrt(s), nu=0.0, mobility_at_ridge=1.0,
                       gamma_star=1 / (2 * s), location=0.0, strength=1.0, escape_x=np.zeros(0),
                       escape_rate=np.zeros(0), mirrored=True)
    steps = 20000
    (p,) = predict_transitions([shock], Optimiser(np.full(steps, lr)))
    # gradient-flow time: (1/(4s)) ln(s/z0), the logistic switch-on time up to O(z0/s)
    assert p.time == pytest.approx(math.log(s / z0) / (4 * s), rel=1e-12)
    # discrete GD on r' = 2 r (s - r^2): the step at which z = r^2 crosses s/2 (the detector's midpoint)
    n, _ = _discrete_half_learned_step(s, z0, lr)
    assert p.step == pytest.approx(n, rel=0.03)
    if lr == 0.05:   # here t/eta alone is off by more than the discrete correction's residual
        assert abs(p.flow_step - n) / n > 0.04


def test_viscous_correction_shortens_the_escape():
    base = dict(label="r", x0=1e-4, x_min=1.0, mobility_at_ridge=1.0, gamma_star=0.5, location=0.0, strength=1.0,
                escape_x=np.zeros(0), escape_rate=np.zeros(0), mirrored=True)
    opt = Optimiser(np.full(10000, 1e-3))
    (cold,) = predict_transitions([ChartShock(nu=0.0, **base)], opt)
    (hot,) = predict_transitions([ChartShock(nu=1e-6, **base)], opt)
    assert hot.d_eff == pytest.approx(math.sqrt(1e-8 + 2 * 1e-6 * 0.5))
    assert hot.step < cold.step


def test_a_start_exactly_on_the_ridge_without_noise_abstains_and_with_noise_escapes():
    """A zero initialisation of the mode (x0 = 0, the mirror of an even chart loss): its gradient is zero and descent never
    moves it.  The escape integral from the profile's first point gave a finite step (a default net started at u = 0
    was forecast to learn at 100.7, 298.1 and 662.1 while its run learned nothing); it abstains now, on both paths (a
    shock chart and an escape-integral chart); with noise (ν > 0) it predicts."""
    from shockflow.prediction.mapping import predict_or_abstain

    x = np.geomspace(1e-4, 1.0, 40)
    base = dict(label="r", x0=0.0, x_min=1.0, mobility_at_ridge=1.0, location=0.0, strength=1.0, escape_x=x,
                escape_rate=x / 0.5, mirrored=True)
    opt = Optimiser(np.full(10000, 1e-3))
    for gamma in (0.5, math.inf):
        predicted, (abstained,) = predict_or_abstain([ChartShock(nu=0.0, gamma_star=gamma, **base)], opt)
        assert predicted == [] and "d0 = 0" in abstained.reason and "mirror" in abstained.reason
    (hot,) = predict_transitions([ChartShock(nu=1e-6, gamma_star=0.5, **base)], opt)
    assert math.isfinite(hot.step) and hot.step > 0


def test_degenerate_ridge_uses_the_escape_integral_and_matches_gradient_flow():
    # L(r) = 1/2 (s - r^4)^2: L''(0) = 0, no shock (gamma* infinite); r' = 4 r^3 (s - r^4)
    s, r0 = 1.0, 0.05
    L = lambda r: 0.5 * (s - r ** 4) ** 2
    dL = lambda r: -4 * r ** 3 * (s - r ** 4)
    chart = _chart(L, dL, 1.5, r0, s ** 0.25)
    # the ridge r = 0 is degenerate: zero quotient curvature there (the curvature elsewhere is O(1))
    hess = hessian_g(chart.u0, chart)
    assert abs(hess[chart.x.size // 2]) < 1e-4 * np.abs(hess).max()
    shock = ChartShock(label="r", x0=r0, x_min=s ** 0.25, nu=0.0, mobility_at_ridge=1.0, gamma_star=math.inf,
                       location=0.0, strength=0.0, escape_x=chart.escape_x, escape_rate=chart.escape_rate, mirrored=True)
    lr = 1e-3
    (p,) = predict_transitions([shock], Optimiser(np.full(400000, lr)))
    assert p.method == "escape_integral" and math.isinf(p.critical_lr) and math.isinf(p.gamma_star)
    # explicit gradient flow (small steps) from r0 until L has dropped by 3/4 (the detector's midpoint)
    r, t = r0, 0.0
    while L(r) > 0.25 * L(r0):
        r -= lr * dL(r)
        t += lr
    assert p.time == pytest.approx(t, rel=0.03)


def test_adam_is_refused_with_the_key_named():
    shock = ChartShock(label="r", x0=1e-3, x_min=1.0, nu=0.0, mobility_at_ridge=1.0, gamma_star=0.5, location=0.0,
                       strength=1.0, escape_x=np.zeros(0), escape_rate=np.zeros(0))
    with pytest.raises(PredictionError, match="training.optimizer.*adam"):
        predict_transitions([shock], Optimiser(np.full(10, 0.1), "adam"))


def test_quotient_distance_is_exact_where_the_mobility_vanishes():
    """a = 2σ (the attention chart, docs/theory.md §1): d(σ) = ∫_0^σ dx/sqrt(2x) = sqrt(2σ), finite at the
    degenerate end (a trapezoid through 1/sqrt(max(a, 1e-300)) read d0 = 4e137 there, issue 21)."""
    grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, 401), np.geomspace(1e-12, 1.0, 600)]))
    shock = ChartShock(label="sigma0", x0=4.9e-7, x_min=0.5, nu=0.0, mobility_at_ridge=0.0, gamma_star=math.inf,
                       location=0.0, strength=0.0, escape_x=np.zeros(0), escape_rate=np.zeros(0), mirrored=True,
                       metric_x=grid, metric_a=2.0 * grid)
    for x in (4.9e-7, 1e-3, 0.5):
        assert shock.distance(x) == pytest.approx(math.sqrt(2 * x), rel=2e-3)
    assert shock.distance(0.0) == 0.0
    zero = ChartShock(**{**shock.__dict__, "metric_a": np.zeros_like(grid)})
    assert math.isinf(zero.distance(0.5))   # no mobility at all: infinitely far, never a finite prediction


def _escape_chart(x0, x_min, **kw):
    L = lambda r: 0.5 * (1.0 - r ** 4) ** 2
    dL = lambda r: -4 * r ** 3 * (1.0 - r ** 4)
    chart = _chart(L, dL, 1.5, x0, x_min)
    return ChartShock(label="sigma0", x0=x0, x_min=x_min, nu=0.0, mobility_at_ridge=1.0, gamma_star=math.inf,
                      location=0.0, strength=0.0, escape_x=chart.escape_x, escape_rate=chart.escape_rate,
                      mirrored=True, **kw)


def test_a_start_without_a_plateau_or_an_infinite_distance_is_no_prediction():
    """Issue 21: a start within one e-fold of the chart's minimum (the minimum at the start, as for the attention
    chart of a d_model = d_k = 2 head whose flow runs into σ = 0), or an infinite distance, is no prediction (an
    InvalidPrediction naming the chart: the chart abstains in a run), never a predicted step."""
    from shockflow.prediction.mapping import InvalidPrediction

    opt = Optimiser(np.full(1000, 1e-2))
    (p,) = predict_transitions([_escape_chart(0.05, 1.0)], opt)   # a plateau: the loss's fall speeds up e^15.6-fold
    assert p.method == "escape_integral" and math.isfinite(p.step) and p.step > 0
    # an escape integral's plateau is the speed-up of the loss's fall, not a distance: from 0.5 the distance grows
    # only 2-fold (ln 0.693), but on this quartic ridge the rate of fall grows 6.7-fold (ln 1.90): a transition
    (p,) = predict_transitions([_escape_chart(0.5, 1.0)], opt)
    assert p.method == "escape_integral" and math.isfinite(p.step) and p.step > 0
    with pytest.raises(InvalidPrediction, match=r"chart 'sigma0'.*ln\(max/start\) = 0.299 < 1"):
        predict_transitions([_escape_chart(0.7, 1.0)], opt)
    grid = np.linspace(0.0, 1.5, 301)
    with pytest.raises(InvalidPrediction, match=r"chart 'sigma0'.*d0 = inf"):
        predict_transitions([_escape_chart(0.05, 1.0, metric_x=grid, metric_a=np.zeros_like(grid))], opt)


def test_a_chart_without_a_plateau_abstains_and_the_others_still_predict():
    """Abstention is per chart: the chart without a plateau (its loss's fall speeds up by ln 0.299) and the one at an infinite
    distance predict nothing and say why; the chart with a plateau predicts exactly what it predicts alone."""
    from dataclasses import replace

    from shockflow.prediction.mapping import predict_or_abstain

    opt = Optimiser(np.full(1000, 1e-2))
    grid = np.linspace(0.0, 1.5, 301)
    good = replace(_escape_chart(0.05, 1.0), label="good")
    flat = replace(_escape_chart(0.7, 1.0), label="flat")
    far = replace(_escape_chart(0.05, 1.0, metric_x=grid, metric_a=np.zeros_like(grid)), label="far")
    (alone,) = predict_transitions([good], opt)
    predicted, abstained = predict_or_abstain([flat, good, far], opt)
    assert [p.chart for p in predicted] == ["good"] and predicted[0] == alone
    assert [a.chart for a in abstained] == ["flat", "far"]
    assert "ln(max/start) = 0.299 < 1" in abstained[0].reason and abstained[0].figure == "ln(speed-up) = 0.299 < 1"
    assert "d0 = inf" in abstained[1].reason
    assert predict_or_abstain([flat], opt)[0] == []


def test_an_escape_from_inside_a_mirrored_ridge_measures_its_distances_from_the_mirror():
    """A degenerate ridge (L̄ = ½(1 − r⁴)², even in r): its steepest compression lies at r_s ≈ 0.5, and a start at
    r = 0.05 inside it leaves the mirror r = 0, the stationary point, passing the ridge on its way.  Its distances
    are the mirror's (0.05 and 1: a plateau of 3 e-folds), not the ridge's (0.45 and 0.5, which would read as no
    plateau); the escape time is the same."""
    from dataclasses import replace

    opt = Optimiser(np.full(1000, 1e-2))
    (at_mirror,) = predict_transitions([_escape_chart(0.05, 1.0)], opt)
    (inside,) = predict_transitions([replace(_escape_chart(0.05, 1.0), location=0.5, gamma_star=0.3)], opt)
    assert inside.method == "escape_integral" and inside.step == pytest.approx(at_mirror.step, rel=1e-12)
    assert inside.d0 == pytest.approx(0.05) and inside.d_exit == pytest.approx(1.0)


class _SquareRootChart:
    """A mirrored 1-D chart r ∈ [0, 1.5] with strength z = r², mobility 1 and L̄ = ½ (1 − z)^p (no model, no data)."""

    __slots__ = ("power",)       # no weak reference: the chart loss is evaluated directly, not interpolated
    dim = 1
    chart = Chart(("r",), (0.0,), (1.5,))

    class model:
        class loss_function:
            squared_scale = None

    def __init__(self, power):
        self.power = power

    def chart_loss(self, points, X, y):
        return 0.5 * np.abs(1.0 - np.asarray(points)[:, 0] ** 2) ** self.power

    def strength(self, points):
        return np.asarray(points, dtype=np.float64) ** 2

    def mobility(self, points):
        return np.ones((*np.asarray(points).shape[:-1], 1, 1))


@pytest.mark.parametrize("power", [2, 4])
def test_the_escape_profile_ends_where_the_mode_is_half_learned(power):
    """The escape integral runs to the half-learned strength (what the truth reads): z = ½ for L̄ = ½(1 − z)² — there
    also the point where L̄ has lost 3/4 — and still z = ½ for L̄ = ½(1 − z)⁴, whose loss has lost 3/4 already at
    z = 0.29 (a loss not quadratic in the strength, as softmax attention in its QK form)."""
    from shockflow.prediction.extraction import escape_profile

    x, rate = escape_profile(_SquareRootChart(power), 1e-3, 1.0, 0.0, None, None)
    assert x[0] == pytest.approx(1e-3) and x[-1] ** 2 == pytest.approx(0.5, rel=0.02)
    assert np.all(rate > 0)


def test_the_log_form_runs_as_long_as_the_landscape_needs_to_reach_the_half_learned_point():
    """Shock charts (ridge at 0, γ* = 2, start 0.01, minimum 1): a linear landscape up to its minimum gives the
    classic γ* ln(d_exit/d0) with d_exit the minimum's distance; a saturating one, rate x(1 − x²)/γ* up to its
    half-learned point x_h = 0.7, takes its escape integral γ* [ln x − ½ ln(1 − x²)] from 0.01 to 0.7, and the
    reported exit is the one whose log form gives it."""
    gamma, x0 = 2.0, 0.01
    opt = Optimiser(np.full(5000, 0.01))

    def chart(x, rate):
        return ChartShock(label="x", x0=x0, x_min=1.0, nu=0.0, mobility_at_ridge=1.0, gamma_star=gamma, location=0.0,
                          strength=1.0, escape_x=x, escape_rate=rate, ridge_speed=0.0)

    x = np.geomspace(x0, 1.0, 601)
    (linear,) = predict_transitions([chart(x, x / gamma)], opt)
    assert linear.method == "shock" and linear.time == pytest.approx(gamma * math.log(1.0 / x0), rel=1e-12)
    assert linear.d_exit == pytest.approx(1.0, rel=1e-12)
    x = np.geomspace(x0, 0.7, 601)
    (saturating,) = predict_transitions([chart(x, x * (1 - x * x) / gamma)], opt)
    F = lambda r: gamma * (math.log(r) - 0.5 * math.log(1 - r * r))
    assert saturating.method == "shock" and saturating.time == pytest.approx(F(0.7) - F(x0), rel=1e-4)
    assert saturating.d_exit == pytest.approx(x0 * math.exp((F(0.7) - F(x0)) / gamma), rel=1e-4)
