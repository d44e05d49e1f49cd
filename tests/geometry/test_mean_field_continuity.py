"""The mean-field geometry's continuity (McKean–Vlasov) equation against gradient descent on a wide network.

Network: ``f(x) = (1/m) Σ_i a_i σ(w_i x)`` (sigmoid, input_dim 1, so neuron space is the plane (a, w)),
m = 4000 units from a ~ N(0, 1), w ~ N(0, 1); 64 samples x ~ N(0, 1), y = 0.8 + sin 2x; half-MSE.
Gradient descent with step ``η = 0.01 m`` for 100 steps reaches gradient-flow time ``t = m`` (mean-field
time ``τ = t/m = 1``; the geometry's mobility is ``I/m``, so its velocities are per unit of ``t``).
Over that time the mean of a moves by 0.33, the variances grow by ~0.01 and the loss falls 0.53 -> 0.40.
Measured: refining GD from η = 0.01 m to 0.0025 m changes Δmean(a) by 2.7e-4 and Δvar by 4e-5, so the
GD-versus-flow error sits below the tolerances used here.
"""

import numpy as np
import pytest
from dataclasses import replace

from shockflow import geometry, models
from shockflow.geometry import GeometryError

M, ETA_BAR, STEPS = 4000, 0.01, 100
T = STEPS * ETA_BAR * M  # gradient-flow time of the parameters


@pytest.fixture(scope="module")
def run():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(64, 1))
    y = 0.8 + np.sin(2 * X[:, 0])
    net = models.build("mean_field", input_dim=1, width=M, activation="sigmoid", init_scale=1.0, seed=1)
    geo = geometry.build("mean_field", model=net, extent=5.0)
    theta0 = geo.neurons(net.params)
    trained = net.copy()
    for _ in range(STEPS):
        _, g = trained.loss_and_grad(X, y)
        for k in trained.params:
            trained.params[k] -= ETA_BAR * M * g[k]
    theta = geo.neurons(trained.params)
    change = (theta.mean(0) - theta0.mean(0), theta.var(0) - theta0.var(0))
    return geo, X, y, change


def _moments(grid, rho):
    """Mean and variance of a density of cell averages (Sheppard-corrected for the binning)."""
    A, W = grid.mesh()
    w = rho * grid.cell_volume
    mean = np.array([(A * w).sum(), (W * w).sum()])
    var = np.array([((A - mean[0]) ** 2 * w).sum(), ((W - mean[1]) ** 2 * w).sum()]) - np.array(grid.dx) ** 2 / 12
    return mean, var


def _pde_change(problem, rho0=None, **settings):
    rho0 = problem.rho if rho0 is None else rho0
    sol = replace(problem, rho=rho0).solve([T], **settings)
    (m0, v0), (m1, v1) = _moments(problem.grid, rho0), _moments(problem.grid, sol.final)
    assert sol.mass[-1] == pytest.approx(1.0, rel=1e-12)  # walls: no neuron leaves the box
    assert sol.min_value >= 0.0
    return m1 - m0, v1 - v0


def test_density_field_matches_the_particle_field(run):
    """McKean–Vlasov velocity of the histogram vs the geometry's velocity of the neurons themselves."""
    geo, X, y, _ = run
    errors = []
    for cells in (24, 48):
        problem = geo.continuity_problem((cells, cells), X, y)
        field = problem.field(0.0, problem.rho)
        errors.append(max(np.abs(f - v).max() / np.abs(v).max() for f, v in zip(field, problem.face_velocity)))
    print("density field vs particle field, relative max difference", errors)
    assert errors[-1] < 2e-3


def test_continuity_equation_from_the_histogram_matches_gradient_descent(run):
    """Same neurons: the PDE starts from their histogram, so only the discretisation separates the two.

    Mean: the drift of the mean (0.33 in a) must agree to 1e-3 (0.3 %) on 48² and 96² cells.  Variance:
    first-order upwind adds numerical diffusion ~ |v| h t, so its error must halve with h, and the
    Richardson extrapolation ``2 e(h/2) - e(h)`` must vanish to 1e-3 (under 10 % of the change).
    The frozen initial field (no McKean–Vlasov coupling) must miss the mean drift by > 10x that tolerance.
    """
    geo, X, y, (dmean, dvar) = run
    errs_mean, errs_var = [], []
    for cells in (48, 96):
        problem = geo.continuity_problem((cells, cells), X, y)
        pm, pv = _pde_change(problem, reconstruction="first_order", velocity_update="stage")
        errs_mean.append(pm - dmean)
        errs_var.append(pv - dvar)
    errs_mean, errs_var = np.array(errs_mean), np.array(errs_var)
    richardson = 2 * errs_var[1] - errs_var[0]
    print("GD change of mean", dmean, "variance", dvar)
    print("PDE (first order, 48^2, 96^2) mean errors", errs_mean, "variance errors", errs_var, "extrapolated", richardson)
    assert np.all(np.abs(errs_mean) < 1e-3)
    assert np.all(errs_var[0] / errs_var[1] > 1.8) and np.all(errs_var[0] / errs_var[1] < 2.2)
    assert np.all(np.abs(richardson) < 1e-3)
    frozen_mean, _ = _pde_change(problem, reconstruction="first_order", self_consistent=False)
    print("frozen initial field: mean error", frozen_mean - dmean)
    assert abs(frozen_mean[0] - dmean[0]) > 1e-2


def test_mean_field_limit_from_the_initial_law_matches_gradient_descent(run):
    """The PDE from the exact initial law N(0, 1) x N(0, 1) (the m -> ∞ limit) against the m = 4000 network.

    The finite network deviates from the limit by O(1/sqrt(m)) fluctuations, coherent over the units (the
    field itself fluctuates).  Their size at m = 4000, measured over 5 seeds: std of Δmean = (6.2e-3,
    1.9e-3), of Δvar = (7.4e-4, 5.5e-4); the tolerance is 4 of these (four comparisons).  The MUSCL solve
    on smooth data is converged to 1.2e-4 in Δvar between 48² and 96² cells, far inside it.
    """
    geo, X, y, (dmean, dvar) = run
    sigma_mean, sigma_var = np.array([6.2e-3, 1.9e-3]), np.array([7.4e-4, 5.5e-4])
    problem = geo.continuity_problem((64, 64), X, y)
    law = problem.grid.cell_averages(lambda a, w: np.exp(-(a**2 + w**2) / 2) / (2 * np.pi))
    law /= problem.grid.integrate(law)  # the box [-5, 5]^2 holds all but 1e-6 of the law
    pm, pv = _pde_change(problem, rho0=law, reconstruction="muscl", limiter="mc", velocity_update="stage")
    print("limit PDE change of mean", pm, "variance", pv, "| network", dmean, dvar,
          "| in sigmas", (pm - dmean) / sigma_mean, (pv - dvar) / sigma_var)
    assert np.all(np.abs(pm - dmean) < 4 * sigma_mean)
    assert np.all(np.abs(pv - dvar) < 4 * sigma_var)


def test_solve_needs_a_two_dimensional_neuron_space():
    rng = np.random.default_rng(0)
    net = models.build("mean_field", input_dim=2, width=10, seed=0)
    geo = geometry.build("mean_field", model=net)
    X = rng.normal(size=(8, 2))
    problem = geo.continuity_problem(4, X, np.zeros(8))
    with pytest.raises(GeometryError, match="continuity solver takes 1-D or 2-D neuron spaces, this one has 3 axes"):
        problem.solve([1.0])
