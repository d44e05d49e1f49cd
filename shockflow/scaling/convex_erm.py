"""The convex route to the ERM of the quadratic network (docs/theory.md §4).

    Φ(S) = Σ_μ (y_μ − Tr[S Z_μ])² + λ ‖S‖_*    over S ⪰ 0 with rank(S) ≤ p,

solved by accelerated proximal gradient (FISTA, Beck & Teboulle 2009) with function-value
restart (O'Donoghue & Candès 2015). On S ⪰ 0 the nuclear norm is Tr S, and the proximal map of
t(λ‖·‖_* + ι{S ⪰ 0, rank ≤ p}) at a symmetric V = Q diag(v) Qᵀ is exact and spectral:

    prox(V) = Σ_{i ∈ top p} max(v_i − tλ, 0) q_i q_iᵀ

(eigenvalue soft-thresholding, negative parts dropped, the p largest kept). For p ≥ d the
problem is convex and FISTA converges to its minimiser; for p < d the rank constraint makes
it non-convex and the iteration converges to a fixed point of the prox-gradient map, which the
tests check against the direct route (:mod:`shockflow.scaling.direct_erm`).

Step t = 1/L with L = 2 λ_max(A*A) (cached on the :class:`QuadraticDesign`, so λ paths and
width sweeps on the same data reuse it). Each iteration costs one adjoint A*(r) (n d²), one
factored evaluation A(S) (n d rank S) and one symmetric eigendecomposition (d³); A is linear,
so A(Y) at the extrapolated point is a combination of stored vectors.

Convergence criterion (stated, not an iteration count): at the returned S,

    residual = ‖S − prox(S − t∇F(S))‖_F / ‖S‖_F ≤ tol        (relative prox-gradient mapping,
                                                             0 when S = prox(…) = 0)

and the relative objective change of the last step ≤ tol_objective. A run that reaches
``max_iter`` first raises :class:`ConvergenceError` carrying the last iterate and its residual
(``on_fail="return"`` returns it with ``converged=False`` instead, for sweeps that record it).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from shockflow.scaling.design import QuadraticDesign

__all__ = ["ConvexERMSettings", "ERMResult", "ConvergenceError", "fit_convex", "fit_lambda_path",
           "lambda_zero", "prox_nuclear_psd"]


@dataclass(frozen=True)
class ConvexERMSettings:
    """FISTA settings: tolerances of the stated criterion, iteration cap, restart rule, failure mode."""

    tol: float = 1e-6
    tol_objective: float = 1e-10
    max_iter: int = 20000
    restart: str = "function"     # "function" (objective increase resets momentum) or "none"
    on_fail: str = "raise"        # "raise" ConvergenceError, or "return" the iterate with converged=False

    def __post_init__(self):
        for name in ("tol", "tol_objective"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 < v < 1):
                raise ValueError(f"ConvexERMSettings.{name}: expected a number in (0, 1), found {v!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"ConvexERMSettings.max_iter: expected a positive integer, found {self.max_iter!r}")
        if self.restart not in ("function", "none"):
            raise ValueError(f"ConvexERMSettings.restart: unknown value {self.restart!r}; valid values: function, none")
        if self.on_fail not in ("raise", "return"):
            raise ValueError(f"ConvexERMSettings.on_fail: unknown value {self.on_fail!r}; valid values: raise, return")


@dataclass(frozen=True, eq=False)
class ERMResult:
    """Ŝ = Σ_k σ_k u_k u_kᵀ (σ decreasing, > 0) and how it was reached."""

    S: np.ndarray
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray
    lam: float
    p: int
    objective: float
    train_loss: float          # (1/n) Σ_μ (y_μ − Tr[Ŝ Z_μ])²
    iterations: int
    residual: float
    converged: bool
    restarts: int = 0
    history: dict = field(default_factory=dict, repr=False)

    @property
    def rank(self) -> int:
        return int(self.eigenvalues.size)


class ConvergenceError(RuntimeError):
    """The solver hit its iteration cap; ``result`` holds the last iterate and its residual."""

    def __init__(self, message: str, result: ERMResult):
        super().__init__(message)
        self.result = result


def check_lambda(lam) -> float:
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not np.isfinite(lam) or lam < 0:
        raise ValueError(f"lam: expected a finite regularisation strength λ >= 0, found {lam!r}")
    return float(lam)


def check_width(p, d: int) -> int:
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ValueError(f"p: expected a width >= 1, found {p!r}")
    return int(min(p, d))


def prox_nuclear_psd(V: np.ndarray, threshold: float, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-pairs (σ decreasing > 0, U) of prox_{threshold ‖·‖_* + ι{⪰0, rank ≤ p}}(V), V symmetric."""
    d = V.shape[0]
    if p < d // 4:
        w, Q = scipy.linalg.eigh(V, subset_by_index=[d - p, d - 1], check_finite=False)
    else:
        w, Q = np.linalg.eigh(V)
    w, Q = w[::-1], Q[:, ::-1]
    w = w[:p] - threshold
    keep = w > 0
    return w[keep].copy(), np.ascontiguousarray(Q[:, :p][:, keep])


def _dense(U: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    return (U * sigma) @ U.T


def lambda_zero(design: QuadraticDesign, y: np.ndarray) -> float:
    """The smallest λ with Ŝ = 0: 2 max(0, λ_max(A*y)) (KKT at S = 0)."""
    M = design.adjoint(np.asarray(y, dtype=np.float64))
    return float(2.0 * max(0.0, np.linalg.eigvalsh(M)[-1]))


def fit_convex(design: QuadraticDesign, y: np.ndarray, lam: float, p: int | None = None,
               settings: ConvexERMSettings = ConvexERMSettings(), *, S0: np.ndarray | None = None,
               record_history: bool = False) -> ERMResult:
    """Minimise Φ(S) (module docstring) by FISTA from ``S0`` (default 0); ``p=None`` means p = d."""
    if not isinstance(design, QuadraticDesign):
        raise TypeError(f"design: expected a QuadraticDesign, found {type(design).__name__}")
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (design.n,):
        raise ValueError(f"y: expected shape ({design.n},), found {y.shape}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y: contains NaN or inf")
    lam = check_lambda(lam)
    d = design.d
    p = d if p is None else check_width(p, d)
    L = 2.0 * design.lambda_max() * (1.0 + 1e-6)
    t = 1.0 / L

    if S0 is None:
        sig, U = np.zeros(0), np.zeros((d, 0))
    else:
        S0 = np.asarray(S0, dtype=np.float64)
        if S0.shape != (d, d):
            raise ValueError(f"S0: expected a ({d}, {d}) warm start, found {S0.shape}")
        sig, U = prox_nuclear_psd(0.5 * (S0 + S0.T), 0.0, p)
    S = _dense(U, sig)
    AS = design.apply_factored(U, sig)
    phi = float(np.sum((AS - y) ** 2) + lam * np.sum(sig))
    Y, AY, theta = S, AS, 1.0
    restarts, it = 0, 0
    hist = {"objective": [phi], "residual": []} if record_history else {}
    converged = False
    residual = np.inf

    def step_from(Yp, AYp):
        V = Yp - t * 2.0 * design.adjoint(AYp - y)
        return prox_nuclear_psd(V, t * lam, p)

    while it < settings.max_iter:
        it += 1
        sig_n, U_n = step_from(Y, AY)
        S_n = _dense(U_n, sig_n)
        AS_n = design.apply_factored(U_n, sig_n)
        phi_n = float(np.sum((AS_n - y) ** 2) + lam * np.sum(sig_n))
        if not np.isfinite(phi_n):
            raise FloatingPointError(f"fit_convex: objective became {phi_n} at iteration {it} (λ = {lam}, p = {p})")
        if settings.restart == "function" and phi_n > phi and theta > 1.0:
            # momentum overshoot: discard the step and restart from the last iterate
            Y, AY, theta = S, AS, 1.0
            restarts += 1
            continue
        scale = max(np.linalg.norm(S_n), np.linalg.norm(Y))
        res_y = np.linalg.norm(S_n - Y) / scale if scale > 0 else 0.0
        dphi = abs(phi - phi_n) / max(abs(phi_n), np.finfo(float).tiny)
        theta_n = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * theta * theta))
        beta = (theta - 1.0) / theta_n
        if record_history:
            hist["objective"].append(phi_n)
            hist["residual"].append(res_y)
        S_prev, AS_prev = S, AS
        S, AS, U, sig, phi, theta = S_n, AS_n, U_n, sig_n, phi_n, theta_n
        if res_y <= settings.tol and dphi <= settings.tol_objective:
            # stated criterion, evaluated at the iterate itself (not the extrapolated point)
            sig_c, U_c = step_from(S, AS)
            S_c = _dense(U_c, sig_c)
            nS = np.linalg.norm(S)
            residual = np.linalg.norm(S_c - S) / nS if nS > 0 else float(np.linalg.norm(S_c) > 0)
            if residual <= settings.tol:
                converged = True
                break
            Y, AY, theta = S, AS, 1.0
            continue
        Y = S + beta * (S - S_prev)
        AY = AS + beta * (AS - AS_prev)

    if not converged and np.isinf(residual):
        sig_c, U_c = step_from(S, AS)
        nS = np.linalg.norm(S)
        residual = np.linalg.norm(_dense(U_c, sig_c) - S) / nS if nS > 0 else 0.0
    result = ERMResult(S=S, eigenvalues=sig, eigenvectors=U, lam=lam, p=p, objective=phi,
                       train_loss=float(np.mean((AS - y) ** 2)), iterations=it, residual=float(residual),
                       converged=converged, restarts=restarts, history=hist)
    if not converged and settings.on_fail == "raise":
        raise ConvergenceError(
            f"fit_convex: no convergence in max_iter = {settings.max_iter} iterations (λ = {lam}, p = {p}, "
            f"n = {design.n}, d = {d}): relative prox-gradient residual {residual:.3e} > tol = {settings.tol:.1e}",
            result)
    return result


def fit_lambda_path(design: QuadraticDesign, y: np.ndarray, lams, p: int | None = None,
                    settings: ConvexERMSettings = ConvexERMSettings()) -> list[ERMResult]:
    """Fits for every λ in ``lams`` (results in the given order), solved from the largest λ down,
    each warm-started from the previous solution; the design (and its λ_max) is shared."""
    lams = np.asarray(lams, dtype=np.float64).ravel()
    if lams.size == 0:
        raise ValueError("lams: expected at least one λ, found none")
    for lam in lams:
        check_lambda(lam)
    order = np.argsort(-lams, kind="stable")
    out: list[ERMResult | None] = [None] * lams.size
    S0 = None
    for k in order:
        res = fit_convex(design, y, float(lams[k]), p, settings, S0=S0)
        out[k] = res
        S0 = res.S
    return out  # type: ignore[return-value]
