"""From a shock of the quotient PDE to a predicted phase transition of training (docs/theory.md §1 [model]).

This is the project's *modelling choice*, kept in one module so that it can be improved when the
data say so.  Inputs: a chart's PDE data (initial data ``u0 = L̄``, mobility, the initial
coordinate ``x0``, the landscape minimum ``x_min``, the viscosity ``ν``), the shocks found in its
inviscid solution, and the optimiser's learning rates.  **Never the loss series**: the function
signatures below have no argument through which a measured loss curve could enter (THE RULE of
issue 6; a test checks that the prediction is unchanged when the log's loss is replaced).

**The mapping.**  The first shock of ``∂_γ u + ½ a u_x² = ν Δ_g u`` forms at ``γ* = −1/inf Hess_g L̄`` (in 1-D
``Hess_g L̄ = L̄_ρρ`` in the flat coordinate ``dρ = dx/sqrt(a)``) at the ridge ``x_s`` where the
quotient curvature is most negative (docs/theory.md §1).  Near the ridge gradient flow ``ρ̇ = −L̄_ρ ≈
(ρ − ρ_s)/γ*`` leaves it exponentially with e-folding time γ*, so a trajectory starting at quotient
distance ``d_0 = |ρ(x0) − ρ(x_s)|`` (``∫ dx/sqrt(a)``; :meth:`ChartShock.distance`) reaches the far
side of the drop, ``d_exit = |ρ(x_min) − ρ(x_s)|``, after

    t = γ* · ln(d_exit / d_0)                                   (gradient-flow time).

*Choice of d_exit.*  The worked check of docs/theory.md §1 (one mode of a two-layer linear net,
``L̄(r) = ½(s − r²)²``, ridge at 0, ``γ* = 1/(2s)``) gives, with ``d_exit = sqrt(s)`` = the
landscape minimum, ``t = (1/(4s)) ln(s/z_0)``: the logistic half-learned time
``(1/(4s)) ln((s − z_0)/z_0)`` up to ``O(z_0/s)``, which is also the gradient-flow time along the chart
to the half-learned point, the escape integral ``E = ∫_{x0}^{x_h} dx/|a ∂_x L̄|`` (below).  Where ``L̄`` is
not quadratic in the mode's strength (tanh saturation, softmax attention, a great circle's cosine) the
distance to the minimum is not the exit of the half-learned point, so the exit is the one whose log
form reproduces the escape integral: ``ln d_exit = ln d_0 + E/γ*`` (the minimum's distance only where
``E`` is not finite).  The linear growth ``e^{t/γ*}`` near the ridge is kept for the noise (``d_eff``),
the discrete steps and momentum; the landscape's own nonlinear part sets how far it must grow.
Measured (README): the quadratic cases move by ≤ 0.3 points, `sphere-direction` from 8.4 to 0.7 %,
`fourier-features` from 13.1 to 4.3 %, `mlp-tanh-teacher` from 8.7 to 6.0 %.  ``d_exit`` is reported
as that effective exit (the saddle chain scales it by the exits at its saddles).

*Viscous (Kramers-type) correction.*  With noise, ``dρ = (ρ − ρ_s)/γ* dt + sqrt(2T) dW`` (flat
coordinate); the linearised escape adds a variance ``T γ*`` to the starting offset, so
``d_0 → d_eff = sqrt(d_0² + 2 ν γ*)`` (``ν = T/2``).  For full-batch GD ``ν = 0``.

*Discrete steps.*  At step size ``η`` the linearised map is ``x − x_s ↦ (1 + η/γ*)(x − x_s)``, so
the predicted step ``n`` solves ``Σ_{i<n} ln(1 + η_i/γ*) = ln(d_exit/d_eff)`` (the issue's
``steps = t/η`` is the limit ``η ≪ γ*``, also reported as ``flow_step``: ``Σ_{i<n} η_i = t``).
With momentum ``μ`` (heavy ball, Nesterov) the same linearised map acts on the position and the
velocity together; :meth:`Optimiser.steps_for_growth` iterates it from rest (docs/theory.md §6,
"Optimisers": the growth per step tends to the largest root ``ρ`` of the rule's characteristic
polynomial, ``ln ρ`` instead of ``ln(1 + η/γ*)``).  The gradient-flow limit ``η → η/(1 − μ)``
serves only the escape integral.  Adam is not a gradient flow in these coordinates and is refused.

*Critical learning rate.*  A proximal step of size η is single-valued only while ``η < γ*``
(docs/theory.md §1), so ``γ*`` is also reported as ``critical_lr``.

*When the log form does not apply.*  The linearised escape needs the start on the unstable
side of a ridge that is a stationary point of the flow.  If ``x0`` and ``x_min`` lie on opposite
sides of ``x_s``, or the flow crosses the ridge at a speed ``v_s = |L̄_ρ(x_s)|`` with
``v_s γ* ≥ d_0`` (e.g. an unbalanced rescaling unit, ``c = a² − |w|² ≠ 0``, which opens the
degenerate ridge at ``q = 0``), or the start is not in the ridge's linear region (its
flat-coordinate speed ``|a ∂_x L̄|/sqrt(a)`` at ``x0`` differs from the linearised ``d_0/γ*`` by more than
a factor 2: the ridge is a non-convex part of ``L̄`` elsewhere, e.g. softmax saturation of an
attention score), the escape integral below is used instead (``method``).

*Degenerate ridges.*  Where ``inf a L̄'' = 0`` (no shock forms: e.g. query–key weights entering at
quartic order) the logarithm is replaced by the escape integral along the unstable direction,
``t = ∫_{x0}^{x_h} dx / |a ∂_x L̄|`` (reported for every chart as ``escape_time``), where ``x_h`` is
where the mode is half learned — its strength half way to the minimum's, the truth's definition; for
``L̄`` quadratic in the strength the point where ``L̄`` has dropped by 3/4 of ``L̄(x0) − L̄(x_min)``, the
detector's midpoint (the integral to ``x_min`` itself diverges logarithmically at a non-degenerate minimum).
For ``L̄ = ½(q − β)²`` with the balanced rescaling mobility ``2|q|`` it is exactly the logistic
half-learned time ``(1/(2β)) ln((β − q0)/q0)``.  On a mirrored chart (``L̄`` even in ``r``; the ridge is taken on
the start's side, ``|x_s|``) a start between the mirror ``r = 0`` and the ridge — a degenerate ridge, whose
steepest compression lies further out — leaves the mirror, the stationary point, and passes the ridge on its
way: its ``d_0`` and ``d_exit`` (reported, and checked for a plateau) are measured from ``r = 0``.

*Later saddles.*  :func:`predict_transitions` treats every chart as escaping from the origin with the
other modes at their initial values.  The modes a network visits later change a waiting chart's rate
and exit; :mod:`shockflow.prediction.saddle_chain` accumulates them (it reduces to this module's
prediction where modes are independent) and uses :meth:`Optimiser.log_gains` for the steps.

*Abstention.*  A chart whose escape gives no usable prediction — a start within one e-fold of its minimum
(``ln(d_exit/d_eff) < 1`` for a shock, a rate of fall of the loss that grows less than e-fold along an escape
integral: no plateau), or a non-finite distance, time or step — predicts nothing
(:func:`predict_or_abstain`, :class:`Abstention` with the reason); the other charts predict as before.

*Assumptions.*  (1) The chart is invariant under the flow (commuting data for ``gram``; the other
modes stay near their initial values while this one escapes — true for well-separated strengths);
(2) the linear regime dominates the escape time (``ln(d_exit/d_0) ≫ 1``); (3) the schedule
``η_i`` is known in advance (it is an optimiser setting).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Sequence

import numpy as np

__all__ = ["Abstention", "ChartShock", "Optimiser", "PredictedTransition", "escape_integral", "predict_chart",
           "predict_or_abstain", "predict_transitions", "steps_for_growth", "PredictionError", "InvalidPrediction"]


class PredictionError(ValueError):
    """The prediction cannot be made (an unsupported optimiser, a chart without escape data)."""


class InvalidPrediction(RuntimeError):
    """A chart's escape gave no usable prediction (a non-finite or non-positive distance, time or step, or a start
    that is not a plateau), naming the chart, never a predicted step.  In a run the chart abstains
    (:func:`predict_or_abstain`); the run fails with it (exit 1) only when no chart predicts.  ``figure``: the
    failed check in a few words (``ln(d_exit/d0) = 0.7 < 1``)."""

    def __init__(self, message: str, figure: str = ""):
        super().__init__(message)
        self.figure = figure or message


@dataclass(frozen=True)
class ChartShock:
    """What the prediction sees of one chart: PDE data and the first shock of its inviscid solution.

    ``gamma_star = inf`` (and ``location`` the ridge/initial side) when no shock formed."""

    label: str
    x0: float
    x_min: float
    nu: float
    mobility_at_ridge: float
    gamma_star: float
    location: float
    strength: float
    escape_x: np.ndarray
    escape_rate: np.ndarray
    mirrored: bool = False
    ridge_speed: float = 0.0             # |L̄_ρ| at the ridge (0: a stationary point of the flow)
    metric_x: np.ndarray | None = None   # points and g^xx for quotient distances (None: a = 1)
    metric_a: np.ndarray | None = None

    def distance(self, x: float) -> float:
        """Quotient (Riemannian) distance ``|∫_{x_s}^{x} dx'/sqrt(a)|`` from the ridge ``x_s = location``."""
        if self.metric_x is None:
            return abs(x - self.location)
        lo, hi = sorted((self.location, x))
        grid = np.asarray(self.metric_x)
        inside = grid[(grid > lo) & (grid < hi)]
        pts = np.concatenate([[lo], inside, [hi]])
        # g^xx linear between the points, integrated exactly: 2 Δx / (sqrt(a_i) + sqrt(a_i+1)) per interval.
        # Finite where the mobility vanishes at one end (a = 2σ at σ = 0, the degenerate end of a chart),
        # where a trapezoid through 1/sqrt(a) is not (it read 1/sqrt(1e-300) there: d0 = 4e137, issue 21).
        root = np.sqrt(np.maximum(np.interp(pts, grid, np.asarray(self.metric_a)), 0.0))
        dx, both = np.diff(pts), root[1:] + root[:-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.sum(np.where(dx > 0, 2.0 * dx / both, 0.0)))


@dataclass(frozen=True)
class Optimiser:
    """The optimiser settings the mapping uses: per-step learning rates, optimiser name, momentum.

    The linearised escape from a ridge of curvature ``κ = 1/γ*`` grows the distance by a factor per
    step that depends on the update rule (docs/theory.md §6, "Optimisers"): ``1 + ηκ`` for gradient descent;
    for heavy ball (``v ← μv + g, θ ← θ − ηv``) and Nesterov (``θ ← θ − η(g + μv)``) the state
    ``(θ, v)`` obeys a 2×2 linear recurrence whose largest eigenvalue solves
    ``ρ² − (1 + μ + ηκ)ρ + μ = 0`` and ``ρ² − (1 + μ)(1 + ηκ)ρ + μ(1 + ηκ) = 0``.
    :meth:`steps_for_growth` iterates that recurrence from ``v = 0`` with the scheduled rates, so the
    transient of the velocity and any schedule are exact in the linear model; the long-run rate
    ``η/(1 − μ)`` of :meth:`effective_rates` serves the escape integral (slow, non-linearised motion).
    """

    learning_rates: np.ndarray   # η_i for i = 0 .. steps-1
    name: str = "gd"
    momentum: float = 0.0

    def _check(self) -> None:
        if self.name == "adam":
            raise PredictionError("training.optimizer: the escape-time mapping (shockflow.prediction.mapping) models "
                                  "gradient descent (gd, sgd, momentum, nesterov), found 'adam'")

    def effective_rates(self) -> np.ndarray:
        """Per-step rates of the gradient flow the iterates follow when they move slowly: ``η/(1 − μ)``."""
        self._check()
        lr = np.asarray(self.learning_rates, dtype=np.float64)
        if self.name in ("momentum", "nesterov"):
            lr = lr / (1.0 - self.momentum)
        return lr

    def escape_rates(self, gamma_star: float) -> np.ndarray:
        """Per-step gradient-flow rates for a slow escape (the escape integral) near curvature ``κ = 1/γ*``.

        Gradient descent: ``η``.  With momentum the flow limit ``η/(1 − μ)`` holds only while
        ``ηκ ≪ (1 − μ)²``; beyond it the rule grows a linear mode by its characteristic root ``ρ`` per step,
        not by ``1 + ηκ/(1 − μ)``, so each rate is scaled by ``ln ρ / ln(1 + ηκ/(1 − μ))`` at the chart's
        own curvature (1 in the flow limit; without a finite curvature the flow limit is used)."""
        rates = self.effective_rates()
        if self.name not in ("momentum", "nesterov") or self.momentum == 0.0 or not (0 < gamma_star < math.inf):
            return rates
        mu = float(self.momentum)
        x = np.asarray(self.learning_rates, dtype=np.float64) / gamma_star          # ηκ per step
        if self.name == "momentum":
            b, c = 1.0 + mu + x, mu
        else:
            b, c = (1.0 + mu) * (1.0 + x), mu * (1.0 + x)
        rho = 0.5 * (b + np.sqrt(np.maximum(b * b - 4.0 * c, 0.0)))
        return rates * np.log(rho) / np.log1p(x / (1.0 - mu))

    def log_gains(self, kappa: float, steps: int, *, from_rest: bool = True) -> np.ndarray:
        """Per-step growth ``ln |θ_{n+1}/θ_n|`` of the linearised escape at curvature ``κ`` (signed: ``κ < 0``
        is a stable direction, the mode is pushed back) for ``steps`` steps; past the schedule the last
        rate continues.  Gradient descent: ``ln |1 + η_i κ|``.  Heavy ball and Nesterov: the 2×2
        recurrence iterated from rest (``from_rest``: the velocity's transient, as
        :meth:`steps_for_growth`) until it settles, then the modulus of the largest characteristic root
        at each step's rate (``from_rest=False``: the root throughout, a mode already moving)."""
        self._check()
        rates = np.asarray(self.learning_rates, dtype=np.float64)
        eta = rates[:steps] if rates.size >= steps else np.concatenate([rates, np.full(steps - rates.size, rates[-1])])
        x = eta * kappa
        if self.name not in ("momentum", "nesterov") or self.momentum == 0.0:
            return np.log(np.maximum(np.abs(1.0 + x), 1e-300))
        mu, nesterov = float(self.momentum), self.name == "nesterov"
        b, c = ((1.0 + mu) * (1.0 + x), mu * (1.0 + x)) if nesterov else (1.0 + mu + x, np.full_like(x, mu))
        disc = b * b - 4.0 * c
        root = np.where(disc >= 0, np.maximum(np.abs(0.5 * (b + np.sqrt(np.abs(disc)))),
                                              np.abs(0.5 * (b - np.sqrt(np.abs(disc))))), np.sqrt(np.abs(c)))
        gains = np.log(np.maximum(root, 1e-300))
        if not from_rest:
            return gains
        theta, v = 1.0, 0.0
        for n in range(steps):
            v = mu * v - kappa * theta
            step = eta[n] * (mu * v - kappa * theta) if nesterov else eta[n] * v
            theta_new = theta - step
            if theta_new == 0.0:
                break
            g = math.log(abs(theta_new))
            settled = abs(g - gains[n]) <= 1e-12 * max(abs(gains[n]), 1e-300)
            gains[n] = g
            if settled:
                break
            v /= theta_new
            theta = 1.0
        return gains

    def steps_for_growth(self, log_growth: float, gamma_star: float) -> float:
        """The (fractional) step at which the linearised escape at ``κ = 1/γ*`` has grown the distance from
        the ridge by ``exp(log_growth)``; past the schedule the last rate continues; ``inf`` if never."""
        self._check()
        rates = np.asarray(self.learning_rates, dtype=np.float64)
        if self.name not in ("momentum", "nesterov") or self.momentum == 0.0:
            return steps_for_growth(log_growth, rates, gamma_star)
        if log_growth <= 0:
            return 0.0
        kappa, mu, nesterov = 1.0 / gamma_star, float(self.momentum), self.name == "nesterov"
        theta, v, total = 1.0, 0.0, 0.0   # θ is renormalised to 1 each step; total = ln θ_n
        n = 0
        last = rates.size - 1
        previous_gain = -1.0
        while True:
            eta = rates[min(n, last)]
            v = mu * v - kappa * theta                        # v ← μv + g with g = −κθ
            step = eta * (mu * v - kappa * theta) if nesterov else eta * v
            theta_new = theta - step
            if not theta_new > 0.0:
                return math.inf
            gain = math.log(theta_new / theta)
            if total + gain >= log_growth:
                return float(n + (log_growth - total) / gain)
            total += gain
            v /= theta_new
            theta = 1.0
            n += 1
            if n > last and abs(gain - previous_gain) <= 1e-12 * max(abs(gain), 1e-300):
                # past the schedule and settled on the largest root: the rest is geometric
                return float(n + (log_growth - total) / gain) if gain > 0 else math.inf
            previous_gain = gain


@dataclass(frozen=True)
class PredictedTransition:
    chart: str
    step: float              # the prediction (discrete linearised escape, schedule-aware)
    flow_step: float         # t/η: the gradient-flow limit
    time: float              # gradient-flow time t
    method: str              # "shock" (γ* ln(d_exit/d_eff)) or "escape_integral"
    gamma_star: float
    critical_lr: float
    location: float          # the ridge x_s
    strength: float
    d0: float
    d_exit: float
    d_eff: float
    nu: float
    escape_time: float       # ∫ dx/|a ∂L̄| from x0 to x_min (gradient flow, every chart)
    saddle: int = 0          # the saddle of the chain it escapes from (0: the origin)

    def as_dict(self) -> dict:
        return {k: (float(v) if isinstance(v, (int, float, np.floating)) else v) for k, v in asdict(self).items()}


def steps_for_growth(log_growth: float, rates: np.ndarray, gamma_star: float) -> float:
    """The (fractional) step ``n`` with ``Σ_{i<n} ln(1 + η_i/γ*) = log_growth``; ``inf`` if never."""
    if log_growth <= 0:
        return 0.0
    per = np.log1p(rates / gamma_star)
    cum = np.concatenate([[0.0], np.cumsum(per)])
    if cum[-1] < log_growth:
        # beyond the scheduled run: continue with the last rate
        return float(rates.size + (log_growth - cum[-1]) / per[-1]) if per[-1] > 0 else math.inf
    k = int(np.searchsorted(cum, log_growth))
    return float(k - 1 + (log_growth - cum[k - 1]) / per[k - 1])


def _flow_steps(t: float, rates: np.ndarray) -> float:
    cum = np.concatenate([[0.0], np.cumsum(rates)])
    if not math.isfinite(t):
        return math.inf
    if cum[-1] < t:
        return float(rates.size + (t - cum[-1]) / rates[-1])
    k = max(int(np.searchsorted(cum, t)), 1)
    return float(k - 1 + (t - cum[k - 1]) / rates[k - 1])


#: the start's flat-coordinate speed must be within this factor of d0/γ* for the log form
_LINEAR_FACTOR = 2.0


def _starts_linearised(chart: ChartShock, x0: float, d0: float) -> bool:
    """Whether the start lies in the ridge's linear region: its flat-coordinate speed
    ``v0 = |a ∂_x L̄|(x0)/sqrt(a(x0))`` is within a factor :data:`_LINEAR_FACTOR` of the linearised
    ``d0/γ*``.  A ridge elsewhere on the chart (a non-convex part of ``L̄`` the trajectory does not start
    near) fails this and the escape integral is used.  Without escape data: ``True``."""
    rate = np.asarray(chart.escape_rate, dtype=np.float64)
    if rate.size == 0 or d0 <= 0:
        return True
    if chart.metric_x is None:
        a0 = 1.0
    else:
        a0 = float(np.interp(x0, np.asarray(chart.metric_x), np.asarray(chart.metric_a)))
    if not a0 > 0:
        return True
    ratio = (float(rate[0]) / math.sqrt(a0)) * chart.gamma_star / d0
    return 1.0 / _LINEAR_FACTOR <= ratio <= _LINEAR_FACTOR


def escape_integral(x, rate, mirrored: bool = False) -> float:
    """``∫ dx/|a ∂_x L̄|`` along an escape profile (``|x|`` on a mirrored chart); ``inf`` where the rate
    vanishes or the profile has fewer than two points."""
    x = np.abs(np.asarray(x, dtype=np.float64)) if mirrored else np.asarray(x, dtype=np.float64)
    rate = np.asarray(rate, dtype=np.float64)
    if x.size < 2 or np.any(rate <= 0):
        return math.inf
    if np.all(x > 0) or np.all(x < 0):
        # in ln|x|, the profile's own (log-uniform) spacing: exact where the rate grows like the distance from a
        # ridge at 0, the linear region the escape starts in
        return float(abs(np.trapezoid(x / rate, np.log(np.abs(x)))))
    return float(abs(np.trapezoid(1.0 / rate, x)))


def _escape_integral(chart: ChartShock) -> float:
    return escape_integral(chart.escape_x, chart.escape_rate, chart.mirrored)


def predict_transitions(charts: Sequence[ChartShock], optimiser: Optimiser) -> list[PredictedTransition]:
    """One predicted transition per chart, sorted by step (see the module docstring); a chart without a usable
    escape raises :class:`InvalidPrediction` (:func:`predict_or_abstain` lets that chart abstain instead).

    The signature is the rule: PDE data, shocks and optimiser settings in; no loss series."""
    rates = _checked_rates(optimiser)
    return sorted((predict_chart(c, optimiser, rates) for c in charts), key=lambda p: p.step)


def predict_or_abstain(charts: Sequence[ChartShock], optimiser: Optimiser
                       ) -> tuple[list[PredictedTransition], list["Abstention"]]:
    """``(predictions sorted by step, abstentions)``: each chart predicts on its own; a chart whose escape gives no
    usable prediction (:func:`_check_escape`: no plateau, a non-finite distance or time) abstains with the reason and
    the others go on (docs/theory.md §6, "Abstention").  Its true transition, if the run shows one, stays a true
    transition without a prediction: a miss in the score."""
    rates = _checked_rates(optimiser)
    out, abstained = [], []
    for c in charts:
        try:
            out.append(predict_chart(c, optimiser, rates))
        except InvalidPrediction as exc:
            abstained.append(Abstention(c.label, str(exc), exc.figure))
    out.sort(key=lambda p: p.step)
    return out, abstained


@dataclass(frozen=True)
class Abstention:
    """A chart that predicts nothing, and why (the reason names the chart and the figure that failed)."""

    chart: str
    reason: str
    figure: str = ""     # the failed check in a few words

    def as_dict(self) -> dict:
        return {"chart": self.chart, "reason": self.reason}


def _checked_rates(optimiser: Optimiser) -> np.ndarray:
    rates = optimiser.effective_rates()
    if rates.size == 0 or np.any(~np.isfinite(rates)) or np.any(rates <= 0):
        raise PredictionError("optimiser.learning_rates: expected positive finite learning rates, one per step")
    return rates


def _log_exit(gamma_star: float, escape: float, d0: float, d_exit: float) -> float:
    """``ln d_exit`` of the log form: the exit whose linearised escape from ``d0`` takes the chart's escape integral
    to the half-learned point, ``ln d0 + E/γ*`` (module docstring, "Choice of d_exit"); the distance to the minimum
    where the escape integral is not known (not finite, no distance to grow from)."""
    if not (math.isfinite(escape) and escape > 0 and d0 > 0):
        return math.log(d_exit) if d_exit > 0 else -math.inf
    return math.log(d0) + escape / gamma_star


def predict_chart(c: ChartShock, optimiser: Optimiser, rates: np.ndarray | None = None) -> PredictedTransition:
    """The predicted transition of one chart (module docstring); :class:`InvalidPrediction` if its escape gives
    none.  ``rates``: the optimiser's effective rates (computed if not given)."""
    rates = _checked_rates(optimiser) if rates is None else rates
    escape = _escape_integral(c)
    x0 = abs(c.x0) if c.mirrored else c.x0
    xs = c.location
    d0 = c.distance(x0)
    d_exit = c.distance(c.x_min)
    same_side = (x0 - xs) * (c.x_min - xs) > 0
    if c.mirrored and x0 == 0.0 and not c.nu > 0:
        # exactly on the mirror r = 0 of an even chart loss, with no noise: its gradient vanishes there by symmetry,
        # and gradient flow, and descent, never leave it (a zero initialisation of the mode); the escape integral
        # from the profile's first point would give a finite time
        raise InvalidPrediction(f"chart {c.label!r}: its start lies exactly on the mirror r = 0 (d0 = 0) and there is "
                                f"no noise (nu = 0): the gradient there is zero and the mode never grows, so no "
                                f"transition is predicted", figure="d0 = 0, nu = 0")
    if math.isfinite(c.gamma_star) and c.gamma_star > 0 and same_side and c.ridge_speed * c.gamma_star < d0 \
            and _starts_linearised(c, x0, d0):
        d_eff = math.sqrt(d0 * d0 + 2.0 * c.nu * c.gamma_star)
        if d_eff <= 0:
            raise PredictionError(f"chart {c.label!r}: the initial point sits exactly on the ridge "
                                  f"(d0 = 0) and there is no noise (ν = 0): gradient flow never leaves it")
        log_exit = _log_exit(c.gamma_star, escape, d0, d_exit)
        growth = log_exit - math.log(d_eff)
        d_exit = math.exp(log_exit) if log_exit < 700.0 else math.inf
        t = c.gamma_star * growth
        step = optimiser.steps_for_growth(growth, c.gamma_star)
        method = "shock"
        gamma, crit = c.gamma_star, c.gamma_star
    else:
        if c.mirrored and not same_side:
            # the start lies inside the ridge, on the side of the mirror r = 0 (a degenerate ridge: L̄ even in r, its
            # steepest compression further out): the flow leaves the mirror, the stationary point, and passes the
            # ridge on its way, so the start's and the exit's distances are the mirror's
            mirror = replace(c, location=0.0)
            d0, d_exit = mirror.distance(x0), mirror.distance(c.x_min)
        d_eff, t = d0, escape
        method = "escape_integral"
        gamma = crit = c.gamma_star if c.gamma_star > 0 else math.inf
        step = _flow_steps(t, optimiser.escape_rates(c.gamma_star))
    _check_escape(c.label, method, step=step, time=t, d0=d0, d_exit=d_exit, d_eff=d_eff)
    if method == "escape_integral":
        _check_speedup(c)
    return PredictedTransition(
        chart=c.label, step=step, flow_step=_flow_steps(t, rates), time=t, method=method, gamma_star=gamma,
        critical_lr=crit, location=xs, strength=c.strength, d0=d0, d_exit=d_exit, d_eff=d_eff, nu=c.nu,
        escape_time=escape)


def _check_speedup(c: ChartShock) -> None:
    """The plateau of an escape integral: the loss must fall ever faster along the escape, by at least one e-fold,
    ``max |dL̄/dt| ≥ e |dL̄/dt|(x0)`` with ``|dL̄/dt| = a (∂_x L̄)² = rate²/a`` on the escape profile (the loss's own
    rate, the same in every coordinate of the chart; the counterpart of the shock's ``ln(d_exit/d0) ≥ 1``).  A
    distance is no measure of it here: on a degenerate ridge the rate of fall grows as a power of the distance
    (``r^{2L−2}`` on the balanced section of a depth-L chain), so a chain of depth 6 whose modes grow 500-fold in
    strength grows its distance less than e-fold.  A start where the loss falls fastest is no plateau: the chart's
    minimum lies next to it (a unit that settles instead of escaping)."""
    x = np.asarray(c.escape_x, dtype=np.float64)
    rate = np.asarray(c.escape_rate, dtype=np.float64)
    if rate.size < 2 or not rate[0] > 0:
        return
    pts = np.abs(x) if c.mirrored else x
    a = np.interp(pts, c.metric_x, c.metric_a) if c.metric_x is not None else np.ones_like(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        drop = np.where(a > 0, rate * rate / a, 0.0)
    if not drop[0] > 0:
        return
    growth = math.log(float(np.max(drop)) / float(drop[0]))
    if growth < 1.0:
        raise InvalidPrediction(
            f"chart {c.label!r} (escape_integral): the loss's rate of fall grows by ln(max/start) = {growth:.3g} < 1 "
            f"along the escape from {c.x0:.4g} to the minimum at {c.x_min:.4g}: the start is no plateau; the chart "
            "does not describe a transition of this run", figure=f"ln(speed-up) = {growth:.3g} < 1")


def _check_escape(label: str, method: str, **figures: float) -> None:
    """What a predicted transition must satisfy before it is one (issue 21): finite, positive distances, time and
    step, finite distances, and (a shock whose start is apart from the ridge, d0 > 0) a start that is a plateau, i.e.
    the linearised escape grows the distance from the ridge by at least one e-fold,
    ``ln(d_exit/d_eff) ≥ 1`` (assumption 2 of the module docstring, ``ln(d_exit/d_0) ≫ 1``, at its weakest).  A start
    closer to the ridge's far side than that (the chart's minimum at its start, or at the degenerate end the start
    sits next to) has no plateau to escape from: the chart does not describe a transition of this run."""
    bad = [f"{k} = {v:.4g}" for k, v in figures.items()
           if not (math.isfinite(v) and (v > 0 if k in ("step", "time") else v >= 0))]
    if bad:
        raise InvalidPrediction(f"chart {label!r} ({method}): {', '.join(bad)}: expected a finite positive step and "
                                "time and finite distances; the chart gives no prediction (its data do not describe an "
                                "escape)", figure=", ".join(bad))
    if method != "shock" or figures["d0"] == 0:
        return   # an escape integral's plateau is the loss's speed-up (_check_speedup), not a distance
    growth = math.log(figures["d_exit"] / figures["d_eff"]) if figures["d_exit"] > 0 else -math.inf
    if growth < 1.0:
        raise InvalidPrediction(
            f"chart {label!r} ({method}): the start is {figures['d_eff']:.4g} from the ridge and the minimum "
            f"{figures['d_exit']:.4g} (quotient distances): ln(d_exit/d0) = {growth:.3g} < 1, the start is no plateau "
            "(it lies too near the chart's minimum); the chart does not describe a transition of this run",
            figure=f"ln(d_exit/d0) = {growth:.3g} < 1")
