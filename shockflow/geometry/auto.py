"""Automatic charts: one chart per unstable mode of the origin, for any network with interchangeable units.

docs/theory.md §6 ("Modes from the symmetry", "The chart of a mode").  A layer that is a sum over
interchangeable units ``w_1 … w_d ∈ R^p`` (hidden neurons with their readout, channels, heads,
experts: :mod:`shockflow.models.units`) is, near small weights, a function of the units' Gram
matrix ``M = W Wᵀ`` (``W ∈ R^{p×d}``, units as columns); gradient flow there is
``Ẇ = Y W + O(‖W‖³)`` with ``Y = −H``, ``H`` the Hessian of the loss with respect to one unit at
``θ = 0`` (every unit has the same one: they are interchangeable).  The eigenvectors ``e_k`` of
``Y`` with positive eigenvalue ``λ_k`` are the unstable directions of the origin, the **modes**;
while small, ``|Wᵀ e_k|`` grows like ``e^{λ_k t}``.

:func:`find_modes` computes ``H`` from the model's own gradient (central differences of
``model.loss_and_grad`` at ``θ = ±h e_j``, one unit's entries; the interaction with a second unit,
the ``B`` term of docs/theory.md §2's expansion, is subtracted so that the modes are those of the units'
differences, which the permutation symmetry leaves free).  It works for any loss and any number
of outputs: for a two-layer linear net on whitened inputs the modes are the singular triples of
``E[y xᵀ]`` (a test checks this).

**The chart of mode k** (:class:`AutoGeometry`): the coordinate is ``r = |Wᵀ e_k|`` (the mode's
strength summed over the units, invariant under their permutations), the section through the
initial point scales the mode's component of every unit together,
``w_i(r) = w_i(0) + (r − r_0) ĉ_i e_k`` with ``ĉ = c/|c|``, ``c = W_0ᵀ e_k`` (the mode split over
the units the way the initial weights already split it; an equal split if they hold none of it),
so ``|∂θ/∂r| = 1`` and the mobility is 1.  At a saddle of the chain (``active``: the modes already
learned, :mod:`shockflow.prediction.saddle_chain`) the split ``ĉ`` is taken orthogonal to the learned
modes' splits over the units.  The loss on the chart is the REAL network's loss along
that section: saturation, nonlinearity and finite width stay in it.  The ridge is ``r = 0``
(mirrored chart ``[0, R]``).

**Chains of depth L ≥ 3** (``deep_linear``, ``deep_mlp`` with φ(0) = 0, φ'(0) = c > 0; docs/theory.md §6,
"Depth").  There is no sum over units; near zero weights ``f(x) ≈ c^{L−1} P x`` with the end-to-end map
``P = W_L ⋯ W_1``.  :func:`find_chain_modes`: the modes are the singular triples ``(s_k, u_k, v_k)`` of
``−c^{L−1} ∇_P L`` at ``P = 0`` (``Σ_yx`` for the square loss: Saxe et al. 2014).  The mode strength is
``z_k = u_kᵀ P v_k``; gradient flow moves it at ``ż = s |∇_θ z|² + …`` with
``|∇_θ z|² = Σ_l |b_l|² |c_l|²``, ``c_l = W_{l−1} ⋯ W_1 v``, ``b_l = W_{l+1}ᵀ ⋯ W_Lᵀ u``.  On the balanced
section (every layer's mode component ``r q_l q_{l−1}ᵀ`` of the same size r, ``q_0 = v``, ``q_L = u``)
``z = r^L`` and ``|∇z|² = L r^{2L−2}``; the chart coordinate of any parameters is the balanced radius with
the same initial speed, ``r = (|∇_θ z|²/L)^{1/(2L−2)}`` (= r on the section; from a random small
initialisation, where ``z_0 ≈ 0``, the speed is what sets the escape).  The section is
``θ(r) = θ_⊥ + r C`` with ``C`` the unit chain (``W_l = q_l q_{l−1}ᵀ``, the hidden directions ``q_l`` the
forward images ``W_l ⋯ W_1 v_k`` orthonormalised over the modes in order) and ``θ_⊥`` the reference with
its components along ``C`` removed, so ``L̄(r) = L(θ_⊥) − s r^L + ½ r^{2L} + …``; ``|∂θ/∂r|² = L``, mobility
``1/L``.  The ridge at r = 0 is degenerate (no shock): the escape integral of docs/theory.md §1 gives
``t ≈ 1/(s (L − 2) r_0^{L−2})``.

**The aligned start** (docs/theory.md §6, "Depth"; :func:`aligned_start`, :meth:`AutoGeometry.start_coordinate`).
From random small layers the speed radius overestimates the escape speed (an isolated mode 7–33 % early): the
layers first align on the mode.  Near the origin the loss is ``−tr(Mᵀ P)`` to leading order (M =
:func:`chain_target`), so the layers follow ``Ẇ_l = A_lᵀ M B_lᵀ`` (``A_l``, ``B_l`` the products after and before
layer l): every small mode moves the shared middle layers.  The flow is followed from the real layers until the
mode's ``z = 0.05 s`` and mapped to the balanced radius ``r_a`` that reaches the same ``z`` at the same time, the
extraction's ``x0`` (the coordinate of the parameters, which the truth reads, stays the speed radius), and the
escape from it runs on the mode's own path from zero weights up to ``r_1`` (:meth:`AutoGeometry.aligned_escape`: the
section through the reference's random layers has paths of lower degree in r there, which the flow spent on the
alignment).  A mode of
smaller rate is timed by the flow of the modes not learned before it (M without the modes of larger rate), from
the layers with the hidden directions those modes align to taken out (their cross terms remove its components
there once they grow); the directions a faster mode holds are those its own flow (``s u vᵀ`` alone) aligns.

**The learned strength** (docs/theory.md §6, "The learned strength"; :meth:`AutoGeometry.function_strength`).
The strength "half learned" is measured in (the parameter truth, the escape's exit) is read from the network's
function: the coefficient of mode k's linear-regime function ``g_k`` (the change of ``f`` per unit strength along
its unit section from zero weights) in the least-squares fit of ``f_θ − f_origin`` on ``g_k``, every other mode's
``g_j`` and every other mode's function alone at its present coordinate (a learned mode's saturated function
leaves the span of the ``g``; the first head of ``attention-qk-4x2`` leaked 0.12 of the second's final 0.42
without it).  It is ``r²`` (``r^L``) while the network is linear in its weights, and stays
bounded where saturated weights grow on.  Where the network is linear in its input (``f = X A(θ)ᵀ``: linear and
deep linear nets) every function in these fits is ``X Mᵀ`` for a map ``M``, and the fits are made on ``R Mᵀ``
(``X = QR``): the same least squares (``‖X Mᵀ‖ = ‖R Mᵀ‖``) at d·o numbers per function, no pass over the data
(:meth:`AutoGeometry._reduced`).  The charts of one set of modes on one network share what these fits read
that does not depend on the chart (:meth:`AutoGeometry._set_state`): the linear-regime functions, the reduction,
and each mode's function alone at a coordinate, evaluated once for the set, not once per chart.

**The intercept** (docs/theory.md §6, "The intercept"; :func:`split_stiffness`).  Units with φ(0) ≠ 0 at zero
weights (sigmoid; frozen biases with φ(b) ≠ 0) add the constant ``φ(0) a_i`` to the outputs.  The learned
strength reads each mode's function as the section's symmetric second difference and fits the intercepts
alongside; the section splits the mode over the units as it grows, the common part the intercept stiffens
relaxed over the plateau (:meth:`AutoGeometry._relaxed_split`).

**A kinked origin** (docs/theory.md §6, "A kinked origin"; :mod:`shockflow.geometry.one_sided_modes`).  Where the
loss is not twice differentiable at zero weights (relu units) the modes are the fixed points of the one-sided
field, and a mode has an even part (a trained bias keeps its sign when a unit holds the mode with the other
sign): ``modes`` holds ``e⁺``, ``even`` the even parts, and the section moves unit i along ``c_i·odd + |c_i|·even``
with ``c_i`` its share of the odd part (the coordinate).  Only the fastest mode's chart from the origin carries
the even part; the others, and every chart at a saddle, move their odd parts (the units' biases follow the mode
that dominates them).  Where that mode's two sides grow at different rates, its split and start are read from the
initial units flowed over the plateau by the one-sided field (``plateau_units``; docs/theory.md §6, "Units that
cross the kink"): a unit on a side whose rate is negative may turn over to the faster one.
"""

from __future__ import annotations

import hashlib
import weakref
from functools import cached_property

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.geometry.base import Chart, Geometry, GeometryError
from shockflow.geometry.chart_interpolant import interpolated_reader
from shockflow.geometry.flat import flatten, unflatten
from shockflow.geometry.one_sided_modes import odd_part, one_sided_modes, plateau_units
from shockflow.geometry.registry import register
from shockflow.models.base import Model

__all__ = ["AutoGeometry", "Modes", "aligned_start", "chain_target", "check_frozen_origin", "find_chain_modes",
           "find_modes", "free_origin"]


@dataclass(frozen=True)
class Modes:
    """Unstable modes of the origin: ``directions (p, K)`` (unit space, orthonormal columns) and their
    growth rates ``rates (K,)`` (descending, > 0); ``spectrum`` is every eigenvalue of ``Y``."""

    directions: np.ndarray
    rates: np.ndarray
    spectrum: np.ndarray
    errors: np.ndarray | None = None     # standard error of each kept rate (the sample's own noise)
    spectrum_errors: np.ndarray | None = None   # ... of every eigenvalue (NaN for one ≤ 0: never kept)
    stiff_splits: np.ndarray | None = None      # (K, units, m): the unit splits an intercept stiffens (split_stiffness)
    even: np.ndarray | None = None              # (p, K): the part a unit keeps under its sign flip (one_sided_modes)
    uncharted: np.ndarray | None = None         # rates of the modes kept but for max_modes (not charted), descending
    sides: np.ndarray | None = None             # (K, 2): the rates of a unit's positive and negative share (ditto)
    plateau_units: np.ndarray | None = None     # (2, p, units): the start's units, flowed over the plateau (ditto)
    section_sides: np.ndarray | None = None     # (2,): the rates along the fastest mode's separated e± (ditto)


def _layout(model):
    from shockflow.models.units import unit_layout

    _refuse(model)
    try:
        return unit_layout(model)
    except ValueError as exc:
        raise GeometryError(f"model: the automatic charts need interchangeable units; {exc}") from None


#: model families the automatic charts refuse, and why (``shockflow validate`` names the reason, exit 2)
REFUSED = {
    "moe": "the mixture of experts' origin is not a saddle, and with MLP experts (expert = \"mlp\") each expert "
           "has its own saddle at zero weights under a gate that cannot split until the experts differ; only "
           "linear experts are charted (from the symmetric plateau, shockflow.prediction.gate)",
}

#: the mixture of linear experts is charted from its symmetric plateau and its splits (docs/theory.md §6,
#: "The mixture of experts"), not from the origin: shockflow.prediction.gate
MIXTURE_AWAY_FROM_ORIGIN = ("the mixture of linear experts has no saddle at the origin (the uniform gate makes f the "
                            "mean expert); `shockflow run` charts it from its symmetric plateau "
                            "(shockflow.prediction.gate)")


def _is_linear_mixture(model) -> bool:
    return getattr(model, "name", None) == "moe" and getattr(model, "expert", None) == "linear"


def _refuse(model):
    name = getattr(model, "name", None)
    if _is_linear_mixture(model):
        return
    if name in REFUSED:
        raise GeometryError(f"model: the automatic charts do not chart the {name!r} network: {REFUSED[name]}")


def _chain(model):
    """The chain layout of a deep network (None: not a chain model; GeometryError: a chain that cannot be charted)."""
    from shockflow.models.units import CHAIN_MODELS, chain_layout

    if getattr(model, "name", None) not in CHAIN_MODELS:
        return None
    try:
        return chain_layout(model)
    except ValueError as exc:
        raise GeometryError(str(exc)) from None


#: how many modes the automatic charts keep, and how slow a mode may be against the fastest
MAX_MODES, MIN_RATE_RATIO = 16, 0.02


def find_modes(model: Model, X, y, *, h: float = 1e-4, max_modes: int = MAX_MODES,
               min_rate_ratio: float = MIN_RATE_RATIO, frozen: tuple = ()) -> Modes:
    """The unstable modes of ``model``'s origin on the data ``(X, y)`` (module docstring).

    Keeps the modes whose rate is at least ``min_rate_ratio`` times the largest, at most
    ``max_modes`` of them, and above its own standard error: ``Y`` is a mean over the samples, and an
    eigenvalue ``λ_k`` moves by ``e_kᵀ (Y_μ − Y) e_k / n`` per sample (first-order perturbation); one not
    one standard error above zero cannot be told from the sample's noise (a rank-2 teacher head's QK
    form has four positive eigenvalues at n = 2048, two of them 0.96 and 0.7 standard errors).
    Cost: ``2p`` full-batch gradient passes (``p`` parameters per unit) for ``Y``, of a network of units 0 and 1
    alone where the family has that form (:func:`shockflow.models.units.units_only`: the others are silent at the
    origin), and one batched forward pass at ``6p + 1`` parameter sets for the standard errors
    (:func:`_rayleigh_errors`).

    ``frozen``: parameter names held at their initial values (``[training] frozen``): the origin is that of
    the free parameters (:func:`free_origin`), ``Y`` is taken over a unit's free entries only and the modes
    are zero on the frozen ones, so no section moves them."""
    if _is_linear_mixture(model):
        raise GeometryError(f"model: {MIXTURE_AWAY_FROM_ORIGIN}")
    if _chain(model) is not None:
        _refuse_frozen_chain(model, frozen)
        return find_chain_modes(model, X, y, max_modes=max_modes, min_rate_ratio=min_rate_ratio)
    from shockflow.models.units import unit_layout, units_only

    layout = _layout(model)
    p, d = layout.unit_dim, layout.units
    zero = model.copy()
    origin, free = free_origin(model, layout, frozen)
    X = np.asarray(X, dtype=np.float64)
    first, second = layout.index[0], (layout.index[1] if d > 1 else None)
    # the gradients of units 0 and 1 with unit 0 moved: the other units are silent at the origin, so a network of
    # these units alone gives them where the family has that form (units_only; 2 units' passes instead of d)
    alone = units_only(zero, origin, [0, 1] if d > 1 else [0]) if d > 2 else None
    net, at = (zero, origin) if alone is None else alone
    inner = layout if alone is None else unit_layout(net)
    moved = inner.index[0]
    wanted = np.concatenate([moved, inner.index[1]]) if second is not None else moved
    S = np.zeros((p, p))                # −(H − H_pair) of the mean loss, columns j
    for j in np.flatnonzero(free):
        cols = []
        for sign in (1.0, -1.0):
            theta = at.copy()
            theta[moved[j]] += sign * h
            net.set_parameter_vector(theta)
            cols.append(net.grad_vector(net.loss_and_grad(X, y)[1])[wanted])
        column = (cols[0] - cols[1]) / (2.0 * h)
        S[:, j] = -column[:p]
        if second is not None:
            S[:, j] += column[p:]
    S[~free, :] = 0.0                   # frozen entries: no row either (the modes do not move them)
    S = 0.5 * (S + S.T)
    if frozen:
        _refuse_sloped_origin(model, origin, layout, free, frozen, X, y)
    if not np.all(np.isfinite(S)):
        raise GeometryError("model: the loss Hessian at zero weights is not finite; no modes can be found")
    values, sub = np.linalg.eigh(S[np.ix_(free, free)])   # the free entries' block (all of Y: none frozen)
    vectors = np.zeros((p, sub.shape[1]))
    vectors[free] = sub
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    # the standard error of each eigenvalue (first order in the sample's noise: e_kᵀ (Y_sample − Y) e_k)
    # (only a positive eigenvalue can be kept: the others' errors are not measured, NaN)
    error = np.full(values.size, np.nan)
    up = values > 0
    error[up] = _rayleigh_errors(zero, origin, first, second, vectors[:, up], X, y)
    significant = _select(values, vectors, values.size, min_rate_ratio) & up
    significant[up] &= values[up] > error[up]
    copied = function_copies(zero, origin, first, vectors, significant, X, of=True)
    significant &= copied < 0
    vectors, values = _facing_the_start(model, origin, layout, S, vectors, values, copied)
    keep = significant & (np.cumsum(significant) <= max_modes)
    uncharted = values[significant & ~keep]
    stiff = split_stiffness(zero, origin, layout, vectors[:, keep], values[keep], X, y) if d > 1 else None
    kinked = one_sided_modes(zero, origin, first, second, free, vectors[:, keep], values[keep], X, y)
    if kinked is not None:     # a relu origin: the modes as its one-sided field moves them (one_sided_modes)
        return Modes(kinked.directions, kinked.rates, values, error[keep], error, stiff, kinked.even, uncharted,
                     kinked.sides, _plateau_units(model, origin, layout, free, kinked, X, y), kinked.section_sides)
    return Modes(vectors[:, keep], values[keep], values, error[keep], error, stiff, None, uncharted)


def _plateau_units(model, origin, layout, free, kinked, X, y) -> np.ndarray | None:
    """``(2, p, units)``: the initial units (less the origin's) and the same units flowed over the plateau by the
    one-sided field (:func:`one_sided_modes.plateau_units`), where the fastest mode's two sides grow at different
    rates, the faster positive; else None."""
    plus, minus = (float(v) for v in kinked.sides[0])
    if plus == minus or not max(plus, minus) > 0:
        return None
    net = model.copy()

    def loss_grad(theta):
        net.set_parameter_vector(theta)
        L, grads = net.loss_and_grad(X, y)
        return float(L), net.grad_vector(grads)

    odd, scale = odd_part(kinked.directions[:, 0], kinked.even[:, 0])
    units = layout.unit_matrix(model.parameter_vector() - origin)
    flowed = plateau_units(loss_grad, origin, layout.index, units, odd / scale, max(plus, minus), free)
    return np.stack([units, flowed])


#: two modes whose functions near zero weights have at least this cosine are one mode (:func:`function_copies`)
SAME_FUNCTION = 0.999
#: the step of :func:`function_copies`' second differences (relative to a unit direction)
COPY_STEP = 1e-3


def _facing_the_start(model, origin, layout, S, vectors, values, copied):
    """A mode with copies (:func:`function_copies`) turned, within the span of it and its copies, to where the initial
    parameters' units lie: the unit vector ``e`` of the span with the largest ``Σ_u (e·θ_{0,u})²``, its rate the
    Rayleigh quotient ``eᵀ Y e``.  The copies are one eigenvalue (a symmetry inside a unit: an attention head's value
    path unchanged by a rotation of its inner coordinates), every direction of their span grows at that rate, and the
    run grows along the initial parameters' part in it; ``eigh``'s eigenvector is an arbitrary direction of the span,
    whose part of the start can be any fraction of it (a head of d_model 5, d_v = 2: the chart's start 2.8e-5
    against the run's 1.3e-3, the first transition 58 % late).  ``(vectors, values)``, copies of the others."""
    if not np.any(copied >= 0):
        return vectors, values
    vectors, values = vectors.copy(), values.copy()
    units = model.parameter_vector()[layout.index] - origin[layout.index]       # (units, p): the start, unit by unit
    for k in np.unique(copied[copied >= 0]):
        B = vectors[:, np.concatenate([[k], np.flatnonzero(copied == k)])]       # (p, m), orthonormal
        C = units @ B
        w = np.linalg.eigh(C.T @ C)[1][:, -1]
        e = B @ w
        vectors[:, k], values[k] = e, float(e @ S @ e)
    return vectors, values


def function_copies(zero, origin, first, vectors, candidates, X, *, of: bool = False) -> np.ndarray:
    """The eigenvectors of ``Y`` among ``candidates`` (a mask over ``vectors``' columns, in their order) that change the
    network's function near zero weights as an earlier candidate does: the symmetric second difference of the
    outputs along the direction in one unit, ``(f(εe) + f(−εe) − 2 f(0))/2ε²``, at a cosine of at least
    :data:`SAME_FUNCTION` with an earlier one's.  A unit's internal symmetry makes such copies: an attention head's
    value path ``vᵀ W_V`` is unchanged by a rotation of its ``d_k`` inner coordinates, so every mode comes ``d_k``
    times with one rate and one function (a head of d_model = 3: three eigenvectors at 1.307, functions at cosine
    1.0000).  They are one mode, one transition: charted as three, the learned strength split the one function
    among them at random, and the chain saw the second and third at zero curvature after the first.  Two modes of
    equal rate and different functions (a teacher with two equal singular values) stay two.  Cost: two forward
    passes per candidate.  ``of``: instead of the mask, the index of the earlier candidate each copies (−1: none)."""
    net = zero.copy()
    X = np.asarray(X, dtype=np.float64)

    def outputs(theta):
        net.set_parameter_vector(theta)
        return np.asarray(net.forward(X), dtype=np.float64).reshape(-1)

    f0 = outputs(origin)
    copies = np.full(vectors.shape[1], -1)
    seen: list[tuple[int, np.ndarray]] = []
    for k in np.flatnonzero(candidates):
        moved = []
        for sign in (1.0, -1.0):
            theta = origin.copy()
            theta[first] += sign * COPY_STEP * vectors[:, k]
            moved.append(outputs(theta))
        g = (moved[0] + moved[1] - 2.0 * f0) / (2.0 * COPY_STEP ** 2)
        size = float(np.linalg.norm(g))
        if not (math.isfinite(size) and size > 0):
            continue
        g = g / size
        same = [j for j, h in seen if abs(float(g @ h)) >= SAME_FUNCTION]
        if same:
            copies[k] = same[0]
        else:
            seen.append((k, g))
    return copies if of else copies >= 0


#: the step of :func:`split_stiffness`'s first differences (relative to a unit direction)
SPLIT_STEP = 1e-3


def first_order_counts(first, second, step: float) -> bool:
    """Whether a section's first-order function ``first`` counts at the finite-difference ``step`` against its
    second order ``second`` (``|first| > step · |second|``: the intercept's constant ``φ(0) a_i`` does, an odd φ's
    round-off does not)."""
    return bool(np.linalg.norm(first) > step * np.linalg.norm(second))


def split_stiffness(model, origin, layout, vectors, rates, X, y, h: float = SPLIT_STEP) -> np.ndarray | None:
    """How an intercept holds back the units' common part of each mode (docs/theory.md §6, "The intercept"):
    ``(K, units, m)`` with ``F_k F_kᵀ = T_k / λ_k``, or None where no mode has one.

    ``Y`` is the flow of the units' differences; a split ``c`` (mode k's component ``c_i e_k`` in unit i) also
    moves every unit's first-order function ``h_i = ∂f/∂c_i`` at the origin, which vanishes where φ(0) = 0 and
    otherwise carries the constant ``φ(0) a_i`` (sigmoid; frozen biases with ``φ(b) ≠ 0``).  The loss then holds
    ``½ cᵀ T c`` with ``T_ij = mean_μ h_iᵀ ∇²ℓ_μ h_j`` (the Gauss–Newton term; the pair term ``B`` of the
    Hessian, exact at the origin, where f's second derivative across units vanishes), and the split follows
    ``ċ = (λ_k − T_k) c``: its components along ``T_k``'s range (the units' common part for equal units) grow
    slower by ``T_k``'s eigenvalues, or decay.  ``h_i`` by central differences, ``2·units`` parameter sets per
    mode in one batched forward pass on at most ``CHUNK_VALUES / (2 · units · outputs)`` samples (T is a mean over
    them; for the constant ``φ(0) a_i`` any sample gives it exactly); nothing is computed beyond one pair of passes
    per mode where the common split's first-order function vanishes (``|h| ≤ h · |g|``, the second order's size at
    the step)."""
    from shockflow.geometry.batched_loss import CHUNK_VALUES, batched_outputs

    d, K = layout.units, vectors.shape[1]
    if not K:
        return None
    X = np.asarray(X)
    loss = model.loss_function
    out0 = batched_outputs(model, unflatten(model, origin[None]), X)[0]
    rows = max(64, CHUNK_VALUES // (2 * d * out0.shape[-1]))     # T is a mean over samples: a bounded batch
    Xs, Ys, outs = X[:rows], loss.targets(y, X.shape[0], model.output_dim)[:rows], out0[:rows]
    G0 = None   # the loss gradient there, once a mode needs it (a user's loss may have none: no intercept, no call)
    result = []
    for k in range(K):
        e = vectors[:, k]
        common = np.zeros(model.num_parameters)
        common[layout.index] = np.outer(np.full(d, 1.0 / math.sqrt(d)), e)
        F = batched_outputs(model, unflatten(model, np.stack([origin + h * common, origin - h * common])), X)
        if not first_order_counts((F[0] - F[1]) / (2 * h), (F[0] + F[1] - 2 * out0) / (2 * h * h), h):
            result.append(np.zeros((d, 0)))
            continue
        sets = np.repeat(origin[None], 2 * d, axis=0)
        for i in range(d):
            sets[2 * i, layout.index[i]] += h * e
            sets[2 * i + 1, layout.index[i]] -= h * e
        F = batched_outputs(model, unflatten(model, sets), Xs)
        H = (F[0::2] - F[1::2]) / (2 * h)                                  # (units, n, o): h_i
        G0 = loss.grad(outs, Ys) if G0 is None else G0
        curvature = np.stack([(loss.grad(outs + h * Hi, Ys) - G0) / h for Hi in H])   # ∇²ℓ h_i (exact: squared loss)
        T = np.einsum("ino,jno->ij", H, curvature) / outs.shape[0]
        values, Q = np.linalg.eigh(0.5 * (T + T.T))
        big = values > 1e-8 * max(float(rates[k]), 1e-300)
        result.append(Q[:, big] * np.sqrt(values[big] / float(rates[k])))
    if all(F_k.shape[1] == 0 for F_k in result):
        return None
    m = max(F_k.shape[1] for F_k in result)
    return np.stack([np.pad(F_k, ((0, 0), (0, m - F_k.shape[1]))) for F_k in result])


#: the step of the per-sample second differences of :func:`_rayleigh_errors` (relative to a unit direction)
RAYLEIGH_STEP = 2e-4


def _rayleigh_errors(model, origin, first, second, vectors, X, y, h: float = RAYLEIGH_STEP) -> np.ndarray:
    """The standard error ``sqrt(Σ_μ (R_μk − R̄_k)²)/n`` of each eigenvalue of ``Y`` from the per-sample Rayleigh
    quotients ``R_μk = e_kᵀ Y_μ e_k``, ``Y_μ = −(H_μ − H_pair,μ)`` (find_modes), by second differences of the
    per-sample losses ``ℓ_μ`` with unit 0 at ``h₁ e_k`` and unit 1 at ``h₂ e_k``:
    ``e_kᵀ H_μ e_k = [ℓ(h,0) − 2ℓ(0,0) + ℓ(−h,0)]/h²`` and ``e_kᵀ H_pair,μ e_k = [ℓ(h,h) − ℓ(h,−h) − ℓ(−h,h) +
    ℓ(−h,−h)]/(4h²)``: ``6K + 1`` parameter sets in one batched forward pass
    (:func:`shockflow.geometry.batched_loss.batched_sample_losses`) instead of ``2p`` per-sample gradient passes.
    The rounding of a loss ``ℓ`` is ``ε ℓ/h²`` ≈ 1e-8 ℓ; ``tests/geometry/test_fast_modes.py`` compares the errors
    with the per-sample gradients' to 1e-4."""
    from shockflow.geometry.batched_loss import batched_sample_losses
    from shockflow.geometry.flat import unflatten

    K = vectors.shape[1]
    if K == 0:
        return np.zeros(0)
    signs = [(1.0, 0.0), (-1.0, 0.0)] + ([(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)] if second is not None
                                         else [])
    thetas = np.repeat(origin[None], 1 + K * len(signs), axis=0)
    for k in range(K):
        for i, (a, b) in enumerate(signs):
            row = thetas[1 + k * len(signs) + i]
            row[first] += a * h * vectors[:, k]
            if second is not None:
                row[second] += b * h * vectors[:, k]
    ell = batched_sample_losses(model, unflatten(model, thetas), X, y)
    at = ell[1:].reshape(K, len(signs), -1)
    R = -(at[:, 0] - 2.0 * ell[0][None] + at[:, 1]) / (h * h)
    if second is not None:
        R += (at[:, 2] - at[:, 3] - at[:, 4] + at[:, 5]) / (4.0 * h * h)
    R -= R.mean(axis=1, keepdims=True)
    return np.sqrt(np.sum(R * R, axis=1)) / X.shape[0]


def free_origin(model, layout, frozen) -> tuple[np.ndarray, np.ndarray]:
    """``(θ_origin, free)``: the origin of the free parameters (zero weights, the ``frozen`` parameters at
    the model's current values) and the mask over a unit's ``p`` entries of those that are trained.  A
    frozen parameter must hold the same values in every unit (else the units are no longer
    interchangeable: the permutation symmetry the charts rest on is broken by it); a :class:`GeometryError`
    names the frozen key.  (That the origin is stationary is :func:`_refuse_sloped_origin`'s check.)"""
    theta = model.parameter_vector()
    origin = np.zeros_like(theta)
    if not frozen:
        return origin, np.ones(layout.unit_dim, dtype=bool)
    owner = np.concatenate([np.full(np.asarray(v).size, k, dtype=object) for k, v in model.params.items()])
    unknown = [k for k in frozen if k not in model.params]
    if unknown:
        raise GeometryError(f"frozen: {unknown[0]!r} is not a parameter of the {model.name!r} model "
                            f"({', '.join(model.params)})")
    held = np.isin(owner, list(frozen))
    origin[held] = theta[held]
    free = ~held[layout.index[0]]
    if not np.array_equal(held[layout.index], np.broadcast_to(~free, layout.index.shape)):
        raise GeometryError("frozen: the frozen parameters take different entries of different units")
    values = theta[layout.index][:, ~free]
    for key in frozen:
        cols = owner[layout.index[0]][~free] == key
        if layout.units > 1 and not np.allclose(values[:, cols], values[:1, cols], rtol=1e-12, atol=0.0):
            raise GeometryError(f"frozen: {key!r} holds different values in different units, so its units are no "
                                f"longer interchangeable (the automatic charts need the permutation symmetry); "
                                f"freeze it at one value for every unit (an `initial` file) or train it")
    return origin, free


def _refuse_sloped_origin(model, origin, layout, free, frozen, X, y):
    """The origin of the free parameters must be a stationary point for its modes to be a saddle's: refused
    (naming the frozen keys) when the loss's slope there, over the free entries, exceeds the saddle's own pull
    at the initial weights (``|g(θ_0) − g(origin)|``): the escape is then driven by the slope, not by the
    instability (a readout frozen at nonzero values makes the network linear in the weights before it).
    Both are measured outside the intercept's directions (:func:`intercept_directions`): the slope along them
    (the sample mean of the targets pulling the constant ``φ(b) a_i``) is what the charts' fits take out."""
    def free_grad(theta):
        m = model.copy()
        m.set_parameter_vector(theta)
        grads = m.loss_and_grad(X, y)[1]
        g = np.concatenate([np.asarray(grads[k]).ravel() for k in m.params])
        g = g[layout.index[:, free]]                  # (units, free entries of a unit)
        return (g - (g @ N) @ N.T).ravel()

    N = intercept_directions(model, origin, layout, free, X)
    slope, start = free_grad(origin), free_grad(model.parameter_vector())
    pull = float(np.linalg.norm(start - slope))
    if float(np.linalg.norm(slope)) > pull:
        raise GeometryError(f"frozen: with {', '.join(map(repr, frozen))} held at the initial values the loss is not "
                            f"stationary at zero free weights (slope {np.linalg.norm(slope):.3g} against the "
                            f"saddle's pull {pull:.3g} at the initial weights): the origin is no saddle of the free "
                            f"parameters, and the automatic charts chart the saddles of the origin only")


#: a direction's first-order function counts as constant over the samples below this fraction of the largest
INTERCEPT_TOL = 1e-8


def intercept_directions(model, origin, layout, free, X, h: float = SPLIT_STEP) -> np.ndarray:
    """``(q, c)`` orthonormal: the combinations of a unit's ``q`` free entries whose first-order function at the
    origin is the same for every sample, a constant per output (the intercept: a readout ``a_i`` of a unit whose
    activation is ``φ(b) ≠ 0`` at zero weights; a trainable bias under a frozen readout).  Moving a unit along
    them shifts the outputs by a constant and nothing else, as the charts' intercepts do (docs/theory.md §6,
    "The intercept").  Directions with no first-order function at all are among them (a slope there is zero).
    One batched forward pass at ``2q`` parameter sets on at most ``CHUNK_VALUES / (2q · outputs)`` samples
    (central differences; for a function linear along the entry, as ``a_i`` is, exact up to round-off)."""
    from shockflow.geometry.batched_loss import CHUNK_VALUES, batched_outputs

    cols = layout.index[0][free]
    q = cols.size
    rows = max(64, CHUNK_VALUES // (2 * q * max(1, model.output_dim)))
    sets = np.repeat(origin[None], 2 * q, axis=0)
    sets[np.arange(0, 2 * q, 2), cols] += h
    sets[np.arange(1, 2 * q, 2), cols] -= h
    F = batched_outputs(model, unflatten(model, sets), np.asarray(X)[:rows])
    J = (F[0::2] - F[1::2]) / (2.0 * h)                           # (q, rows, outputs): each entry's function
    A = (J - J.mean(axis=1, keepdims=True)).reshape(q, -1).T      # its part that varies over the samples
    _, s, Vt = np.linalg.svd(np.linalg.qr(A, mode="r"), full_matrices=True)   # A's V and σ from its (q, q) R
    rank = int(np.sum(s > INTERCEPT_TOL * max(float(np.abs(J).max(initial=0.0)), np.finfo(float).tiny)
                      * math.sqrt(A.shape[0])))
    return Vt[rank:].T


def check_frozen_origin(model, X, y, frozen) -> None:
    """Every refusal of :func:`find_modes` for ``frozen`` parameters, before any work (``GeometryError``)."""
    if not frozen:
        return
    if _chain(model) is not None:
        _refuse_frozen_chain(model, frozen)
    layout = _layout(model)
    origin, free = free_origin(model, layout, frozen)
    _refuse_sloped_origin(model, origin, layout, free, frozen, np.asarray(X, dtype=np.float64), y)


def _refuse_frozen_chain(model, frozen):
    if frozen:
        raise GeometryError(f"frozen: {frozen[0]!r}: the automatic charts of a chain move every layer along the "
                            f"balanced section of a mode, so they cannot hold a layer of the {model.name!r} "
                            f"network fixed; train it, or use `shockflow train` to only train")


def _select(values, vectors, max_modes, min_rate_ratio):
    top = values[0] if values.size else 0.0
    keep = (values > 0) & (values >= min_rate_ratio * top)
    keep &= np.cumsum(keep) <= max_modes
    return keep


def find_chain_modes(model: Model, X, y, *, max_modes: int = MAX_MODES,
                     min_rate_ratio: float = MIN_RATE_RATIO) -> Modes:
    """The modes of a chain of depth ≥ 3 (module docstring): ``directions (d + o, K)`` stacks ``[v_k; u_k]``
    (input and output singular vectors of ``−c^{L−1} ∇_P L`` at ``P = 0``), ``rates`` its singular values
    ``s_k``.  At most ``min(hidden widths)`` modes (each needs its own hidden direction in every layer)."""
    U, sigma, Vt = np.linalg.svd(chain_target(model, X, y), full_matrices=False)
    keep = _select(sigma, None, min(max_modes, min(model.widths)), min_rate_ratio)
    directions = np.concatenate([Vt[keep].T, U[:, keep]], axis=0)
    uncharted = sigma[_select(sigma, None, sigma.size, min_rate_ratio) & ~keep]
    return Modes(directions, sigma[keep], sigma, uncharted=uncharted)


def chain_target(model: Model, X, y) -> np.ndarray:
    """``M = −c^{L−1} ∇_P L`` at zero weights (``(o, d)``; ``Σ_yx`` for the square loss): gradient flow near the
    origin moves every layer at ``Ẇ_l = B_lᵀ M C_lᵀ`` (``B_l = W_L ⋯ W_{l+1}``, ``C_l = W_{l−1} ⋯ W_1``)."""
    chain = _chain(model)
    zero = model.copy()
    zero.set_parameter_vector(np.zeros(zero.num_parameters))
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    F0 = zero._forward(zero._check_inputs(X))[0]
    G = zero.loss_function.grad(F0, zero.loss_function.targets(y, n, zero.output_dim)) / n
    M = -(chain.slope ** (chain.depth - 1)) * (G.T @ X.reshape(n, -1))
    if not np.all(np.isfinite(M)):
        raise GeometryError("model: the loss gradient at zero weights is not finite; no modes can be found")
    return M


#: the aligned start: the chain's small-weight flow is followed until z = ALIGNED_FRACTION · s (module docstring)
ALIGNED_FRACTION = 0.05
#: the largest degree of the interpolant of a mode's own path below r_1 (:meth:`AutoGeometry.aligned_escape`)
OWN_PATH_DEGREE = 128
#: its integration: relative change of the fastest-moving block per RK4 step, and a step budget
_ALIGN_STEP, _ALIGN_BUDGET = 0.04, 100_000


def aligned_start(Ws, u, v, s: float, *, drive=None, taken=None, fraction: float = ALIGNED_FRACTION):
    """``(r_a, t_a, hidden)``: the balanced radius whose escape matches the real one of mode ``(s, u, v)`` from the
    layers ``Ws = [W_1 … W_L]``, the time ``t_a`` the small-weight flow took to reach ``z = uᵀ W_L ⋯ W_1 v =
    fraction · s``, and the mode's unit hidden directions there (one per hidden layer: ``W_1 v``, ``W_2 W_1 v``, …).

    Near the origin the loss is ``−tr(Dᵀ P)`` to leading order in the weights (``P = W_L ⋯ W_1``, ``D`` the
    ``drive``: the target of the modes that grow alongside this one, :func:`chain_target` without the modes
    learned before it; default ``s u vᵀ``, the mode alone), so the layers move by ``Ẇ_l = A_lᵀ D B_lᵀ`` with
    ``A_l = W_L ⋯ W_{l+1}``, ``B_l = W_{l−1} ⋯ W_1``: the alignment of the random layers on the mode is in it
    (Saxe et al. 2014's decoupled dynamics start only after it), and so is what the other modes of ``D`` add to
    the shared middle layers (at depth 5, without them, the first mode of a rank-4 teacher was 20 % late).
    ``taken``: per hidden layer an orthonormal ``(h_l, m)`` basis of the directions the modes learned first hold,
    removed from the layers at the start (module docstring, "the aligned start").  The flow is followed (RK4,
    relative steps of :data:`_ALIGN_STEP` in the fastest of the layers and the mode's end vectors ``W_1 v``,
    ``W_Lᵀ u``) until ``z = fraction · s`` (the last step cut where ``ln z`` crosses it), where the layers are
    aligned and the saturation ``s − z`` is still small; the balanced flow ``ṙ = s r^{L−1}`` that reaches the same
    ``r_1 = z^{1/L}`` at the same time starts at ``r_a = (r_1^{2−L} + (L − 2) s t_a)^{1/(2−L)}``.  ``None`` if the
    flow does not get there within the budget (a mode the layers cannot carry: ``W_1 v`` or ``W_Lᵀ u`` zero)."""
    L = len(Ws)
    D = s * np.outer(u, v) if drive is None else np.asarray(drive, dtype=np.float64)
    state = [np.array(W, dtype=np.float64) for W in Ws]
    if taken is not None:      # hidden layer l's basis Q_l: W_l ⟂ Q_l on the left and Q_{l−1} on the right
        Q = taken
        for j in range(L):
            W = state[j]
            if j < L - 1:
                W = W - Q[j] @ (Q[j].T @ W)
            if j > 0:
                W = W - (W @ Q[j - 1]) @ Q[j - 1].T
            state[j] = W

    def flow(blocks):
        """``(the rate of every layer, z, the mode's forward images W_l ⋯ W_1 v)``.  The identity ends of the
        products (``A_L``, ``B_1``) are left out, not multiplied (the same numbers: a product with I is exact)."""
        after = [None] * L                             # A_l = W_L ⋯ W_{l+1} (None: the identity), l = L down to 1
        for l in range(L - 2, -1, -1):
            after[l] = blocks[l + 1] if after[l + 1] is None else after[l + 1] @ blocks[l + 1]
        before = [None] * L                            # B_l = W_{l−1} ⋯ W_1 (None: the identity), l = 1 up to L
        for l in range(1, L):
            before[l] = blocks[0] if before[l - 1] is None else blocks[l - 1] @ before[l - 1]
        rates = []
        for A, B in zip(after, before):
            rate = D if A is None else A.T @ D
            rates.append(rate if B is None else rate @ B.T)
        cs = [B @ v for B in before[1:]]               # W_1 v, W_2 W_1 v, …, W_{L−1} ⋯ W_1 v
        return rates, float(u @ (blocks[-1] @ cs[-1])), cs

    def moved(blocks, rates, h):
        return [x + h * r for x, r in zip(blocks, rates)]

    def norm(x):   # np.linalg.norm's own arithmetic (the dot of the raveled array), without its checks per call
        x = x.ravel(order="K")
        return math.sqrt(x.dot(x))

    def relative(x, r):
        n = norm(x)
        return norm(r) / n if n > 0 else 0.0

    def rk4(blocks, k1, h):
        k2 = flow(moved(blocks, k1, h / 2))[0]
        k3 = flow(moved(blocks, k2, h / 2))[0]
        k4 = flow(moved(blocks, k3, h))[0]
        return [x + h / 6 * (a + 2 * b + 2 * c + d) for x, a, b, c, d in zip(blocks, k1, k2, k3, k4)]

    t, target = 0.0, fraction * s
    previous = None                                     # (state, k1, z, step) before the last step
    for _ in range(_ALIGN_BUDGET):
        k1, z, cs = flow(state)
        if z >= target:
            if previous is not None and 0.0 < previous[2] < target:
                # the last step again, cut where ln z crosses the target: the flow ends at z ≈ target whatever the
                # step (the layers' alignment at the end depends on where it ends), with (z, t) of one RK4 solution
                back, k0, z0, h = previous
                part = h * math.log(target / z0) / math.log(z / z0)
                state, t = rk4(back, k0, part), t - h + part
                _, z, cs = flow(state)
            r1 = z ** (1.0 / L)
            hidden = [c / np.linalg.norm(c) for c in cs]
            return (r1 ** (2 - L) + (L - 2) * s * t) ** (1.0 / (2 - L)), t, hidden
        ends = [relative(state[0] @ v, k1[0] @ v), relative(state[-1].T @ u, k1[-1].T @ u)]
        fastest = max([relative(x, r) for x, r in zip(state, k1)] + ends)
        if not (math.isfinite(fastest) and fastest > 0):
            return None
        h = _ALIGN_STEP / fastest
        previous = (state, k1, z, h)
        state = rk4(state, k1, h)
        t += h
    return None


#: the mode sets whose shared state is kept per model (:meth:`AutoGeometry._set_state`; the oldest dropped first)
_MODE_SETS_KEPT = 8
_MODE_SETS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

#: two coordinates of another mode closer than this (relative) are one for :meth:`AutoGeometry.function_strength`:
#: its function alone there is evaluated once (they differ by rounding along a section: the change of the column,
#: ~2e-12 of it, is far below what the least-squares coefficient resolves)
SAME_COORDINATE = 1e-12


@register
@dataclass(frozen=True, eq=False)
class AutoGeometry(Geometry):
    """One chart per unstable mode, found from the data (module docstring)."""

    name = "auto"
    symmetry = ("permutations of interchangeable units (neurons, channels, heads, experts): one chart per "
                "unstable mode e_k of the origin, r = |Wᵀ e_k|")

    model: Model
    modes: Any = None          # (p, K) unit-space directions ([v; u] stacked for a chain); None: found by discover_charts
    mode: int = 0
    max_modes: int = MAX_MODES
    min_rate_ratio: float = MIN_RATE_RATIO
    extent: float = 1.0
    active: tuple = ()         # modes learned at the reference (a saddle of the chain): split this one orthogonally
    frozen: tuple = ()         # parameters held at their initial values ([training] frozen): no mode moves them
    stiff_splits: Any = None   # (K, units, m) unit splits an intercept holds back (split_stiffness); None: none
    uncharted: tuple = ()      # rates of the unstable modes past max_modes: reported, not charted (find_modes)
    even: Any = None           # (p, K) the part of each mode a unit keeps under its sign flip (one_sided_modes)
    sides: Any = None          # (K, 2) the rates of a unit holding each mode with a positive, a negative share (ditto)
    plateau_units: Any = None  # (2, p, units) the initial units, and flowed over the plateau by the one-sided field
    section_sides: Any = None  # (2,) the rates along the fastest mode's directions as separated, ẽ± (ditto)

    #: the keyword through which the saddle chain names the learned modes (shockflow.prediction.saddle_chain)
    saddle_keyword = "active"

    def __post_init__(self):
        self.check_model()
        chain = _chain(self.model)
        object.__setattr__(self, "_chain_layout", chain)
        layout = _layout(self.model) if chain is None else None
        if not (isinstance(self.max_modes, int) and self.max_modes >= 1):
            raise GeometryError(f"max_modes: expected a whole number >= 1, found {self.max_modes!r}")
        if not (0.0 < float(self.min_rate_ratio) <= 1.0):
            raise GeometryError(f"min_rate_ratio: expected a number in (0, 1], found {self.min_rate_ratio!r}")
        if not (math.isfinite(self.extent) and self.extent > 0):
            raise GeometryError(f"extent: expected a number > 0, found {self.extent!r}")
        object.__setattr__(self, "_layout", layout)
        object.__setattr__(self, "frozen", tuple(self.frozen))
        if _is_linear_mixture(self.model) and self.model.num_experts < 2:
            raise GeometryError("model: a mixture of one linear expert is a linear model (f = β·x, its gate a "
                                "constant); it has no saddle and no split to chart")
        if self.frozen and _is_linear_mixture(self.model):
            raise GeometryError(f"frozen: {', '.join(map(repr, self.frozen))}: the mixture of experts' chain "
                                f"(shockflow.prediction.gate) moves every parameter; train them all")
        if chain is not None:
            _refuse_frozen_chain(self.model, self.frozen)
        elif self.frozen:
            _, free = free_origin(self.model, layout, self.frozen)
        if self.modes is None:
            return
        E = np.asarray(self.modes, dtype=np.float64)
        if E.ndim == 1:
            E = E[:, None]
        rows = layout.unit_dim if chain is None else self.model.input_dim + self.model.output_dim
        what = "unit-space directions" if chain is None else "stacked input/output singular vectors [v; u]"
        if E.ndim != 2 or E.shape[0] != rows or not np.all(np.isfinite(E)):
            raise GeometryError(f"modes: expected a finite array ({rows}, K) of {what} "
                                f"for the {self.model.name!r} model, found shape {E.shape}")
        if not (isinstance(self.mode, (int, np.integer)) and 0 <= self.mode < E.shape[1]):
            raise GeometryError(f"mode: expected a whole number in [0, {E.shape[1]}), found {self.mode!r}")
        if chain is not None:
            self._build_chain(E)
            return
        even = self._even_column(E, int(self.mode), free if self.frozen else None)
        e = E[:, int(self.mode)]
        if self.frozen:
            e = np.where(free, e, 0.0)   # a mode never moves a frozen entry
        e = e / np.linalg.norm(e)
        # a mode with an even part (a kinked origin: one_sided_modes) moves unit i along c_i·odd + |c_i|·even from
        # the origin; at a saddle of the chain the units hold learned modes and are no longer small: the bias (the
        # even part) is the learned modes', and the waiting mode moves along its odd part (docs/theory.md §6)
        learned = [int(j) for j in self.active if int(j) != int(self.mode)]
        e, scale = odd_part(e, even)
        odd = e * scale
        # |∂θ/∂r|² = |odd|² + |even|² = 1 on a section that carries the even part, |odd|² = scale² on one without it
        mobility = 1.0 if even is None or not learned else 1.0 / scale ** 2
        if learned:
            even = None
        theta0 = self.model.parameter_vector()
        units = layout.unit_matrix(theta0)
        object.__setattr__(self, "_e", e)
        object.__setattr__(self, "_scale", scale)
        units, c_initial, c = self._plateau_split(units)
        start = float(np.linalg.norm(c))
        c_hat = c / start if start > 0 else np.full(layout.units, 1.0 / math.sqrt(layout.units))
        if any(not 0 <= j < E.shape[1] for j in learned):
            raise GeometryError(f"active: expected mode numbers in [0, {E.shape[1]}), found {self.active!r}")
        if learned:
            c_hat = self._orthogonal_split(c_hat, units.T @ self.unit_directions()[:, learned])
        base = theta0.copy()          # the reference without this mode's component (the section adds r ĉ e)
        base[layout.index] = units.T  # (the units where the escape starts: flowed over the plateau, _plateau_split)
        base[layout.index] -= np.outer(c_initial, odd)
        direction = np.zeros_like(theta0)
        direction[layout.index] = np.outer(c_hat, odd)
        if even is not None:
            base[layout.index] -= np.outer(np.abs(c_initial), even)
            direction[layout.index] += np.outer(np.abs(c_hat), even)
        object.__setattr__(self, "_mobility", mobility * (1.0 if even is None else self._path_speed(c_hat)))
        object.__setattr__(self, "_base", base)
        object.__setattr__(self, "_direction", direction)

    def _plateau_split(self, units: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(units', c', c)``: the units ``(p, d)`` where the mode's escape starts, the mode's shares in them
        (``c'_i = u'_iᵀ ê / s``, ê the odd part and s its length), and its split as it grows over the plateau.
        Where the chart has units flowed by the one-sided field (``plateau_units``: the units the flow started from,
        less the origin's, and where it ended) and ``units`` are those it started from, ``units'`` are the flowed
        units (every side's shares relaxed by the field itself, :func:`shockflow.geometry.one_sided_modes.plateau_units`);
        otherwise (at a saddle of the chain, or without a flow) ``units`` and their split relaxed per side
        (:meth:`_relaxed_split`).  The intercept's relaxation applies to both."""
        c = units.T @ self._e / self._scale
        r0 = float(np.linalg.norm(c))
        if self.plateau_units is None or self._two_sides() is None:
            return units, c, self._relaxed_split(c, r0)
        flow = np.asarray(self.plateau_units, dtype=np.float64)
        if flow.shape != (2, *units.shape) or not np.all(np.isfinite(flow)):
            raise GeometryError(f"plateau_units: expected a finite array (2, {units.shape[0]}, {units.shape[1]}) of the "
                                f"units before and after the plateau's flow, found shape {flow.shape}")
        origin = self._layout.unit_matrix(free_origin(self.model, self._layout, self.frozen)[0])
        if not np.array_equal(units - origin, flow[0]):
            return units, c, self._relaxed_split(c, r0)
        flowed = flow[1]
        # the other modes' parts as they start: their growth is their own charts' (and the saddle chain's), from the
        # initial units; the flow scaled them by the fast side's growth
        others = np.delete(self.unit_directions(), int(self.mode), axis=1)
        if others.shape[1]:
            others = np.linalg.qr(others)[0]
            flowed = flowed + others @ (others.T @ (units - origin - flowed))
        start = origin + flowed
        c = start.T @ self._e / self._scale
        return start, c, self._relaxed_split(c, r0, per_side=False)

    def _relaxed_split(self, c: np.ndarray, r0: float, per_side: bool = True) -> np.ndarray:
        """The split ``c`` of the mode over the units as it grows over the plateau, ``t* = ln(1/r0)/λ`` (the linear
        escape from ``r0`` to unit-size weights at the rate λ of its fastest units):

        * (docs/theory.md §6, "The intercept") its components along ``T_k``'s range relaxed by ``e^{−σ² t*}``,
          ``σ²`` the eigenvalues of ``T_k`` (``stiff_splits`` holds ``q σ/√λ_k``);
        * (docs/theory.md §6, "A kinked origin") from the origin, for the mode that carries the even part (the
          fastest: a unit's bias follows it), the units holding it with the share of the slower side relaxed by
          ``e^{−(λ_f − λ_s) t*}`` against the faster side's: where the two fixed points differ (``sides``: λ⁺ for
          a positive share, λ⁻ for a negative), each unit grows at its side's rate, and the mode's split turns
          towards the faster side's units (a relu unit with its bias on targets with a mean: the unit that fits
          the mean with a positive bias grows at 1.51, its mirror at 0.0004).  A slower mode's section moves its
          odd part only, which has one rate.

        Unchanged where neither holds the split back.  ``per_side=False``: the intercept's relaxation only (the split
        flowed by the one-sided field already, :meth:`_plateau_split`)."""
        if not 0 < r0 < 1:
            return c
        out = c.copy()
        if self.stiff_splits is not None:
            F = np.asarray(self.stiff_splits, dtype=np.float64)[int(self.mode)]
            for f in F.T:
                weight = float(f @ f)      # σ² / λ_k
                if weight > 0:
                    q = f / math.sqrt(weight)
                    out -= (1.0 - r0 ** weight) * float(q @ c) * q
        two = self._two_sides() if per_side else None
        if two is not None:
            plus, minus = two
            fast = max(plus, minus)
            slower = out < 0 if plus > minus else out > 0
            out = np.where(slower, out * r0 ** ((fast - min(plus, minus)) / fast), out)
        return out

    def _path_speed(self, c_hat: np.ndarray) -> float:
        """How much faster the units grow than this chart's section moves them, for the mode that carries the even
        part from the origin: ``Σ ĉ_i² λ_i / Σ ĉ_i² λ̃_i`` over the split ``ĉ``, ``λ_i`` the rate of unit i's side's
        fixed point (``sides``) and ``λ̃_i`` the rate along that side's direction as the section moves it,
        ``ẽ± = odd ± even`` (``section_sides``).  The section's even part is projected off the slower modes' odd
        parts (one_sided_modes._separated: a unit carrying this mode must read none of theirs); the units grow along
        the fixed points, whose even part may lie largely along a slower mode's odd part (a relu teacher with two
        outputs: 95 % of it; the rate 0.48 against 0.42 along the section, the run's 0.475).  The chart's mobility
        carries the ratio (at least 1: a fixed point is the fastest unit direction); 1 where either is unknown."""
        if self.sides is None or self.section_sides is None:
            return 1.0
        plus, minus = (float(v) for v in np.asarray(self.sides, dtype=np.float64)[int(self.mode)])
        along = np.asarray(self.section_sides, dtype=np.float64).reshape(-1)
        weight, positive = c_hat * c_hat, c_hat > 0
        units = float(weight @ np.where(positive, plus, minus))
        section = float(weight @ np.where(positive, along[0], along[1]))
        return units / section if section > 0 and units > section else 1.0

    def _two_sides(self) -> tuple[float, float] | None:
        """``(λ⁺, λ⁻)`` where this chart's split turns to its faster side over the plateau (:meth:`_relaxed_split`):
        from the origin (no learned mode), for the mode that carries the even part, with two different rates the
        faster of which grows; else None."""
        if self.sides is None or self.even is None or any(int(j) != int(self.mode) for j in self.active):
            return None
        if not np.any(np.asarray(self.even, dtype=np.float64)[:, int(self.mode)]):
            return None
        plus, minus = (float(v) for v in np.asarray(self.sides, dtype=np.float64)[int(self.mode)])
        return (plus, minus) if max(plus, minus) > 0 and plus != minus else None

    def _even_column(self, E, j: int, free=None) -> np.ndarray | None:
        """Mode ``j``'s even part ``(p,)`` (zero on the entries ``free`` leaves out), checked against the modes ``E``;
        None where it has none."""
        if self.even is None:
            return None
        even = np.asarray(self.even, dtype=np.float64)
        if even.ndim == 1:
            even = even[:, None]
        if even.shape != E.shape or not np.all(np.isfinite(even)):
            raise GeometryError(f"even: expected a finite array of the modes' shape {E.shape}, "
                                f"found shape {even.shape}")
        column = even[:, j] if free is None else np.where(free, even[:, j], 0.0)
        return column if np.any(column) else None

    def unit_directions(self) -> np.ndarray:
        """``(p, K)``: each mode's direction in a unit, the odd part of a mode with an even part (the part a unit
        carries with the sign of its share: :mod:`shockflow.geometry.one_sided_modes`), as unit vectors."""
        self._require_modes()
        E = np.asarray(self.modes, dtype=np.float64)
        E = E[:, None] if E.ndim == 1 else E
        return np.stack([odd_part(E[:, j] / np.linalg.norm(E[:, j]), self._even_column(E, j))[0]
                         for j in range(E.shape[1])], axis=1)

    def _build_chain(self, E):
        """The balanced section of mode ``self.mode`` (module docstring, "Chains")."""
        chain, d = self._chain_layout, self.model.input_dim
        V, U = E[:d], E[d:]
        V = V / np.linalg.norm(V, axis=0)
        U = U / np.linalg.norm(U, axis=0)
        Ws = [np.asarray(self.model.params[k]) for k in chain.keys]
        k = int(self.mode)
        # hidden directions: the forward images of every mode's v, orthonormalised over the modes in order
        qs, H = [V[:, k]], V.copy()
        for W in Ws[:-1]:
            H = W @ H
            Q = np.linalg.qr(H[:, : k + 1])[0] if H.shape[0] >= k + 1 else None
            if Q is None:
                raise GeometryError(f"mode: {k} needs its own hidden direction in a layer of width {H.shape[0]}")
            q = Q[:, k]
            if not np.all(np.isfinite(q)) or np.linalg.norm(H[:, k]) == 0.0:
                q = np.zeros(H.shape[0])
                q[k] = 1.0
            qs.append(q)
        qs.append(U[:, k])
        units = [np.outer(qs[l + 1], qs[l]) for l in range(chain.depth)]
        theta0 = {key: np.array(v) for key, v in self.model.params.items()}
        perp = dict(theta0)
        for key, C in zip(chain.keys, units):
            perp[key] = theta0[key] - float(np.sum(theta0[key] * C)) * C
        object.__setattr__(self, "_u", U[:, k])
        object.__setattr__(self, "_v", V[:, k])
        object.__setattr__(self, "_perp", flatten(self.model, perp))
        object.__setattr__(self, "_direction", flatten(self.model, {key: (dict(zip(chain.keys, units)).get(key, 0.0 * v))
                                                                    for key, v in theta0.items()}))

    def _chain_radius(self, theta) -> float:
        """``(|∇_θ z|²/L)^{1/(2L−2)}`` of the mode strength ``z = uᵀ W_L ⋯ W_1 v`` (module docstring)."""
        chain = self._chain_layout
        params = unflatten(self.model, theta)
        Ws = [np.asarray(params[k]) for k in chain.keys]
        L = chain.depth
        forward = [self._v]
        for W in Ws[:-1]:
            forward.append(W @ forward[-1])          # c_l = W_{l-1} ... W_1 v  (c_1 = v)
        backward = [self._u]
        for W in Ws[:0:-1]:
            backward.append(W.T @ backward[-1])     # b_l = W_{l+1}^T ... W_L^T u  (b_L = u)
        backward = backward[::-1]
        total = sum(float(b @ b) * float(c @ c) for b, c in zip(backward, forward))
        return (total / L) ** (1.0 / (2 * L - 2))

    def start_coordinate(self, params, X, y) -> np.ndarray:
        """The chart coordinate the escape from ``params`` starts at: :meth:`coordinates`, except for a chain,
        where it is the aligned start of the mode (module docstring; :func:`aligned_start`) under the target of
        the modes not learned before it, with the hidden directions of the modes of larger rate, in turn, taken
        out (the speed radius of :meth:`coordinates` where the flow does not reach its alignment)."""
        r = self.coordinates(params)
        if self._chain_layout is None:
            if self.stiff_splits is None and self._two_sides() is None:
                return r
            units = self._layout.unit_matrix(flatten(self.model, self.check_params(params)))
            return np.array([float(np.linalg.norm(self._plateau_split(units)[2]))])
        chain, d = self._chain_layout, self.model.input_dim
        p = self.check_params(params)
        Ws = [np.asarray(p[key], dtype=np.float64) for key in chain.keys]
        E = np.asarray(self.modes, dtype=np.float64).reshape(d + self.model.output_dim, -1)
        V, U = E[:d] / np.linalg.norm(E[:d], axis=0), E[d:] / np.linalg.norm(E[d:], axis=0)
        M = chain_target(self.model, X, y)
        rates = np.einsum("ok,od,dk->k", U, M, V)
        taken = [np.zeros((W.shape[0], 0)) for W in Ws[:-1]]
        drive = M        # the modes that grow alongside mode j: all but those of larger rate, learned before it
        for j in np.argsort(-rates, kind="stable"):
            if not rates[j] > 0:
                break
            if j == int(self.mode):
                found = aligned_start(Ws, U[:, j], V[:, j], float(rates[j]), drive=drive, taken=taken)
                return r if found is None else np.array([found[0]])
            # the hidden directions a faster mode holds once learned are those its own flow aligns
            found = aligned_start(Ws, U[:, j], V[:, j], float(rates[j]), taken=taken)
            if found is not None:
                taken = [np.linalg.qr(np.concatenate([Q, q[:, None]], axis=1))[0] for Q, q in zip(taken, found[2])]
            drive = drive - float(U[:, j] @ drive @ V[:, j]) * np.outer(U[:, j], V[:, j])
        return r

    def aligned_escape(self, x, rate, X, y) -> np.ndarray:
        """The escape profile's rates ``rate = |a ∂_x L̄|`` at the chart points ``x`` (from the start towards the
        half-learned point), as the escape runs from :meth:`start_coordinate`.  For a chain, below the alignment
        radius ``r_1 = (ALIGNED_FRACTION · s)^{1/L}`` (s the mode's rate, :func:`chain_target`), where the aligned
        start's flow ends: the rates of the mode's own path ``L(x C)`` from zero weights (the section without its
        reference), scaled to the section's rate at ``r_1``; the section's own rates from ``r_1`` on (module
        docstring, "The aligned start").  Below ``r_1`` the section through the reference is not the mode's path:
        the reference's random layers add paths of lower degree in r, which the aligned start's flow has already
        spent on the alignment.  The scale carries what the reference does to the mode at ``r_1`` (the learned
        modes at a saddle); the mode's own path carries its shape (``s x^{L−1}(1 − x^L/s)`` for a linear chain,
        with the activation's curvature otherwise).  Anything else: ``rate`` unchanged."""
        from shockflow.geometry.batched_loss import batched_loss

        rate = np.asarray(rate, dtype=np.float64)
        if self._chain_layout is None:
            return rate
        s = float(self._u @ chain_target(self.model, X, y) @ self._v)
        ax = np.abs(np.asarray(x, dtype=np.float64))
        r1 = (ALIGNED_FRACTION * abs(s)) ** (1.0 / self._chain_layout.depth)
        if not (ax.size >= 3 and ax[0] < r1 < ax[-1] and np.all(np.diff(ax) > 0)):
            return rate
        n = min(int(np.searchsorted(ax, r1)) + 2, ax.size)     # the points below r_1 and two past it
        pts = ax[:n]

        def own_loss(points):   # L(x C) at chart points (m, 1): the mode's own path
            return batched_loss(self.model, unflatten(self.model, points[:, :1] * self._direction), X, y)

        # the own path is smooth in x (a polynomial for a linear or relu chain): read from its interpolant of stated
        # accuracy where it converges by OWN_PATH_DEGREE (at most that many passes + 1 for the profile's ~500 points)
        read = interpolated_reader(own_loss, float(pts[0]), float(pts[-1]), start=16, max_degree=OWN_PATH_DEGREE)
        own = read(pts) if read is not None else own_loss(pts[:, None])
        own = np.abs(self.mobility(pts[:, None])[:, 0, 0] * np.gradient(own, pts, edge_order=2))
        at = float(np.interp(r1, pts, own))
        if not (math.isfinite(at) and at > 0):
            return rate
        scale = float(np.interp(r1, ax, rate)) / at
        return np.concatenate([np.where(pts < r1, scale * own, rate[:n]), rate[n:]])

    # -- charts from the data ------------------------------------------------------------------
    @classmethod
    def discover_charts(cls, model, X, y, kwargs: dict) -> tuple[dict, list, str]:
        """``(kwargs with the modes, one chart selector per mode, the selector's keyword)``."""
        if kwargs.get("modes") is not None:
            E = np.asarray(kwargs["modes"], dtype=np.float64)
            return dict(kwargs), list(range(1 if E.ndim == 1 else E.shape[1])), "mode"
        found = find_modes(model, X, y, max_modes=int(kwargs.get("max_modes", MAX_MODES)),
                           min_rate_ratio=float(kwargs.get("min_rate_ratio", MIN_RATE_RATIO)),
                           frozen=tuple(kwargs.get("frozen", ())))
        if found.rates.size == 0:
            raise GeometryError(f"model: the origin of the {model.name!r} network has no unstable direction on "
                                f"these data (largest eigenvalue of Y: {found.spectrum[0]:.3g}); there is no "
                                f"transition to predict")
        extra = {} if found.stiff_splits is None else {"stiff_splits": found.stiff_splits}
        if found.even is not None:
            extra["even"] = found.even
        if found.sides is not None:
            extra["sides"] = found.sides
        if found.plateau_units is not None:
            extra["plateau_units"] = found.plateau_units
        if found.section_sides is not None:
            extra["section_sides"] = found.section_sides
        if found.uncharted is not None and found.uncharted.size:
            extra["uncharted"] = tuple(float(v) for v in found.uncharted)
        return {**kwargs, "modes": found.directions, **extra}, list(range(found.rates.size)), "mode"

    def _require_modes(self):
        if self.modes is None:
            raise GeometryError("modes: the automatic geometry finds its modes from the data (the extraction "
                                "calls AutoGeometry.discover_charts); build it with modes=… to use it directly")

    # -- the Geometry contract --------------------------------------------------------------------
    @cached_property   # the settings are frozen: one Chart per geometry (it was rebuilt on every read)
    def chart(self) -> Chart:
        return Chart((f"r{int(self.mode)}",), (0.0,), (float(self.extent),), degenerate="r = 0 (the mode is absent)")

    def coordinates(self, params):
        self._require_modes()
        return self._coordinates_of(flatten(self.model, self.check_params(params)))

    def _coordinates_of(self, theta: np.ndarray) -> np.ndarray:
        """:meth:`coordinates` of the flat parameter vector ``theta`` (checked by the caller)."""
        if self._chain_layout is not None:
            return np.array([self._chain_radius(theta)])
        return np.array([float(np.linalg.norm(self._layout.unit_matrix(theta).T @ self._e)) / self._scale])

    def conserved(self, params):
        self.check_params(params)
        return {}

    def mobility(self, points):
        p = np.asarray(points, dtype=np.float64)
        if self._chain_layout is None:   # 1: |∂θ/∂r| = 1 (1/|odd|² on a kinked mode's section without its even part)
            scale = getattr(self, "_mobility", 1.0)
        else:
            scale = 1.0 / self._chain_layout.depth   # |∂θ/∂r|² = L
        return np.full((*p.shape[:-1], 1, 1), scale)

    def strength(self, points):
        """The mode strength ``z = r² = e_kᵀ W Wᵀ e_k`` (what enters the network's function, as for gram);
        ``z = r^L`` for a chain of depth L."""
        power = 2 if self._chain_layout is None else self._chain_layout.depth
        return np.asarray(points, dtype=np.float64) ** power

    # -- the mode's strength in the network's function (module docstring, "The learned strength") -------
    def _origin_vector(self) -> np.ndarray:
        """The origin the modes are unstable directions of: zero weights (frozen parameters at their values)."""
        if self._chain_layout is not None:
            return np.zeros(self.model.num_parameters)
        return free_origin(self.model, self._layout, self.frozen)[0]

    def _set_state(self) -> dict:
        """What the charts of this set of modes on this network share (module docstring, "The learned strength"):
        a dict kept per model object (weakly) and per digest of everything but ``mode`` that a chart's functions
        depend on (the model's parameters, the modes, their even parts and stiff splits, the frozen and the active
        modes), so each chart of the set (:meth:`same_modes`) reads the same one."""
        kept = getattr(self, "_shared", None)
        if kept is not None:
            return kept
        h = hashlib.blake2b(digest_size=16)
        h.update(self.model.parameter_vector().tobytes())
        for part in (self.modes, self.even, self.stiff_splits, self.sides, self.plateau_units, self.section_sides):
            if part is not None:
                part = np.ascontiguousarray(part, dtype=np.float64)
                h.update(repr(part.shape).encode() + part.tobytes())
            h.update(b"|")
        h.update(repr((tuple(self.frozen), tuple(int(j) for j in self.active))).encode())
        sets = _MODE_SETS.setdefault(self.model, {})
        kept = sets.get(h.digest())
        if kept is None:
            if len(sets) >= _MODE_SETS_KEPT:
                sets.pop(next(iter(sets)))
            kept = sets[h.digest()] = {}
        object.__setattr__(self, "_shared", kept)
        return kept

    @staticmethod
    def _for_data(state: dict, key: str, X):
        """``state[key]``'s value if it was made for the data array ``X`` (the same object), else None."""
        entry = state.get(key)
        return entry[1] if entry is not None and entry[0]() is X else None

    def _mode_functions(self, X):
        """``(f_origin (n·o,), G (n·o, K), N (n·o, m))``: each mode's linear-regime function per unit strength
        ``g_j`` along mode j's unit section ``d_j`` from the origin, and the intercepts ``N`` the fits take out
        (d·o rows instead of n·o where the network is linear in its input: :meth:`_reduced`).

        A two-layer section has ``f(θ_origin + ε d_j) = f_origin + ε h_j + ε² g_j + O(ε³)``: ``g_j`` is read as
        the symmetric second difference ``(f(+ε d_j) + f(−ε d_j) − 2 f_origin) / (2 ε²)`` (``ε² = 1e-6``; the next
        order is ``O(ε²)`` relative), ``h_j`` as the first ``(f(+ε d_j) − f(−ε d_j)) / (2 ε)``.  ``h_j`` vanishes
        where ``φ(0) = 0`` at zero weights (an odd φ exactly, gelu to ``O(ε²)``); where it does not (sigmoid,
        ``φ(0) = ½``; frozen biases with ``φ(b) ≠ 0``) every unit adds the constant ``φ(0) a_i`` to its outputs, an
        intercept that no mode learns and every fit would otherwise read into the modes' coefficients (a one-sided
        difference read ``h_j / ε`` as the mode: sigmoid's strengths were 1e-3 of the teacher's).  ``N`` is then
        the per-output constant functions (``m = o``), else empty; it counts where ``ε |h_j| ≥ ε² |g_j|`` for some
        mode (the first order as large as the mode's own at the probe's strength).  A chain of depth L reads
        ``g_j = (f(ε d_j) − f_origin) / ε^L`` (its origin has no intercept: φ(0) = 0 is required)."""
        shared = self._for_data(self._set_state(), "functions", X)
        if shared is not None:
            self._check_mode_function(shared[1])
            return shared
        self._require_modes()
        E = np.asarray(self.modes, dtype=np.float64)
        K = 1 if E.ndim == 1 else E.shape[1]
        power = 2 if self._chain_layout is None else self._chain_layout.depth
        eps = 1e-6 ** (1.0 / power)
        net = self.model.copy()
        origin = self._origin_vector()

        def f(theta):
            net.set_parameter_vector(theta)
            return self._function(net, X)

        f0 = f(origin)
        columns, intercept = [], False
        for j in range(K):
            d = (self if j == int(self.mode) else self._other(j))._direction
            plus = f(origin + eps * d).reshape(-1) - f0
            if power != 2 or self._even_column(E if E.ndim == 2 else E[:, None], j) is not None:
                columns.append(plus / eps ** power)   # a chain; a mode with an even part (homogeneous: one-sided)
                continue
            minus = f(origin - eps * d).reshape(-1) - f0
            g, h = (plus + minus) / (2 * eps * eps), (plus - minus) / (2 * eps)
            columns.append(g)
            intercept = intercept or first_order_counts(h, g, eps)
        G = np.stack(columns, axis=1)
        self._check_mode_function(G)
        intercept = intercept or self.stiff_splits is not None
        if intercept and self._reduced(X) is not None:   # a constant is not a function X Mᵀ: the data's own rows
            self._set_state()["reduction"] = (weakref.ref(X), None)
            return self._mode_functions(X)
        outputs = self.model.output_dim
        N = np.kron(np.ones((f0.size // outputs, 1)), np.eye(outputs)) if intercept else np.empty((f0.size, 0))
        self._set_state()["functions"] = (weakref.ref(X), (f0, G, N))
        return f0, G, N

    def _check_mode_function(self, G) -> None:
        if not (np.all(np.isfinite(G)) and np.linalg.norm(G[:, int(self.mode)]) > 0):
            raise GeometryError(f"mode: {int(self.mode)} does not change the network's function near zero weights "
                                f"(its linear-regime function vanishes), so its learned strength is undefined")

    def _reduced(self, X):
        """``R`` (``X = QR``, inputs flattened) where the network is linear in its input, ``f = X A(θ)ᵀ``, with at least
        as many samples as inputs; else None.  Every function the learned strength fits is then ``X Mᵀ`` for a map
        ``M`` (o, d), and ``‖X Mᵀ‖ = ‖R Mᵀ‖``: its least-squares fits are the same on ``R Mᵀ`` (d·o numbers, the map
        of a parameter set: no pass over the data), with the data's row count in lstsq's cutoff (:meth:`_rows`)."""
        state = self._set_state()
        entry = state.get("reduction")
        if entry is not None and entry[0]() is X:
            return entry[1]
        Xf = np.asarray(X, dtype=np.float64).reshape(np.shape(X)[0], -1)
        R = None
        if self.model.linear_map_available() and Xf.shape[0] >= Xf.shape[1]:
            R = np.linalg.qr(Xf, mode="r")
        state["reduction"] = (weakref.ref(X), R)
        return R

    def _function(self, net, X) -> np.ndarray:
        """The network ``net``'s function on the data ``X``, flattened: ``f(X)`` (n·o), or ``R A(θ)ᵀ`` (d·o) where the
        fits are reduced (:meth:`_reduced`)."""
        R = self._reduced(X)
        if R is None:
            return np.asarray(net.forward(X), dtype=np.float64).reshape(-1)
        A = net.linear_map({k: np.asarray(v)[None] for k, v in net.params.items()})[0]
        return (R @ A.T).reshape(-1)

    def _rows(self, X) -> int:
        """The rows of the fits on the data (n·o): lstsq's cutoff counts them also where the fits are reduced."""
        return int(np.shape(X)[0]) * int(self.model.output_dim)

    def _other(self, j: int) -> "AutoGeometry":
        """The chart of mode ``j`` of the same modes on the same network (its section and its removal)."""
        return AutoGeometry(model=self.model, modes=self.modes, mode=j, max_modes=self.max_modes,
                            min_rate_ratio=self.min_rate_ratio, extent=self.extent, frozen=self.frozen,
                            stiff_splits=self.stiff_splits, even=self.even, sides=self.sides,
                            plateau_units=self.plateau_units, section_sides=self.section_sides)

    def function_strength(self, params, X) -> float:
        """The mode's strength in the network's function at ``params`` (module docstring, "The learned strength"):
        the coefficient of mode k's linear-regime function ``g_k`` in the least-squares fit of ``f_θ − f_origin`` on
        ``g_k``, every other mode's ``g_j`` and every other mode's function alone at its present coordinate ``r_j``,
        ``f(θ_origin + r_j d_j) − f_origin`` (a learned mode's saturated function is not in the span of the ``g``,
        and its shape would otherwise leak into this mode's coefficient).  Equal to ``z = r²`` (``r^L`` for a chain)
        while the network is in its linear regime; bounded by what the data hold when saturation makes the weights
        grow on."""
        f0, G, N = self._mode_functions(X)
        k = int(self.mode)
        net = self._scratch_net()
        theta = flatten(self.model, self.check_params(params))
        net.set_parameter_vector(theta)
        F = self._function(net, X)
        columns = [G[:, k]]
        others = [j for j in range(G.shape[1]) if j != k]
        columns.extend(self._function_alone(j, theta, X, net, f0) for j in others)
        columns.extend(G[:, j] for j in others)
        columns.extend(N.T)
        return float(self._first_coefficient(G, columns[1:1 + len(others)], columns, self._rows(X)) @ (F - f0))

    def _mode_chart(self, j: int) -> "AutoGeometry":
        """The chart of mode ``j`` of this set (this one for its own mode; the others made once and kept)."""
        if j == int(self.mode):
            return self
        cache = getattr(self, "_others", None)
        if cache is None:
            cache = {}
            object.__setattr__(self, "_others", cache)
        if j not in cache:
            cache[j] = self._other(j)
        return cache[j]

    def _function_alone(self, j: int, theta, X, net, f0) -> np.ndarray:
        """Mode ``j``'s function alone at its present coordinate ``r_j`` at the (checked, flat) parameters ``theta``,
        ``f(θ_origin + r_j d_j) − f_origin`` (remembered per coordinate: :meth:`_remembered_other`); ``net`` the
        scratch copy it may set."""
        chart = self._mode_chart(j)
        r_j = float(chart._coordinates_of(theta)[0])
        column = self._remembered_other(j, r_j, X)
        if column is None:
            origin = getattr(self, "_origin", None)
            if origin is None:
                origin = self._origin_vector()
                object.__setattr__(self, "_origin", origin)
            net.set_parameter_vector(origin + r_j * chart._direction)
            column = self._function(net, X) - f0
            self._remember_other(j, r_j, X, column)
        return column

    def function_strengths(self, params, X) -> np.ndarray:
        """:meth:`function_strength` of every mode of this chart's set at ``params``, shape ``(K,)``: the network's
        function there and each mode's function alone at its coordinate are made once for all K fits (1 + K
        forward passes, not K²), and the K least-squares fits share one QR factorisation ``C = QR`` of their common
        columns (the linear-regime functions and the modes' functions alone): mode k's fit is on a subset of
        ``C``'s columns, whose singular values and pseudo-inverse are those of the same columns of ``R`` (Q has
        orthonormal columns), so each is a small SVD with lstsq's cutoff.  The same numbers to within the fits'
        conditioning: a mode in its linear regime has its function alone nearly parallel to its ``g`` (measured
        on ``attention-qk-4x2``: 2.4e-14 from lstsq's at strengths 1e-5, 1e-14 of the strengths' range).  The strengths of a trajectory's snapshot,
        every chart at once (:func:`shockflow.prediction.trajectory.with_trajectory`)."""
        f0, G, N = self._mode_functions(X)
        K, m = G.shape[1], N.shape[1]
        net = self._scratch_net()
        theta = flatten(self.model, self.check_params(params))
        net.set_parameter_vector(theta)
        b = self._function(net, X) - f0
        rows = self._rows(X)
        if K == 1:
            return np.array([float(self._first_coefficient(G, [], [G[:, 0], *N.T], rows) @ b)])
        alone = [self._function_alone(j, theta, X, net, f0) for j in range(K)]
        Q, R = np.linalg.qr(np.column_stack([G] + alone + [N]))
        qb = Q.T @ b
        out = np.empty(K)
        intercepts = list(range(2 * K, 2 * K + m))
        for k in range(K):
            others = [j for j in range(K) if j != k]
            U, sv, Vt = np.linalg.svd(R[:, [k] + [K + j for j in others] + others + intercepts], full_matrices=False)
            keep = sv > np.finfo(np.float64).eps * max(rows, 2 * K - 1 + m) * sv[0]
            out[k] = (Vt[keep, 0] / sv[keep]) @ (U[:, keep].T @ qb)
        return out

    def same_modes(self, other) -> bool:
        """Whether ``other`` is a chart of the same modes of the same network (every setting equal but ``mode``):
        then :meth:`function_strengths` serves both."""
        if type(other) is not type(self) or other.model is not self.model:
            return False
        if (self.modes is None) != (other.modes is None) or (
                self.modes is not None and not np.array_equal(np.asarray(self.modes), np.asarray(other.modes))):
            return False
        return all(np.array_equal(np.asarray(getattr(self, f), dtype=object), np.asarray(getattr(other, f), dtype=object))
                   for f in ("max_modes", "min_rate_ratio", "extent", "active", "frozen", "stiff_splits", "even",
                             "sides", "plateau_units", "section_sides"))

    def _scratch_net(self):
        """A copy of the model kept for :meth:`function_strength`'s forward passes (each sets every parameter before
        its pass, so one copy serves every call: a deep copy per call cost more than this mode's coefficient)."""
        net = getattr(self, "_scratch", None)
        if net is None:
            net = self.model.copy()
            object.__setattr__(self, "_scratch", net)
        return net

    def _first_coefficient(self, G, remembered, columns, rows: int) -> np.ndarray:
        """The row ``c`` with ``c · b`` = the first coefficient of ``lstsq(B, b, rcond=None)`` for ``B`` = ``columns``
        stacked: the first row of ``B``'s pseudo-inverse with lstsq's cutoff (singular values ``≤ ε max(rows, m)
        s_max`` dropped; ``rows`` those of the fit on the data, :meth:`_rows`), kept while ``B``'s columns are the
        same arrays (the linear-regime functions ``G`` and the other modes' remembered functions: all points of one
        section), so a path of strengths costs one SVD, not one least-squares solve per point."""
        kept = getattr(self, "_coefficient_row", None)
        if kept is not None and kept[0] is G and len(kept[1]) == len(remembered) and \
                all(a is b for a, b in zip(kept[1], remembered)):
            return kept[2]
        B = np.stack(columns, axis=1)
        U, sv, Vt = np.linalg.svd(B, full_matrices=False)
        keep = sv > np.finfo(np.float64).eps * max(rows, B.shape[1]) * sv[0]
        row = (Vt[keep, 0] / sv[keep]) @ U[:, keep].T
        object.__setattr__(self, "_coefficient_row", (G, tuple(remembered), row))
        return row

    def _remembered_other(self, j: int, r_j: float, X):
        """Mode ``j``'s function alone at ``r_j`` (:meth:`function_strength`'s column), if it was evaluated for the data
        ``X`` at a coordinate within :data:`SAME_COORDINATE` of ``r_j`` (relative): along one mode's section the other
        modes' coordinates are constant up to rounding, so a path of strengths costs one forward pass per point, not
        one per mode and point."""
        memo = self._for_data(self._set_state(), "alone", X)
        if memo is None:
            return None
        for r, column in memo.get(j, ()):
            if abs(r - r_j) <= SAME_COORDINATE * max(abs(r), abs(r_j)):
                return column
        return None

    def _remember_other(self, j: int, r_j: float, X, column) -> None:
        state = self._set_state()
        memo = self._for_data(state, "alone", X)
        if memo is None:
            memo = {}
            state["alone"] = (weakref.ref(X), memo)
        seen = memo.setdefault(j, [])
        seen.insert(0, (r_j, column))
        del seen[4:]   # the last few coordinates per mode (a section needs one)

    def function_strength_at(self, points, X) -> np.ndarray:
        """:meth:`function_strength` along the section at chart ``points (k, 1)`` (``|r|`` on the mirrored chart)."""
        p = np.abs(np.asarray(points, dtype=np.float64).reshape(-1, 1))
        section = self.section(p)
        return np.array([self.function_strength({k: v[i] for k, v in section.items()}, X) for i in range(p.shape[0])])

    def chart_loss(self, points, X, y):
        """``L̄`` at ``points``; the chart is even in r (the coordinate is a norm, the extraction mirrors it
        at 0), so a point r < 0 — a parabola's vertex fitted just across the mirror — is read as |r|.  The
        section of a chart of units is a line in parameter space: its losses are those of
        :func:`shockflow.geometry.batched_loss.line_losses` where the network has a line form."""
        points = np.abs(np.asarray(points, dtype=np.float64))
        if self._chain_layout is None and self.modes is not None:
            from shockflow.geometry.batched_loss import line_losses

            p = self.chart.check(points)
            out = line_losses(self.model, self._base, self._direction, p.reshape(-1), X, y)
            if out is not None:
                return out.reshape(p.shape[:-1])
        return super().chart_loss(points, X, y)

    def section(self, points):
        self._require_modes()
        p = self.chart.check(points)
        if self._chain_layout is not None:
            return unflatten(self.model, self._perp + p[..., :1] * self._direction)
        theta = self._base + p[..., :1] * self._direction
        return unflatten(self.model, theta)

    def _orthogonal_split(self, c_hat: np.ndarray, held: np.ndarray) -> np.ndarray:
        """``ĉ`` with the unit-space splits ``held (units, j)`` of the learned modes projected out: at a
        saddle, a component of this mode in a unit that carries a learned one enters the loss linearly (a
        cross term), which gradient flow removes long before the mode grows.  Where the learned modes use
        every unit direction (one unit: a diagonal net, a single layer) the split stays as it is: the
        modes then share their units and the cross terms are part of the landscape."""
        q, s, _ = np.linalg.svd(held, full_matrices=False)
        q = q[:, s > 1e-10 * max(float(s.max()) if s.size else 0.0, 1e-300)]
        rest = c_hat - q @ (q.T @ c_hat)
        norm = float(np.linalg.norm(rest))
        return rest / norm if norm > 1e-8 else c_hat
