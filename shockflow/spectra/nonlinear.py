"""The nonlinear extension of docs/theory.md §3: μ₁, μ₂ by Gauss–Hermite quadrature, ε_o, ε_c, and a
one-step simulation that tests them.

Student f(x) = σ(W x) (σ elementwise, N outputs), teacher σ(W* x), loss ½ E|f − f*|²,
x ~ N(0, I_M). For row i, with h = w_i·x and h* = w*_i·x jointly Gaussian, Stein's lemma gives
the population gradient exactly,

    ∇_{w_i} = E[(σ(h) − σ(h*)) σ'(h) x] = μ₂ w_i − μ₁ w*_i,
    μ₂ = E[σ'(h)² + (σ(h) − σ(h*)) σ''(h)],      μ₁ = E[σ'(h*) σ'(h)]        (docs/theory.md §3),

so one GD step is W' = (1 − εμ₂) W + εμ₁ W* (rows' μ differ only by O(M^{−1/2}) fluctuations
of |w_i|), the bulk scales by (1 − εμ₂)² and the spike by ε²μ₁², θ = εμ₁ / (|1 − εμ₂| σ_W) and

    ε_o = 1/μ₂,      ε_c = 1/(μ₂ + μ₁/(σ_W r^{1/4}))         (linear σ: μ₁ = μ₂ = 1).

For the rank-one teacher W* = u vᵀ (|u| = 1) the teacher pre-activations have variance
u_i² ~ 1/N → 0 and are uncorrelated with h, so the defaults are var_star = cov = 0 (the limit):
then for ReLU μ₁ = P(h > 0) P(h* > 0) = 1/4 (σ' of the teacher is a sign, whatever its scale)
and μ₂ = 1/2; for tanh μ₁ = E[sech² h], μ₂ = E[sech⁴ h − 2 tanh² h sech² h].

Quadrature: (h, h*) = L (z₁, z₂) with L the Cholesky factor of the covariance, tensor
Gauss–Hermite nodes in z. ReLU's σ'' = δ is integrated exactly by conditioning on h = 0:
E[(σ(h) − σ(h*)) δ(h)] = −p_h(0) E[relu(h*) | h = 0] = −s/(2π √var_h),
s² = var_star − cov²/var_h. For ReLU the integrand is discontinuous in z (σ' is a step), which
an even number of symmetric nodes integrates exactly only when the discontinuity passes
through the origin of an uncorrelated coordinate (the default limit); with correlation use
:func:`relu_mu_exact` for reference.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["ACTIVATIONS", "mu_coefficients", "mu_rank_one_teacher", "relu_mu_exact", "optimal_step", "critical_step_nonlinear",
           "gradient_one_step", "projection_coefficients"]


def _tanh(h):
    return np.tanh(h)


def _dtanh(h):
    return 1.0 / np.cosh(h) ** 2


def _ddtanh(h):
    return -2.0 * np.tanh(h) / np.cosh(h) ** 2


def _relu(h):
    return np.maximum(h, 0.0)


def _drelu(h):
    return (h > 0).astype(np.float64)


def _lin(h):
    return np.asarray(h, dtype=np.float64)


def _one(h):
    return np.ones_like(np.asarray(h, dtype=np.float64))


def _zero(h):
    return np.zeros_like(np.asarray(h, dtype=np.float64))


# name -> (σ, σ', σ'' (regular part), has a δ at 0 in σ'' of unit jump)
ACTIVATIONS = {"linear": (_lin, _one, _zero, False),
               "tanh": (_tanh, _dtanh, _ddtanh, False),
               "relu": (_relu, _drelu, _zero, True)}


_ODD = ("linear", "tanh")


@functools.lru_cache(maxsize=16)
def _gauss_hermite(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights for E[f(z)], z ~ N(0, 1) (probabilists' Hermite), cached."""
    x, w = np.polynomial.hermite_e.hermegauss(order)
    return x, w / math.sqrt(2.0 * math.pi)


def _activation(name):
    if name not in ACTIVATIONS:
        raise ValueError(f"activation: unknown {name!r}; valid: {', '.join(sorted(ACTIVATIONS))}")
    return ACTIVATIONS[name]


def mu_coefficients(activation: str, var_h: float, var_star: float = 0.0, cov: float = 0.0,
                    order: int = 240) -> tuple[float, float]:
    """(μ₁, μ₂) for h ~ N(0, var_h), h* ~ N(0, var_star), E[h h*] = cov, by ``order``-point
    Gauss–Hermite quadrature per dimension (default 240; tanh is analytic in a strip only, so the
    error decays like exp(−c√order): for μ₁ 4e-8 at 80 nodes, 7e-12 at 160). var_star = 0 is the high-dimensional rank-one limit,
    in which σ'(h*) is read as its limit σ'(0⁺-scale h*) (= ½ on average for ReLU, σ'(0) for
    smooth σ)."""
    sig, dsig, ddsig, delta = _activation(activation)
    if not (var_h > 0 and np.isfinite(var_h)):
        raise ValueError(f"var_h: expected a finite positive variance, found {var_h!r}")
    if not (var_star >= 0 and np.isfinite(var_star)):
        raise ValueError(f"var_star: expected a finite non-negative variance, found {var_star!r}")
    if cov * cov > var_h * var_star * (1 + 1e-12):
        raise ValueError(f"cov: |cov| = {abs(cov)} exceeds sqrt(var_h var_star); not a covariance")
    x, w = _gauss_hermite(int(order))
    if cov == 0.0 and var_star > 0:
        # independent h, h*: the double integrals factor into products of 1-D ones
        h, hs = math.sqrt(var_h) * x, math.sqrt(var_star) * x
        mu1 = float(np.dot(w, dsig(hs)) * np.dot(w, dsig(h)))
        mu2 = float(np.dot(w, dsig(h) ** 2 + sig(h) * ddsig(h)) - np.dot(w, sig(hs)) * np.dot(w, ddsig(h)))
        if delta:
            mu2 += -math.sqrt(var_star) / (2.0 * math.pi * math.sqrt(var_h))
        return mu1, mu2
    z1, z2 = np.meshgrid(x, x, indexing="ij")
    W2 = np.outer(w, w)
    sh = math.sqrt(var_h)
    h = sh * z1
    if var_star > 0:
        c = cov / sh
        s = math.sqrt(max(var_star - c * c, 0.0))
        hs = c * z1 + s * z2
        dsig_star = dsig(hs)
    else:
        s = 0.0
        hs = np.zeros_like(h)
        # limit of σ'(h*) for h* → 0 with a random sign: mean of the one-sided limits
        dsig_star = 0.5 * (dsig(np.full_like(h, 1e-300)) + dsig(np.full_like(h, -1e-300)))
    mu1 = float(np.sum(W2 * dsig_star * dsig(h)))
    mu2 = float(np.sum(W2 * (dsig(h) ** 2 + (sig(h) - sig(hs)) * ddsig(h))))
    if delta:
        mu2 += -s / (2.0 * math.pi * sh)
    return mu1, mu2


def mu_rank_one_teacher(activation: str, sigma_w: float, N: int | None = None,
                        order: int = 40) -> tuple[float, float]:
    """Effective (μ₁, μ₂) of the rank-one teacher W* = u vᵀ at finite N (our finite-size model).

    Row i has teacher pre-activation variance u_i², u_i ≈ N(0, 1/N). The spike coefficient is
    Σ_i u_i² μ₁(u_i²)/Σ u_i² and the bulk coefficient the plain row average of μ₂(u_i²), both
    averaged over u_i by Gauss–Hermite. This is the O(1/N) correction that a simulation at
    finite N sees (e.g. tanh: μ₁ ≈ μ₁(0)(1 − 3/N); ReLU: μ₂ ≈ ½ − √(2/(πN))/(2πσ_W)).
    ``N=None`` is the N → ∞ limit, ``mu_coefficients(activation, sigma_w²)``.
    """
    if N is None:
        return mu_coefficients(activation, sigma_w**2)
    if isinstance(N, bool) or int(N) != N or N < 1:
        raise ValueError(f"N: expected a positive integer, found {N!r}")
    z, w = _gauss_hermite(int(order))
    m1 = m2 = 0.0
    for zk, wk in zip(z, w):
        u2 = zk * zk / N
        if u2 == 0.0:
            a1, a2 = mu_coefficients(activation, sigma_w**2)
        else:
            a1, a2 = mu_coefficients(activation, sigma_w**2, u2, 0.0)
        m1 += wk * zk * zk * a1     # weight u_i² (E[z²] = 1)
        m2 += wk * a2
    return float(m1), float(m2)


def relu_mu_exact(var_h: float, var_star: float, cov: float) -> tuple[float, float]:
    """Closed forms for ReLU: μ₁ = 1/4 + arcsin(ρ)/(2π), μ₂ = 1/2 − s/(2π√var_h),
    ρ = cov/√(var_h var_star), s² = var_star − cov²/var_h."""
    rho = cov / math.sqrt(var_h * var_star)
    s = math.sqrt(max(var_star - cov * cov / var_h, 0.0))
    return 0.25 + math.asin(rho) / (2 * math.pi), 0.5 - s / (2 * math.pi * math.sqrt(var_h))


def optimal_step(mu2: float) -> float:
    """ε_o = 1/μ₂: the step that removes the bulk."""
    if not mu2 > 0:
        raise ValueError(f"mu2: expected a positive μ₂, found {mu2}")
    return 1.0 / mu2


def critical_step_nonlinear(mu1: float, mu2: float, sigma_w: float, ratio: float) -> float:
    """ε_c = 1/(μ₂ + μ₁/(σ_W r^{1/4}))."""
    if not (mu1 > 0 and mu2 > 0 and sigma_w > 0 and ratio > 0):
        raise ValueError(f"mu1, mu2, sigma_w, ratio: expected positive numbers, found "
                         f"{mu1}, {mu2}, {sigma_w}, {ratio}")
    return 1.0 / (mu2 + mu1 / (sigma_w * ratio**0.25))


def gradient_one_step(W0, Wstar, activation: str, n: int, rng: np.random.Generator,
                      chunk: int = 4096, antithetic: bool | None = None) -> np.ndarray:
    """Monte Carlo gradient of ½ E|σ(W x) − σ(W* x)|² at W0 from n samples x ~ N(0, I):
    (1/n) Σ [(σ(h) − σ(h*)) σ'(h)] xᵀ, accumulated in chunks (no μ is used).

    ``antithetic`` draws the samples in pairs (x, −x). Both estimates are unbiased, but with
    independent samples an activation whose residual has a non-zero mean ḡ (ReLU: the student's
    mean output) leaves a rank-one artefact ḡ 1 x̄ᵀ of norm ≈ |ḡ| √(N M / n) in the gradient,
    which after a step of size ε is a spurious outlier of the spectrum; the pairs cancel it.
    For an odd σ (tanh, linear) ḡ = 0 and a pair would repeat the same term (half the effective
    samples), so ``None`` (default) means pairs for ReLU only.
    """
    if antithetic is None:
        antithetic = activation not in _ODD
    sig, dsig, _, _ = _activation(activation)
    W0, Wstar = np.asarray(W0, float), np.asarray(Wstar, float)
    if W0.ndim != 2 or W0.shape != Wstar.shape:
        raise ValueError(f"W0, Wstar: expected two 2-D arrays of the same shape, found {W0.shape}, {Wstar.shape}")
    if isinstance(n, bool) or int(n) != n or n < 2:
        raise ValueError(f"n: expected an integer number of samples >= 2, found {n!r}")
    G = np.zeros_like(W0)
    done = 0
    while done < n:
        k = min(chunk, n - done)
        if antithetic:
            half = rng.standard_normal(((k + 1) // 2, W0.shape[1]))
            X = np.concatenate([half, -half])[:k]
        else:
            X = rng.standard_normal((k, W0.shape[1]))
        H, Hs = X @ W0.T, X @ Wstar.T
        G += ((sig(H) - sig(Hs)) * dsig(H)).T @ X
        done += k
    return G / n


def projection_coefficients(G, W0, Wstar) -> tuple[float, float]:
    """Least-squares (μ₂, μ₁) in G ≈ μ₂ W0 − μ₁ W* (Frobenius projection on the two directions)."""
    A = np.stack([np.ravel(W0), -np.ravel(Wstar)], axis=1)
    coef, *_ = np.linalg.lstsq(A, np.ravel(G), rcond=None)
    return float(coef[0]), float(coef[1])
