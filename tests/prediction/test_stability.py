"""The overshoot flag: the update rule run on a chart's landscape (shockflow.prediction.stability)."""

from __future__ import annotations

import numpy as np
import pytest

from shockflow.runners.forecast import stability_limit
from solvers.charts.descent import descent_paths

RATES = np.geomspace(0.05, 1.0, 400)


def _first_unstable(force, x0, optimizer, mu, lo, hi, mirrored, steps=3000):
    nodes = np.linspace(lo, hi, 40001)           # the force tabulated, as overshoot_rate hands it over
    alive, peak = descent_paths(nodes, force(nodes), x0, RATES, np.ones(steps), optimizer, mu, lo, hi, mirrored)
    return (float(RATES[np.argmin(alive)]) if not alive.all() else np.inf), peak


@pytest.mark.parametrize("optimizer, mu", [("gd", 0.0), ("momentum", 0.9), ("momentum", 0.5), ("nesterov", 0.9)])
def test_on_a_quadratic_the_path_leaves_its_basin_exactly_from_the_linear_bound(optimizer, mu):
    # L = ½ κ x²: the iteration is linear, unstable from ηκ = 2, 2(1 + μ), 2(1 + μ)/(1 + 2μ) on (a box wide
    # enough that heavy ball's transient growth below the bound stays inside it: only exponential growth leaves)
    kappa = 7.0
    first, _ = _first_unstable(lambda x: kappa * x, 1.0, optimizer, mu, -1e3, 1e3, False)
    step = RATES[1] / RATES[0]
    assert stability_limit(kappa, optimizer, mu) <= first <= stability_limit(kappa, optimizer, mu) * step ** 1.5


def test_heavy_ball_escaping_a_double_well_overshoots_below_the_linear_bound_at_its_minimum():
    # the mode chart L = ½(s − r²/2)² from r0 = 1e-3 (mirrored at 0): minimum r² = 2s with curvature 2s; the
    # linear bound is 2(1 + μ)/(2s), but the escape arrives with the speed of 1/(1 − μ) steps and overshoots to
    # where the curvature 3r²/2 − s is larger: the path leaves the basin from a clearly lower rate
    s, mu = 5.0, 0.9
    force = lambda r: -(s - r ** 2 / 2) * r        # noqa: E731
    r_min = np.sqrt(2 * s)
    linear = stability_limit(2 * s, "momentum", mu)
    first, peak = _first_unstable(force, 1e-3, "momentum", mu, 0.0, 4 * 1.25 * r_min, True)
    assert first < 0.6 * linear
    below = RATES < first
    assert np.all(peak[below] > 1.2 * r_min)         # the stable escapes overshoot the minimum too
    # gradient descent arrives without speed: its path is stable up to the linear bound at the minimum
    first_gd, peak_gd = _first_unstable(force, 1e-3, "gd", 0.0, 0.0, 4 * 1.25 * r_min, True)
    assert first_gd >= 0.97 * stability_limit(2 * s, "gd", 0.0)


def test_the_landscape_is_the_chart_loss_on_its_range(monkeypatch):
    """overshoot_rate's landscape of an automatic chart (stability._landscape): the force tabulated from L̄ on the
    widened range [lo, hi], read from an interpolant of that range, against the same splines through L̄ evaluated
    point by point (1e-9 of the force's range: the interpolant's 1e-13 of L̄, differentiated by the spline)."""
    from scipy.interpolate import CubicSpline

    import shockflow.prediction.stability as stability
    from shockflow.cases import load_case
    from shockflow.prediction.extraction import bind_geometry, chart_geometry
    from shockflow.runners.forecast import forecast_stage

    case = load_case("mlp-tanh-teacher", overrides=["data.n=512", "training.steps=300"])
    stage, model, data, _ = forecast_stage(case, case.seed or 0)
    chart = stage.extraction.charts[1]
    cells = 2 * chart.x.size
    nodes, table, lo, hi = stability._landscape(stage.extraction, chart, model, data.X, data.y, cells=cells)
    assert hi >= stability.OVERSHOOT_BOX * max(abs(chart.lower), abs(chart.upper)) > 0 == lo
    name, kw = chart_geometry(stage.extraction, chart)
    kw["extent"] = hi        # the same section (the extent sets the chart's box only)
    geo = bind_geometry(name, model, kw, data.X, data.y)
    xs = np.linspace(lo, hi, cells)
    direct = geo.chart_loss(xs[:, None], data.X, data.y)
    reference = CubicSpline(xs, geo.mobility(xs[:, None])[:, 0, 0])(nodes) * CubicSpline(xs, direct).derivative()(nodes)
    np.testing.assert_allclose(table, reference, rtol=0, atol=1e-9 * np.ptp(reference))
