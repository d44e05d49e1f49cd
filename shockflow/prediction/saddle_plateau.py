"""The plateau at the saddle chain's last saddle and its escape (docs/theory.md §6, "Plateaus away from the origin").

After the charts of the origin have escaped (the saddle chain, :mod:`shockflow.prediction.saddle_chain`), the network
waits at the chain's last saddle.  Where the network has learned something there that is not its last word (a soft
committee machine on its symmetric plateau, a tanh MLP whose units share the teacher's linear direction), that
saddle has unstable directions of its own that no chart of the origin contains: the units differentiating.  This
module is the chart of that escape [model, ours], from the landscape (the loss on the data), the initial parameters
and the optimiser settings only, never a training run:

1. **The saddle** ``θ*``: the stationary point of the real loss next to the chain's last saddle ``θ_S`` (the block
   saddle of the charts' sections, :meth:`~shockflow.prediction.saddle_chain.Landscape.saddle`): L-BFGS on
   ``½|∇L|²`` from ``θ_S`` (its gradient ``H ∇L`` by a central difference of the gradient).  The sections keep each
   mode split over the units as the initial weights split it, so ``θ_S`` is on the plateau but not at its stationary
   point (``committee-tanh-readout``: the units' unequal scales, distance 0.98 from ``θ*``).  A search that does not
   bring ``|∇L|`` below ``STATIONARY`` of its value at ``θ_S`` within ``STATIONARY_ITERATIONS``, or not below
   ``PROGRESS`` within ``PROGRESS_ITERATIONS``, finds no saddle: nothing is charted (measured at 50 iterations:
   0.027 and 0.021 on the two second stages below, 0.15 on ``deep-mlp-tanh`` and 0.26 on ``mlp-tanh-teacher``,
   whose losses go on falling from their last saddles; 3000 iterations left those at 0.007 and 0.013, in 37 and
   260 s at load 3).  Nor is a chain's saddle without negative curvature of its own (checked last: the search's
   give-up costs 210 gradients on ``mlp-tanh-teacher``, the Hessian's eigenpairs at its saddle 830).
2. **The unstable directions**: the lowest eigenpairs of the Hessian at ``θ*`` on the free parameters (dense below
   ``DENSE`` parameters, else Lanczos on Hessian–vector products); unstable below ``−NEGATIVE_FLOOR`` of the largest
   ``|λ|``, and the escape's are those with rates ``κ_j = −λ_j`` at least ``FAST`` of the fastest (a degenerate group
   of the units' permutations: 4 at 0.097–0.112 on ``committee-tanh-readout``, then a gap to 0.033; 6 at 0.062–0.094
   on ``mlp-tanh-nonlinear-teacher``, then 0.025): they span ``V``.  None: ``θ*`` is a minimum, no later transition.
3. **The arrival**: the chain reaches ``θ_S`` at its last escape's step, and the perturbation it carries there is
   ``θ_S``'s own component on ``V``, ``c = Vᵀ(θ_S − θ*)``: the charts' sections split each mode over the units as the
   initial weights split it, so ``θ_S`` holds the units' initial differences as the escape from the origin scaled
   them (measured against the runs' snapshots on ``V``: the direction within 2–14° at the arrival, the size 2–3x the
   run's; the initial parameters' own component, carried at the chain's rates, points elsewhere, cos −0.73 on
   ``committee-tanh-readout``: the escape from the origin moves it by more than the origin's curvature does).
   A chain's saddle whose component is not below the quadratic top's size along ``u`` (step 4) is not on ``θ*``'s
   plateau: the network does not wait at ``θ*``, it has already passed its escape, and nothing is charted
   (``attention-qk-4x2``: its chain's saddle sits 2.2 tops out along ``V``, 0.61 against the line's minimum at 0.55;
   the two second stages below: 0.05 and 0.09 tops).  Charted there, that direction's strength crossed half way at
   step 1215.5 beside the second mode's own at 1207.7: one escape counted twice, the chart abstaining and its
   "transition" a miss.
4. **The approach**: from ``θ_S`` the optimiser's own update rule runs on the real loss with ``V`` held (every
   step's ``V`` component removed: the flow on the plateau, towards ``θ*``), and ``c`` is carried by the same rule
   linearised about the held iterate, ``c ← c − η (Vᵀ∇L(θ_n) + Vᵀ H(θ_n) V c)`` (one Hessian–vector product a step;
   the slope term because the held set is not invariant away from ``θ*``, as the mixture's rank-r saddles,
   :mod:`shockflow.prediction.gate`), so it grows at the rate of the plateau point the run is at, slower far from
   ``θ*``.  It ends when ``|c|`` reaches ``LINEAR_FRACTION`` of the quadratic top's size along the grown direction
   (the linear region ends: on a quartic double well ``−a x²/2 + b x⁴/4`` the force there is 2.6 % below the
   linear one), or the held flow has arrived (its loss within ``ARRIVAL`` of the way from ``L(θ_S)`` to
   ``L(θ*)``: the rest is the saddle's own rates, which the chart's exit uses), or at the run's last step.
5. **The chart**: one chart along the grown direction ``u = V c/|c|`` through ``θ_h``, the held iterate where the
   approach ends (:class:`shockflow.geometry.saddle.SaddleGeometry`: the ``flat`` line ``θ_h + x u``, its start at
   ``x0 = |c|``; its strength the distance from ``θ*`` in the span of ``V``, which ``θ_h`` shares with ``θ*``): the
   network escapes from the plateau point it is at, not from ``θ*``, which it need not reach (the approach ends
   "linear" with ``θ_h`` 0.36 from ``θ*`` on ``mlp-tanh-nonlinear-teacher``, whose run passes ``θ*`` no closer than
   0.32; the rate along ``u`` at ``θ_h`` is 0.75–0.91 of ``θ*``'s on the two second stages).  Extracted and solved like
   any chart; its exit is the usual one
   (:func:`shockflow.prediction.mapping.predict_chart`: ``ln(d_exit/d0)`` at the chart's γ*, the log form of the
   escape integral to the half-learned point) from the approach's end on, with the rates from that step.  The run's
   distance from ``θ*`` in the span of ``V``, ``|Vᵀ(θ − θ*)|``, is what the chart's parameter truth reads (the units'
   differentiation, half way from its start to its end): a saddle's unstable directions come in degenerate groups
   (the units' permutations act on them), so the run may leave along another direction of the group than ``u``
   (``committee-tanh-readout`` seed 2: along ``u`` it moved less than half way to the line's minimum; the
   coordinate along ``u`` read 196 for seed 0 where the specialisation is half way at 156).

The predicted step is the approach's end plus the chart's escape.  Measured (2 cores, load 1-2; seeds 0, 1, 2, against
the chart's truth): ``committee-tanh-readout`` 160.7 / 94.8 / 161.0 for 165.7 / 110.9 / 145.4 (−3.0, −14.6, +10.7 %;
the teacher-free specialisation of :func:`shockflow.prediction.truth.specialisation_step` at seed 0: 155.8),
``mlp-tanh-nonlinear-teacher`` 360.3 / 345.2 / 343.2 for 453.8 / 442.0 / 435.7 (−20.6, −21.9, −21.2 %; teacher-free
469.8 at seed 0): early at five of the six, the arrival's perturbation (step 3) 2–3x the run's.  With the chart through ``θ*`` instead
of ``θ_h``: −6.1, −22.1, −7.6 % and −22.4, −26.7, −24.0 %.  Before this chart both second
stages were misses (recall 1/2, median 51–52 %); now recall 1, median 3.4–12.2 %.  Cases whose last saddle is a minimum
or has no stationary point next to it (``two-layer-staircase``, ``mlp-tanh-teacher``, ``deep-mlp-tanh``) get no chart.  Limits: one later saddle (the chain's last) and
its first exit; a stationary point that L-BFGS on ``½|∇L|²`` does not reach is not charted; the held flow is
gradient descent or momentum as the run's, on the full batch (minibatch noise is not in it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from shockflow.geometry.saddle import SaddleGeometry

__all__ = ["NetworkLoss", "SaddleEscape", "SaddlePlateauError", "held_approach",
           "negative_curvature", "saddle_escape", "saddle_extraction", "saddle_transition", "stationary_point"]

#: the stationary-point search succeeds where |∇L| falls below this fraction of its value at the chain's saddle
STATIONARY = 5e-3
#: at most this many L-BFGS iterations of that search
STATIONARY_ITERATIONS = 600
#: ... given up where |∇L| is not below PROGRESS of its start after PROGRESS_ITERATIONS
PROGRESS, PROGRESS_ITERATIONS = 5e-2, 50
#: below this many free parameters the Hessian is built densely (2 gradients a column), else Lanczos
DENSE = 400
#: lowest eigenpairs computed by Lanczos
EIGENPAIRS = 8
#: an eigenvalue is unstable below −this × the largest |eigenvalue| (finite-difference round-off, flat directions)
NEGATIVE_FLOOR = 1e-2
#: the escape's directions are the unstable ones whose rate is at least this fraction of the fastest
FAST = 0.5
#: the approach ends when the held flow's loss is within this fraction of the way from L(θ_S) down to L(θ*)
ARRIVAL = 1e-3
#: ... or when the carried distance reaches this fraction of the quadratic top's size along the grown direction
LINEAR_FRACTION = 0.3
#: the label of the chart
LABEL = "saddle"


class SaddlePlateauError(RuntimeError):
    """The chain's last saddle could not be followed (names the stage and why): a run failure, exit 1."""


class NetworkLoss:
    """The real loss of ``model`` on ``(X, y)`` as a function of the flat parameter vector, frozen entries held."""

    def __init__(self, model, X, y, frozen=()):
        self.model = model.copy()
        self.X, self.y = np.asarray(X, dtype=np.float64), y
        owner = np.concatenate([np.full(np.asarray(v).size, k, dtype=object) for k, v in model.params.items()])
        self.free = ~np.isin(owner, list(frozen))
        self._last = None   # (θ, L, ∇L) of the last point evaluated

    def loss_grad(self, theta):
        """``(L(θ), ∇L(θ))``; the last point's are kept (the search's callback asks again for the iterate its
        line search has just evaluated, the approach for the point it has just stepped to)."""
        theta = np.asarray(theta, dtype=np.float64)
        last = self._last
        if last is not None and np.array_equal(last[0], theta):
            return last[1], last[2].copy()
        value, g = self._evaluate(theta)
        self._last = (theta.copy(), value, g.copy())
        return value, g

    def _evaluate(self, theta):
        self.model.set_parameter_vector(theta)
        value, grads = self.model.loss_and_grad(self.X, self.y)
        g = self.model.grad_vector(grads)
        g[~self.free] = 0.0
        return float(value), g

    def grad(self, theta):
        return self.loss_grad(theta)[1]

    def along(self, theta, u, s):
        """``L(θ + s_b u)`` for every ``s_b``: the batched line form where the model is a shockflow model whose
        family has one (:func:`shockflow.geometry.batched_loss.line_losses`), else point by point."""
        from shockflow.geometry.batched_loss import line_losses
        from shockflow.models.base import Model

        s = np.asarray(s, dtype=np.float64)
        out = line_losses(self.model, theta, u, s, self.X, self.y) if isinstance(self.model, Model) else None
        return out if out is not None else np.array([self._evaluate(theta + sb * u)[0] for sb in s])

    def hv(self, theta, v):
        """``H v`` by a central difference of the gradient."""
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            return np.zeros_like(theta)
        h = 1e-5 * max(1.0, float(np.linalg.norm(theta)))
        u = v / norm
        # (its two points are not kept: the point the caller evaluates next is θ's neighbour, not these)
        return (self._evaluate(theta + h * u)[1] - self._evaluate(theta - h * u)[1]) * (norm / (2.0 * h))


@dataclass(frozen=True, eq=False)
class SaddleEscape:
    """The chain's last saddle, its unstable directions and the approach (module docstring)."""

    theta: np.ndarray            # θ*, the stationary point
    loss: float                  # L(θ*)
    start: np.ndarray            # θ_S, the chain's last (block) saddle
    start_loss: float
    start_step: float            # the step the chain reaches θ_S (its last escape's)
    residual: float              # |∇L(θ*)| / |∇L(θ_S)|
    eigenvalues: np.ndarray      # the lowest eigenvalues of H(θ*)
    rates: np.ndarray            # κ_j of the unstable directions
    basis: np.ndarray            # V (P, k)
    d_init: float                # |Vᵀ(θ_0 − θ*)|
    d_arrive: float              # |Vᵀ(θ_S − θ*)|: the perturbation the chain's saddle carries
    direction: np.ndarray        # u, the grown direction at the approach's end (unit, full vector)
    d_start: float               # |c| at the approach's end: the chart's x0
    end_step: float              # the step the approach ends (absolute)
    ended: str                   # "arrived", "linear", "horizon"
    top: float                   # the quadratic top's size along u
    line_minimum: float          # the first minimum of the loss along θ_h + s u
    through: np.ndarray = None   # θ_h, the held iterate at the approach's end: the chart's line passes through it

    def as_dict(self) -> dict:
        return {"loss": self.loss, "start_loss": self.start_loss, "start_step": self.start_step,
                "residual": self.residual, "eigenvalues": self.eigenvalues.tolist(), "rates": self.rates.tolist(),
                "d_init": self.d_init, "d_arrive": self.d_arrive, "d_start": self.d_start,
                "end_step": self.end_step, "ended": self.ended, "top": self.top, "line_minimum": self.line_minimum}


def stationary_point(loss: NetworkLoss, theta_s):
    """``(θ*, |∇L(θ*)|/|∇L(θ_S)|)``: L-BFGS on ``½|∇L|²`` from ``θ_S`` (module docstring, 1), stopped at ``STATIONARY``
    or after ``STATIONARY_ITERATIONS``, or given up (residual inf) where it has not reached ``PROGRESS`` after
    ``PROGRESS_ITERATIONS``: no stationary point next to the chain's saddle (the loss goes on falling there)."""
    from scipy.optimize import minimize

    g0 = float(np.linalg.norm(loss.grad(theta_s)))
    if g0 == 0.0:
        return np.array(theta_s, dtype=np.float64), 0.0
    seen = {"n": 0, "best": np.array(theta_s, dtype=np.float64), "res": 1.0}

    def fun(theta):
        g = loss.grad(theta)
        return 0.5 * float(g @ g), loss.hv(theta, g)

    def check(theta):
        seen["n"] += 1
        res = float(np.linalg.norm(loss.grad(theta))) / g0
        if res < seen["res"]:
            seen["best"], seen["res"] = np.array(theta), res
        if res <= STATIONARY or (seen["n"] >= PROGRESS_ITERATIONS and seen["res"] > PROGRESS):
            raise StopIteration

    try:
        minimize(fun, np.asarray(theta_s, dtype=np.float64), jac=True, method="L-BFGS-B", callback=check,
                 options={"maxiter": STATIONARY_ITERATIONS, "ftol": 1e-30, "gtol": 1e-14 * g0})
    except StopIteration:
        pass
    if not np.all(np.isfinite(seen["best"])):
        raise SaddlePlateauError("the stationary point next to the chain's last saddle: the search diverged")
    return seen["best"], seen["res"]


def negative_curvature(loss: NetworkLoss, theta):
    """``(lowest eigenvalues, V, rates)``: the Hessian at ``theta`` on the free parameters (module docstring, 2);
    ``V`` the eigenvectors below ``−NEGATIVE_FLOOR`` of the largest ``|λ|`` (full vectors), ``rates = −λ`` there."""
    free = np.flatnonzero(loss.free)

    def hv_free(v):
        full = np.zeros_like(theta)
        full[free] = np.asarray(v).reshape(-1)
        return loss.hv(theta, full)[free]

    if free.size <= DENSE:
        H = np.column_stack([hv_free(e) for e in np.eye(free.size)])
        vals, vecs = np.linalg.eigh(0.5 * (H + H.T))
        scale = float(np.max(np.abs(vals)))
        vals, vecs = vals[:EIGENPAIRS], vecs[:, :EIGENPAIRS]
    else:
        from scipy.sparse.linalg import LinearOperator, eigsh

        op = LinearOperator((free.size, free.size), matvec=hv_free, dtype=np.float64)
        vals, vecs = eigsh(op, k=EIGENPAIRS, which="SA", v0=np.random.default_rng(0).standard_normal(free.size),
                           tol=1e-8)
        order = np.argsort(vals)
        vals, vecs = vals[order], vecs[:, order]
        scale = float(abs(eigsh(op, k=1, which="LM", tol=1e-4, return_eigenvectors=False)[0]))
    # unstable: below the floor; the escape's directions: those growing at least FAST of the fastest rate (a
    # cluster of the permutations' degenerate rates, the slower ones left to wait)
    unstable = (vals < -NEGATIVE_FLOOR * scale) & (vals <= FAST * vals[0])
    V = np.zeros((theta.size, int(unstable.sum())))
    V[free] = vecs[:, unstable]
    return vals, V, -vals[unstable]


def _rule(g, v, eta: float, optimiser):
    """One step of the update rule on gradient ``g`` with velocity ``v``: ``(Δθ, v')``."""
    from shockflow.prediction.plateau import _update

    return _update(g, v, eta, optimiser)


def _rate(optimiser, n: int) -> float:
    rates = np.asarray(optimiser.learning_rates, dtype=np.float64)
    return float(rates[n] if n < rates.size else rates[-1])


def held_approach(loss: NetworkLoss, theta_s, theta_star, V, c, vc, start_step: float, optimiser, *,
                  distance: float, horizon: int):
    """The approach (module docstring, 4): ``(c, step it ends, how: "arrived"/"linear"/"horizon", the held iterate
    then)``."""
    L_star = loss.loss_grad(theta_star)[0]
    theta = theta_s - V @ (V.T @ (theta_s - theta_star))
    L0, g = loss.loss_grad(theta)
    gap = L0 - L_star
    v, value = np.zeros_like(theta), L0
    n = int(math.ceil(start_step))
    while True:
        if float(np.linalg.norm(c)) >= distance:
            return c, float(n), "linear", theta
        if gap <= 0 or value - L_star <= ARRIVAL * gap:
            return c, float(n), "arrived", theta
        if n >= horizon:
            return c, float(n), "horizon", theta
        eta = _rate(optimiser, n)
        g_held = g - V @ (V.T @ g)
        step, v = _rule(g_held, v, eta, optimiser)
        dc, vc = _rule(V.T @ g + V.T @ loss.hv(theta, V @ c), vc, eta, optimiser)
        theta, c = theta + step, c + dc
        value, g = loss.loss_grad(theta)
        if not math.isfinite(value):
            raise SaddlePlateauError(f"the approach to the chain's last saddle diverged at step {n + 1} (learning "
                                     f"rate {eta:.3g})")
        n += 1


def _line_scale(loss: NetworkLoss, theta, L_star: float, u) -> tuple[float, float]:
    """The distance along ``θ* + s u`` at which the loss has fallen half way to its first minimum along it (the
    quadratic top's size), and that minimum's distance (``plateau.line_scale`` for any network)."""
    reach = max(1.0, float(np.linalg.norm(theta)))
    for _ in range(8):
        s = np.linspace(0.0, reach, 257)
        L = loss.along(theta, u, s)
        interior = np.flatnonzero((L[1:-1] <= L[:-2]) & (L[1:-1] <= L[2:])) + 1
        if interior.size and L[interior[0]] < L_star:
            j = int(interior[0])
            half = L_star - 0.5 * (L_star - float(L[j]))
            return float(s[int(np.flatnonzero(L[: j + 1] <= half)[0])]), float(s[j])
        reach *= 4.0
    raise SaddlePlateauError("the escape from the chain's last saddle: the loss falls without a minimum along its "
                             f"unstable direction up to the distance {reach:.3g}")


def saddle_escape(model, theta_s, start_step: float, optimiser, X, y, *, frozen=()) -> SaddleEscape | None:
    """The chain's last saddle next to ``theta_s`` (the block saddle, reached at ``start_step``) and its approach
    (module docstring, 1–4).  None where there is no stationary point next to it or it has no unstable direction."""
    optimiser._check()
    loss = NetworkLoss(model, X, y, tuple(frozen))
    theta_s = np.asarray(theta_s, dtype=np.float64)
    # three conditions, the cheapest first (the search gives up within PROGRESS_ITERATIONS where the loss goes on
    # falling; a Hessian's lowest eigenpairs cost 150-500 Hessian-vector products)
    theta_star, residual = stationary_point(loss, theta_s)
    if not residual <= STATIONARY:
        return None
    vals, V, kappas = negative_curvature(loss, theta_star)
    if V.shape[1] == 0:
        return None
    if residual > 0.0 and negative_curvature(loss, theta_s)[1].shape[1] == 0:
        return None   # no unstable direction at the chain's saddle itself
    c0 = V.T @ (model.parameter_vector() - theta_star)
    c, vc = V.T @ (theta_s - theta_star), np.zeros(V.shape[1])
    d_arrive = float(np.linalg.norm(c))
    if d_arrive == 0.0:
        return None
    L_star = loss.loss_grad(theta_star)[0]
    lead = V @ c
    u = lead / np.linalg.norm(lead)
    top, line_min = _line_scale(loss, theta_star, L_star, u)
    if not d_arrive < top:
        return None   # the chain's saddle lies past θ*'s quadratic top along V: the network does not wait at θ*
    horizon = int(np.asarray(optimiser.learning_rates).size)
    c, end, ended, through = held_approach(loss, theta_s, theta_star, V, c, vc, start_step, optimiser,
                                           distance=LINEAR_FRACTION * top, horizon=horizon)
    u = V @ c / np.linalg.norm(V @ c)   # the grown direction at the approach's end: the chart's
    _, line_min = _line_scale(loss, through, loss.loss_grad(through)[0], u)
    return SaddleEscape(theta=theta_star, loss=L_star, start=theta_s, start_loss=loss.loss_grad(theta_s)[0],
                        start_step=float(start_step), residual=residual, eigenvalues=vals, rates=kappas, basis=V,
                        d_init=float(np.linalg.norm(c0)), d_arrive=d_arrive, direction=u,
                        d_start=float(np.linalg.norm(c)), end_step=end, ended=ended, top=top, line_minimum=line_min,
                        through=through)


def saddle_extraction(model, escape: SaddleEscape, X, y, **extract_kwargs):
    """The chart through ``θ*`` along ``u`` (module docstring, 5; :class:`~shockflow.geometry.saddle.SaddleGeometry`), extracted like any chart
    from a network at ``θ* + d_start u`` (its start on the chart: ``x0 = d_start``, the ridge at 0)."""
    from shockflow.prediction.extraction import extract

    through = escape.theta if escape.through is None else escape.through
    start = model.copy()
    start.set_parameter_vector(through + escape.d_start * escape.direction)
    kwargs = {"directions": escape.direction[None, :], "origin": through, "centre": escape.theta,
              "basis": escape.basis.T, "extent": 1.5 * max(escape.line_minimum, escape.d_start)}
    extraction = extract(start, SaddleGeometry.name, X, y, geometry_kwargs=kwargs, charts=(None,), **extract_kwargs)
    chart = replace(extraction.charts[0], label=LABEL, geometry_kwargs=dict(kwargs))
    return chart


def saddle_transition(escape: SaddleEscape, shock, optimiser, saddle: int):
    """The chart's predicted transition: the usual exit (:func:`shockflow.prediction.mapping.predict_chart`) from the
    approach's end, at the rates from that step on, plus that step; :class:`~shockflow.prediction.mapping.
    InvalidPrediction` where the chart gives none."""
    from shockflow.prediction.mapping import Optimiser, predict_chart

    rates = np.asarray(optimiser.learning_rates, dtype=np.float64)
    n0 = int(escape.end_step)
    later = rates[n0:] if n0 < rates.size else rates[-1:]
    p = predict_chart(shock, Optimiser(later, optimiser.name, optimiser.momentum))
    eff = optimiser.effective_rates()
    t0 = float(np.sum(eff[:n0])) + max(0, n0 - eff.size) * float(eff[-1])
    return replace(p, step=float(n0 + p.step), flow_step=float(n0 + p.flow_step), time=t0 + p.time, saddle=int(saddle))
