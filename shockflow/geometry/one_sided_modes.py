"""Modes of an origin where the loss is not twice differentiable: relu units (docs/theory.md §6, "A kinked origin").

:func:`shockflow.geometry.auto.find_modes` reads the modes from ``Y``, the symmetric difference quotient of the
gradient at the origin.  That is the flow of small units where the loss is a quadratic form there.  A relu unit
``a φ(w·x + b)`` is positively homogeneous instead: near zero weights the loss is ``L_0 − Q(θ) + O(|θ|⁴)`` with ``Q``
homogeneous of degree 2 but not quadratic, and a unit ``θ = ε e`` moves by the one-sided field
``G(e) = −(∇L(ε e) − ∇L(0))/ε = ∇Q(e)`` (exact at every ε, up to the quartic term).  A direction grows
self-similarly where ``G(e) = λ e``: a critical point of ``Q`` on the unit sphere, with rate ``λ = G(e)·e = 2 Q(e)``.
``Y`` sees only ``Q``'s odd part: with a trainable bias the flow takes the bias along (``b ≈ 0.62 |w|`` for a
Gaussian-input linear teacher, a rate 1.24× the bias-free one) and ``Y`` does not.

The mirror image of a unit is not a fixed point either: ``Q(−e) ≠ Q(e)``.  A unit whose initial weights hold the
mode with the opposite sign grows along the fixed point ``e⁻`` found from ``−e``, not along ``−e⁺`` (for relu with
a bias: ``(−a, −w, b)`` from ``(a, w, b)``: the bias keeps its sign).  The mode is then an **odd part**
``(e⁺ − e⁻)/2``, which a unit carries with the sign of its share, and an **even part** ``(e⁺ + e⁻)/2``, which it
carries with the share's size (:class:`shockflow.geometry.auto.AutoGeometry`'s section); where the loss is smooth
``e⁻ = −e⁺`` and the even part is zero.

:func:`one_sided_modes` decides whether the origin is kinked along the modes (the one-sided field against ``Y``
at two steps: a difference that does not shrink with the step is a kink, one that halves is the smooth loss's
next order) and whether the fastest mode's even part stands out of the sample's noise
(:func:`even_is_significant`), and if both, finds every mode's ``e⁺`` and ``e⁻``: ``Q`` maximised on the sphere from
``±e_k`` (L-BFGS on ``x ↦ Q(x/|x|)``) in the complement of the faster modes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["OneSidedModes", "even_is_significant", "odd_part", "one_sided_modes", "plateau_units", "sides_differ"]

#: the unit's size at which the one-sided field is read (``Q``'s quartic correction is ``O(ε²)`` relative)
ONE_SIDED_STEP = 1e-3
#: a difference between the one-sided field and ``Y e`` below this fraction of the rate is the loss's rounding
KINK_FLOOR = 1e-6
#: halving the step must shrink the difference below this fraction of itself for the origin to be smooth there
SMOOTH_SHRINK = 0.75
#: a fixed point is kept if it stays this close (cosine) to the mode it started from, else the side stays Y's
SAME_MODE = 0.5
#: the fixed point's projected gradient, relative to the rate, at which its maximisation stops (the direction to
#: about this relative accuracy: far below the sample's noise in it, ~1/sqrt(n))
FIXED_POINT_TOL = 1e-6
#: the plateau flow's time step (:func:`plateau_units`), in units of the fast side's time 1/λ, and its most steps
PLATEAU_STEP, PLATEAU_MAX_STEPS = 0.25, 400
#: the batches of :func:`even_is_significant`, and the p-value at which its F test rejects the sample's noise
EVEN_BATCHES, EVEN_P_VALUE = 16, 1e-4


@dataclass(frozen=True)
class OneSidedModes:
    """``directions (p, K)``: every mode's ``e⁺`` (unit vectors); ``even (p, K)``: the even parts (zero but for the
    fastest mode's); ``rates (K,)``: the one-sided field's rates (the mean of the two sides'); ``sides (K, 2)``: the
    rates ``G(e±)·e±`` of a unit holding the mode with a positive and with a negative share where they differ beyond
    the sample's noise (:func:`sides_differ`), else their mean twice; ``section_sides (2,)``: the rates ``G(ẽ±)·ẽ±``
    along the fastest mode's two directions as separated (``ẽ± = odd ± even`` of :func:`_separated`, unit vectors),
    which its chart's section moves a unit along."""

    directions: np.ndarray
    even: np.ndarray
    rates: np.ndarray
    sides: np.ndarray
    section_sides: np.ndarray | None = None


def one_sided_modes(model, origin, first, second, free, vectors, rates, X, y,
                    step: float = ONE_SIDED_STEP) -> OneSidedModes | None:
    """The modes ``vectors (p, K)`` (``Y``'s eigenvectors in descending order of their rates ``rates``) of the origin
    ``origin`` as the one-sided field moves them (module docstring), or ``None`` where they are Y's: the loss is
    twice differentiable at the origin along every one of them, or the fastest mode's even part cannot be told
    from the sample's noise (a relu net without bias on symmetric data).

    Every mode's fixed points ``e±`` from ``±e_k``, ``Q`` maximised in the complement of the faster modes' directions
    (a slower mode's fixed point is a saddle of ``Q`` on the sphere, a maximum there); the modes are their odd parts,
    and only the fastest mode keeps its even part (a unit's bias is one number, and it follows the mode that
    dominates the unit, docs/theory.md §6): :func:`_separated`.  The rates are the mean of ``G(e±)·e±``.
    ``first``/``second``: the parameter indices of two units; ``free``: the mask of a unit's trained entries.
    Where the second unit's gradient moves with the first (the pair term of ``Y``: units with ``φ(0) ≠ 0``) the
    field is not a single unit's and ``None`` is returned: no kinked activation of the registry has ``φ(0) ≠ 0``.
    Cost: ``K`` to ``2K`` full-batch gradients for the test, where kinked two more for the significance and about
    30 per mode and side for the maximisations."""
    from scipy.optimize import minimize

    K = vectors.shape[1]
    if K == 0:
        return None
    net = model.copy()
    X = np.asarray(X, dtype=np.float64)

    def loss_grad(theta, rows=slice(None)):
        net.set_parameter_vector(theta)
        L, grads = net.loss_and_grad(X[rows], y[rows])
        g = net.grad_vector(grads)
        return float(L), g[first], (g[second] if second is not None else None)

    L0, g0, pair0 = loss_grad(origin)

    def field(e, eps):
        theta = origin.copy()
        theta[first] += eps * e
        L, g, pair = loss_grad(theta)
        moved = 0.0 if pair is None else float(np.linalg.norm(pair - pair0))
        G = np.where(free, -(g - g0) / eps, 0.0)
        return -(L - L0 - eps * float(g0 @ e)) / (eps * eps), G, moved

    kinked, one_sided = False, np.empty(K)
    for k in range(K):
        e, lam = vectors[:, k], float(rates[k])
        _, G1, moved = field(e, step)
        if moved > KINK_FLOOR * float(np.linalg.norm(G1)) * step:
            return None
        one_sided[k] = float(G1 @ e)
        D1 = float(np.linalg.norm(G1 - lam * e))
        if not kinked and D1 > KINK_FLOOR * abs(lam):
            kinked = float(np.linalg.norm(field(e, 0.5 * step)[1] - lam * e)) > SMOOTH_SHRINK * D1
    e0 = vectors[:, 0]
    if not kinked or not np.all(np.isfinite(one_sided)) or \
            not even_is_significant(loss_grad, origin, first, e0, step, free, X.shape[0]):
        return None

    mask = np.asarray(free, dtype=np.float64)
    plus, minus = np.empty_like(vectors), np.empty_like(vectors)
    sides = np.empty((K, 2))
    for k in range(K):
        faster = vectors[:, :k]

        def project(x):
            x = x * mask
            return x - faster @ (faster.T @ x)

        def objective(x):
            x = project(x)
            norm = float(np.linalg.norm(x))
            e = x / norm
            Q, G, _ = field(e, step)
            return -Q, -project(G - float(G @ e) * e) / norm

        found = []
        for start in (vectors[:, k], -vectors[:, k]):
            e = start
            try:
                with np.errstate(all="raise"):
                    res = minimize(objective, start, jac=True, method="L-BFGS-B",
                                   options={"maxiter": 200, "gtol": FIXED_POINT_TOL * max(abs(one_sided[k]), 1e-300)})
                x = project(res.x)
                size = float(np.linalg.norm(x))
                if math.isfinite(size) and size > 0 and float(x @ start) >= SAME_MODE * size:
                    e = x / size
            except FloatingPointError:
                pass
            found.append((e, float(field(e, step)[1] @ e)))
        (plus[:, k], lam_plus), (minus[:, k], lam_minus) = found
        one_sided[k] = 0.5 * (lam_plus + lam_minus)
        apart = sides_differ(loss_grad, origin, first, plus[:, k], minus[:, k], step, free, X.shape[0])
        sides[k] = (lam_plus, lam_minus) if apart else (one_sided[k], one_sided[k])
    if not (np.all(np.isfinite(one_sided)) and np.all(np.isfinite(sides))):
        return None
    directions, even = _separated(0.5 * (plus - minus), 0.5 * (plus + minus))
    separated = (directions[:, 0], 2.0 * even[:, 0] - directions[:, 0])     # ẽ± = odd ± even
    section_sides = np.array([float(field(e, step)[1] @ e) for e in separated])
    if not np.all(np.isfinite(section_sides)):
        return None
    return OneSidedModes(directions, even, one_sided, sides, section_sides)


def _separated(odd: np.ndarray, even: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(e⁺, even)`` of the modes from their fixed points' odd parts ``odd (p, K)`` and even parts ``even (p, K)``:
    the odd parts orthogonal (Gram–Schmidt in the modes' order, each keeping its length), the fastest mode's even
    part orthogonal to every odd part and the others' zero, each ``e⁺ = odd + even`` of unit length.  A mode's
    coordinate is its odd part's share in the units (:class:`shockflow.geometry.auto.AutoGeometry`), so a unit
    carrying one mode must hold none of another's: the fixed points agree with this to the sample's noise, but a
    learned mode's unit, a thousand times a waiting one's size, holds that noise a thousand times over."""
    odd = odd.copy()
    basis = []
    for k in range(odd.shape[1]):
        length = float(np.linalg.norm(odd[:, k]))
        o = odd[:, k] - sum(float(q @ odd[:, k]) * q for q in basis)
        basis.append(o / np.linalg.norm(o))
        odd[:, k] = length * basis[-1]
    Q = np.stack(basis, axis=1)
    kept = np.zeros_like(even)
    kept[:, 0] = even[:, 0] - Q @ (Q.T @ even[:, 0])
    plus = odd + kept
    norm = np.linalg.norm(plus, axis=0)
    return plus / norm, kept / norm


def even_is_significant(loss_grad, origin, first, e, step: float, free, n: int) -> bool:
    """Whether the even part of the one-sided field at ``e``, ``ḡ = (G(e) + G(−e))/2``, stands out of the sample's
    noise: ``|ḡ|²`` against its squared error ``Σ_b |ḡ_b − ḡ|² / (B (B − 1))`` from :data:`EVEN_BATCHES` disjoint
    batches of the data, an F test at :data:`EVEN_P_VALUE` with the free entries as degrees of freedom.  A relu
    unit's bias on a linear teacher is the field's even part (ratio 20–80 at n = 1024–4096); on symmetric data
    without a bias the even part is the sample's asymmetry, ratio ≈ 1.  ``loss_grad(θ, rows)``: the loss and a unit's
    gradient on the rows.  Two full-batch gradients' work and ``3B`` calls."""
    from scipy.stats import f as f_distribution

    B = min(EVEN_BATCHES, n)
    if B < 2:
        return False
    changes = _batch_changes(loss_grad, origin, first, [sign * step * e for sign in (1.0, -1.0)], n, B)
    means = np.where(free, -(changes[:, 0] + changes[:, 1]) / (2.0 * step), 0.0)
    mean = means.mean(axis=0)
    error = float(np.sum((means - mean) ** 2)) / (B * (B - 1))
    dof = int(np.count_nonzero(free))
    if not error > 0:
        return bool(np.linalg.norm(mean) > 0)
    return float(mean @ mean) / error > float(f_distribution.ppf(1.0 - EVEN_P_VALUE, dof, dof * (B - 1)))


def sides_differ(loss_grad, origin, first, plus: np.ndarray, minus: np.ndarray, step: float, free, n: int) -> bool:
    """Whether the rates of a mode's two fixed points, ``λ± = G(e±)·e±``, differ beyond the sample's noise: their
    difference on :data:`EVEN_BATCHES` disjoint batches of the data, a two-sided t test at :data:`EVEN_P_VALUE`.
    An odd teacher (a linear or a tanh one) gives a unit and its mirror image the same loss, and the rates differ
    by the sample's asymmetry only (0.3–9 % on ``mlp-tanh-teacher`` with relu and a bias, t well inside the
    test); targets with a mean do not (a relu committee: 1.51 against 0.0004).  Two full-batch gradients' work."""
    from scipy.stats import t as t_distribution

    B = min(EVEN_BATCHES, n)
    if B < 3:
        return False
    changes = _batch_changes(loss_grad, origin, first, [step * plus, step * minus], n, B)
    G = np.where(np.asarray(free, dtype=bool), -changes / step, 0.0)      # (B, 2, p): each batch's field at e±
    gaps = G[:, 0] @ plus - G[:, 1] @ minus
    error = float(np.std(gaps, ddof=1)) / math.sqrt(B)
    if not error > 0:
        return bool(abs(float(gaps.mean())) > 0)
    return abs(float(gaps.mean())) / error > float(t_distribution.ppf(1.0 - 0.5 * EVEN_P_VALUE, B - 1))


def _batch_changes(loss_grad, origin, first, moves, n: int, B: int) -> np.ndarray:
    """``(B, len(moves), p)``: on each of ``B`` disjoint batches of the ``n`` samples, the change of the unit's
    gradient when ``origin``'s unit ``first`` is moved by each of ``moves`` (one batch's gradient at the origin, then
    one per move): the batched one-sided fields of :func:`even_is_significant` and :func:`sides_differ`."""
    edges = np.linspace(0, n, B + 1).astype(int)
    out = np.empty((B, len(moves), len(first)))
    for b in range(B):
        rows = slice(edges[b], edges[b + 1])
        at_origin = loss_grad(origin, rows)[1]
        for j, move in enumerate(moves):
            theta = origin.copy()
            theta[first] += move
            out[b, j] = loss_grad(theta, rows)[1] - at_origin
    return out


def odd_part(direction: np.ndarray, even: np.ndarray | None) -> tuple[np.ndarray, float]:
    """``(ê, s)``: the odd part ``e⁺ − even`` of a mode as a unit vector and its length ``s`` (``(e⁺, 1.0)``, the
    direction as it is, where the mode has no even part)."""
    if even is None:
        return direction, 1.0
    odd = direction - even
    s = float(np.linalg.norm(odd))
    return odd / s, s


def plateau_units(loss_grad, origin, index, units, share, rate: float, free,
                  step: float = ONE_SIDED_STEP) -> np.ndarray:
    """The units ``(p, d)`` of a kinked origin's plateau, each flowed by the one-sided field and scaled back by the
    fast side's growth: ``ψ(t) = e^{−λ t} θ(t)``, ``θ̇_u = G(θ_u)`` for every unit ``u`` at once, up to the time the
    mode's share reaches unit size (``|ψ(t)ᵀ share| e^{λ t} = 1``, the linear escape), from ``ψ(0) = units``.

    Where the two fixed points of the mode have different rates (:func:`sides_differ`), a unit holding the mode
    with the share of the slower side does not only lag: if that side's rate is negative the unit's share decays,
    and the unit may cross the kink to the faster side (a relu unit ``a φ(w·x)`` on targets with a positive mean:
    ``ȧ`` is the mean that ``φ(w·x)`` fits, positive for either sign of ``a``, while ``a² − |w|²`` is conserved, so
    a unit with ``|a| < |w|`` turns to ``a > 0`` and one with ``|a| > |w|`` cannot).  Which units cross, and with
    what share, is the field's, not a factor per side: where every unit started on the slower side, the split
    relaxed per side kept the slower side's direction (a relu CNN on a relu teacher: its chart abstained, the
    start below the minimum of a side that only rises, both transitions missed).  With ``ψ`` the units' shares
    are read where the run's escape starts.

    ``loss_grad(θ)``: the mean loss and its gradient (flat); ``index (d, p)``: each unit's entries in θ;
    ``units (p, d)``: the initial units less ``origin``'s; ``share (p,)``: the mode's odd part over its length
    (a unit's share is ``ψ_uᵀ share``); ``rate``: the faster side's rate λ > 0; ``free (p,)``: the trained entries.
    The field is read with every unit at once, the largest of size ``step`` (units interact through the
    outputs, ``O(step²)``).  Heun's steps of ``PLATEAU_STEP / λ``: two full-batch gradients each, ``4 ln(1/r0)``
    steps for a start ``r0`` (at most :data:`PLATEAU_MAX_STEPS`, where the shares decay)."""
    free = np.asarray(free, dtype=bool)[:, None]
    g0 = loss_grad(origin)[1][index].T

    def field(psi):          # G(ψ) − λψ: the one-sided field is homogeneous of degree 1
        size = float(np.abs(psi).max())
        if not size > 0:
            return np.zeros_like(psi)
        s = step / size
        theta = origin.copy()
        theta[index] += s * psi.T
        return np.where(free, -(loss_grad(theta)[1][index].T - g0) / s, 0.0) - rate * psi

    psi = np.where(free, np.asarray(units, dtype=np.float64), 0.0)
    dt, t = PLATEAU_STEP / rate, 0.0
    for _ in range(PLATEAU_MAX_STEPS):
        reach = float(np.linalg.norm(psi.T @ share))
        if not (reach > 0 and math.isfinite(reach)) or math.log(reach) + rate * t >= 0.0:
            break
        k1 = field(psi)
        k2 = field(psi + dt * k1)
        psi = psi + 0.5 * dt * (k1 + k2)
        t += dt
    return psi
