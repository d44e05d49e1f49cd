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
   ``PROGRESS`` within ``PROGRESS_ITERATIONS``, or whose rate over the latter half of its iterations would not bring
   it there in the iterations left (:func:`_stalled`), finds no saddle: nothing is charted (measured at 50 iterations:
   0.027 and 0.021 on the two second stages below, 0.15 on ``deep-mlp-tanh`` and 0.26 on ``mlp-tanh-teacher``,
   whose losses go on falling from their last saddles; 3000 iterations left those at 0.007 and 0.013, in 37 and
   260 s at load 3).  Where the search stops above ``STATIONARY`` on a network of at most ``POLISH_DENSE`` free
   parameters, Newton's steps on ``∇L = 0`` (Levenberg–Marquardt on the dense Hessian, :func:`_newton_polish`)
   continue from its best point: L-BFGS on ``½|∇L|²`` squares the Hessian's condition number and stalls where a saddle's curvatures
   differ by orders of magnitude (``committee-tanh-readout`` at seeds 3, 5, 6, 7 and at seed 11 on 2048 samples:
   0.0091–0.1 after 600 iterations; Newton's steps reach the bound at each).  Nor is a chain's saddle without
   negative curvature of its own (checked last: the search's
   give-up costs 210 gradients on ``mlp-tanh-teacher``, the Hessian's eigenpairs at its saddle 830).
2. **The unstable directions**: the lowest eigenpairs of the Hessian at ``θ*`` on the free parameters (dense up to
   ``DENSE`` parameters, else Lanczos on at most ``LANCZOS_PRODUCTS`` Hessian–vector products per parameter);
   unstable below ``−NEGATIVE_FLOOR`` of the largest ``|λ|``, and the escape's are those with rates ``κ_j = −λ_j`` at least ``FAST`` of the fastest (a degenerate group
   of the units' permutations: 4 at 0.097–0.112 on ``committee-tanh-readout``, then a gap to 0.033; 6 at 0.062–0.094
   on ``mlp-tanh-nonlinear-teacher``, then 0.025): they span ``V``.  None: ``θ*`` is a minimum, no later transition.
3. **The arrival**: the chain reaches ``θ_S`` at its last escape's step, and the perturbation it carries there is
   ``θ_S``'s own component on ``V``, ``c = Vᵀ(θ_S − θ*)``: the charts' sections split each mode over the units as the
   initial weights split it, so ``θ_S`` holds the units' initial differences as the escape from the origin scaled
   them (measured against the runs' snapshots on ``V``: the direction within 2–14° at the arrival, the size 2–3x the
   run's, the open point: in the run the large units saturate and the shares even out).  A chain's saddle whose
   component is not below the quadratic top's size along ``u = Vc/|c|`` (the distance at which the loss along
   ``θ* + s u`` has fallen half way to its first minimum) is not on ``θ*``'s plateau: the network does not wait at
   ``θ*``, it has already passed its escape, and nothing is charted (``attention-qk-4x2``: its chain's saddle sits 2.2
   tops out along ``V``, 0.61 against the line's minimum at 0.55; the two second stages below: 0.05 and 0.09 tops).
   Charted there, that direction's strength crossed half way at step 1215.5 beside the second mode's own at 1207.7:
   one escape counted twice, the chart abstaining and its "transition" a miss.
4. **The escape** (:func:`follow_escape`): the optimiser's own update rule on the real loss (full batch) from
   ``θ_S`` at that step, from rest; its distance ``x_n = |Vᵀ(θ_n − θ*)|`` is recorded.  Once ``x_n`` passes the first
   minimum of the loss along ``θ* + s u`` (the network has left the saddle) the **learned end** ``θ_end`` is the
   minimum L-BFGS finds from the iterate, and the prediction is the step ``x_n`` crosses half way from the initial
   parameters' distance ``d_init`` to ``|Vᵀ(θ_end − θ*)|`` (interpolated between the steps around it): the chart's
   parameter truth reads the same distance half way from its start to its end.  A run that ends first: the rest at
   the saddle's fastest rate (the linearised gain per step) from the last iterate to half way towards the line's
   minimum, beyond the horizon.  Why not the line's own exit: its first minimum lies at 0.69 on
   ``mlp-tanh-nonlinear-teacher`` against the run's final 1.61 (the path curves on to the specialised minimum), so
   the exit half way to it read the half-learned point 20 % early; L-BFGS from the escape's iterate finds
   1.588 / 1.681 / 1.505 against the runs' 1.606 / 1.659 / 1.578 (seeds 0-2), 1.3747 / 0.9643 / 1.3762 against
   1.3746 / 0.9641 / 1.3764 on ``committee-tanh-readout``; from the line's minimum point itself it found another
   minimum at seed 1 (1.339).  Nor the earlier approach, the flow with ``V`` held and ``c`` carried by the rule
   linearised on ``V`` alone: it grew ``c`` at 0.5–0.75 of the run's rate (committee seed 2: 0.027 a step against
   0.045); carried as a full vector with the full Hessian it grows at 0.043 and gives the unheld rule's steps to one
   step in six runs, at three times the cost.
   **The plateau in stretches** (:class:`QuadraticModel`).  That last observation is what makes a long plateau cheap:
   near ``θ*`` the gradient is ``g* + H (θ − θ*)`` to first order (``H`` the dense Hessian the unstable directions
   came from, ``g*`` the search's residual), and the update rule on it, in ``H``'s eigenbasis, costs ``O(P)`` a step.
   Where the real gradient's part on ``V`` agrees with the model's to ``LINEAR_TOLERANCE`` (asked every
   ``MIN_STRETCH`` steps), the rule runs on the model up to the linear region's end or the horizon, and the real
   gradient at the stretch's end must agree there too, else the stretch is halved; the distances of its steps are
   recorded as the real steps' are.  The rest (the approach, where the stable directions relax from ``θ_S``, and
   everything past the linear region) is the rule on the network.  Measured: an attention head (d_model 4, 2048
   sequences) still on the plateau at its horizon, 2552 → 130 gradients, the step past the run 14230.30 → 14230.25;
   two heads on 6 tokens, the distance at the linear region's end (step 588) 0.07680 against 0.07701 on the network
   at every step, the predicted step 852.3 → 860.2 (the truth 878): the learned end that L-BFGS finds from the
   iterate moves 1.129 → 1.169 for that 2e-4 in the start (a flat valley, the exit's own uncertainty:
   ``LEARNED_ITERATIONS``' note).  Committee and nonlinear-teacher escapes (shorter plateaus): the
   same steps to 0.1.
5. **The chart**: one chart along the grown direction ``u = V c/|c|`` through ``θ_h``, the escape's iterate where
   ``|c|`` first reaches ``LINEAR_FRACTION`` of the quadratic top's size, its component on ``V`` removed
   (:class:`shockflow.geometry.saddle.SaddleGeometry`: the ``flat`` line ``θ_h + x u``, its start at ``x0 = |c|``; its
   strength the distance from ``θ*`` in the span of ``V``).  Extracted and solved like any chart, its γ* reported
   with the transition (method ``"update_rule"``, :func:`saddle_transition`); the step is the escape's.  The run's
   distance from ``θ*`` in the span of ``V``, ``|Vᵀ(θ − θ*)|``, is what the chart's parameter truth reads (the units'
   differentiation, half way from its start to its end): a saddle's unstable directions come in degenerate groups
   (the units' permutations act on them), so the run may leave along another direction of the group than ``u``
   (``committee-tanh-readout`` seed 2: the run's coordinate along the earlier approach's ``u`` stays below 0.04 in size
   while its distance reaches 0.94).

Measured (2 cores, load 0.5-1; seeds 0, 1, 2, against the chart's truth): ``committee-tanh-readout`` 163.0 / 99.0 /
134.0 for 165.7 / 110.9 / 145.4 (−1.6, −10.8, −7.8 %; before the learned end −3.0, −14.6, +10.7 %),
``mlp-tanh-nonlinear-teacher`` 376.2 / 408.8 / 390.2 for 453.8 / 442.0 / 435.7 (−17.1, −7.5, −10.4 %; before −20.6,
−21.9, −21.2 %): every case 2/2, medians 2.7 / 7.2 / 6.2 % and 9.8 / 5.0 / 6.4 %, early at every seed (the
arrival, step 3).  Past the linear region the rule is the iteration training performs (as
:mod:`shockflow.prediction.plateau`'s descent), so these figures test the arrival and the learned end.  Before this
chart both second stages were misses (recall 1/2, median 51–52 %).  Cases whose last saddle is a minimum or has no
stationary point next to it (``two-layer-staircase``, ``mlp-tanh-teacher``, ``deep-mlp-tanh``) get no chart.
Limits: one later saddle (the chain's last) and its first exit; a stationary point that L-BFGS on ``½|∇L|²`` does
not reach is not charted; the escape is followed on the full batch (minibatch noise is not in it); its cost is one
gradient a step from the chain's last escape to the exit (forecast and run alike) but for the plateau's stretches
run on the first-order model (networks of at most ``DENSE`` free parameters, whose Hessian is dense).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from shockflow.geometry.saddle import SaddleGeometry

__all__ = ["FollowedEscape", "NetworkLoss", "QuadraticModel", "SaddleEscape", "SaddlePlateauError", "dense_hessian",
           "follow_escape", "negative_curvature", "saddle_escape", "saddle_extraction", "saddle_transition", "stationary_point"]

#: the stationary-point search succeeds where |∇L| falls below this fraction of its value at the chain's saddle
STATIONARY = 5e-3
#: at most this many L-BFGS iterations of that search
STATIONARY_ITERATIONS = 600
#: ... given up where |∇L| is not below PROGRESS of its start after PROGRESS_ITERATIONS
PROGRESS, PROGRESS_ITERATIONS = 5e-2, 50
#: Newton (Levenberg–Marquardt) steps on ∇L = 0 after a search that stopped above STATIONARY spend at most the
#: gradients of this many dense Hessians (P + 1 each); they stop at the bound, where the search would have
POLISH_STEPS = 20
#: Newton's steps (``_newton_polish``) are taken on networks of at most this many free parameters (a dense Hessian:
#: one gradient a column)
POLISH_DENSE = 400
#: up to this many free parameters the Hessian's eigenpairs are those of the dense Hessian (p Hessian–vector
#: products and one ``eigh``: about 1 s at 440 parameters on 2048 samples), else Lanczos.  A saddle's Hessian often
#: has a cluster of (near-)zero eigenvalues next to its lowest (a linear net's hidden rotations), where Lanczos converges slowly or not
#: at all: on a 16 → 20 → 6 linear net (440 parameters) it took 49 334 products, 35 s, and did not converge
DENSE = 2000
#: Lanczos (above DENSE) is given at most this many Hessian–vector products per free parameter (the dense path: 1)
LANCZOS_PRODUCTS = 4
#: lowest eigenpairs computed by Lanczos
EIGENPAIRS = 8
#: an eigenvalue is unstable below −this × the largest |eigenvalue| (finite-difference round-off, flat directions)
NEGATIVE_FLOOR = 1e-2
#: the escape's directions are the unstable ones whose rate is at least this fraction of the fastest
FAST = 0.5
#: the linear region of the escape ends where its distance reaches this fraction of the quadratic top's size
LINEAR_FRACTION = 0.3
#: the escape runs the update rule on the gradient's first-order model about θ* (instead of the network) over stretches
#: at whose both ends the real gradient agrees with the model's on V to this relative tolerance: the growth rate on V
#: is then right to about this fraction, and so the steps of the stretch
LINEAR_TOLERANCE = 1e-3
#: ... stretches of at least this many steps (each costs one real gradient to check), tried at most once this often
MIN_STRETCH = 16
#: at most this many L-BFGS iterations for the learned end, at scipy's default tolerances (measured: 40-96 on the
#: second stages; the nonlinear teacher's minimum is a flat valley, 8 units on 3 teacher directions, along which
#: 1000 iterations at gtol 1e-12 move its distance by 0.5-2 % more, at ten times the cost)
LEARNED_ITERATIONS = 1000
#: the label of the chart
LABEL = "saddle"


class SaddlePlateauError(RuntimeError):
    """The chain's last saddle could not be followed (names the stage and why): its chart abstains with it."""


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
    direction: np.ndarray        # u, the grown direction where the escape leaves the linear region (unit, full)
    d_start: float               # |Vᵀ(θ_n − θ*)| there: the chart's x0
    end_step: float              # the step it leaves the linear region (absolute)
    ended: str                   # "exit" (the half-learned distance crossed within the run) or "horizon"
    top: float                   # the quadratic top's size along the arrival's direction
    line_minimum: float          # the first minimum of the loss along θ_h + s u
    through: np.ndarray = None   # θ_h: θ_n outside the span of V, the chart's line passes through it
    learned: float = math.nan    # |Vᵀ(θ_end − θ*)|, the learned end's distance
    exit: float = math.nan       # the half-learned distance ½(d_init + learned)
    exit_step: float = math.nan  # the step the escape crosses it: the prediction

    def as_dict(self) -> dict:
        return {"loss": self.loss, "start_loss": self.start_loss, "start_step": self.start_step,
                "residual": self.residual, "eigenvalues": self.eigenvalues.tolist(), "rates": self.rates.tolist(),
                "d_init": self.d_init, "d_arrive": self.d_arrive, "d_start": self.d_start,
                "end_step": self.end_step, "ended": self.ended, "top": self.top, "line_minimum": self.line_minimum,
                "learned": self.learned, "exit": self.exit, "exit_step": self.exit_step}


def stationary_point(loss: NetworkLoss, theta_s):
    """``(θ*, |∇L(θ*)|/|∇L(θ_S)|)``: L-BFGS on ``½|∇L|²`` from ``θ_S`` (module docstring, 1), stopped at ``STATIONARY``
    or after ``STATIONARY_ITERATIONS``, or given up (residual inf) where it has not reached ``PROGRESS`` after
    ``PROGRESS_ITERATIONS``: no stationary point next to the chain's saddle (the loss goes on falling there)."""
    from scipy.optimize import minimize

    g0 = float(np.linalg.norm(loss.grad(theta_s)))
    if g0 == 0.0:
        return np.array(theta_s, dtype=np.float64), 0.0
    seen = {"n": 0, "best": np.array(theta_s, dtype=np.float64), "res": 1.0}
    history = []   # the best residual after each iteration

    def fun(theta):
        g = loss.grad(theta)
        return 0.5 * float(g @ g), loss.hv(theta, g)

    def check(theta):
        seen["n"] += 1
        res = float(np.linalg.norm(loss.grad(theta))) / g0
        if res < seen["res"]:
            seen["best"], seen["res"] = np.array(theta), res
        history.append(seen["res"])
        if res <= STATIONARY or (seen["n"] >= PROGRESS_ITERATIONS and seen["res"] > PROGRESS) or _stalled(history):
            raise StopIteration

    try:
        minimize(fun, np.asarray(theta_s, dtype=np.float64), jac=True, method="L-BFGS-B", callback=check,
                 options={"maxiter": STATIONARY_ITERATIONS, "ftol": 1e-30, "gtol": 1e-14 * g0})
    except StopIteration:
        pass
    if not np.all(np.isfinite(seen["best"])):
        raise SaddlePlateauError("the stationary point next to the chain's last saddle: the search diverged")
    if STATIONARY < seen["res"] and int(loss.free.sum()) <= POLISH_DENSE:
        theta, res = _newton_polish(loss, seen["best"], g0)
        if res < seen["res"]:
            return theta, res
    return seen["best"], seen["res"]


def _stalled(history) -> bool:
    """Whether, at the rate of the latter half of the iterations so far, the search's iterations left would not bring
    the residual (``history``: the best after each iteration) to ``STATIONARY``: asked from ``PROGRESS_ITERATIONS`` on.
    The rate of the latter half, not of the whole search: L-BFGS on ``½|∇L|²`` falls fast at first and then creeps
    where the loss goes on falling or the curvatures are far apart (``cnn2d`` of 2 → 4 gelu channels on 6 × 6
    images: 0.19 of its first residual at 50 iterations, 0.11 at 200, 0.047 at 600 and the bound not reached, 2600
    gradients, 9 s against a training of 1.9 s); a search still converging is not stopped
    (``mlp-tanh-nonlinear-teacher``: 424 iterations, its rate over the latter half reaching the bound with room).
    Where the plateau has no exact stationary point the end point depends on the path: a committee of 4 tanh units on
    40 inputs (seed 2), whose gradient stays above 0.0038 of its start however far Newton's steps go, reached
    0.004998 by L-BFGS alone and now 0.0041 by Newton's steps from an earlier stop, at another point (the saddle's
    rate 0.1429 → 0.1389, the step 159.8 → 155.7 against a truth of 171–175)."""
    k = len(history)
    return k >= PROGRESS_ITERATIONS and _beyond_reach((k // 2, history[k // 2 - 1]), (k, history[-1]),
                                                      STATIONARY_ITERATIONS)


def _beyond_reach(before, now, budget: int) -> bool:
    """Whether the residual, at its rate from ``before`` to ``now`` (each ``(cost spent, residual)``), would not come
    down to ``STATIONARY`` in what is left of ``budget``: the search's and Newton's steps' one rule."""
    if before[0] == now[0]:
        return False
    rate = math.log(before[1] / now[1]) / (now[0] - before[0])
    return (budget - now[0]) * rate < math.log(now[1] / STATIONARY)


def _newton_polish(loss: NetworkLoss, theta, g0: float):
    """``(θ, |∇L(θ)|/g0)`` after Levenberg–Marquardt steps on ``∇L = 0`` from ``theta``, at most the gradients of
    ``POLISH_STEPS`` dense Hessians (free parameters): ``δ = −(H² + μ I)⁻¹ H ∇L``, ``μ`` halved after a step that
    lowers ``|∇L|`` and quadrupled (the step refused) after one that does not.  L-BFGS on ``½|∇L|²`` squares ``H``'s
    condition number and can stall short of the bound where a saddle's directions differ by orders of magnitude
    in curvature (``committee-tanh-readout --set data.n=2048 --seed 11``: 0.0091 after 600 iterations, the bound
    0.005); these steps continue there.

    ``H`` is the dense Hessian by forward differences (one gradient a column) where the polish starts, and after a
    step each later one is carried by the secant condition (Powell's symmetric Broyden update: the change of the
    gradient over the step, one gradient, not ``P``); a fresh dense Hessian is made only where a step on the carried
    one does not lower ``|∇L|``, and a refused step on a fresh one ends the polish.  They stop at the bound, or where
    the gradients left would not reach it at the rate of the latter half of those spent (a point where the loss goes
    on falling has no stationary point next to it: the search's verdict stands).  Measured, a dense Hessian at every
    step against the secant updates: ``deep-mlp-tanh`` (no stationary point) crept 0.15 → 0.017 in 4077 gradients
    (1.5 s), now given up at 0.048 after 1578; ``cnn2d-images`` stopped at 0.0074 after 704, now reaches the bound
    after 394 (its saddle has nothing to chart: the same forecast); the steps of the specialisations charted after a
    polish move by 0.1–0.5 (``committee-tanh-readout`` seeds 7, 11)."""
    free = np.flatnonzero(loss.free)
    theta = np.array(theta, dtype=np.float64)
    g = loss.grad(theta)[free]
    res = float(np.linalg.norm(g)) / g0
    budget = POLISH_STEPS * (free.size + 1)
    spent, mu, H, fresh, refused = 0, None, None, False, 0
    history = [(0, res)]   # (gradients spent, residual) after each accepted step
    while res > STATIONARY and spent < budget:
        if H is None:
            H, fresh, refused = _forward_hessian(loss, theta, g, free), True, 0
            spent += free.size
        lam, Q = np.linalg.eigh(H)
        if mu is None:
            mu = 1e-6 * float(np.max(lam ** 2))
        b = Q.T @ g
        trial = theta.copy()
        trial[free] -= Q @ (lam * b / (lam ** 2 + mu))
        g_trial = loss.grad(trial)[free]
        spent += 1
        res_trial = float(np.linalg.norm(g_trial)) / g0
        if not (np.isfinite(res_trial) and res_trial < res):
            mu *= 4.0
            if not fresh:
                H = None       # the carried Hessian's step failed: a fresh one
                continue
            refused += 1
            if refused == 8:
                break          # eight refusals on a fresh Hessian, μ raised each time: no step lowers |∇L| here
            continue
        s_step = trial[free] - theta[free]
        H = _secant_update(H, s_step, g_trial - g)
        theta, g, res, mu, fresh = trial, g_trial, res_trial, 0.5 * mu, False
        history.append((spent, res))
        if res > STATIONARY and _beyond_reach(history[(len(history) - 1) // 2], history[-1], budget):
            break
    return theta, res


def _forward_hessian(loss: NetworkLoss, theta, g, free) -> np.ndarray:
    """The Hessian on the free parameters by forward differences of the gradient ``g`` at ``theta`` (one gradient a
    column, half of ``hv``'s central ones: a step is accepted only where it lowers ``|∇L|``, so the Hessian need not be
    accurate to the last digits), symmetrised."""
    h = 1e-6 * max(1.0, float(np.linalg.norm(theta)))
    H = np.empty((free.size, free.size))
    for i in range(free.size):
        point = theta.copy()
        point[free[i]] += h
        H[:, i] = (loss.grad(point)[free] - g) / h
    return 0.5 * (H + H.T)


def _secant_update(H, s, y) -> np.ndarray:
    """Powell's symmetric Broyden update: the symmetric ``H'`` nearest ``H`` (Frobenius) with ``H' s = y``."""
    ss = float(s @ s)
    if ss == 0.0:
        return H
    r = y - H @ s
    return H + (np.outer(r, s) + np.outer(s, r)) / ss - (float(r @ s) / ss ** 2) * np.outer(s, s)


def _hv_free(loss: NetworkLoss, theta, free):
    def hv_free(v):
        full = np.zeros_like(theta)
        full[free] = np.asarray(v).reshape(-1)
        return loss.hv(theta, full)[free]

    return hv_free


def dense_hessian(loss: NetworkLoss, theta) -> np.ndarray:
    """The Hessian at ``theta`` on the free parameters, symmetrised: one Hessian–vector product a column."""
    free = np.flatnonzero(loss.free)
    hv_free = _hv_free(loss, theta, free)
    H = np.column_stack([hv_free(e) for e in np.eye(free.size)])
    return 0.5 * (H + H.T)


def negative_curvature(loss: NetworkLoss, theta, eigen: tuple | None = None):
    """``(lowest eigenvalues, V, rates)``: the Hessian at ``theta`` on the free parameters (module docstring, 2);
    ``V`` the eigenvectors below ``−NEGATIVE_FLOOR`` of the largest ``|λ|`` (full vectors), ``rates = −λ`` there.
    ``eigen``: the eigenpairs of :func:`dense_hessian` at ``theta`` (``numpy.linalg.eigh``), where the caller has them."""
    free = np.flatnonzero(loss.free)
    hv_free = _hv_free(loss, theta, free)

    if eigen is not None or free.size <= DENSE:
        vals, vecs = eigen if eigen is not None else np.linalg.eigh(dense_hessian(loss, theta))
        scale = float(np.max(np.abs(vals)))
        vals, vecs = vals[:EIGENPAIRS], vecs[:, :EIGENPAIRS]
    else:
        from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

        op = LinearOperator((free.size, free.size), matvec=hv_free, dtype=np.float64)
        try:
            ncv = max(2 * EIGENPAIRS + 1, 20)   # eigsh's default; an iteration takes about ncv − k products
            vals, vecs = eigsh(op, k=EIGENPAIRS, which="SA", v0=np.random.default_rng(0).standard_normal(free.size),
                               tol=1e-8, ncv=ncv, maxiter=max(LANCZOS_PRODUCTS * free.size // (ncv - EIGENPAIRS), 10))
            scale = float(abs(eigsh(op, k=1, which="LM", tol=1e-4, return_eigenvectors=False)[0]))
        except ArpackNoConvergence as exc:   # a cluster of (near-)zero eigenvalues: a linear net's rotations
            raise SaddlePlateauError(f"the Hessian's lowest eigenpairs at the chain's last saddle ({free.size} free "
                                     f"parameters, Lanczos): {exc}") from None
        order = np.argsort(vals)
        vals, vecs = vals[order], vecs[:, order]
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


@dataclass(frozen=True, eq=False)
class FollowedEscape:
    """The escape from the chain's saddle under the update rule (module docstring, 4–5)."""

    linear_step: float          # the first step whose distance |Vᵀ(θ_n − θ*)| reaches the linear region's end
    linear_point: np.ndarray    # θ_n then (the chart's line passes through its part outside the span of V)
    learned: float              # the distance of the learned end θ_end (nan: not reached within the horizon)
    exit: float                 # the half-learned distance, ½(d_init + learned)
    exit_step: float            # the step the iterate's distance crosses it (interpolated; past the horizon: the
                                # saddle's linear growth from the last iterate)
    ended: str                  # "exit" or "horizon"


def _learned_end(loss: NetworkLoss, theta) -> np.ndarray:
    """The minimum the escape goes to: L-BFGS on the real loss from the escape's iterate ``theta``."""
    from scipy.optimize import minimize

    res = minimize(loss.loss_grad, np.asarray(theta, dtype=np.float64), jac=True, method="L-BFGS-B",
                   options={"maxiter": LEARNED_ITERATIONS})
    if not np.all(np.isfinite(res.x)):
        raise SaddlePlateauError("the learned end of the escape from the chain's last saddle: the search diverged")
    return res.x


class QuadraticModel:
    """The gradient about the stationary point ``θ*`` to first order, ``∇L(θ) ≈ g* + H (θ − θ*)`` on the free
    parameters (``g* = ∇L(θ*)``, the search's residual), and the update rule run on it (module docstring, 4: the
    plateau in one stretch).  Held in ``H``'s eigenbasis, where a step of the rule costs ``O(P)`` instead of a pass
    over the data."""

    def __init__(self, loss: NetworkLoss, theta_star, eigen: tuple, V):
        """``eigen``: the eigenpairs ``(λ, Q)`` of the dense Hessian at ``θ*`` on the free parameters."""
        self.free = np.flatnonzero(loss.free)
        self.theta_star = np.asarray(theta_star, dtype=np.float64)
        self.lam, self.Q = eigen
        self.b = self.Q.T @ loss.grad(self.theta_star)[self.free]
        self.W = V[self.free].T @ self.Q          # the distance on V from the eigen-coordinates: |W z|
        self.V = V

    def gradient(self, theta) -> np.ndarray:
        z = self.Q.T @ (np.asarray(theta)[self.free] - self.theta_star[self.free])
        g = np.zeros_like(self.theta_star)
        g[self.free] = self.Q @ (self.b + self.lam * z)
        return g

    def discrepancy(self, theta, g) -> float:
        """How far the real gradient ``g`` at ``theta`` is from the model's on ``V``, relative: the part that grows
        the escape's distance, which the prediction reads.  (Not the whole vector: on the plateau the gradient's other
        parts are as small as the search's residual ``g*`` (``attention`` d_model 4: 2e-6 against 2.6e-6), which
        fixes the model only to about its own size there, while the part on ``V`` agrees to 1e-5.)"""
        e = g - self.gradient(theta)
        return float(np.linalg.norm(self.V.T @ e)) / max(float(np.linalg.norm(self.V.T @ g)), 1e-300)

    def run(self, theta, v, n: int, steps: int, optimiser, stop: float):
        """The update rule on the model from ``(θ, v)`` at step ``n`` for at most ``steps`` steps, ended before the
        first whose distance on ``V`` reaches ``stop``: ``(the distances after each step, θ, v)``."""
        f = self.free
        z = self.Q.T @ (np.asarray(theta)[f] - self.theta_star[f])
        w = self.Q.T @ np.asarray(v)[f]
        xs = []
        for j in range(steps):
            delta, w_next = _rule(self.b + self.lam * z, w, _rate(optimiser, n + j), optimiser)   # (linear in g, v)
            z_next = z + delta
            x = float(np.linalg.norm(self.W @ z_next))
            if x >= stop:
                break
            z, w = z_next, w_next
            xs.append(x)
        theta_k, v_k = np.array(theta, dtype=np.float64), np.array(v, dtype=np.float64)
        theta_k[f] = self.theta_star[f] + self.Q @ z
        v_k[f] = self.Q @ w
        return xs, theta_k, v_k


def follow_escape(loss: NetworkLoss, theta_s, theta_star, V, start_step: float, optimiser, *, linear_end: float,
                  reach: float, d_init: float, rate: float, horizon: int,
                  model: QuadraticModel | None = None) -> FollowedEscape:
    """The escape (module docstring, 4): the optimiser's update rule on the real loss from ``θ_S`` at ``start_step``
    (from rest), its distance ``x_n = |Vᵀ(θ_n − θ*)|`` recorded; past ``reach`` (the first minimum of the loss along the
    arrival's direction) the learned end by L-BFGS from the iterate, and the step ``x_n`` crosses half way from
    ``d_init`` to it.  At the horizon first: the rest at the saddle's fastest ``rate`` (linear growth from the last
    iterate to the exit, the learned end taken at ``reach`` where it is not known).

    ``model`` (the gradient to first order about ``θ*``): where the real gradient agrees with it to
    ``LINEAR_TOLERANCE`` (asked every ``MIN_STRETCH`` steps), the rule runs on the model up to the linear region's
    end (or the horizon) and the real gradient at the stretch's end must agree with the model's there too, else the
    stretch is halved (down to ``MIN_STRETCH`` steps): each step of an accepted stretch costs ``O(P)``, not a
    gradient; its distances are recorded as the real steps' are."""
    from shockflow.prediction.mapping import Optimiser

    theta = np.array(theta_s, dtype=np.float64)
    v = np.zeros_like(theta)
    value, g = loss.loss_grad(theta)
    n = int(math.ceil(start_step))
    xs, linear, learned, exit_ = [], None, math.nan, math.nan
    next_try = n
    while True:
        x = float(np.linalg.norm(V.T @ (theta - theta_star)))
        xs.append(x)
        if model is not None and n >= next_try and linear is None and n < horizon:
            next_try = n + MIN_STRETCH
            if model.discrepancy(theta, g) <= LINEAR_TOLERANCE:
                stretch = _modelled_stretch(loss, model, theta, v, n, horizon - n, optimiser, linear_end)
                if stretch is not None:
                    path, theta, v, value, g = stretch
                    xs.extend(path[:-1])        # the last is the stretch's end, recorded as the loop's next step
                    n += len(path)
                    next_try = n
                    continue
        if linear is None and x >= linear_end:
            linear = (float(n), theta.copy())
        if math.isnan(learned) and x >= reach:
            learned = float(np.linalg.norm(V.T @ (_learned_end(loss, theta) - theta_star)))
            exit_ = 0.5 * (d_init + learned)
        if n >= horizon and math.isnan(exit_):
            exit_ = 0.5 * (d_init + reach)   # the learned end not reached: half way towards the line's minimum
        if x >= exit_:
            # the first recorded crossing (the exit may lie below distances already passed)
            j = next(i for i, xi in enumerate(xs) if xi >= exit_)
            first = n - (len(xs) - 1)
            step = float(first + j) if j == 0 else float(first + j - 1 + (exit_ - xs[j - 1]) / (xs[j] - xs[j - 1]))
            ended = "exit"
            break
        if n >= horizon:
            rates = np.asarray(optimiser.learning_rates, dtype=np.float64)
            later = Optimiser(rates[-1:], optimiser.name, optimiser.momentum)
            rest = later.steps_for_growth(math.log(exit_ / x), 1.0 / rate) if x > 0 else math.inf
            step, ended = float(n) + rest, "horizon"
            break
        eta = _rate(optimiser, n)
        delta, v = _rule(g, v, eta, optimiser)
        theta = theta + delta
        value, g = loss.loss_grad(theta)
        if not math.isfinite(value):
            raise SaddlePlateauError(f"the escape from the chain's last saddle diverged at step {n + 1} (learning "
                                     f"rate {eta:.3g})")
        n += 1
    if linear is None:
        linear = (float(n), theta.copy())
    return FollowedEscape(linear[0], linear[1], learned, exit_, step, ended)


def _modelled_stretch(loss: NetworkLoss, model: QuadraticModel, theta, v, n: int, steps: int, optimiser,
                      stop: float):
    """The longest stretch of the update rule on ``model`` from step ``n`` (at most ``steps``, below the distance
    ``stop``, halved down to ``MIN_STRETCH``) at whose end the real gradient agrees with the model's to
    ``LINEAR_TOLERANCE``: ``(distances, θ, v, L, ∇L)`` there, or None."""
    while steps >= MIN_STRETCH:
        path, theta_k, v_k = model.run(theta, v, n, steps, optimiser, stop)
        if len(path) < MIN_STRETCH:
            return None
        value, g = loss.loss_grad(theta_k)
        if math.isfinite(value) and model.discrepancy(theta_k, g) <= LINEAR_TOLERANCE:
            return path, theta_k, v_k, value, g
        steps = len(path) // 2
    return None


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


def saddle_escape(model, theta_s, start_step: float, optimiser, X, y, *, frozen=(), why=None) -> SaddleEscape | None:
    """The chain's last saddle next to ``theta_s`` (the block saddle, reached at ``start_step``) and its approach
    (module docstring, 1–4).  None where it has no unstable direction (a minimum: no later transition), the reason
    appended to the list ``why`` if one is given; a :class:`SaddlePlateauError` where no stationary point is found
    next to it (undecided: the caller abstains)."""
    why = [] if why is None else why
    optimiser._check()
    loss = NetworkLoss(model, X, y, tuple(frozen))
    theta_s = np.asarray(theta_s, dtype=np.float64)
    # three conditions, the cheapest first (the search gives up within PROGRESS_ITERATIONS where the loss goes on
    # falling; a Hessian's lowest eigenpairs cost 150-500 Hessian-vector products)
    theta_star, residual = stationary_point(loss, theta_s)
    if not residual <= STATIONARY:
        # undecided, not "no transition": the loss may go on falling from there, or the search missed a saddle; the
        # caller abstains with this reason (a true transition after it is then a miss of the score, and named)
        raise SaddlePlateauError(f"no stationary point next to it: the search for one (from that saddle, where the "
                                 f"network arrives at step {start_step:.0f}) brought the gradient's norm down to "
                                 f"{residual:.2g} of its value at the saddle, not to {STATIONARY:g} (the loss may go on "
                                 f"falling from it, or the search missed a saddle): a later transition from it has no "
                                 f"chart")
    eigen = np.linalg.eigh(dense_hessian(loss, theta_star)) if int(loss.free.sum()) <= DENSE else None
    vals, V, kappas = negative_curvature(loss, theta_star, eigen)
    if V.shape[1] == 0:
        why.append(f"the stationary point next to it (loss {loss.loss_grad(theta_star)[0]:.6g}, its gradient "
                   f"{residual:.2g} of the saddle's) has no unstable direction (lowest curvature {float(vals[0]):.3g}): "
                   f"a minimum, no later transition is predicted")
        return None
    if residual > 0.0 and negative_curvature(loss, theta_s)[1].shape[1] == 0:
        why.append("the chain's saddle itself has no unstable direction: no later transition is predicted")
        return None
    c0 = V.T @ (model.parameter_vector() - theta_star)
    c = V.T @ (theta_s - theta_star)
    d_arrive = float(np.linalg.norm(c))
    if d_arrive == 0.0:
        why.append("the network arrives with no component on the unstable directions of the stationary point next to "
                   "it: no later transition is predicted")
        return None
    L_star = loss.loss_grad(theta_star)[0]
    lead = V @ c
    u = lead / np.linalg.norm(lead)
    top, reach = _line_scale(loss, theta_star, L_star, u)
    if not d_arrive < top:   # the chain's saddle lies past θ*'s quadratic top along V: the network does not wait at θ*
        why.append(f"the network arrives {d_arrive:.3g} out along the unstable directions of the stationary point next "
                   f"to it, past their quadratic top ({top:.3g}): it does not wait there, no later transition from it "
                   f"is predicted")
        return None
    d_init = float(np.linalg.norm(c0))
    followed = follow_escape(loss, theta_s, theta_star, V, start_step, optimiser, linear_end=LINEAR_FRACTION * top,
                             reach=reach, d_init=d_init, rate=float(kappas.max()),
                             horizon=int(np.asarray(optimiser.learning_rates).size),
                             model=None if eigen is None else QuadraticModel(loss, theta_star, eigen, V))
    c = V.T @ (followed.linear_point - theta_star)
    through = followed.linear_point - V @ c
    u = V @ c / np.linalg.norm(V @ c)   # the grown direction where the linear region ends: the chart's
    _, line_min = _line_scale(loss, through, loss.loss_grad(through)[0], u)
    return SaddleEscape(theta=theta_star, loss=L_star, start=theta_s, start_loss=loss.loss_grad(theta_s)[0],
                        start_step=float(start_step), residual=residual, eigenvalues=vals, rates=kappas, basis=V,
                        d_init=d_init, d_arrive=d_arrive, direction=u, d_start=float(np.linalg.norm(c)),
                        end_step=followed.linear_step, ended=followed.ended, top=top, line_minimum=line_min,
                        through=through, learned=followed.learned, exit=followed.exit,
                        exit_step=followed.exit_step)


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
    """The predicted transition (module docstring, 5): the step the escape crosses its half-learned distance (method
    ``"update_rule"``), with the chart's γ* (its shock; ``inf`` where none formed) and the escape's distances;
    :class:`~shockflow.prediction.mapping.InvalidPrediction` where the escape never reaches it."""
    from shockflow.prediction.mapping import InvalidPrediction, PredictedTransition

    step = float(escape.exit_step)
    if not (math.isfinite(step) and step >= 0):
        raise InvalidPrediction(f"chart {LABEL}: the escape from the chain's last saddle does not grow towards its "
                                f"half-learned distance {escape.exit:.3g} (step {step})", figure=f"step {step}")
    eff = optimiser.effective_rates()
    cum = np.concatenate([[0.0], np.cumsum(eff)])

    def time_at(n: float) -> float:
        k = min(int(n), eff.size)
        return float(cum[k] + (n - k) * eff[min(k, eff.size - 1)])

    gamma = shock.gamma_star if shock.gamma_star > 0 else math.inf
    return PredictedTransition(
        chart=LABEL, step=step, flow_step=step, time=time_at(step), method="update_rule", gamma_star=gamma,
        critical_lr=gamma, location=shock.location, strength=shock.strength, d0=escape.d_arrive,
        d_exit=escape.exit, d_eff=escape.d_arrive, nu=shock.nu,
        escape_time=time_at(step) - time_at(escape.start_step), saddle=int(saddle))
