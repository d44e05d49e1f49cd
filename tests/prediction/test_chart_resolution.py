"""The chart solve's accuracy rule (shockflow.prediction.predict._solve_resolved): the grid it accepts gives the
formation time and shock location of the chart's own (finest) grid to the rule's tolerance."""

import math

import numpy as np
import pytest

from shockflow.prediction import predict


def test_resolution_levels_halve_from_the_chart_grid():
    assert predict._resolution_levels(801) == [201, 401, 801]
    assert predict._resolution_levels(4001) == [1001, 2001, 4001]
    assert predict._resolution_levels(200) == [100, 200]
    assert predict._resolution_levels(100) == [100]   # no grid coarser than COARSEST_CELLS


@pytest.fixture(scope="module")
def default_charts():
    from shockflow.cases import load_case
    from shockflow.runners.forecast import forecast_stage

    case = load_case("two-layer-staircase", [])
    stage = forecast_stage(case, case.seed or 0)[0]
    return stage.extraction.charts, case.settings.prediction


def test_accepted_grid_gives_the_full_grid_shock_within_tolerance(default_charts):
    charts, pr = default_charts
    tol = predict.RESOLUTION_TOLERANCE
    coarser = 0
    for chart in charts:
        times = np.linspace(0.0, pr.horizon * predict.initial_gamma(chart), pr.times)
        full = predict._solve(chart, times, 0.0, pr.cfl)
        ref = predict._chart_shock(chart, predict._report(chart, times, full.u, 0.0), times, full.u)
        on_grid, sol, _, shock = predict._solve_resolved(chart, times, pr.cfl)
        assert math.isfinite(ref.gamma_star)
        assert abs(shock.gamma_star - ref.gamma_star) <= tol * ref.gamma_star
        assert abs(shock.location - ref.location) <= tol * (chart.upper - chart.lower)
        coarser += on_grid.x.size < chart.x.size
        # stored snapshots are on the chart's own cells, close to the full-grid solution
        stored = predict._to_chart(sol.u, on_grid, chart)
        assert stored.shape == full.u.shape
        assert np.max(np.abs(stored - full.u)) <= 1e-2 * np.ptp(full.u)
    assert coarser == len(charts)   # on this case the rule saves the finest grid on every chart
