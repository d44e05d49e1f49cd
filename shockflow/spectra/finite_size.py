"""Finite-size scaling of the BBP transition: Binder cumulant, crossings, replica overlap (docs/theory.md §3).

Order parameter q = u_top·u (top eigenvector of X = W Wᵀ against the teacher's left vector),
Binder cumulant over independent initialisations

    U₄ = 1 − ⟨q⁴⟩ / (3 ⟨q²⟩²):

in the disordered phase u_top is a uniformly random direction, q ≈ N(0, 1/N) and U₄ → 0; in the
ordered phase q² concentrates on its BBP value and U₄ → 2/3. Curves U₄(ε) for different N cross
near ε_c (the scaling variable is (θ − θ_c) N^{1/3}).

Two samplers of q² after t population-GD steps (W_t = √b u vᵀ + √a Z, Z entries of variance 1/M):

``"dense"``    draw Z, form W_t, top eigenpair of W Wᵀ (``teacher_student.top_eigenpair``);
``"reduced"``  exact in law and O(N²) instead of O(N² M). Z = O₁ Σ O₂ᵀ with Haar O₁, O₂
               independent of the singular values Σ (orthogonal invariance), so in the singular
               bases W ≅ √a D + √b α βᵀ with α, β independent uniform unit vectors in R^N, R^M, and
               q = u_top·α. The singular values come from the Dumitriu–Edelman bidiagonal model
               (diagonal χ_M, χ_{M−1}, …, χ_{M−N+1}, off-diagonal χ_{N−1}, …, χ_1), and
               X ≅ a diag(σ²) + U C Uᵀ with U = [α, √a D β], C = [[b, √b], [√b, 0]] is a diagonal plus
               rank two, whose top eigenpair :func:`top_eigenpair_diag_rank2` finds by inertia
               bisection in O(N) per step (no dense eigensolver, no BLAS threads).
A test checks the two samplers against each other.
"""

from __future__ import annotations

import math

import numpy as np

from .marchenko_pastur import check_ratio
from .teacher_student import (_pos_int, initial_weights, make_teacher, population_theory,
                              top_eigenpair)

__all__ = ["top_eigenpair_diag_rank2", "binder_cumulant", "sample_overlaps", "binder_curves", "crossing", "binder_crossings",
           "replica_overlap", "wishart_singular_values"]


def binder_cumulant(q2_samples, n_boot: int = 0, seed: int = 0) -> tuple[float, float]:
    """U₄ = 1 − ⟨q⁴⟩/(3⟨q²⟩²) from samples of q² (q⁴ = (q²)²); with ``n_boot`` > 0 also a
    bootstrap standard error (else nan)."""
    q2 = np.asarray(q2_samples, dtype=np.float64).ravel()
    if q2.size < 2:
        raise ValueError(f"q2_samples: need at least 2 samples for a Binder cumulant, found {q2.size}")
    if np.any(q2 < 0) or not np.all(np.isfinite(q2)):
        raise ValueError("q2_samples: squared overlaps must be finite and non-negative")
    m2 = np.mean(q2)
    if m2 == 0:
        raise ValueError("q2_samples: all squared overlaps are zero; U4 is undefined")
    u4 = 1.0 - np.mean(q2**2) / (3.0 * m2**2)
    err = float("nan")
    if n_boot:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, q2.size, size=(n_boot, q2.size))
        b = q2[idx]
        ub = 1.0 - np.mean(b**2, axis=1) / (3.0 * np.mean(b, axis=1) ** 2)
        err = float(np.std(ub, ddof=1))
    return float(u4), err


def wishart_singular_values(N: int, M: int, rng: np.random.Generator) -> np.ndarray:
    """Singular values (descending) of an N×M (N ≤ M) matrix of i.i.d. N(0, 1) entries, drawn
    from the Dumitriu–Edelman bidiagonal model in O(N²)."""
    from scipy.linalg import eigvalsh_tridiagonal

    if N > M:
        raise ValueError(f"N, M: the bidiagonal model here needs N <= M, found N = {N}, M = {M}")
    d = np.sqrt(rng.chisquare(M - np.arange(N)))             # χ_M, …, χ_{M−N+1}
    e = np.sqrt(rng.chisquare(np.arange(N - 1, 0, -1)))      # χ_{N−1}, …, χ_1
    # B lower bidiagonal (diag d, subdiag e): B Bᵀ is tridiagonal with
    # diag d_i² + e_{i−1}², off-diagonal d_i e_i
    diag = d**2 + np.concatenate([[0.0], e**2])
    off = d[:-1] * e
    s2 = eigvalsh_tridiagonal(diag, off)
    return np.sqrt(np.clip(s2[::-1], 0.0, None))


def top_eigenpair_diag_rank2(s, U, C, rel_tol: float = 1e-15) -> tuple[float, np.ndarray]:
    """Largest eigenvalue and unit eigenvector of X = diag(s) + U C Uᵀ (U: N×2, C: symmetric 2×2
    invertible with one positive and one negative eigenvalue), in O(N) per iteration, no BLAS.

    Inertia (Haynsworth, from the two Schur complements of [[diag(s) − μ, U], [Uᵀ, −C⁻¹]]): for
    μ ∉ {s_k}, the number of eigenvalues of X above μ is
        #{s_k > μ} + n₋(C⁻¹ − K(μ)) − n₋(C⁻¹),      K(μ) = Uᵀ (μ − diag(s))⁻¹ U (2×2),
    so bisection on μ brackets λ_max to ``rel_tol``; the eigenvector is x ∝ (λ − diag s)⁻¹ U η with
    η spanning the kernel of I − C K(λ). NumPy reference: ``numpy.linalg.eigh`` (tested).
    """
    s = np.asarray(s, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    Ci = np.linalg.inv(C)
    n_minus_Ci = int(np.sum(np.linalg.eigvalsh(Ci) < 0))

    u0, u1 = U[:, 0], U[:, 1]

    def k_matrix(mu):
        w = 1.0 / (mu - s)
        a, b = u0 * w, u1 * w
        return np.array([[np.dot(a, u0), np.dot(a, u1)], [np.dot(a, u1), np.dot(b, u1)]])

    def count_above(mu):
        M = Ci - k_matrix(mu)
        tr, det = M[0, 0] + M[1, 1], M[0, 0] * M[1, 1] - M[0, 1] ** 2
        disc = math.sqrt(max(tr * tr / 4 - det, 0.0))
        n_minus = int(tr / 2 + disc < 0) + int(tr / 2 - disc < 0)
        return int(np.count_nonzero(s > mu)) + n_minus - n_minus_Ci

    bound = float(np.max(np.abs(np.linalg.eigvalsh(C)))) * float(np.sum(U * U)) * (1 + 1e-12) + 1e-300
    hi = float(np.max(s)) + bound        # ‖U C Uᵀ‖ ≤ ‖C‖ ‖U‖_F²: nothing above
    lo = float(np.min(s)) - bound        # nothing below
    scale = max(abs(hi), abs(lo))
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if mid in (lo, hi) or hi - lo <= rel_tol * scale:
                break
            if count_above(mid) >= 1:
                lo = mid
            else:
                hi = mid
        lam = 0.5 * (lo + hi)
        Mm = np.eye(2) - C @ k_matrix(lam)
    row = Mm[0] if np.hypot(*Mm[0]) >= np.hypot(*Mm[1]) else Mm[1]
    eta = np.array([-row[1], row[0]])
    x = (U @ eta) / (lam - s)
    if not np.all(np.isfinite(x)):
        raise FloatingPointError("top_eigenpair_diag_rank2: the eigenvalue hit a diagonal entry exactly")
    return float(lam), x / np.linalg.norm(x)


def _reduced_sample(N, M, a, b, rng):
    """One q² and top eigenvalue of X = W Wᵀ, W = √b u vᵀ + √a Z, by the reduced model."""
    sig = wishart_singular_values(N, M, rng) / math.sqrt(M)        # singular values of Z
    alpha = rng.standard_normal(N)
    alpha /= np.linalg.norm(alpha)
    beta = rng.standard_normal(M)
    beta /= np.linalg.norm(beta)
    diag = a * sig**2
    c = math.sqrt(a) * sig * beta[:N]                              # √a D β
    sb = math.sqrt(b)
    if b == 0.0:
        k = int(np.argmax(diag))
        return float(diag[k]), float(alpha[k] ** 2)
    lam, vec = top_eigenpair_diag_rank2(diag, np.stack([alpha, c], axis=1), np.array([[b, sb], [sb, 0.0]]))
    return lam, float((vec @ alpha) ** 2)


def sample_overlaps(N: int, M: int, eps: float, t: int, sigma_w: float, n_samples: int,
                    seed: int = 0, method: str = "reduced") -> dict:
    """q² and the top eigenvalue over ``n_samples`` independent initialisations after t
    population-GD steps; {"q2": (n,), "top_eigenvalue": (n,)}."""
    N, M, t = _pos_int("N", N, 2), _pos_int("M", M, 2), _pos_int("t", t)
    n_samples = _pos_int("n_samples", n_samples)
    th = population_theory(eps, t, sigma_w, N / M)
    a, b = th["a"], th["b"]
    rng = np.random.default_rng(seed)
    q2 = np.empty(n_samples)
    lam = np.empty(n_samples)
    if method == "reduced":
        if N > M:
            raise ValueError(f"method: 'reduced' needs N <= M, found N = {N}, M = {M}; use 'dense'")
        for i in range(n_samples):
            lam[i], q2[i] = _reduced_sample(N, M, a, b, rng)
    elif method == "dense":
        u, v = make_teacher(N, M, rng)
        for i in range(n_samples):
            Z = initial_weights(N, M, 1.0, rng)
            W = math.sqrt(a) * Z + math.sqrt(b) * np.outer(u, v)
            lam[i], vec = top_eigenpair(W, rng)
            q2[i] = (vec @ u) ** 2
    else:
        raise ValueError(f"method: unknown {method!r}; valid: dense, reduced")
    return {"q2": q2, "top_eigenvalue": lam}


def binder_curves(sizes, eps_values, t: int, sigma_w: float, ratio: float, n_samples: int,
                  seed: int = 0, method: str = "reduced", n_boot: int = 200) -> dict:
    """U₄(ε) with bootstrap errors for each N (M = round(N/r)); arrays of shape (len(sizes), len(eps))."""
    r = check_ratio(ratio)
    sizes = [int(n) for n in sizes]
    eps_values = np.asarray(eps_values, dtype=np.float64)
    U = np.empty((len(sizes), eps_values.size))
    E = np.empty_like(U)
    Q = np.empty_like(U)
    ss = np.random.SeedSequence(seed)
    for i, N in enumerate(sizes):
        M = int(round(N / r))
        for j, eps in enumerate(eps_values):
            sub = int(ss.spawn(1)[0].generate_state(1)[0])
            q2 = sample_overlaps(N, M, eps, t, sigma_w, n_samples, seed=sub, method=method)["q2"]
            U[i, j], E[i, j] = binder_cumulant(q2, n_boot=n_boot, seed=sub)
            Q[i, j] = np.mean(q2)
    return {"sizes": np.array(sizes), "eps": eps_values, "U4": U, "U4_err": E, "q2_mean": Q}


def crossing(x, y1, y2) -> float:
    """The x where two sampled curves cross (linear interpolation of y1 − y2 at its single sign
    change); raises if they do not cross exactly once on the grid."""
    x, d = np.asarray(x, float), np.asarray(y1, float) - np.asarray(y2, float)
    s = np.flatnonzero(((d[:-1] < 0) & (d[1:] >= 0)) | ((d[:-1] > 0) & (d[1:] <= 0)))
    if s.size != 1:
        raise ValueError(f"crossing: the curves change order {s.size} times on the grid "
                         f"(expected exactly one crossing); refine the grid or add samples")
    k = s[0]
    return float(x[k] - d[k] * (x[k + 1] - x[k]) / (d[k + 1] - d[k]))


def binder_crossings(curves: dict, window: tuple[float, float] = (0.2, 0.62)) -> np.ndarray:
    """Crossing ε of U₄ for each pair of successive sizes in ``binder_curves`` output.

    Far below ε_c, U₄ is small and noisy and the curves of different N cross at random; the
    crossing that estimates ε_c is in the steep part. For each pair, the points where both curves
    lie inside ``window`` (U₄ between 0.2 and 0.62 by default, between the disordered 0 and the
    ordered 2/3) are fitted by weighted straight lines (weights 1/bootstrap error) and the lines
    are intersected; fewer than two such points, or parallel lines, raise.
    """
    U, E, x = curves["U4"], curves["U4_err"], np.asarray(curves["eps"], float)
    lo, hi = window
    out = []
    for i in range(U.shape[0] - 1):
        sel = (U[i] > lo) & (U[i] < hi) & (U[i + 1] > lo) & (U[i + 1] < hi)
        if sel.sum() < 2:
            raise ValueError(f"binder_crossings: sizes {curves['sizes'][i]} and {curves['sizes'][i + 1]} have "
                             f"{int(sel.sum())} points with U4 in {window}; refine the ε grid near ε_c")
        w1 = 1.0 / np.maximum(E[i][sel], 1e-4)
        w2 = 1.0 / np.maximum(E[i + 1][sel], 1e-4)
        a1, b1 = np.polyfit(x[sel], U[i][sel], 1, w=w1)
        a2, b2 = np.polyfit(x[sel], U[i + 1][sel], 1, w=w2)
        if np.isclose(a1, a2, rtol=1e-3):
            raise ValueError("binder_crossings: the fitted lines are parallel; no crossing")
        out.append((b2 - b1) / (a1 - a2))
    return np.array(out)


def replica_overlap(N: int, M: int, eps: float, t: int, sigma_w: float, n_pairs: int,
                    seed: int = 0) -> dict:
    """|u_top^a · u_top^b| between runs from independent W₀ (same teacher), dense simulation.

    Theory (N → ∞): u_top = √q² u + √(1−q²) n with n ⊥ u independent between replicas, so the
    replica overlap tends to the BBP q² in the ordered phase and to 0 (~N^{−1/2}) otherwise.
    """
    N, M, t = _pos_int("N", N, 2), _pos_int("M", M, 2), _pos_int("t", t)
    th = population_theory(eps, t, sigma_w, N / M)
    rng = np.random.default_rng(seed)
    u, v = make_teacher(N, M, rng)
    Ws = math.sqrt(th["b"]) * np.outer(u, v)
    ov = np.empty(_pos_int("n_pairs", n_pairs))
    for i in range(ov.size):
        _, va = top_eigenpair(math.sqrt(th["a"]) * initial_weights(N, M, 1.0, rng) + Ws, rng)
        _, vb = top_eigenpair(math.sqrt(th["a"]) * initial_weights(N, M, 1.0, rng) + Ws, rng)
        ov[i] = abs(va @ vb)
    return {"overlap": ov, "mean": float(ov.mean()), "theory_q2": th["q2"]}
