"""The built-in network cases beyond the default and Saxe (issue 6): attention, CNN, mean-field and sphere, at reduced
size through `shockflow run`, with the measured median relative error asserted against a bound that
reflects what was measured; and the pieces they rely on (the rescaling geometry on cnn1d and
attention_qk, the collective mean-field chart, the weight-normalised training view, the linear-region test of the shock mapping, the head start)."""

import math

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.cases import RunOptions, load_case
from shockflow.runners.prediction import run_prediction_case
from shockflow.prediction import ChartShock, Optimiser, predict_transitions

#: name -> (size overrides, matches, bound on the median relative error against the loss detections,
#: bound on the all-in median against the parameter truth (issue 17))
#: measured against the loss detections: attention-qk 20.9% here (20.0% at full size: its escape integral runs to the
#: half-learned product q, the truth's point, which the loss's half-amplitude point precedes; 1.5% when it ran to
#: the point where the loss had lost 3/4); cnn-relu-channels
#: 3.2% here (3.1% at full size; 21.6% / 20.8% on the faster channel's saddle alone, without the saddle chain,
#: tests/prediction/test_saddle_chain.py); mean-field-linear 1.1% here (1.3% at full size); sphere-direction 12.9% here
#: (10.8% at full size: its log form's exit reproduces the escape integral to the half-learned angle, which the
#: loss midpoint follows; 4.8% / 2.6% when the exit was the minimum's distance).
#: measured against the parameter truth (each chart's half-learned step, recall 1 and precision 1 in
#: every case): attention-qk 1.1% (17.7% when the escape integral ended at the loss's 3/4 drop: the
#: half-learned product q is reached ~20% after it, softmax attention is not quadratic in q), cnn-relu-channels 3.0%,
#: mean-field-linear 1.1%, sphere-direction 0.13% (9.2% when the exit was the minimum's distance: half way in the
#: angle is 13% before the loss midpoint)
CASES = {
    "attention-qk": (["data.n=512", "extraction.cells=201"], 1, 0.25, 0.05),
    "cnn-relu-channels": (["data.n=1024", "extraction.cells=401"], 2, 0.05, 0.05),
    "mean-field-linear": (["data.n=1024", "extraction.cells=401"], 1, 0.05, 0.05),
    "sphere-direction": (["data.n=1024", "extraction.cells=401"], 1, 0.15, 0.02),
}


def _run(name, tmp_path):
    overrides = CASES[name][0]
    return run_prediction_case(load_case(name, overrides=overrides),
                               RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))


@pytest.mark.parametrize("name", sorted(CASES))
def test_more_builtin_cases_predict_their_transitions(name, tmp_path):
    _, n_matches, bound, truth_bound = CASES[name]
    outcome = _run(name, tmp_path)
    assert len(outcome.loss_comparison.matches) == n_matches
    assert outcome.loss_comparison.median_relative_error <= bound
    # the score against the parameter truth: every chart learned, every one predicted, no spurious one
    c = outcome.comparison
    assert c.truth == "parameters" and len(c.observed) == len(outcome.stage.extraction.charts) == n_matches
    assert c.recall == 1.0 and c.precision == 1.0
    assert c.median_relative_error <= truth_bound
    # attention, CNN, mean-field ride a degenerate metric ridge (mobility -> 0 at small init): the
    # escape integral; the sphere's ridge is a genuine one (curvature -|β|/|w|², mobility 1/|w|²)
    method = "shock" if name == "sphere-direction" else "escape_integral"
    assert {p.method for p in outcome.stage.predicted} == {method}
    for c in outcome.stage.extraction.charts:
        # the landscape minimum is the basin the flow enters from x0 (downhill), on x0's side of q = 0
        assert np.sign(c.x_min) == np.sign(c.x0) or name != "cnn-relu-channels"
    if name == "cnn-relu-channels":
        first, second = sorted(outcome.comparison.matches, key=lambda m: m.observed_step)
        assert first.relative_error <= 0.10 and second.relative_error <= 0.05
        # S- correlates with S+ through the ReLU means, so the slower channel already grows while the
        # faster one escapes: the profile at the faster channel's saddle alone (escape_time) would predict
        # it far too late; the saddle chain (the time on the origin's profile first) removes that
        slow = max(outcome.stage.predicted, key=lambda p: p.step)
        assert slow.saddle == 1 and slow.time < 0.85 * slow.escape_time
        late = (slow.escape_time / slow.time) * second.predicted_step
        assert (late - second.observed_step) / second.observed_step > 0.15
    if name == "mean-field-linear":
        # at the landscape minimum the collective product Q = (1/m) Σ q_i(s) is the least-squares slope
        from shockflow.runners.training import build_model_and_data

        model, _, data, _ = build_model_and_data(load_case(name, overrides=CASES[name][0]), 0)
        geo = geometry.build("mean_field_collective", model=model, extent=8.0)
        (c,) = outcome.stage.extraction.charts
        X, y = data.X[:, 0], data.y.reshape(-1)
        assert geo.products(c.x_min).mean() == pytest.approx(X @ y / (X @ X), rel=1e-3)
    if name == "sphere-direction":
        # γ* = |w|²/(ρ|β|) for isotropic inputs (|β| = 2, ρ = 1), up to the sample covariance (n = 1024)
        (c,) = outcome.stage.extraction.charts
        (p,) = outcome.stage.predicted
        assert p.gamma_star == pytest.approx(c.conserved["norm2"] / 2.0, rel=0.1)
        # the ridge is the stationary point of L̄ next to the start (0.01 rad from the teacher's antipode
        # for isotropic inputs, moved by the sample covariance), found here by root finding on the slope
        from scipy.optimize import brentq

        from shockflow.runners.training import build_model_and_data

        model, _, data, _ = build_model_and_data(load_case(name, overrides=CASES[name][0]), 0)
        geo = geometry.build("sphere", model=model, parameter="W")
        loss = lambda t: geo.chart_loss(np.array([[t % (2 * math.pi)]]), data.X, data.y)[0]
        slope = lambda t: (loss(t + 1e-6) - loss(t - 1e-6)) / 2e-6
        ridge = brentq(slope, c.x0 - 0.2, c.x0 + 0.2)
        assert abs(p.location - ridge) < 2e-3
        assert abs(abs(c.x_min - ridge) - math.pi) < 0.05
    if name == "attention-qk":
        # the teacher's B* = 2.39 is where the chart's landscape has its minimum (noise 0.01, n = 512)
        (c,) = outcome.stage.extraction.charts
        assert c.x_min == pytest.approx(2.39, rel=0.05)


# -- the rescaling geometry on the CNN and query-key attention --------------------------------------
def _gd_velocity(geo, model, X, y, eta=1e-6):
    _, grads = model.loss_and_grad(X, y)
    fwd = {k: v - eta * grads[k] for k, v in model.params.items()}
    bwd = {k: v + eta * grads[k] for k, v in model.params.items()}
    return (geo.coordinates(fwd) - geo.coordinates(bwd)) / (2 * eta)


@pytest.mark.parametrize("spec", [
    dict(name="cnn1d", input_size=4, in_channels=1, out_channels=3, kernel_size=1, activation="relu", init_scale=1.0, seed=2),
    dict(name="cnn1d", input_size=5, in_channels=1, out_channels=2, kernel_size=1, activation="identity", init_scale=1.0, seed=3),
    dict(name="attention_qk", d_model=1, heads=2, d_k=2, init_scale=1.0, seed=4),
])
def test_rescaling_chart_velocity_matches_gradient_steps(spec):
    """``-g^{-1}(q) ∂_q L̄`` with ``g^{-1} = sqrt(c² + 4q²)`` equals the quotient velocity of real
    gradient steps on the full parameters, for every unit (unbalanced: c ≠ 0)."""
    net = models.build(**spec)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, spec.get("input_size", 3), 1))   # (n, positions or tokens, 1 channel)
    teacher = models.build(**{**spec, "seed": 11, "init_scale": 1.5})
    y = teacher.forward(X)
    units = spec.get("out_channels", spec.get("heads", 1) * spec.get("d_k", 1))
    for unit in range(units):
        geo = geometry.build("rescaling", model=net, unit=unit, extent=5.0)
        q = geo.coordinates(net.params)
        back = {k: v[0] for k, v in geo.section(q[None]).items()}
        for k in net.params:
            np.testing.assert_allclose(back[k], net.params[k], atol=1e-12)
        predicted = geo.velocity(q, X, y)
        measured = _gd_velocity(geo, net, X, y)
        np.testing.assert_allclose(predicted, measured, rtol=1e-4, atol=1e-7 * np.abs(measured).max())


def test_collective_mean_field_chart_velocity_matches_gradient_steps():
    """``ṡ = -∂_s L̄ / Σ sqrt(c_i² + 4q_i²)`` equals the clock velocity of real gradient steps on all
    2m parameters, at the initial measure and further along its orbit (s = 1.5)."""
    net = models.build("mean_field", input_dim=1, width=12, activation="identity", init_scale=0.3, seed=5)
    geo = geometry.build("mean_field_collective", model=net)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 1))
    y = 1.7 * X[:, 0] + 0.1 * rng.normal(size=100)
    for s in (0.0, 1.5):
        moved = net.copy()
        for k, v in geo.section(np.array([[s]])).items():
            moved.params[k][...] = v[0]
        assert geo.coordinates(moved.params)[0] == pytest.approx(s, abs=1e-10)
        measured = _gd_velocity(geo, moved, X, y)
        np.testing.assert_allclose(geo.velocity(np.array([s]), X, y), measured, rtol=1e-5)
        # every unit sits on the orbit: the conserved imbalances are those of the initial parameters
        np.testing.assert_allclose(geo.conserved(moved.params)["c"], geo.conserved(net.params)["c"], atol=1e-12)


def test_collective_mean_field_chart_refuses_a_nonlinear_network():
    net = models.build("mean_field", input_dim=1, width=4, activation="tanh", seed=0)
    with pytest.raises(geometry.GeometryError, match="activation 'identity'"):
        geometry.build("mean_field_collective", model=net)


def test_weight_normalised_training_view_of_the_sphere_geometry():
    """The view trains the normalised network: its forward is that of ρ w/|w|, its batch gradient is
    the mean of its per-sample gradients and is orthogonal to w (|w|² conserved by gradient flow), and
    it matches finite differences of its own loss."""
    from shockflow.geometry.sphere import WeightNormalised

    net = models.build("linear", input_dim=3, init_scale=2.0, seed=1)
    geo = geometry.build("sphere", model=net, parameter="W", gain=1.5)
    view = WeightNormalised(geo, net)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 3))
    y = X @ np.array([1.0, -2.0, 0.5])
    w = net.params["W"].ravel()
    np.testing.assert_allclose(view.forward(X).ravel(), X @ (1.5 * w / np.linalg.norm(w)), rtol=1e-12)
    value, g = view.loss_and_grad(X, y)
    per = view.per_sample_grads(X, y)
    np.testing.assert_allclose(per["W"].mean(axis=0), g["W"], rtol=1e-10, atol=1e-14)
    assert abs(g["W"].ravel() @ w) < 1e-12 * np.linalg.norm(g["W"]) * np.linalg.norm(w)
    e = np.zeros_like(net.params["W"]); e[0, 1] = 1e-6
    plus, minus = net.copy(), net.copy()
    plus.params["W"] += e; minus.params["W"] -= e
    fd = (WeightNormalised(geo, plus).loss(X, y) - WeightNormalised(geo, minus).loss(X, y)) / 2e-6
    assert g["W"][0, 1] == pytest.approx(fd, rel=1e-6)


def test_rescaling_refuses_attention_with_wide_tokens():
    net = models.build("attention_qk", d_model=2, init_scale=1.0, seed=0)
    with pytest.raises(geometry.GeometryError, match="d_model = 1"):
        geometry.build("rescaling", model=net, unit=0)


def test_rescaling_mobility_at_zero_with_negative_c_is_the_limit():
    from shockflow.geometry.rescaling import rescaling_mobility

    c = -3e-3
    q = np.array([[0.0], [1e-12], [-1e-12]])
    np.testing.assert_allclose(rescaling_mobility(q, c)[:, 0, 0], np.sqrt(c * c + 4 * q[:, 0] ** 2), rtol=1e-9)
    assert rescaling_mobility(np.array([[0.0]]), 0.2)[0, 0, 0] == pytest.approx(0.2)


# -- the mapping's linear-region test -------------------------------------------------------------
def _chart(rate_scale):
    """``L̄ = -x²/(2γ)`` near the ridge at 0 (γ = 2), unit mobility, start x0 = 0.01, minimum at 1:
    the linearised flat speed at x0 is x0/γ; ``rate_scale`` multiplies the escape rate actually seen.  The profile
    runs to the minimum, the linear landscape's half-learned point, so the log form's exit is the minimum's."""
    x = np.geomspace(0.01, 1.0, 200)
    return ChartShock(label="x", x0=0.01, x_min=1.0, nu=0.0, mobility_at_ridge=1.0, gamma_star=2.0, location=0.0,
                      strength=1.0, escape_x=x, escape_rate=rate_scale * x / 2.0, ridge_speed=0.0)


def test_shock_mapping_used_only_where_the_start_is_in_the_ridges_linear_region():
    opt = Optimiser(np.full(5000, 0.01))
    (near,) = predict_transitions([_chart(1.0)], opt)
    assert near.method == "shock"
    assert near.time == pytest.approx(2.0 * math.log(1.0 / 0.01))
    # a start moving 100x faster than the ridge's linearisation: the ridge is elsewhere on the chart
    (far,) = predict_transitions([_chart(100.0)], opt)
    assert far.method == "escape_integral"
    assert far.time == pytest.approx(2.0 * math.log(100.0) / 100.0, rel=1e-3)
