"""The two ERM routes: FISTA on S ⪰ 0 (nuclear norm, rank ≤ p) and training W (L-BFGS, GD).

J(W) = Σ (y − f_W)² + (λ/√(p d))‖W‖_F² equals Φ(WᵀW/√(p d)) identically, so at convergence the
minimisers must coincide.
"""

import numpy as np
import pytest

from shockflow.scaling.convex_erm import (ConvergenceError, ConvexERMSettings, fit_convex, fit_lambda_path,
                                          lambda_zero)
from shockflow.scaling.design import QuadraticDesign
from shockflow.scaling.direct_erm import DirectERMSettings, fit_direct, weight_penalty
from shockflow.scaling.target import make_target, sample_data

TIGHT = ConvexERMSettings(tol=1e-9, tol_objective=1e-14)


@pytest.fixture(scope="module")
def problem():
    T = make_target(10, 1.0, noise=0.1, seed=1)
    X, y = sample_data(T, 120, seed=2)
    D = QuadraticDesign(X)
    return T, X, y, D, lambda_zero(D, y)


def test_objective_identity_J_equals_Phi():
    rng = np.random.default_rng(0)
    n, d, p, lam = 25, 6, 3, 0.7
    X, y, W = rng.standard_normal((n, d)), rng.standard_normal(n), rng.standard_normal((p, d))
    S = W.T @ W / np.sqrt(p * d)
    D = QuadraticDesign(X)
    Phi = np.sum((y - D.apply(S)) ** 2) + lam * np.trace(S)
    J = np.sum((y - D.apply(S)) ** 2) + weight_penalty(lam, p, d) * np.sum(W * W)
    assert np.isclose(Phi, J, rtol=1e-13)


def test_convex_solution_satisfies_kkt(problem):
    _, _, y, D, lz = problem
    lam = 0.05 * lz
    R = fit_convex(D, y, lam, settings=TIGHT)
    assert R.converged and R.residual <= 1e-9
    G = 2 * D.adjoint(D.apply(R.S) - y) + lam * np.eye(D.d)       # subgradient condition for p = d
    scale = np.linalg.norm(2 * D.adjoint(y))
    assert np.linalg.eigvalsh(G)[0] > -1e-6 * scale                # G ⪰ 0
    assert np.linalg.norm(G @ R.S) < 1e-6 * scale * np.linalg.norm(R.S)   # complementarity G S = 0
    assert 0 < R.rank < D.d                                         # the penalty is active


@pytest.mark.parametrize("p", [10, 3])
def test_lbfgs_on_W_agrees_with_fista_on_S(problem, p):
    _, X, y, D, lz = problem
    lam = 0.05 * lz
    R = fit_convex(D, y, lam, p, settings=TIGHT)
    Q = fit_direct(X, y, lam, p, DirectERMSettings(method="lbfgs", tol=1e-8))
    assert Q.converged
    assert abs(Q.objective - R.objective) <= 1e-10 * R.objective
    assert np.linalg.norm(Q.S - R.S) <= 1e-6 * np.linalg.norm(R.S)
    assert np.isclose(Q.train_loss, R.train_loss, rtol=1e-8)


def test_gd_on_W_agrees_with_fista_on_S(problem):
    _, X, y, D, lz = problem
    lam, p = 0.05 * lz, 3
    R = fit_convex(D, y, lam, p, settings=TIGHT)
    Q = fit_direct(X, y, lam, p, DirectERMSettings(method="gd", tol=1e-5))
    assert Q.converged
    # gradient-imbalance 1e-5 bounds the distance to the minimiser by ~cond × 1e-5
    assert np.linalg.norm(Q.S - R.S) <= 2e-4 * np.linalg.norm(R.S)
    assert abs(Q.objective - R.objective) <= 1e-8 * R.objective


def test_lambda_zero_is_the_threshold_of_the_zero_solution(problem):
    _, _, y, D, lz = problem
    assert fit_convex(D, y, 1.001 * lz, settings=TIGHT).rank == 0
    R = fit_convex(D, y, 0.98 * lz, settings=TIGHT)
    assert R.rank == 1 and R.eigenvalues[0] > 0


def test_warm_started_path_equals_cold_starts(problem):
    _, _, y, D, lz = problem
    lams = [0.01 * lz, 0.3 * lz, 0.1 * lz]
    path = fit_lambda_path(D, y, lams, settings=TIGHT)
    for lam, R in zip(lams, path):
        cold = fit_convex(D, y, lam, settings=TIGHT)
        assert R.lam == lam
        assert np.linalg.norm(R.S - cold.S) <= 1e-7 * np.linalg.norm(cold.S)


def test_non_convergence_is_reported_with_its_residual(problem):
    _, _, y, D, lz = problem
    with pytest.raises(ConvergenceError, match=r"residual \d\.\d+e[-+]\d+ > tol") as info:
        fit_convex(D, y, 1e-4 * lz, settings=ConvexERMSettings(tol=1e-10, max_iter=5))
    assert not info.value.result.converged and info.value.result.residual > 1e-10
    R = fit_convex(D, y, 1e-4 * lz, settings=ConvexERMSettings(tol=1e-10, max_iter=5, on_fail="return"))
    assert not R.converged and R.iterations == 5


@pytest.mark.parametrize("lam, p, match", [(-1.0, 3, "lam: expected"), (1.0, 0, "p: expected a width >= 1"),
                                           (float("nan"), 3, "lam: expected")])
def test_bad_erm_input(problem, lam, p, match):
    _, X, y, D, _ = problem
    with pytest.raises(ValueError, match=match):
        fit_convex(D, y, lam, p)
    with pytest.raises(ValueError, match=match):
        fit_direct(X, y, lam, p)
