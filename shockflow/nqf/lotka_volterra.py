"""Lotka–Volterra reduction of a neural quadratic form with commuting data matrices (docs/theory.md §2).

Gradient flow of L = (1/m) Σ_μ (Tr[M A_μ] − y_μ)² (``mse``; time t = η × steps) is
Ṁ = −HM − MH, H = (4/m) Σ_μ Δ_μ A_μ. If A_μ = P Λ_μ Pᵀ for one orthogonal P, the mode strengths
z_k = (PᵀMP)_kk obey the generalised Lotka–Volterra system

    ż_k = (r_k − Σ_j C_kj z_j) z_k,      r_k = (κ/m) Σ_μ y_μ λ_μk,   C_kj = (κ/m) Σ_μ λ_μk λ_μj,

κ = 8 for ``mse`` and 4 for ``half_mse`` (docs/theory.md §2 writes the factor 8/m in front; here it is inside
r and C, as docs/theory.md §2 does for the orthogonal-feature rates). Closed forms:

* orthogonal features (C diagonal): z_k(t) = r_k z0 / (C_kk z0 + (r_k − C_kk z0) e^{−r_k t});
* isotropic samples, (1/m) Σ A_ij A_kl = (c/2)(δ_ik δ_jl + δ_il δ_jk), Y = (4/m) Σ_μ y_μ A_μ (mse):
  M(t) = e^{Yt} M0 [I + 8c Φ(t) M0]^{-1} e^{Yt}, Φ(t) = ∫_0^t e^{2Yτ} dτ; for M0 = z0 I the eigenmodes
  z_k = γ_k z0 / (4c z0 + (γ_k − 4c z0) e^{−2γ_k t});
* two-layer linear networks with whitened inputs (Saxe et al.), mse, balanced start:
  ρ(t) = τ ρ0 / (ρ0 + (τ − ρ0) e^{−4τt}).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


__all__ = [
    "NonCommutingDataError", "Commutation", "commutation", "shared_eigenbasis", "lv_coefficients",
    "mode_strengths", "integrate_lv", "orthogonal_features_solution", "isotropy_constant",
    "isotropic_solution", "isotropic_mode_strength", "saxe_mode_strength", "LOSS_RATE_FACTOR",
]

LOSS_RATE_FACTOR = {"mse": 8.0, "half_mse": 4.0}


class NonCommutingDataError(ValueError):
    """The data matrices do not commute; ``commutator_norm`` is the measured relative defect."""

    def __init__(self, message: str, commutator_norm: float):
        super().__init__(message)
        self.commutator_norm = commutator_norm


@dataclass(frozen=True)
class Commutation:
    """Result of :func:`commutation`.

    commutator_norm : max over the checked pairs of ‖[A_μ, A_ν]‖_F / (‖A_μ‖_F ‖A_ν‖_F)
    offdiagonal_norm : max_μ ‖offdiag(Pᵀ A_μ P)‖_F / ‖A_μ‖_F in the candidate basis P
    P : candidate shared eigenbasis (columns), from a generic combination Σ c_μ A_μ
    eigenvalues : λ_μk = (Pᵀ A_μ P)_kk, shape (m, p)
    commuting : both norms ≤ tol
    """

    commutator_norm: float
    offdiagonal_norm: float
    P: np.ndarray
    eigenvalues: np.ndarray
    commuting: bool
    tol: float


def _check_stack(A) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError(f"A: expected a stack of square matrices of shape (m, p, p), found {A.shape}")
    if not np.allclose(A, A.transpose(0, 2, 1), atol=1e-12 * max(1.0, float(np.max(np.abs(A))))):
        raise ValueError("A: the structure matrices must be symmetric")
    return A


def commutation(A, tol: float = 1e-8, max_pairs: int = 200, seed: int = 0) -> Commutation:
    """Measure whether the A_μ commute, and find a shared eigenbasis if they do.

    The basis diagonalises S = Σ_μ c_μ A_μ with random c; eigenvalue clusters of S (ties closer than
    √tol × spread) are split with a second random combination. Commutators are evaluated on all pairs
    if m(m−1)/2 ≤ ``max_pairs``, else on ``max_pairs`` random pairs (the off-diagonal test covers all μ).
    """
    A = _check_stack(A)
    m, p, _ = A.shape
    rng = np.random.default_rng(seed)
    norms = np.maximum(np.linalg.norm(A, axis=(1, 2)), 1e-300)
    An = A / norms[:, None, None]
    S = np.einsum("m,mij->ij", rng.standard_normal(m), An)
    lam, P = np.linalg.eigh(S)
    spread = max(float(lam.max() - lam.min()), 1e-300)
    start = 0
    S2 = np.einsum("m,mij->ij", rng.standard_normal(m), An)
    for k in range(1, p + 1):
        if k == p or lam[k] - lam[k - 1] > np.sqrt(tol) * spread:
            if k - start > 1:
                Q = P[:, start:k]
                _, R = np.linalg.eigh(Q.T @ S2 @ Q)
                P[:, start:k] = Q @ R
            start = k
    D = np.einsum("ik,mij,jl->mkl", P, A, P, optimize=True)
    diag = np.einsum("mkk->mk", D)
    off = D.copy()
    off[:, np.arange(p), np.arange(p)] = 0.0
    offdiag = float(np.max(np.linalg.norm(off, axis=(1, 2)) / norms))
    if m * (m - 1) // 2 <= max_pairs:
        i, j = np.triu_indices(m, 1)
    else:
        i = rng.integers(0, m, max_pairs)
        j = (i + rng.integers(1, m, max_pairs)) % m
    comm = 0.0
    for s in range(0, len(i), 256):
        a, b = An[i[s:s + 256]], An[j[s:s + 256]]
        c = a @ b - b @ a
        comm = max(comm, float(np.max(np.linalg.norm(c, axis=(1, 2))))) if len(c) else comm
    return Commutation(comm, offdiag, P, diag, bool(comm <= tol and offdiag <= tol), tol)


def shared_eigenbasis(A, tol: float = 1e-8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(P, λ) with A_μ = P diag(λ_μ) Pᵀ; raises :class:`NonCommutingDataError` with the measured norm."""
    c = commutation(A, tol=tol, seed=seed)
    if not c.commuting:
        raise NonCommutingDataError(
            f"A: the data matrices do not commute (relative commutator norm {c.commutator_norm:.3g}, off-diagonal "
            f"residual in the best common basis {c.offdiagonal_norm:.3g}, tolerance {tol:g}); the Lotka–Volterra "
            "reduction does not apply. Use the general M dynamics instead "
            "(shockflow.nqf.order_parameters.simulate_order_parameters) or raise tol.",
            max(c.commutator_norm, c.offdiagonal_norm))
    return c.P, c.eigenvalues


def lv_coefficients(eigenvalues: np.ndarray, y: np.ndarray, loss: str = "mse") -> tuple[np.ndarray, np.ndarray]:
    """r_k = (κ/m) Σ_μ y_μ λ_μk and C_kj = (κ/m) Σ_μ λ_μk λ_μj (κ = 8 for mse, 4 for half_mse)."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if lam.ndim != 2 or y.shape != (lam.shape[0],):
        raise ValueError(f"y: expected one target per sample, shape ({lam.shape[0]},), found {y.shape}")
    if loss not in LOSS_RATE_FACTOR:
        raise ValueError(f"loss: expected one of {', '.join(LOSS_RATE_FACTOR)}, found {loss!r}")
    k = LOSS_RATE_FACTOR[loss] / lam.shape[0]
    return k * (lam.T @ y), k * (lam.T @ lam)


def mode_strengths(M: np.ndarray, P: np.ndarray) -> np.ndarray:
    """z_k = (Pᵀ M P)_kk for one M (p, p) or a stack (..., p, p)."""
    return np.einsum("ik,...ij,jk->...k", P, M, P, optimize=True)


def integrate_lv(r, C, z0, t, rtol: float = 1e-10, atol: float = 1e-12) -> np.ndarray:
    """z(t) of ż_k = (r_k − Σ_j C_kj z_j) z_k at the times ``t`` (increasing, t[0] = initial time).

    Integrated in u = ln z (u̇_k = r_k − Σ_j C_kj e^{u_j}) with the implicit Radau method and the exact
    Jacobian, so modes many decades below their final size keep full relative accuracy.
    """
    r, C = np.asarray(r, float), np.asarray(C, float)
    z0 = np.asarray(z0, float)
    t = np.asarray(t, float)
    if np.any(z0 <= 0):
        raise ValueError("z0: mode strengths must be positive (a zero mode stays zero)")
    if np.any(np.diff(t) < 0):
        raise ValueError("t: expected increasing times")

    def rhs(_, u):
        return r - C @ np.exp(u)

    def jac(_, u):
        return -C * np.exp(u)[None, :]

    from scipy.integrate import solve_ivp

    sol = solve_ivp(rhs, (t[0], t[-1]), np.log(z0), method="Radau", t_eval=t, jac=jac, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"integrate_lv: the integrator failed: {sol.message}")
    return np.exp(sol.y.T)


def orthogonal_features_solution(t, r, C_diag, z0) -> np.ndarray:
    """z_k(t) = r_k z0 / (C_kk z0 + (r_k − C_kk z0) e^{−r_k t}) (r_k = 0: z0/(1 + C_kk z0 t)); shape (len(t), p)."""
    t = np.asarray(t, float)[:, None]
    r, C, z0 = (np.broadcast_to(np.asarray(v, float), np.shape(r)) for v in (r, C_diag, z0))
    out = np.empty((t.shape[0], r.size))
    zero = r == 0
    with np.errstate(over="ignore"):
        e = np.exp(-r[~zero] * t)
        out[:, ~zero] = r[~zero] * z0[~zero] / (C[~zero] * z0[~zero] + (r[~zero] - C[~zero] * z0[~zero]) * e)
    out[:, zero] = z0[zero] / (1.0 + C[zero] * z0[zero] * t)
    return out


def isotropy_constant(A) -> tuple[float, float]:
    """(c, defect): least-squares c with (1/m) Σ A_ij A_kl ≈ (c/2)(δ_ik δ_jl + δ_il δ_jk), relative defect."""
    A = _check_stack(A)
    m, p, _ = A.shape
    T = np.einsum("mij,mkl->ijkl", A, A, optimize=True) / m
    I = np.eye(p)
    E = 0.5 * (np.einsum("ik,jl->ijkl", I, I) + np.einsum("il,jk->ijkl", I, I))
    c = float(np.sum(T * E) / np.sum(E * E))
    return c, float(np.linalg.norm(T - c * E) / max(np.linalg.norm(T), 1e-300))


def isotropic_solution(t, Y, c, M0) -> np.ndarray:
    """M(t) = e^{Yt} M0 [I + 8c Φ(t) M0]^{-1} e^{Yt} (mse), for each time in ``t``: shape (len(t), p, p).

    Evaluated in the eigenbasis of Y. For invertible M0 through the equivalent, overflow-free inverse
    N(t) = M(t)^{-1} = e^{-Yt} M0^{-1} e^{-Yt} + 8c ∫_0^t e^{-2Y(t-τ)} dτ (the Riccati equation is linear in
    N), inverted with diagonal scaling; otherwise by the formula as written.
    """
    Y, M0 = np.asarray(Y, float), np.asarray(M0, float)
    gam, U = np.linalg.eigh(Y)
    M0t = U.T @ M0 @ U
    invertible = np.linalg.cond(M0t) < 1e12
    N0 = np.linalg.inv(M0t) if invertible else None
    out = []
    for s in np.atleast_1d(np.asarray(t, float)):
        x = 2 * gam * s
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if invertible:
                D = np.exp(-gam * s)
                psi = np.where(np.abs(x) > 1e-12, -np.expm1(-x) / (2 * gam), s)
                N = D[:, None] * N0 * D[None, :] + 8 * c * np.diag(psi)
                sc = 1.0 / np.sqrt(np.diag(N))
                Mt = sc[:, None] * np.linalg.inv(sc[:, None] * N * sc[None, :]) * sc[None, :]
            else:
                E = np.exp(gam * s)
                phi = np.where(np.abs(x) > 1e-12, np.expm1(x) / (2 * gam), s)
                Mt = E[:, None] * (M0t @ np.linalg.solve(np.eye(len(gam)) + 8 * c * phi[:, None] * M0t,
                                                          np.diag(E)))
        out.append(U @ (0.5 * (Mt + Mt.T)) @ U.T)
    return np.asarray(out)


def isotropic_mode_strength(t, gamma, c, z0) -> np.ndarray:
    """z_k(t) = γ_k z0 / (4c z0 + (γ_k − 4c z0) e^{−2γ_k t}), shape (len(t), len(gamma))."""
    t = np.asarray(t, float)[:, None]
    g = np.atleast_1d(np.asarray(gamma, float))
    with np.errstate(over="ignore"):
        return g * z0 / (4 * c * z0 + (g - 4 * c * z0) * np.exp(-2 * g * t))


def saxe_mode_strength(t, tau, rho0) -> np.ndarray:
    """ρ(t) = τ ρ0 / (ρ0 + (τ − ρ0) e^{−4τt}): a mode of a two-layer linear net, whitened inputs, mse."""
    t = np.asarray(t, float)
    with np.errstate(over="ignore"):
        return tau * rho0 / (rho0 + (tau - rho0) * np.exp(-4.0 * tau * t))
