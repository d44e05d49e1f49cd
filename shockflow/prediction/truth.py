"""The ground truth of a run from its parameter snapshots: each chart's half-learned step (issue 17).

For every chart of the extraction, the logged parameter snapshots give the chart coordinate along
the run (``ChartData.trajectory_steps``, ``trajectory``).  The chart's **mode strength** ``s`` is what the
geometry says it is (``Geometry.strength``, stored by the extraction as ``trajectory_strength``): the
coordinate itself by default; ``z = r²`` for the gram geometry's flat coordinate ``r = sqrt(z)``
(docs/theory.md §2: a mode enters the loss as ``V (1 − z/z∞)²``, so "half learned" is ``z = z∞/2``, the same
point the loss-curve detector's midpoint estimates); the collective product ``Q(s)`` for the
mean-field clock ``s``.  The true transition of the chart is
the first step at which ``s`` reaches half way from its start ``s(0)`` to its final value
``s(end)``, linearly interpolated between the two snapshots around the crossing.

**The learned strength** (:func:`strength_of`, :func:`strength_along`).  Where a geometry reads the strength
from the network's function (``function_strength``: the automatic charts), the truth reads that: the
coefficient of the mode's linear-regime function in the network's change of function since zero weights,
fitted together with the other modes' (docs/theory.md §6, "The learned strength").  A weight-space strength (``r²``, ``r^L``) is the function's
only while the network is linear in it; a saturating network (tanh units, a tanh chain) keeps growing its
weights after the mode is learned — on separable labels without bound — so half of the weights' final
strength is reached at a step set by the run's horizon, not by the transition (a tanh chain's ``r0³``:
11 at step 400, 27.6 at 2500, while its function strength is 4.4 and 4.9 of the teacher's 5).

A chart counts as *learned within the run* only if its strength moved towards its landscape minimum's
(``s(end) − s(0)`` of the sign of ``s(x_min) − s(0)``, magnitudes compared where ``s`` keeps one sign along the
run: a channel that dies, moving away from a minimum next to its start, is not learned; one that overshoots its
minimum is) and at least half way from its start to that
minimum (``|s(end) − s(0)| ≥ ½ |s(x_min) − s(0)|``);
otherwise its "half way" would be half of nothing, and the chart has no true transition in this run
(``not_learned``).

**The target** ``s(x_min)`` depends on the landscape, never on the prediction.  Where the saddle chain ran, it is
the chart's strength where every chart of the chain is learned (``learned``:
:meth:`shockflow.prediction.saddle_chain.Landscape.learned_strengths`, block-coordinate descent on all the charts'
sections from the initial parameters): where a run that learns every mode ends.  Modes of correlated inputs share
what they fit, so each one's section minimum at the origin overstates it (``diagonal-correlated``'s fourth mode:
15.8 there, 1.40 where every mode is learned and at the run's end).  Elsewhere, and for a chart that minimum leaves
on its saddle (it learns it no farther than half way, in the log, from its start to its exit at the origin: stable
there once the others are learned, which a run may still learn by another way), the target is the chart's section
minimum at the origin (``strength_at_min``).  Until stop 52 the target was the section minimum at the saddle the
chain said the mode escapes from: a prediction that moved it (to the ridge, or to the other sign) took the mode out
of the truth, and its miss out of the score.  Against that, on the suite and 71 unseen networks (one run each), 5
unseen networks' truths change: three charts are learned that were not (each had a prediction without a partner,
now matched within 11.6 %), two are not learned that were (an attention head's third mode, 0.104 of its origin
minimum's 0.294, a miss before; a Fourier net's ninth, −0.16 against −0.51 where every mode is learned, whose
prediction is now without a partner).

This is measured after the prediction: :func:`shockflow.prediction.predict.predict_case` has finished
before :func:`parameter_truth` is called, and neither looks at the loss.  The resolution of the truth
is the snapshot spacing around each crossing (``bracket``); the training setting ``n_snapshots``
decides it (log-spaced, so the relative spacing is the same at every step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

__all__ = ["TrueTransition", "ParameterTruth", "half_learned_step", "mixture_strengths", "mode_strength",
           "parameter_truth", "specialisation", "specialisation_step", "strength_along", "strength_of"]


@dataclass(frozen=True)
class TrueTransition:
    """One chart's half-learned step; ``bracket`` = the snapshot steps around the crossing."""

    chart: str
    step: float
    start: float
    final: float
    bracket: tuple[float, float]

    def as_dict(self) -> dict:
        return {"chart": self.chart, "step": self.step, "start": self.start, "final": self.final,
                "bracket": list(self.bracket)}


@dataclass(frozen=True)
class ParameterTruth:
    transitions: tuple[TrueTransition, ...]
    not_learned: tuple[str, ...] = field(default=())
    snapshots: int = 0
    # chart -> {"start", "final", "target", "against"}: what "learned within the run" was read against ("learned":
    # where every chart is learned; "origin": the chart's section minimum at the origin)
    targets: dict = field(default_factory=dict)

    @property
    def steps(self) -> list[float]:
        return [t.step for t in self.transitions]


def mode_strength(geometry: str, coordinate: str, x) -> np.ndarray:
    """The mode strength of chart coordinates ``x`` for a chart without a stored ``trajectory_strength``
    (an extraction built by hand): the gram square root squared, else the coordinate."""
    x = np.asarray(x, dtype=np.float64)
    if geometry == "gram" and coordinate.startswith("r"):
        return x ** 2
    return x


def mixture_strengths(model, params) -> dict[str, float]:
    """What "the averaged expert learned" and "the gate learned split r" mean for a mixture of experts (``moe``;
    docs/theory.md §6, "The mixture of experts"), at ``params`` (a parameter dict or a flat parameter vector).

    Unit k is [expert k ; gate row k]; both quantities are invariant under the units' permutations, which leave
    the network unchanged (:func:`shockflow.geometry.mixture.mixture_order_parameters` computes them; the
    mixture charts' coordinates are these, so the parameter truth of :func:`parameter_truth` reads them):

    - ``mean``: ``√K |β̄|``, the units' mean expert (the uniform gate near small weights makes ``f`` the mean
      expert, learned first);
    - ``split<r>``, r = 0 … K−2: ``σ_r(D)``, the r-th singular value of the breaking matrix ``D`` (K × p: each
      unit minus the units' mean, expert and gate entries together: at the symmetric point the gate's logits
      ``(Γ − Γ̄)x`` and the experts' differences grow as one direction ``c vᵀ``).  ``D = 0`` while every expert
      is the same and the gate uniform; each split of the gate adds a rank to ``D``.

    Each is half learned (its true transition) when half way from its start to its final value."""
    from shockflow.geometry.mixture import mixture_order_parameters

    return mixture_order_parameters(model, params)


def strength_of(geo, params, X) -> float:
    """The mode strength of one parameter set on ``geo``'s chart: the strength in the network's function where
    the geometry reads it there (``geo.function_strength``: the automatic charts), else ``geo.strength`` of
    the coordinates (module docstring, "the learned strength")."""
    read = getattr(geo, "function_strength", None)
    if read is not None:
        return float(read(params, X))
    return float(np.asarray(geo.strength(np.asarray(geo.coordinates(params))[None]))[0, 0])


def strength_along(geo, points, X) -> np.ndarray:
    """The mode strength along ``geo``'s section at chart ``points (k, 1)`` (as :func:`strength_of`)."""
    read = getattr(geo, "function_strength_at", None)
    p = np.asarray(points, dtype=np.float64).reshape(-1, 1)
    if read is not None:
        return np.asarray(read(p, X), dtype=np.float64)
    return np.asarray(geo.strength(p), dtype=np.float64)[:, 0]


def half_learned_step(steps, strength) -> tuple[float, tuple[float, float]] | None:
    """First step where ``strength`` reaches half way from its first to its last value, and the bracket.

    None if the series does not move (or has fewer than two points)."""
    t = np.asarray(steps, dtype=np.float64)
    s = np.asarray(strength, dtype=np.float64)
    if t.size < 2 or t.shape != s.shape or not np.all(np.isfinite(s)):
        return None
    s0, s1 = s[0], s[-1]
    if s1 == s0:
        return None
    half = s0 + 0.5 * (s1 - s0)
    sign = np.sign(s1 - s0)
    j = int(np.flatnonzero(sign * (s - half) >= 0)[0])   # exists: the last point is past half
    if j == 0:
        return None
    w = (half - s[j - 1]) / (s[j] - s[j - 1])
    return float(t[j - 1] + w * (t[j] - t[j - 1])), (float(t[j - 1]), float(t[j]))


def snapshots_resolve(steps, max_ratio: float) -> bool:
    """Whether parameter snapshots at ``steps`` can place a half-learned step within a factor ``max_ratio``, the
    matching window: consecutive positive snapshot steps at most that factor apart (a crossing between steps 1 and
    3000 read off such a pair could be anywhere in it; the truth is then the loss detections instead)."""
    t = np.unique(np.asarray(steps, dtype=np.float64).reshape(-1))
    t = t[t > 0]
    return t.size >= 2 and bool(np.all(t[1:] <= max_ratio * t[:-1]))


def parameter_truth(extraction, learned: Mapping[str, float] | None = None) -> ParameterTruth | None:
    """The true transitions of every chart of ``extraction`` (None: no snapshots to read them from); ``learned``:
    chart label -> its strength where every chart is learned (``Landscape.learned_strengths``), the target of the
    charts it names (module docstring)."""
    learned = {} if learned is None else learned
    found, not_learned, count, targets = [], [], 0, {}
    for c in extraction.charts:
        steps = np.asarray(c.trajectory_steps, dtype=np.float64).reshape(-1)
        traj = np.asarray(c.trajectory, dtype=np.float64).reshape(-1)
        if steps.size < 2 or traj.size != steps.size:
            return None
        count = max(count, steps.size)
        stored = getattr(c, "trajectory_strength", None)
        if stored is not None and np.asarray(stored).size == steps.size:
            s, target = np.asarray(stored, dtype=np.float64).reshape(-1), float(c.strength_at_min)
        else:
            s = mode_strength(c.geometry, c.coordinate, traj)
            target = float(mode_strength(c.geometry, c.coordinate, c.x_min))
        joint = float(learned.get(c.label, math.nan))
        target, against = (joint, "learned") if math.isfinite(joint) else (target, "origin")
        targets[c.label] = {"start": float(s[0]), "final": float(s[-1]), "target": target, "against": against}
        moved = abs(s[-1] - s[0])
        # a chart whose strength ends on the other side of its start from its landscape minimum's moved away from it:
        # not learned (a channel that dies, its minimum next to its start).  A strength that keeps one sign along the
        # run (a magnitude: a singular value read against a signed section) is compared with the minimum's magnitude
        toward = abs(target) if np.all(s >= 0) else -abs(target) if np.all(s <= 0) else target
        away = bool(np.isfinite(toward) and (s[-1] - s[0]) * (toward - s[0]) < 0)
        # a chart whose minimum lies next to its start (within half the start's strength: nothing to escape from)
        # and a run that ends nearer zero than it started and farther from that minimum: the mode decayed, it did not
        # learn (a relu channel that dies, 9.4e-7 to -6.3e-9 against its minimum's 9.2e-7; one that grows through
        # zero to the other side, 1.7e-6 to -0.15 past a minimum found on its start's side, does learn)
        left = bool(np.isfinite(target) and abs(target - s[0]) < 0.5 * abs(s[0]) and abs(s[-1]) < abs(s[0])
                    and abs(s[-1] - target) > abs(s[0] - target))
        if away or left or (np.isfinite(target) and moved < 0.5 * abs(target - s[0])):
            not_learned.append(c.label)
            continue
        hit = half_learned_step(steps, s)
        if hit is None:
            not_learned.append(c.label)
            continue
        found.append(TrueTransition(c.label, hit[0], float(s[0]), float(s[-1]), hit[1]))
    found.sort(key=lambda t: t.step)
    return ParameterTruth(tuple(found), tuple(not_learned), count, targets)


def specialisation(units) -> np.ndarray:
    """The units' specialisation ``S = 1 − mean_{k<l} |cos(w_k, w_l)|`` of unit vectors ``units`` (``(..., K, p)``:
    each unit's input weights), from the student alone (no teacher): 0 where every unit points the same way
    (the symmetric plateau, and the plateau of unit scales a trainable readout reaches: the units differ there
    only in norm and sign), 1 where they are mutually orthogonal (a committee machine's units each on its own
    unit of an orthonormal teacher).  The absolute cosine makes a unit and its negative (an odd activation with
    the readout's sign flipped) the same direction (docs/theory.md §6, "Plateaus away from the origin")."""
    W = np.asarray(units, dtype=np.float64)
    if W.ndim < 2 or W.shape[-2] < 2:
        raise ValueError(f"specialisation: expected (..., units >= 2, p) unit vectors, got shape {W.shape}")
    norm = np.linalg.norm(W, axis=-1, keepdims=True)
    U = W / np.where(norm > 0, norm, 1.0)
    C = np.abs(np.einsum("...kp,...lp->...kl", U, U))
    K = W.shape[-2]
    upper = np.triu_indices(K, 1)
    return 1.0 - C[..., upper[0], upper[1]].mean(axis=-1)


def specialisation_step(steps, units) -> tuple[float, tuple[float, float]] | None:
    """The step at which the units specialise (the truth of a plateau exit away from the origin): the first
    snapshot step at which :func:`specialisation` is half way from its least value (on the plateau, which the
    units reach only after their escape from the origin) to its final value, linearly interpolated (None: it
    does not rise, or never falls below its final value)."""
    t = np.asarray(steps, dtype=np.float64)
    S = specialisation(units)
    j0 = int(np.argmin(S))
    if t.size < 2 or S[-1] <= S[j0]:
        return None
    return half_learned_step(t[j0:], S[j0:])
