"""Extraction: the projected temperature, the saddles of the chain, the stored PDE problem."""

import h5py
import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.cases import RunOptions, load_case
from shockflow.data.power_law import power_law_covariance
from shockflow.prediction.extraction import chart_temperature, extract
from shockflow.runners.prediction import run_prediction_case


def test_projected_temperature_equals_per_sample_chart_gradient_variance():
    net = models.build("diagonal", input_dim=3, form="u2", init="constant", init_scale=0.3, seed=0)
    data = power_law_covariance(512, 3, 0.0, teacher_weights=np.array([2.0, 1.0, 0.5]), seed=1)
    geo = geometry.build("gram", model=net, modes=(1,), coordinate="r", extent=4.0)
    sigma2, T = chart_temperature(geo, 0.3, data.X, data.y, lr=0.1, batch_size=32, n_total=512, samples=512)
    # by hand: l_i = 1/2 (f_i - y_i)^2, f = sum_k x_k r_k^2 / 4, so dl_i/dr_1 = (f_i - y_i) x_i1 r_1 / 2
    u = net.params["u"]
    f = data.X @ (u * u / 4)
    g = (f - data.y.reshape(-1)) * data.X[:, 1] * u[1] / 2
    assert sigma2 == pytest.approx(np.var(g, ddof=1), rel=1e-6)
    assert T == pytest.approx(0.1 * 1.0 * sigma2 * (512 - 32) / 511 / (2 * 32), rel=1e-12)
    # full batch: no sampling noise
    assert chart_temperature(geo, 0.3, data.X, data.y, lr=0.1, batch_size=512, n_total=512)[1] == 0.0


def test_saddle_of_the_faster_modes_recovers_the_population_ridge_curvature():
    # finite n couples the modes through the sample covariance; at the saddle where the faster modes
    # are learned each chart's curvature approaches w_k/2 (f = sum x u^2/4: L = 1/2 (r^2/4 - w)^2,
    # L''(0) = -w/2, gamma* = 2/w_k), closer than at the origin
    from shockflow.prediction import predict_case  # noqa: F401  (the package imports in order)
    from shockflow.prediction.mapping import ChartShock
    from shockflow.prediction.saddle_chain import Landscape

    w = np.array([8.0, 3.0, 1.0])
    net = models.build("diagonal", input_dim=3, form="u2", init="constant", init_scale=1e-3, seed=0)
    data = power_law_covariance(2048, 3, 0.0, teacher_weights=w, seed=2)
    ex = extract(net, "gram", data.X, data.y, geometry_kwargs={"coordinate": "r"}, charts=(0, 1, 2), lr=0.01,
                 batch_size=2048, cells=401)
    shocks = [ChartShock(label=c.label, x0=c.x0, x_min=c.x_min, nu=0.0, mobility_at_ridge=1.0, gamma_star=c.gamma_data,
                         location=0.0, strength=1.0, escape_x=c.escape_x, escape_rate=c.escape_rate, mirrored=True,
                         metric_x=c.metric_x, metric_a=c.metric_a) for c in ex.charts]
    land = Landscape(net, "gram", ex.geometry_kwargs, ex.chart_key, ex, shocks, data.X, data.y)
    origin, saddle = land.saddle(()), land.saddle((0, 1))
    err_origin = abs(origin.curvature[2] * 2 / w[2] - 1)
    err_saddle = abs(saddle.curvature[2] * 2 / w[2] - 1)
    assert err_saddle < 0.03 and err_saddle < 0.5 * err_origin
    # the saddle is the least-squares fit on the learned modes: z_k = r_k^2/4 close to w_k
    z = saddle.params["u"] ** 2 / 4
    assert z[:2] == pytest.approx(w[:2], rel=0.02) and z[2] < 1e-5


def test_sgd_run_has_a_viscous_problem_stored_and_stays_within_ten_percent(tmp_path):
    case = load_case("two-layer-staircase", overrides=["data.n=2048", "extraction.cells=301", "training.steps=800",
                                                        "extraction.charts=[0, 1]", "training.optimizer=sgd",
                                                        "training.batch_size=32"])
    out = run_prediction_case(case, RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))
    assert all(c.nu > 0 for c in out.stage.extraction.charts)
    assert all(p.d_eff > p.d0 for p in out.stage.predicted)
    assert out.comparison.median_relative_error <= 0.10
    with h5py.File(out.result_file) as f:
        g = f["extraction/r0"]
        assert g.attrs["nu"] > 0 and g["viscous_values"].shape == g["values"].shape  # one group per chart (format 2)
        assert g["u0"].shape == g["x"].shape and g.attrs["x_min"] > 0
        assert f["transitions/predicted/step"].shape == (2,)


@pytest.mark.parametrize("case_name", ["mlp-tanh-teacher", "mlp-erf-frozen-bias"])
def test_the_escape_profile_ends_where_the_strength_on_every_point_crosses_half(case_name, monkeypatch):
    # the learned strength along the escape path is read at a few coarse points and its crossing searched
    # (extraction._FUNCTION_STRENGTH_POINTS): the profile is the one read from the strength at all 601 points
    import shockflow.prediction.extraction as ex
    from shockflow.geometry import geometry_class
    from shockflow.runners.training import build_model_and_data

    case = load_case(case_name, overrides=["data.n=512"])
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    frozen = case.settings.training.train_settings(0).frozen
    kwargs, raw, key = geometry_class("auto").discover_charts(model, data.X, data.y, {"frozen": frozen} if frozen else {})
    calls = []
    strength_along = ex.strength_along

    def counted(geo, points, X):
        calls[-1] += len(points)
        return strength_along(geo, points, X)

    monkeypatch.setattr(ex, "strength_along", counted)
    for sel in raw[:3]:
        geo = ex.bind_geometry("auto", model, dict(kwargs, **{key: sel}), data.X, data.y)
        x0 = float(geo.start_coordinate(model.params, data.X, data.y)[0]) if hasattr(geo, "start_coordinate") \
            else float(geo.coordinates(model.params)[0])
        geo, x_min, L_min = ex._find_minimum("auto", model, dict(kwargs, **{key: sel}), x0, True, data.X, data.y, geo=geo)
        out = {}
        for coarse in (10 ** 6, ex._FUNCTION_STRENGTH_POINTS):
            monkeypatch.setattr(ex, "_FUNCTION_STRENGTH_POINTS", coarse)
            calls.append(0)
            out[coarse] = ex.escape_profile(geo, abs(x0), abs(x_min), L_min, data.X, data.y)
        (full_x, full_rate), (x, rate) = out[10 ** 6], out[ex._FUNCTION_STRENGTH_POINTS]
        assert 10 < x.size < 601                   # the path is cut where the mode is half learned
        np.testing.assert_array_equal(x, full_x)
        np.testing.assert_array_equal(rate, full_rate)
        assert calls[-2] == 601 and calls[-1] <= 10   # every point against the coarse points and the search (8 here)


@pytest.mark.parametrize("shape", ["linear", "exponential", "logistic", "step", "flat-then-jump"])
def test_the_crossing_search_finds_the_adjacent_pair_of_a_monotone_series_within_thrice_the_bisections(shape):
    import shockflow.prediction.extraction as ex

    rng = np.random.default_rng(7)
    i = np.arange(601, dtype=np.float64)
    for _ in range(40):
        c = rng.uniform(0.2, 0.9) * 600
        values = {"linear": i - c, "exponential": np.exp(0.03 * (i - c)) - 1.0,
                  "logistic": 1.0 / (1.0 + np.exp(-(i - c) / rng.uniform(2, 60))) - 0.5,
                  "step": np.where(i >= c, 1.0, -1.0),
                  "flat-then-jump": np.where(i >= c, 1.0 + i, -1e-9 * (600 - i))}[shape]
        lo, hi = int(rng.integers(0, int(c) - 2)) if int(c) > 2 else 0, 600
        calls = []

        def f(k):
            calls.append(k)
            return bool(values[k] >= 0), float(values[k])

        pair = ex._adjacent_crossing(f, lo, hi, float(values[lo]), float(values[hi]))
        first = int(np.flatnonzero(values >= 0)[0])
        assert pair == (first - 1, first)
        assert len(calls) <= 3 * int(np.ceil(np.log2(hi - lo))) + 2
        if shape == "linear":
            assert len(calls) <= 2


def _minimum_searches(case_name, monkeypatch, count_line_points, look=None):
    """_find_minimum on the first charts of a suite case at n = 512: ``(geometry extent, x_min, L_min)`` per chart
    and the chart-loss points evaluated, with the probes (``look``: a replacement of extraction.probe, None: none)."""
    import shockflow.prediction.extraction as ex
    from shockflow.geometry import geometry_class
    from shockflow.runners.training import build_model_and_data

    case = load_case(case_name, overrides=["data.n=512"])
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    kwargs, raw, key = geometry_class("auto").discover_charts(model, data.X, data.y, {})
    if look is not None:
        monkeypatch.setattr(ex, "probe", look)
    points = count_line_points()
    found = []
    for sel in raw[:3]:
        geo = ex.bind_geometry("auto", model, dict(kwargs, **{key: sel}), data.X, data.y)
        x0 = float(geo.coordinates(model.params)[0])
        geo, x_min, L_min = ex._find_minimum("auto", model, dict(kwargs, **{key: sel}), x0, True, data.X, data.y,
                                             geo=geo)
        found.append((geo.extent, x_min, L_min))
    monkeypatch.undo()
    return found, points[0]


def test_the_minimum_search_probes_its_boxes_and_finds_the_widened_searchs_minimum(monkeypatch, count_line_points):
    """_find_minimum's probes (9 points of each box, reused by its interpolant): the same box, minimum and loss bit
    for bit as the search that fits every box it widens through, in fewer chart-loss evaluations; and where a probe
    misjudges a box (told here that the box's upper end is its lowest point), the box is decided again from the
    larger box's interpolant and the search still returns it."""
    import shockflow.prediction.extraction as ex

    reference, n_reference = _minimum_searches("mlp-tanh-teacher", monkeypatch, count_line_points,
                                                 look=lambda geo, X, y: None)
    probed, n_probed = _minimum_searches("mlp-tanh-teacher", monkeypatch, count_line_points)
    assert probed == reference
    assert max(extent for extent, _, _ in reference) > 1.0      # the search widened: the probes had boxes to pass
    assert n_probed < 0.85 * n_reference

    real = ex.probe

    def misjudged(geo, X, y):
        points, values = real(geo, X, y)
        return points, np.concatenate([[values.min() - 1.0], values[1:]])   # "the upper end is lowest"

    fooled, _ = _minimum_searches("mlp-tanh-teacher", monkeypatch, count_line_points, look=misjudged)
    assert fooled == reference


def test_an_interpolant_fitted_from_a_probe_is_the_one_fitted_without():
    """ChartInterpolant.fit from a probe's 9 values: the coefficients of the fit without them, bit for bit, with
    only the other points evaluated."""
    from shockflow.geometry.chart_interpolant import PROBE_DEGREE, ChartInterpolant

    f = lambda p: np.exp(np.sin(3 * p[:, 0])) + 0.1 * p[:, 0] ** 3
    calls = []
    counted = lambda p: (calls.append(p.shape[0]), f(p))[1]
    plain = ChartInterpolant.fit(counted, 0.5, 2.5)
    n_plain = sum(calls)
    calls.clear()
    nodes = 1.5 + np.cos(np.pi * np.arange(PROBE_DEGREE + 1) / PROBE_DEGREE)
    probed = ChartInterpolant.fit(counted, 0.5, 2.5, probed=f(nodes[:, None]))
    np.testing.assert_array_equal(probed.coefficients, plain.coefficients)
    assert sum(calls) == n_plain - (PROBE_DEGREE + 1)


def test_each_chart_starts_its_minimum_search_where_the_previous_minimum_lay(monkeypatch, count_line_points):
    """extract hands each chart's minimum search the previous chart's minimum (``reach``): the boxes below it are
    passed unseen and decided again from the larger box, so every chart's box, minimum, initial data and escape
    profile are bit for bit those of searches from the first box, in fewer chart-loss points."""
    import shockflow.prediction.extraction as ex
    from shockflow.runners.training import build_model_and_data

    case = load_case("mlp-tanh-teacher", overrides=["data.n=512"])
    model, _, data, settings = build_model_and_data(case, case.seed or 0)
    points = count_line_points()
    out = {}
    find = ex._find_minimum
    for label in ("from the first box", "from the previous minimum"):
        if label == "from the first box":
            monkeypatch.setattr(ex, "_find_minimum", lambda *a, reach=None, **k: find(*a, **k))
        else:
            monkeypatch.setattr(ex, "_find_minimum", find)
        points[0] = 0
        charts = ex.extract(model, "auto", data.X, data.y, lr=0.02, batch_size=data.X.shape[0], noise_samples=64).charts
        out[label] = (charts, points[0])
    (plain, n_plain), (hinted, n_hinted) = out.values()
    assert len(plain) == len(hinted) >= 3
    for a, b in zip(plain, hinted):
        assert (a.x_min, a.loss_at_min, a.lower, a.upper) == (b.x_min, b.loss_at_min, b.lower, b.upper)
        np.testing.assert_array_equal(a.u0, b.u0)
        np.testing.assert_array_equal(a.escape_rate, b.escape_rate)
    assert n_hinted < n_plain
