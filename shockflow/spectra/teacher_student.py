"""The linear teacher–student of docs/theory.md §3: population-GD theory and NumPy simulations.

Setting. Student W ∈ R^{N×M} with W₀ entries N(0, σ_W²/M); teacher W* = u vᵀ (unit vectors);
x ~ N(0, I_M); loss ½ E|W x − W* x|² (``half_mse``, the ``linear`` model's default). Its
population gradient is W − W*, so gradient descent with step ε gives (docs/theory.md §3)

    W_t = (1 − (1−ε)^t) W* + (1−ε)^t W₀ = √b u vᵀ + √a Z,     Z entries of variance 1/M,
    a = (1−ε)^{2t} σ_W²,   b = (1 − (1−ε)^t)²,   θ² = b/a.

(With the ``mse`` loss, which has no ½, the gradient doubles and ε must be read as 2η.)
The spectrum of X = W_t W_tᵀ is the rectangular spiked model of :mod:`.bbp` with noise scale a:
an outlier λ_iso = (b + r a)(b + a)/b leaves the bulk edge λ₊ = a(1+√r)² when θ > r^{1/4}, with
overlap q² = (u_top·u)² = (1 − r/θ⁴)/(1 + r/θ²).

Critical steps (κ = σ_W r^{1/4}; derivation in :func:`critical_steps`): the lower branch
ε_c(t) = 1 − (1 + κ)^{−1/t} (docs/theory.md §3), and for ε > 1 the overshooting branch. docs/theory.md's
ε_c^n = 1 − (1 − κ)^{−1/t} "for κ > 1" is the odd-t case with the real odd root,
= 1 + (κ − 1)^{−1/t}; for even t the sign of (1−ε)^t differs and the branches are
1 + (1 + κ)^{−1/t} and, when κ < 1, 1 + (1 − κ)^{−1/t} (our derivation; see critical_steps).

Simulations (all NumPy, seeded): :func:`population_gd` iterates W ← W − ε(W − W*) literally;
:func:`finite_sample_gd` uses the empirical gradient (W − W*) XᵀX/n of n samples (full batch or
minibatch SGD); :func:`train_linear_student` runs shockflow's own training loop on the
``linear`` model. :func:`simulate_point` measures the top eigenvalue and q² against the theory.
"""

from __future__ import annotations

import math

import numpy as np

from .bbp import rectangular_outlier, rectangular_overlap
from .marchenko_pastur import check_ratio

__all__ = ["population_theory", "critical_steps", "critical_step", "critical_time", "is_ordered",
           "make_teacher", "initial_weights", "population_gd", "finite_sample_gd", "top_eigenpair",
           "measure", "simulate_point", "train_linear_student"]


# --------------------------------------------------------------------------- validation
def _pos_int(name, v, minimum=1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, found {v!r}")
    return int(v)


def _finite(name, v, *, positive=False, nonneg=False) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a real number, found {v!r}") from None
    if not math.isfinite(x) or (positive and x <= 0) or (nonneg and x < 0):
        need = "a finite positive" if positive else "a finite non-negative" if nonneg else "a finite"
        raise ValueError(f"{name}: expected {need} number, found {v!r}")
    return x


# --------------------------------------------------------------------------- theory
def population_theory(eps: float, t: int, sigma_w: float, ratio: float) -> dict:
    """docs/theory.md §3 after t population-GD steps of size ε: a, b, θ², λ₊, λ_top, q², ordered.

    ``lambda_top`` is λ_iso in the ordered phase and the bulk edge λ₊ otherwise; at ε = 1 the
    bulk vanishes (a = 0): λ_top = b = 1 and q² = 1.
    """
    eps = _finite("eps", eps)
    t = _pos_int("t", t)
    sw = _finite("sigma_w", sigma_w, positive=True)
    r = check_ratio(ratio)
    s = (1.0 - eps) ** t
    a, b = s * s * sw * sw, (1.0 - s) ** 2
    lam_plus = a * (1.0 + math.sqrt(r)) ** 2
    if a == 0.0:
        theta2, ordered, lam, q2 = math.inf, b > 0, b, 1.0 if b > 0 else 0.0
    else:
        theta2 = b / a
        ordered = theta2 > math.sqrt(r)
        th = math.sqrt(theta2)
        lam = float(rectangular_outlier(th, r, scale=a))
        q2 = float(rectangular_overlap(th, r, "left"))
    return {"eps": eps, "t": t, "sigma_w": sw, "ratio": r, "a": a, "b": b, "theta2": theta2,
            "threshold_theta2": math.sqrt(r), "ordered": bool(ordered), "overshoot": eps > 1.0,
            "lambda_plus": lam_plus, "lambda_top": lam, "q2": q2}


def is_ordered(eps, t, sigma_w, ratio) -> bool:
    """θ² > √r: an outlier aligned with the teacher exists (N, M → ∞)."""
    return population_theory(eps, t, sigma_w, ratio)["ordered"]


def critical_steps(t: int, sigma_w: float, ratio: float) -> dict:
    """All steps ε > 0 where θ² = √r after t steps; with κ = σ_W r^{1/4}, s = (1−ε)^t:

    θ = |1 − s| / (σ_W |s|) = r^{1/4}  ⟺  |1 − s| = κ |s|.
      s > 0, s < 1:  s = 1/(1+κ)                       → ε = 1 − (1+κ)^{−1/t}   ("lower", docs/theory.md's ε_c)
      t even, ε > 1: s = (ε−1)^t > 0, same two roots   → ε = 1 + (1+κ)^{−1/t}  and,
                     if κ < 1, s = 1/(1−κ) > 1          → ε = 1 + (1−κ)^{−1/t}
      t odd, ε > 1:  s = −(ε−1)^t < 0, (1+|s|) = κ|s|   → ε = 1 + (κ−1)^{−1/t}  (κ > 1 only;
                     docs/theory.md's ε_c^n with the real odd root)
    Returns {"lower": ε_c, "upper": [sorted roots above 1]}.
    """
    t = _pos_int("t", t)
    sw = _finite("sigma_w", sigma_w, positive=True)
    r = check_ratio(ratio)
    k = sw * r**0.25
    lower = 1.0 - (1.0 + k) ** (-1.0 / t)
    upper = []
    if t % 2 == 0:
        upper.append(1.0 + (1.0 + k) ** (-1.0 / t))
        if k < 1.0:
            upper.append(1.0 + (1.0 - k) ** (-1.0 / t))
    elif k > 1.0:
        upper.append(1.0 + (k - 1.0) ** (-1.0 / t))
    return {"lower": lower, "upper": sorted(upper), "kappa": k}


def critical_step(t: int, sigma_w: float, ratio: float) -> float:
    """ε_c(t) = 1 − (1 + σ_W r^{1/4})^{−1/t} (docs/theory.md §3)."""
    return critical_steps(t, sigma_w, ratio)["lower"]


def critical_time(eps: float, sigma_w: float, ratio: float) -> float:
    """t_c = −ln(1 + σ_W r^{1/4}) / ln(1 − ε) for 0 < ε < 1 (continuous t; docs/theory.md §3)."""
    eps = _finite("eps", eps)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps: the critical time is defined for 0 < eps < 1, found {eps}")
    k = _finite("sigma_w", sigma_w, positive=True) * check_ratio(ratio) ** 0.25
    return -math.log1p(k) / math.log1p(-eps)


# --------------------------------------------------------------------------- simulation
def make_teacher(N: int, M: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random unit vectors u ∈ R^N, v ∈ R^M (W* = u vᵀ)."""
    u = rng.standard_normal(_pos_int("N", N, 2))
    v = rng.standard_normal(_pos_int("M", M, 2))
    return u / np.linalg.norm(u), v / np.linalg.norm(v)


def initial_weights(N: int, M: int, sigma_w: float, rng: np.random.Generator) -> np.ndarray:
    """W₀ with i.i.d. N(0, σ_W²/M) entries (the ``linear`` model's init with init_scale = σ_W)."""
    return rng.normal(0.0, _finite("sigma_w", sigma_w, nonneg=True) / math.sqrt(M), size=(N, M))


def _check_pair(W0, u, v):
    W0 = np.asarray(W0, dtype=np.float64)
    if W0.ndim != 2:
        raise ValueError(f"W0: expected a 2-D weight matrix, found shape {W0.shape}")
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if u.shape != (W0.shape[0],) or v.shape != (W0.shape[1],):
        raise ValueError(f"u, v: expected shapes ({W0.shape[0]},) and ({W0.shape[1]},) for W0 of shape "
                         f"{W0.shape}, found {u.shape} and {v.shape}")
    return W0, u, v


def population_gd(W0, u, v, eps: float, steps: int) -> np.ndarray:
    """``steps`` literal population-GD updates W ← W − ε (W − u vᵀ) (half-MSE, x ~ N(0, I))."""
    W, u, v = _check_pair(W0, u, v)
    W = W.copy()
    eps = _finite("eps", eps)
    for _ in range(_pos_int("steps", steps, 0)):
        G = W - np.outer(u, v)
        W -= eps * G
        if not np.all(np.isfinite(W)):
            raise FloatingPointError("population_gd: W became non-finite")
    return W


def finite_sample_gd(W0, u, v, eps: float, steps: int, n: int, rng: np.random.Generator,
                     batch: int | None = None) -> np.ndarray:
    """GD (``batch=None``) or minibatch SGD on n fresh samples x ~ N(0, I_M), y = u vᵀ x.

    The half-MSE gradient on a batch B is (W − W*) X_Bᵀ X_B / |B|; minibatches sweep a random
    permutation of the n samples each epoch.
    """
    W, u, v = _check_pair(W0, u, v)
    W = W.copy()
    eps = _finite("eps", eps)
    n = _pos_int("n", n)
    B = n if batch is None else _pos_int("batch", batch)
    if B > n:
        raise ValueError(f"batch: {B} exceeds the number of samples n = {n}")
    X = rng.standard_normal((n, W.shape[1]))
    order = np.arange(n)
    pos = n
    for step in range(_pos_int("steps", steps)):
        if B == n:
            Xb = X
        else:
            if pos + B > n:
                order = rng.permutation(n)
                pos = 0
            Xb = X[order[pos:pos + B]]
            pos += B
        D = W - np.outer(u, v)
        W -= eps * ((D @ Xb.T) @ Xb) / Xb.shape[0]
        if not np.all(np.isfinite(W)):
            raise FloatingPointError(f"finite_sample_gd: W became non-finite at step {step + 1}")
    return W


def top_eigenpair(W, rng: np.random.Generator | None = None) -> tuple[float, np.ndarray]:
    """Largest eigenvalue of W Wᵀ and its unit eigenvector.

    Dense ``eigh`` of W Wᵀ for N ≤ 256, else Lanczos (ARPACK ``eigsh``) on x ↦ W(Wᵀx), which
    never forms W Wᵀ; converged to tol 1e-12 relative.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"W: expected a 2-D weight matrix, found shape {W.shape}")
    N = W.shape[0]
    if N <= 256:
        lam, vec = np.linalg.eigh(W @ W.T)
        return float(lam[-1]), vec[:, -1]
    from scipy.sparse.linalg import LinearOperator, eigsh

    op = LinearOperator((N, N), matvec=lambda x: W @ (W.T @ x), dtype=np.float64)
    rng = rng or np.random.default_rng(0)
    lam, vec = eigsh(op, k=1, which="LA", tol=1e-12, v0=rng.standard_normal(N), ncv=min(N, 40))
    return float(lam[0]), vec[:, 0]


def measure(W, u=None, rng: np.random.Generator | None = None) -> dict:
    """Top eigenvalue of W Wᵀ and, given the teacher's left vector u, q² = (u_top·u)²."""
    lam, vec = top_eigenpair(W, rng)
    q2 = float(np.dot(vec, u) ** 2 / np.dot(u, u)) if u is not None else float("nan")
    return {"top_eigenvalue": lam, "q2": q2}


_METHODS = ("population", "gd", "sgd")


def simulate_point(N: int, M: int, eps: float, t: int, sigma_w: float, seed: int = 0,
                   method: str = "population", n: int | None = None, batch: int | None = None) -> dict:
    """One simulated run (pure: parameters in, dict out): measured top eigenvalue and q² after
    t steps, the population theory beside them, and their relative errors.

    method: "population" (exact population GD), "gd" (full batch on n samples), "sgd"
    (minibatches of ``batch`` from n samples).
    """
    N, M, t = _pos_int("N", N, 2), _pos_int("M", M, 2), _pos_int("t", t)
    if method not in _METHODS:
        raise ValueError(f"method: unknown {method!r}; valid: {', '.join(_METHODS)}")
    rng = np.random.default_rng(seed)
    u, v = make_teacher(N, M, rng)
    W0 = initial_weights(N, M, sigma_w, rng)
    if method == "population":
        W = population_gd(W0, u, v, eps, t)
    else:
        if n is None:
            raise ValueError(f"n: method {method!r} needs the number of samples n")
        W = finite_sample_gd(W0, u, v, eps, t, n, rng, batch if method == "sgd" else None)
    got = measure(W, u, rng)
    th = population_theory(eps, t, sigma_w, N / M)
    return {"N": N, "M": M, "eps": float(eps), "t": t, "sigma_w": float(sigma_w), "seed": int(seed),
            "method": method, "top_eigenvalue": got["top_eigenvalue"], "q2": got["q2"],
            "theory_top_eigenvalue": th["lambda_top"], "theory_q2": th["q2"],
            "theory_lambda_plus": th["lambda_plus"], "theory_ordered": th["ordered"],
            "rel_error_top": got["top_eigenvalue"] / th["lambda_top"] - 1.0,
            "rel_error_q2": (got["q2"] / th["q2"] - 1.0) if th["q2"] > 0 else float("nan")}


def train_linear_student(N: int, M: int, eps: float, steps: int, sigma_w: float, *, n: int,
                         seed: int = 0, batch: int | None = None, whiten: bool = True,
                         n_snapshots: int = 20, log_path=None):
    """Train shockflow's ``linear`` model on teacher data with shockflow's training loop.

    Returns (TrainingRecord, u, v). With ``whiten=True`` (n ≥ M) the inputs satisfy XᵀX/n = I
    exactly, so full-batch GD with the half-MSE loss is *exactly* the population GD above.
    """
    from shockflow import models
    from shockflow.data import teacher_student
    from shockflow.training import TrainSettings, train

    N, M = _pos_int("N", N, 2), _pos_int("M", M, 2)
    rng = np.random.default_rng(seed)
    u, v = make_teacher(N, M, rng)
    teacher = models.build("linear", input_dim=M, output_dim=N, init_scale=1.0, seed=seed)
    teacher.params["W"][...] = np.outer(u, v)
    data = teacher_student(n, M, teacher, whiten=whiten, seed=seed + 1)
    student = {"name": "linear", "input_dim": M, "output_dim": N, "loss": "half_mse",
               "init_scale": float(sigma_w), "seed": seed + 2}
    settings = TrainSettings(optimizer="gd" if batch is None else "sgd", lr=float(eps), steps=steps,
                             batch_size=batch, seed=seed, n_snapshots=n_snapshots, log_every=1)
    record = train(student, data, settings, log_path=log_path, quiet=True)
    return record, u, v
