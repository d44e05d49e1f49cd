"""Lotka–Volterra reduction: commutation test, shared eigenbasis, LV integration against the general M
flow, closed forms (orthogonal features, isotropic samples, Saxe) against integrations and a network."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from shockflow import models
from shockflow.data import Dataset
from shockflow.nqf.lotka_volterra import (
    NonCommutingDataError, commutation, integrate_lv, isotropic_mode_strength, isotropic_solution,
    isotropy_constant, lv_coefficients, mode_strengths, orthogonal_features_solution, saxe_mode_strength,
    shared_eigenbasis,
)
from shockflow.training import TrainSettings, train


def _commuting(m=30, p=4, seed=0, degenerate=False):
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((p, p)))[0]
    lam = rng.standard_normal((m, p))
    if degenerate:
        lam[:, 1] = lam[:, 0]
    return np.einsum("ik,mk,jk->mij", Q, lam, Q), Q, lam, rng


def _m_flow(A, y, M0, t):
    """Reference: Ṁ = −HM − MH, H = (4/m) Σ (Tr[MA_μ] − y_μ) A_μ (mse gradient flow), by solve_ivp."""
    m, p, _ = A.shape

    def rhs(_, Mf):
        M = Mf.reshape(p, p)
        H = 4.0 / m * np.einsum("m,mij->ij", np.einsum("ij,mij->m", M, A) - y, A)
        return (-H @ M - M @ H).ravel()

    s = solve_ivp(rhs, (t[0], t[-1]), M0.ravel(), t_eval=t, method="DOP853", rtol=1e-11, atol=1e-15)
    return s.y.T.reshape(-1, p, p)


@pytest.mark.parametrize("degenerate", [False, True])
def test_shared_eigenbasis_of_commuting_matrices(degenerate):
    A, Q, lam, _ = _commuting(degenerate=degenerate)
    c = commutation(A)
    assert c.commuting and c.commutator_norm < 1e-12 and c.offdiagonal_norm < 1e-12
    # the eigenvalue columns are those of lam up to order
    assert np.allclose(np.sort(c.eigenvalues, axis=1), np.sort(lam, axis=1), atol=1e-10)


def test_non_commuting_data_is_refused_with_the_measured_norm():
    A, _, _, rng = _commuting()
    noise = 1e-3 * rng.standard_normal(A.shape)
    B = A + 0.5 * (noise + noise.transpose(0, 2, 1))
    c = commutation(B)
    assert not c.commuting and 1e-4 < c.commutator_norm < 1e-2
    with pytest.raises(NonCommutingDataError, match=r"relative commutator norm 0\.00\d.*general M dynamics") as info:
        shared_eigenbasis(B)
    assert info.value.commutator_norm == pytest.approx(max(c.commutator_norm, c.offdiagonal_norm))


def test_lv_integration_matches_general_M_flow():
    """Commuting, non-orthogonal features: z_k = (PᵀMP)_kk from the full flow equals the LV solution."""
    A, Q, lam, rng = _commuting(m=30, p=4, seed=1)
    y = rng.standard_normal(30)
    t = np.linspace(0, 6, 7)
    M0 = Q @ np.diag([1e-3, 2e-3, 5e-4, 1e-3]) @ Q.T
    P, ev = shared_eigenbasis(A)
    r, C = lv_coefficients(ev, y)
    z_lv = integrate_lv(r, C, mode_strengths(M0, P), t)
    z_ref = mode_strengths(_m_flow(A, y, M0, t), P)
    assert np.max(np.abs(z_lv / z_ref - 1)) < 1e-7
    assert np.max(np.abs(z_lv[-1] / z_lv[0] - 1)) > 0.5  # the modes moved


def test_orthogonal_features_closed_form():
    rng = np.random.default_rng(2)
    r = np.array([1.5, 0.7, 0.0, -0.3])
    Ckk = np.array([0.5, 1.0, 0.8, 0.2])
    z0 = np.array([1e-4, 1e-3, 0.5, 0.2])
    t = np.linspace(0, 40, 41)
    z_cf = orthogonal_features_solution(t, r, Ckk, z0)
    z_lv = integrate_lv(r, np.diag(Ckk), z0, t)
    assert np.max(np.abs(z_cf / z_lv - 1)) < 1e-8
    assert np.allclose(z_cf[-1, :2], r[:2] / Ckk[:2], rtol=1e-4)


def test_isotropic_closed_form():
    """A_μ = an orthonormal basis of symmetric matrices is exactly isotropic (c = 1/m)."""
    p = 3
    basis = []
    for i in range(p):
        for j in range(i, p):
            E = np.zeros((p, p))
            E[i, j] = E[j, i] = 1.0 if i == j else 1 / np.sqrt(2)
            basis.append(E)
    A = np.array(basis)
    m = len(A)
    c, defect = isotropy_constant(A)
    assert c == pytest.approx(1 / m) and defect < 1e-14
    y = np.random.default_rng(3).standard_normal(m)
    Y = 4.0 / m * np.einsum("m,mij->ij", y, A)
    rng = np.random.default_rng(4)
    G = rng.standard_normal((p, p))
    M0 = 1e-3 * (G @ G.T + np.eye(p))
    t = np.linspace(0, 30, 7)
    ref = _m_flow(A, y, M0, t)
    assert np.max(np.abs(isotropic_solution(t, Y, c, M0) - ref)) < 1e-8 * np.max(np.abs(ref))
    # a singular start (rank one) goes through the formula as written
    M1 = 1e-3 * np.outer(G[0], G[0])
    ref1 = _m_flow(A, y, M1, t[:4])
    assert np.max(np.abs(isotropic_solution(t[:4], Y, c, M1) - ref1)) < 1e-7 * np.max(np.abs(ref1))
    gam, U = np.linalg.eigh(Y)
    z = mode_strengths(_m_flow(A, y, 1e-3 * np.eye(p), t), U)
    zc = isotropic_mode_strength(t, gam, c, 1e-3)
    assert np.max(np.abs(zc - z)) < 1e-7 * np.max(z)
    grow = gam > 0  # growing modes to full relative accuracy (decaying ones fall below the ODE's atol)
    assert np.max(np.abs(zc[:, grow] / z[:, grow] - 1)) < 1e-6


def test_saxe_mode_of_a_two_layer_linear_network():
    """f = a (w·x), whitened inputs (XᵀX = m I), balanced aligned start: ρ = a (w·β̂) follows Saxe's logistic."""
    from scipy.linalg import hadamard

    X = hadamard(8)[:, 1:4].astype(float)
    beta = np.array([0.6, -0.8, 0.0]) * 1.5
    tau, rho0 = np.linalg.norm(beta), 1e-3
    net = models.build("linear2", input_dim=3, hidden=1, loss="mse", init_scale=1.0)
    net.params["W1"][:] = np.sqrt(rho0) * beta / tau
    net.params["W2"][:] = np.sqrt(rho0)
    lr, steps = 2e-3, 2000
    rec = train(net, Dataset(X, X @ beta), TrainSettings(lr=lr, steps=steps, observe_every=20, n_snapshots=2),
                {"rho": lambda m: m.params["W2"][0, 0] * m.params["W1"][0] @ beta / tau}, quiet=True)
    t = rec.observables["step"] * lr
    rho = rec.observables["rho"]
    pred = saxe_mode_strength(t, tau, rho0)
    assert rho[-1] > 0.95 * tau  # the mode switched on inside the run
    assert np.max(np.abs(rho - pred)) < 0.01 * tau
