"""The direct route to the ERM: train W of the NumPy quadratic network (``form="trace"``).

The network is :class:`shockflow.models.quadratic.QuadraticNet` with ``form="trace"``,
f_W(x) = Tr[S Z], S = WᵀW/√(p d), W of shape (p, d), and the objective

    J(W) = Σ_μ (y_μ − f_W(x_μ))² + λ_W ‖W‖_F²,      λ_W = λ / √(p d).

**Equivalence with the convex route (derivation).** For every W, S(W) = WᵀW/√(p d) ⪰ 0 has
rank ≤ p and ‖W‖_F² = Tr(WᵀW) = √(p d) Tr S = √(p d) ‖S‖_* (the nuclear norm of a PSD matrix is
its trace). Hence J(W) = Φ(S(W)) identically, with Φ(S) = Σ_μ (y_μ − Tr[S Z_μ])² + λ ‖S‖_* the
objective of :mod:`shockflow.scaling.convex_erm`, not only at the optimum. The map W ↦ S(W) is
onto {S ⪰ 0, rank S ≤ p} (take W = (p d)^{1/4} diag(√σ) Uᵀ, zero-padded), so
min_W J = min_{S ⪰ 0, rank ≤ p} Φ and every minimiser of one gives a minimiser of the other.
In the mean-loss convention of the model (``loss="mse"``, L = (1/n) Σ (f − y)²) the same
problem is L + (λ_W/n)‖W‖_F², i.e. a weight decay coefficient 2λ/(n √(p d)) in the
(c/2)‖θ‖² convention of :class:`shockflow.training.TrainSettings` (``weight_decay_mode="l2"``).

Two optimisers of J, each with the stated stopping rule

    ‖∇J(W)‖_F ≤ tol · (‖∇_W Σ_μ(y_μ − f_μ)²‖_F + ‖2 λ_W W‖_F)

(the two gradient terms cancel at a stationary point; their imbalance is scale-free):
``method="gd"``: gradient descent with a backtracking (Armijo, halve on failure, grow ×1.25
after success) step — J is not globally smooth in W, so a fixed step has no safe value;
``method="lbfgs"``: scipy's L-BFGS-B on the flattened W.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from shockflow.models.quadratic import QuadraticNet
from shockflow.scaling.convex_erm import check_lambda, check_width

__all__ = ["DirectERMSettings", "DirectResult", "DirectConvergenceError", "fit_direct", "weight_penalty"]


def weight_penalty(lam: float, p: int, d: int) -> float:
    """λ_W = λ / √(p d): the ℓ2 coefficient on W equivalent to λ‖S‖_* (module docstring)."""
    return float(lam) / np.sqrt(p * d)


@dataclass(frozen=True)
class DirectERMSettings:
    method: str = "lbfgs"         # "lbfgs" or "gd"
    tol: float = 1e-7
    max_iter: int = 200000
    init_scale: float = 0.3       # W entries ~ N(0, init_scale²) (QuadraticNet trace form)
    seed: int = 0
    on_fail: str = "raise"

    def __post_init__(self):
        if self.method not in ("lbfgs", "gd"):
            raise ValueError(f"DirectERMSettings.method: unknown value {self.method!r}; valid values: lbfgs, gd")
        if isinstance(self.tol, bool) or not isinstance(self.tol, numbers.Real) or not (0 < self.tol < 1):
            raise ValueError(f"DirectERMSettings.tol: expected a number in (0, 1), found {self.tol!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"DirectERMSettings.max_iter: expected a positive integer, found {self.max_iter!r}")
        if not (isinstance(self.init_scale, numbers.Real) and self.init_scale > 0):
            raise ValueError(f"DirectERMSettings.init_scale: expected a number > 0, found {self.init_scale!r}")
        if self.on_fail not in ("raise", "return"):
            raise ValueError(f"DirectERMSettings.on_fail: unknown value {self.on_fail!r}; valid values: raise, return")


@dataclass(frozen=True, eq=False)
class DirectResult:
    W: np.ndarray
    S: np.ndarray
    lam: float
    p: int
    objective: float
    train_loss: float
    iterations: int
    residual: float            # relative gradient imbalance (module docstring)
    converged: bool
    method: str


class DirectConvergenceError(RuntimeError):
    def __init__(self, message: str, result: DirectResult):
        super().__init__(message)
        self.result = result


def fit_direct(X: np.ndarray, y: np.ndarray, lam: float, p: int,
               settings: DirectERMSettings = DirectERMSettings()) -> DirectResult:
    """Minimise J(W) (module docstring) for the trace-form quadratic network of width p."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X: expected inputs of shape (n, d), found {X.shape}")
    n, d = X.shape
    if y.shape != (n,):
        raise ValueError(f"y: expected shape ({n},), found {y.shape}")
    lam = check_lambda(lam)
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p < 1:
        raise ValueError(f"p: expected a width >= 1, found {p!r}")
    p = int(p)
    lw = weight_penalty(lam, p, d)
    model = QuadraticNet(d, p, form="trace", loss="mse", init_scale=settings.init_scale, seed=settings.seed)

    def evaluate(w):
        model.set_parameter_vector(w)
        loss, grads = model.loss_and_grad(X, y)
        g_data = n * grads["W"].ravel()
        g_pen = 2.0 * lw * w
        J = n * loss + lw * float(w @ w)
        return J, g_data, g_pen

    def residual_of(g_data, g_pen):
        scale = np.linalg.norm(g_data) + np.linalg.norm(g_pen)
        return float(np.linalg.norm(g_data + g_pen) / scale) if scale > 0 else 0.0

    w = model.parameter_vector()
    it = 0
    if settings.method == "lbfgs":
        count = [0]

        def fun(v):
            J, gd, gp = evaluate(v)
            count[0] += 1
            if not np.isfinite(J):
                raise FloatingPointError(f"fit_direct: objective became {J} at evaluation {count[0]} (lbfgs)")
            return J, gd + gp

        # scipy's own tests are made strict; the stated criterion is checked afterwards and the
        # run is continued (restarted from its end point) while it does not hold
        while it < settings.max_iter:
            out = scipy.optimize.minimize(fun, w, jac=True, method="L-BFGS-B",
                                          options=dict(maxiter=settings.max_iter - it, maxcor=30,
                                                       ftol=1e-16, gtol=1e-14, maxls=50))
            it += max(int(out.nit), 1)
            moved = not np.array_equal(out.x, w)
            w = out.x
            _, gd, gp = evaluate(w)
            if residual_of(gd, gp) <= settings.tol or not moved:
                break
    else:
        J, gd, gp = evaluate(w)
        eta = 1.0 / max(np.linalg.norm(gd + gp), 1.0)
        while it < settings.max_iter and residual_of(gd, gp) > settings.tol:
            g = gd + gp
            gg = float(g @ g)
            while True:
                w_new = w - eta * g
                J_new, gd_new, gp_new = evaluate(w_new)
                if np.isfinite(J_new) and J_new <= J - 0.5 * eta * gg:
                    break
                eta *= 0.5
                if eta < 1e-300:
                    raise FloatingPointError(f"fit_direct: GD step underflow at iteration {it}")
            w, J, gd, gp = w_new, J_new, gd_new, gp_new
            eta *= 1.25
            it += 1
    J, gd, gp = evaluate(w)
    model.set_parameter_vector(w)
    residual = residual_of(gd, gp)
    converged = residual <= settings.tol
    W = model.params["W"].copy()
    S = model.gram()
    res = DirectResult(W=W, S=S, lam=lam, p=p, objective=float(J),
                       train_loss=float(model.loss(X, y)), iterations=it, residual=residual,
                       converged=converged, method=settings.method)
    if not converged and settings.on_fail == "raise":
        raise DirectConvergenceError(
            f"fit_direct ({settings.method}): no convergence in max_iter = {settings.max_iter} iterations "
            f"(λ = {lam}, p = {p}): relative gradient residual {residual:.3e} > tol = {settings.tol:.1e}", res)
    return res
