"""Closed SGD dynamics of the order parameters (μ, M) of a neural quadratic form (docs/theory.md §2).

For f_x = f0 + g·μ + μᵀBμ + Tr[W Wᵀ A] (see :mod:`shockflow.nqf.structure_matrices`) the gradient
of the loss on a batch with respect to unit i is v + H w_i with

    v = Σ_B ℓ'_x (g + 2Bμ),      H = Σ_B 2 ℓ'_x A(x),

ℓ'_x = ∂(batch-mean loss)/∂f_x: (2/|B|)(f_x − y_x) for ``mse`` (docs/theory.md §2's L = (1/m)Σ(f − y)²),
(1/|B|)(f_x − y_x) for ``half_mse``. One SGD step with weight decay λ, w_i ← (1 − ηλ) w_i − η(v + H w_i)
(the training loop's decoupled decay; for plain SGD the "l2" mode is the same update), gives exactly

    μ' = q μ − η(d v + H μ),                                         q = 1 − ηλ,
    M' = q² M − η q (v μᵀ + μ vᵀ + H M + M H) + η² (d v vᵀ + v μᵀ H + H μ vᵀ + H M H),

which is docs/theory.md §2's update (q = 1); to first order in η the decay is the −γM term with γ = 2λ.

Compression (docs/theory.md §2): the update depends on the number of units d only through d v and d v vᵀ, so
d' units with μ' = μ, M' = (d/d') M, A' = (d'/d) A, η' = η d/d', λ' = λ d'/d reproduce it exactly; a
configuration of d' units with those (μ, M') exists iff d' ≥ k_V + 1, k_V = rank of the unit
covariance M − μμᵀ/d (:func:`compress`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shockflow.nqf.structure_matrices import QuadraticForm

__all__ = ["OrderState", "loss_derivative", "order_parameter_step", "unit_step", "simulate_order_parameters",
           "simulate_units", "Compression", "compress", "compressed_form", "OrderTrajectory"]

_LOSS_FACTOR = {"mse": 2.0, "half_mse": 1.0}


@dataclass(frozen=True)
class OrderState:
    """Order parameters μ (p,) and M (p, p)."""

    mu: np.ndarray
    M: np.ndarray

    @classmethod
    def from_units(cls, W: np.ndarray) -> "OrderState":
        W = np.asarray(W, dtype=np.float64)
        return cls(W.sum(axis=1), W @ W.T)


def loss_derivative(form: QuadraticForm, f: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ℓ'_x for the batch-mean loss of ``form.loss`` (shape (n,))."""
    if form.loss not in _LOSS_FACTOR:
        raise ValueError(f"loss: the order-parameter dynamics need 'mse' or 'half_mse', found {form.loss!r}")
    return _LOSS_FACTOR[form.loss] * (f - y) / f.shape[0]


def _v_and_H(form: QuadraticForm, y: np.ndarray, mu: np.ndarray, M: np.ndarray):
    f = form.predict(mu, M)
    lp = loss_derivative(form, f, y)
    v = lp @ form.g + 2.0 * np.einsum("n,nij,j->i", lp, form.B, mu, optimize=True)
    H = 2.0 * np.einsum("n,nij->ij", lp, form.A, optimize=True)
    return v, H


def order_parameter_step(form: QuadraticForm, y: np.ndarray, state: OrderState, lr: float,
                         weight_decay: float = 0.0) -> OrderState:
    """One SGD step of (μ, M) on the samples of ``form`` (already restricted to the batch)."""
    mu, M, d, eta = state.mu, state.M, form.units, float(lr)
    v, H = _v_and_H(form, y, mu, M)
    q = 1.0 - eta * weight_decay
    vmu = np.outer(v, mu)
    HM = H @ M
    Hmu = H @ mu
    mu_new = q * mu - eta * (d * v + Hmu)
    M_new = (q * q * M - eta * q * (vmu + vmu.T + HM + HM.T)
             + eta * eta * (d * np.outer(v, v) + np.outer(v, Hmu) + np.outer(Hmu, v) + HM @ H))
    return OrderState(mu_new, 0.5 * (M_new + M_new.T))


def unit_step(form: QuadraticForm, y: np.ndarray, W: np.ndarray, lr: float, weight_decay: float = 0.0) -> np.ndarray:
    """Reference: the same SGD step on the explicit units W (p, d) of the quadratic form."""
    v, H = _v_and_H(form, y, W.sum(axis=1), W @ W.T)
    return (1.0 - lr * weight_decay) * W - lr * (v[:, None] + H @ W)


@dataclass(frozen=True)
class OrderTrajectory:
    """μ (k, p) and M (k, p, p) at ``steps`` (k,), with the loss of the expansion on the full data."""

    steps: np.ndarray
    mu: np.ndarray
    M: np.ndarray
    loss: np.ndarray


def _batches(batches, steps: int, n: int):
    if batches is None:
        full = np.arange(n)
        return (full for _ in range(steps))
    return iter(batches)


def _full_loss(form, y, mu, M):
    """The loss of the expansion on the full data (mse: mean r², half_mse: mean r²/2)."""
    with np.errstate(over="ignore", invalid="ignore"):
        r = form.predict(mu, M) - y
        return float(np.mean(r * r) * _LOSS_FACTOR[form.loss] / 2.0)


def simulate_order_parameters(form: QuadraticForm, y: np.ndarray, state: OrderState, lr: float, steps: int, *,
                              batches=None, weight_decay: float = 0.0, record_every: int = 1) -> OrderTrajectory:
    """Run ``steps`` updates (full batch, or the index arrays of ``batches``) and record every ``record_every``.

    Stops with the step number if μ or M becomes non-finite.
    """
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (form.samples,):
        raise ValueError(f"y: expected shape ({form.samples},) (one target per sample of the form), found {y.shape}")
    it = _batches(batches, steps, form.samples)
    rec_s, rec_mu, rec_M, rec_L = [], [], [], []
    for t in range(steps + 1):
        if t % record_every == 0 or t == steps:
            rec_s.append(t)
            rec_mu.append(state.mu)
            rec_M.append(state.M)
            rec_L.append(_full_loss(form, y, state.mu, state.M))
        if t == steps:
            break
        idx = next(it)
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values are caught just below
            state = order_parameter_step(form.subset(idx), y[idx], state, lr, weight_decay)
        if not (np.all(np.isfinite(state.M)) and np.all(np.isfinite(state.mu))):
            raise FloatingPointError(f"order-parameter dynamics diverged at step {t + 1}: M or μ is non-finite "
                                     f"(lr = {lr}); lower the learning rate")
    return OrderTrajectory(np.asarray(rec_s), np.asarray(rec_mu), np.asarray(rec_M), np.asarray(rec_L))


def simulate_units(form: QuadraticForm, y: np.ndarray, W: np.ndarray, lr: float, steps: int, *, batches=None,
                   weight_decay: float = 0.0) -> np.ndarray:
    """Reference: explicit-unit SGD on the quadratic form; returns the final W."""
    y = np.asarray(y, dtype=np.float64)
    it = _batches(batches, steps, form.samples)
    for _ in range(steps):
        idx = next(it)
        W = unit_step(form.subset(idx), y[idx], W, lr, weight_decay)
    return W


# ----------------------------------------------------------------------------------- compression
@dataclass(frozen=True)
class Compression:
    """d' = k_V + 1 units ``W`` (p, d') realising μ' = μ, M' = (d/d') M; scale factors for A, η, λ."""

    units: int            # d'
    original_units: int   # d
    k_V: int
    W: np.ndarray
    A_scale: float        # d'/d
    lr_scale: float       # d/d'
    M_scale: float        # d/d' (M' = M_scale · M)


def compress(state: OrderState, d: int, units: int | None = None, rtol: float = 1e-9) -> Compression:
    """Explicit d' units with Σ w'_i = μ and Σ w'_i w'_iᵀ = (d/d') M (docs/theory.md §2 compression).

    w'_i = μ/d' + δ_i with Σ δ_i = 0 and Σ δ_i δ_iᵀ = (d/d')(M − μμᵀ/d) = Σ_k c_k e_k e_kᵀ (rank k_V);
    δ_i = Σ_k √c_k e_k S_ik with S (d' × k_V) orthonormal columns orthogonal to (1, …, 1), which needs
    d' ≥ k_V + 1 (the default).
    """
    mu, M = np.asarray(state.mu, float), np.asarray(state.M, float)
    d = int(d)
    cov = M - np.outer(mu, mu) / d
    lam, vec = np.linalg.eigh(0.5 * (cov + cov.T))
    scale = max(float(np.max(np.abs(lam))), float(np.max(np.abs(M))), 1e-300)
    if lam.min() < -1e-8 * scale:
        raise ValueError(f"state: M − μμᵀ/d has a negative eigenvalue {lam.min():.3g}; (μ, M) do not come from "
                         f"{d} real units")
    keep = lam > rtol * scale
    k_V = int(np.count_nonzero(keep))
    dp = k_V + 1 if units is None else int(units)
    if dp < k_V + 1:
        raise ValueError(f"units: expected at least k_V + 1 = {k_V + 1} units to realise the state, found {dp}")
    # S: d' × k_V with orthonormal columns orthogonal to the all-ones vector
    basis = np.linalg.qr(np.column_stack([np.ones(dp), np.eye(dp)[:, : dp - 1]]))[0][:, 1:]
    S = basis[:, :k_V]
    c = (d / dp) * lam[keep]
    delta = (vec[:, keep] * np.sqrt(c)) @ S.T  # (p, d')
    W = mu[:, None] / dp + delta
    return Compression(dp, d, k_V, W, dp / d, d / dp, d / dp)


def compressed_form(form: QuadraticForm, compression: Compression) -> QuadraticForm:
    """The quadratic form with A scaled by d'/d and d' units (g, B, f0 unchanged)."""
    return QuadraticForm(form.f0, form.g, form.B, form.A * compression.A_scale, compression.units,
                         form.layout, form.loss)
