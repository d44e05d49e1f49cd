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


def _chart(cells, u0, mobility, lo, hi):
    """The fields of an extracted chart that the solve and its reports read."""
    from types import SimpleNamespace

    h = (hi - lo) / cells
    x = lo + h * (np.arange(cells) + 0.5)
    return SimpleNamespace(x=x, u0=u0(x), mobility=mobility(x), dx=h, lower=lo, upper=hi, ridge=math.nan,
                           mirrored=False)


@pytest.mark.parametrize("mobility", [lambda x: np.ones_like(x), lambda x: 1.0 + 0.3 * np.sin(x)])
def test_first_shock_is_the_limit_of_the_solved_formation_time(mobility):
    # u0 = sin x + x: Hess_g u0 is most negative where the characteristic carries p0 ≠ 0 (a moving shock); with a = 1
    # γ* = 1 at x = π/2 + 1 exactly.  The solved γ* converges to the closed form at first order.
    errors = []
    for cells in (401, 801, 1601):
        chart = _chart(cells, lambda x: np.sin(x) + x, mobility, -1.0, 5.0)
        exact = predict.first_shock(chart)
        times = np.linspace(0.0, 2.0 * exact.gamma_star, 41)
        sol = predict._solve(chart, times, 0.0, 0.5)
        errors.append(abs(predict.formation_time(times, sol.u, chart)[0] / exact.gamma_star - 1.0))
        if np.all(chart.mobility == 1.0):
            assert abs(exact.gamma_star - 1.0) < 1e-4 and abs(exact.location - (np.pi / 2 + 1.0)) < 1e-3
    assert errors[0] / errors[1] > 1.5 and errors[1] / errors[2] > 1.5 and errors[2] < 1e-3


def test_the_closed_form_accepts_a_coarser_grid_within_the_tolerance(default_charts):
    # the rule with the closed form against the rule without it (two successive grids must agree): the same γ* and
    # location to the tolerance, each within it of the closed form, on fewer cells on every chart of the default case
    charts, pr = default_charts
    tol = predict.RESOLUTION_TOLERANCE
    for chart in charts:
        times = np.linspace(0.0, pr.horizon * predict.initial_gamma(chart), pr.times)
        exact = predict.first_shock(chart)
        grid_old, _, _, old = predict._solve_resolved(chart, times, pr.cfl, closed_form=False)
        grid_new, _, _, new = predict._solve_resolved(chart, times, pr.cfl)
        assert grid_new.x.size < grid_old.x.size
        assert abs(new.gamma_star - old.gamma_star) <= tol * old.gamma_star
        assert abs(new.location - old.location) <= tol * (chart.upper - chart.lower)
        assert abs(new.gamma_star - exact.gamma_star) <= tol * exact.gamma_star
        assert abs(old.gamma_star - exact.gamma_star) <= tol * exact.gamma_star


def test_first_shock_formation_time_is_initial_gamma(default_charts):
    charts, _ = default_charts
    for chart in charts:
        assert predict.first_shock(chart).gamma_star == predict.initial_gamma(chart)


@pytest.mark.parametrize("mobility", [lambda x: 1.0 + 0.3 * np.sin(x), lambda x: 4.0 * np.abs(x) + 1e-3])
def test_the_predictions_inviscid_solve_is_the_solvers_with_its_default_density(mobility):
    # the volume density enters only the viscous term: the prediction's inviscid solve (ν = 0) is bitwise the
    # solver's with its default density det(A)^(-1/2)
    from solvers.charts import solve_chart_hj
    from solvers.grid import Grid

    chart = _chart(201, lambda x: np.cos(2 * x) + 0.1 * x, mobility, -1.0, 2.0)
    times = np.linspace(0.0, 0.5, 21)
    grid = Grid((chart.lower,), (chart.upper,), (chart.x.size,), 3)

    def a(x):
        return np.interp(x, chart.x, chart.mobility)

    default = solve_chart_hj(grid, chart.u0, times, mobility=a, nu=0.0, boundary="outflow", cfl=0.5)
    ours = predict._solve(chart, times, 0.0, 0.5)
    np.testing.assert_array_equal(ours.u, default.u)
    assert ours.steps == default.steps
