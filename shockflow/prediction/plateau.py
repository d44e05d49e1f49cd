"""Plateaus away from the origin: the symmetric plateau of a network and its escape (docs/theory.md §6).

A network whose loss is sloped at the origin of its free parameters (a soft committee machine with a
frozen readout: ``f ≈ a φ'(0) Σ_i w_i·x`` near zero weights) has no saddle there; its first plateau
is the **symmetric point** where every unit is the same.  Permutations of the units leave the loss
unchanged, so the subspace of parameters with all units equal is invariant under gradient flow: the
units' mean moves in it, and the differences between units obey the flow linearised about it.  The
model here ([model], ours):

1. **The plateau** ``θ_p``: the minimiser of the real loss over the shared unit parameters ``u``
   (every unit's free entries equal to ``u``, frozen ones at their values), by L-BFGS
   (``scipy.optimize``) with the network's own gradient (``∇_u L = Σ_i ∇_{θ_i} L``).
2. **The approach**: the optimiser's own update rule (rates, momentum) run in the symmetric
   subspace from the symmetric part of the initial parameters until the loss is within
   ``ARRIVAL`` of the way down to ``L(θ_p)``: ``reach_steps``.  Alongside it the initial parameters'
   symmetry-breaking part ``δ`` (each unit minus the units' mean) is carried by the same update rule
   linearised about the symmetric iterate (Hessian–vector products by central differences of the
   gradient), so ``δ`` arrives at the plateau grown or shrunk by the landscape it crossed.  An approach that
   makes no new lowest loss for ``STALL_STEPS`` steps stops: where its gradient is still large the update rule
   circles across the plateau (a learning rate at or above its stability limit there, ``2/λ`` for gradient descent
   with ``λ`` the largest curvature within the equal-units subspace; the run oscillates and escapes from the orbit,
   which this model does not follow): :class:`PlateauUnstable`, refused naming ``training.lr``.  Measured on a
   tester's committee (erf, K = 4, d = 40, lr 0.8 against the limit 0.798): 400 s into the old 200 000-step budget
   and a run failure, now 3 s and exit 2; at 0.79 it circles as well (a 2-cycle at loss 0.047), at 0.7 it arrives.
3. **The unstable directions**: the lowest eigenpairs of the Hessian at ``θ_p`` restricted to the
   symmetry-breaking directions (``P H P``, ``P`` the projector removing the units' mean from the
   free entries; Lanczos, ``scipy.sparse.linalg.eigsh``, on finite-difference Hessian–vector
   products).  Each negative eigenvalue ``λ_j`` is an escape rate ``κ_j = −λ_j``; the arrived ``δ``
   has component ``c_j`` on it.
4. **The linear escape**: ``d(n)² = Σ_j c_j² exp(2 G_j(n))``, ``G_j`` the summed per-step gains of the
   optimiser at ``κ_j`` (:meth:`shockflow.prediction.mapping.Optimiser.log_gains`: ``ln|1 + ηκ|`` for
   gradient descent, the heavy-ball / Nesterov root), until ``d`` reaches ``LINEAR_FRACTION`` of the
   quadratic top's size (the distance along the grown direction at which the loss on that line has
   fallen half way to its first minimum).
5. **The descent**: from ``θ_p`` plus the grown perturbation the update rule runs on the real loss until
   the flow stalls at the next level (gradient below ``STALL`` of its largest value).  Half learned is
   half the parameter distance from ``θ_p`` to that point (``step``); the half-way steps of the loss
   (``loss_half_step``) and of the coordinate along the escape direction (``along_half_step``: what
   the chart of :func:`plateau_extraction` reads) are kept beside it.  With full-batch gradient
   descent this is the iteration training performs from that point: the model's content is where and
   when the linear phase ends; past it, this simulates (minibatch noise is not in it).

The plateau-exit step is ``reach_steps + escape_steps``.  Only the landscape (the loss on the data),
the initial parameters and the optimiser settings enter; never a training run or its loss curve.

Limits: one plateau (the first symmetric one) and its first exit; a later plateau the descent stalls at
(units that break away in stages: K = 4) is not followed.  Frozen parameters must be equal in every
unit.  A trainable readout whose units leave the origin along one direction with different norms
reaches no equal-units point; :func:`plateau_escape` then refuses (the perturbation arrives past the quadratic top's
size along the unstable direction).

Beside the exit, ``section_step``: the landscape-only exit by the escape integral along the line section
``θ_p + s u`` to its half-learned point (:func:`_section_escape`).  Measured early by 11–21 % on
``committee-erf-frozen`` (docs/theory.md §6): reported, not the prediction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Plateau", "PlateauError", "PlateauUnstable", "UnitLandscape", "approach", "check_plateau_start", "line_scale",
           "linear_growth", "plateau_escape", "plateau_extraction", "plateau_transition", "sloped_origin",
           "equal_units_curvature", "plateau_stability_rate", "stability_limit", "symmetric_minimum",
           "unstable_directions"]

#: the approach ends when the loss is within this fraction of the way from its start down to L(θ_p)
ARRIVAL = 1e-3
#: at most this many steps of the approach (a symmetric flow that has not arrived by then: PlateauError)
APPROACH_BUDGET = 200_000
#: ... and it stops as soon as this many steps pass without a new lowest loss (the update rule circling, not
#: descending: a learning rate above the plateau's stability limit, :func:`_stall_reason`)
STALL_STEPS = 1000
#: a stalled approach whose gradient (within the equal-units subspace) is still above this fraction of its start is
#: circling (an orbit of the update rule), not at a stationary point
CIRCLING = 1e-3
#: lowest eigenpairs of the symmetry-breaking Hessian computed
EIGENPAIRS = 6
#: the linear region of the escape ends at this fraction of the quadratic top's size along the unstable direction
LINEAR_FRACTION = 1e-2
#: points of line_scale's scan along the unstable direction, evaluated in blocks of LINE_BLOCK up to its first minimum
LINE_POINTS, LINE_BLOCK = 257, 32
#: the descent beyond it stalls at the next level when the gradient is below this fraction of its largest value
STALL = 1e-3
#: at most this many steps of that descent
DESCENT_BUDGET = 200_000


class PlateauError(RuntimeError):
    """The symmetric plateau could not be found or left (names the stage and why)."""


class PlateauUnstable(PlateauError):
    """The learning rate is above the update rule's stability limit on the symmetric plateau: the rule circles
    across the plateau instead of settling on it, which the model does not follow (a setting the user chose:
    ``training.lr``)."""


@dataclass(frozen=True, eq=False)
class Plateau:
    """The symmetric plateau and its predicted exit (module docstring)."""

    theta: np.ndarray          # θ_p, the full parameter vector
    loss: float                # L(θ_p)
    start_loss: float          # L at the symmetric part of the initial parameters
    reach_steps: float         # steps of the approach
    eigenvalues: np.ndarray    # the lowest eigenvalues of P H P at θ_p
    direction: np.ndarray      # the grown perturbation's direction at exit (unit, full vector)
    curvature: float           # κ along it (−its Rayleigh quotient)
    d0: float                  # |δ| on the negative eigenspace on arrival
    d_exit: float
    exit_loss: float           # the first minimum along the direction
    escape_steps: float        # from arrival to d_exit (linear growth, then the descent)
    loss_half_step: float = math.nan   # the step at which the loss has fallen half way to the next level
    line_minimum: float = math.nan     # the distance of the first minimum along the ray θ_p + s·direction
    along_half_step: float = math.nan  # the step at which the coordinate along the direction is half way to its end
    section_step: float = math.nan     # the landscape-only exit: the escape integral along the line section (below)

    @property
    def step(self) -> float:
        return self.reach_steps + self.escape_steps

    def as_dict(self) -> dict:
        return {"loss": self.loss, "start_loss": self.start_loss, "reach_steps": self.reach_steps,
                "eigenvalues": self.eigenvalues.tolist(), "curvature": self.curvature, "d0": self.d0,
                "d_exit": self.d_exit, "exit_loss": self.exit_loss, "escape_steps": self.escape_steps,
                "step": self.step, "loss_half_step": self.loss_half_step,
                "along_half_step": self.along_half_step, "section_step": self.section_step}


class UnitLandscape:
    """The real loss and gradient of ``model`` on ``(X, y)`` as functions of the flat parameter vector, and the
    unit structure: ``index (units, p)`` into it, ``free (p,)`` the trained entries of a unit."""

    def __init__(self, model, X, y, frozen=()):
        from shockflow.models.units import unit_layout

        self.model = model.copy()
        self.X, self.y = np.asarray(X, dtype=np.float64), y
        try:
            self.index = unit_layout(model).index
        except ValueError as exc:
            raise PlateauError(f"model: the symmetric plateau needs interchangeable units; {exc}") from None
        if self.index.shape[0] < 2:
            raise PlateauError(f"model: the {model.name!r} network has one unit; it has no symmetric plateau")
        owner = np.concatenate([np.full(np.asarray(v).size, k, dtype=object) for k, v in model.params.items()])
        unknown = [k for k in frozen if k not in model.params]
        if unknown:
            raise PlateauError(f"frozen: {unknown[0]!r} is not a parameter of the {model.name!r} model")
        self.held = np.isin(owner, list(frozen))
        self.free = ~self.held[self.index[0]]
        theta = model.parameter_vector()
        held_units = theta[self.index][:, ~self.free]
        if not np.allclose(held_units, held_units[:1], rtol=1e-12, atol=0.0):
            raise PlateauError("frozen: the frozen parameters differ between units, so the units are not "
                               "interchangeable and there is no symmetric plateau")
        if not np.all(np.isin(np.arange(theta.size), self.index)):
            raise PlateauError(f"model: some parameters of the {model.name!r} network belong to no unit")

    def loss_grad(self, theta):
        self.model.set_parameter_vector(theta)
        value, grads = self.model.loss_and_grad(self.X, self.y)
        g = self.model.grad_vector(grads)
        g[self.held] = 0.0
        return float(value), g

    def grad(self, theta):
        return self.loss_grad(theta)[1]

    def loss(self, theta) -> float:
        """The value of :meth:`loss_grad` without the backward pass: the same forward pass and the same mean (the
        same number); a model with its own ``loss_and_grad`` (a user's, :mod:`shockflow.models.protocol`) through it."""
        from shockflow.models.base import Model

        m = self.model
        if type(m).loss_and_grad is not Model.loss_and_grad:
            return self.loss_grad(theta)[0]
        m.set_parameter_vector(theta)
        X = m._check_inputs(self.X)
        F, _ = m._forward(X)
        return float(m.loss_function.mean_and_grad(F, m._targets(self.y, X.shape[0]))[0])

    def symmetric(self, v):
        """The units' mean in every unit (``v``'s symmetric part)."""
        out = np.array(v, dtype=np.float64)
        out[self.index] = out[self.index].mean(axis=0, keepdims=True)
        return out

    def breaking(self, v):
        """``P v``: each unit minus the units' mean, on the free entries (the symmetry-breaking part)."""
        out = np.asarray(v, dtype=np.float64) - self.symmetric(v)
        out[self.held] = 0.0
        return out

    def tangent_grad(self, theta, v):
        """``H v`` by a central difference of the gradient."""
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            return np.zeros_like(v)
        h = 1e-5 * max(1.0, float(np.linalg.norm(theta))) / math.sqrt(self.index.shape[0])
        u = v / norm
        return (self.grad(theta + h * u) - self.grad(theta - h * u)) * (norm / (2.0 * h))


def symmetric_minimum(land: UnitLandscape, theta0):
    """θ_p: L-BFGS over the shared free entries ``u`` of a unit (module docstring, 1)."""
    from scipy.optimize import minimize

    base = land.symmetric(theta0)
    cols = np.flatnonzero(land.free)

    def embed(u):
        theta = base.copy()
        theta[land.index[:, cols]] = u[None, :]
        return theta

    def fun(u):
        value, g = land.loss_grad(embed(u))
        return value, g[land.index[:, cols]].sum(axis=0)

    res = minimize(fun, base[land.index[0, cols]], jac=True, method="L-BFGS-B",
                   options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-11})
    if not np.all(np.isfinite(res.x)):
        raise PlateauError(f"the symmetric plateau: the minimisation over the shared unit parameters failed "
                           f"({res.message})")
    return embed(res.x), float(res.fun)


def _update(g, v, eta, optimiser):
    """One step of the update rule on gradient ``g`` with velocity ``v``: ``(Δθ, v')``."""
    mu = float(optimiser.momentum) if optimiser.name in ("momentum", "nesterov") else 0.0
    v = mu * v + g
    return -(eta * (g + mu * v) if optimiser.name == "nesterov" else eta * v), v


def _breaking_scale(delta, symmetric) -> float:
    """``|δ|``, the size of the initial parameters' symmetry-breaking part ``δ = P θ_0`` (``symmetric``: their
    symmetric part); :class:`PlateauError` where it is zero up to the round-off of the units' mean (nothing breaks
    the symmetry: the plateau has no exit)."""
    scale = float(np.linalg.norm(delta))
    if scale <= 1e-12 * float(np.linalg.norm(symmetric)):
        raise PlateauError("the initial parameters are exactly symmetric: no unit can break away from the plateau")
    return scale


def check_plateau_start(model, frozen=()) -> None:
    """Every refusal of :func:`plateau_escape` that the network and its initial parameters decide alone, before any
    work (:class:`PlateauError`): units that are not interchangeable, frozen values that differ between units, and
    initial parameters that are exactly symmetric.  What the landscape decides (no unstable direction, a
    perturbation that arrives past the quadratic top) is known only after the plateau is found."""
    land, theta0 = UnitLandscape(model, np.empty((0, 0)), None, tuple(frozen)), model.parameter_vector()
    _breaking_scale(land.breaking(theta0), land.symmetric(theta0))


def approach(land: UnitLandscape, theta0, L_p: float, optimiser, theta_p=None):
    """The approach (module docstring, 2): ``(steps, δ on arrival)``; a :class:`PlateauError` where the update rule
    stops descending before it arrives (``STALL_STEPS``), saying why at the plateau ``θ_p`` (:func:`_stall_reason`)."""
    rates = np.asarray(optimiser.learning_rates, dtype=np.float64)
    theta = land.symmetric(theta0)
    delta = land.breaking(theta0)
    L0, g = land.loss_grad(theta)
    if not L0 > L_p:
        return 0.0, delta
    v, vd = np.zeros_like(theta), np.zeros_like(theta)
    scale, log_scale = _breaking_scale(delta, theta), 0.0
    delta = delta / scale
    log_scale = math.log(scale)
    previous = best = L0
    since_best = 0
    g_start = float(np.linalg.norm(land.symmetric(g)))
    for n in range(APPROACH_BUDGET):
        eta = rates[n] if n < rates.size else rates[-1]
        gd = land.breaking(land.tangent_grad(theta, delta))
        step, v = _update(land.symmetric(g), v, eta, optimiser)
        dstep, vd = _update(gd, vd, eta, optimiser)
        theta, delta = theta + step, delta + dstep
        norm = float(np.linalg.norm(delta))
        delta, vd, log_scale = delta / norm, vd / norm, log_scale + math.log(norm)
        value, g = land.loss_grad(theta)
        if not math.isfinite(value):
            raise PlateauError(f"the approach to the symmetric plateau diverged at step {n + 1} (learning rate "
                               f"{eta:.3g} too large for the symmetric flow)")
        if value - L_p <= ARRIVAL * (L0 - L_p):
            frac = 1.0 if previous == value else min(1.0, max(0.0, (previous - (L_p + ARRIVAL * (L0 - L_p)))
                                                              / (previous - value)))
            return float(n + frac), delta * math.exp(log_scale)
        previous = value
        best, since_best = (value, 0) if value < best else (best, since_best + 1)
        if since_best >= STALL_STEPS:
            circling = float(np.linalg.norm(land.symmetric(g))) > CIRCLING * g_start
            reason, unstable = _stall_reason(land, theta if theta_p is None else theta_p, optimiser, eta, circling)
            error = PlateauUnstable if unstable else PlateauError
            raise error(f"the approach to the symmetric plateau stopped descending: {STALL_STEPS} steps without a loss "
                        f"below {best:.6g} (the plateau's {L_p:.6g}; step {n + 1}): {reason}")
    raise PlateauError(f"the approach to the symmetric plateau did not arrive within {APPROACH_BUDGET} steps "
                       f"(loss {value:.6g} against the plateau's {L_p:.6g})")


def stability_limit(curvature: float, optimiser) -> float:
    """The largest learning rate at which the optimiser's update rule is stable on a quadratic of this curvature:
    ``2/λ`` for gradient descent, ``2(1 + μ)/λ`` with heavy-ball momentum, ``2(1 + μ)/((1 + 2μ) λ)`` with Nesterov's."""
    mu = float(optimiser.momentum) if optimiser.name in ("momentum", "nesterov") else 0.0
    factor = 2.0 * (1.0 + mu) / (1.0 + 2.0 * mu) if optimiser.name == "nesterov" else 2.0 * (1.0 + mu)
    return factor / curvature if curvature > 0 else math.inf


def equal_units_curvature(land: UnitLandscape, theta_p, iterations: int = 40) -> float:
    """The largest curvature of the loss within the equal-units subspace at ``θ_p`` (power iteration on
    Hessian–vector products, the free entries)."""
    def on_symmetric(v):
        out = land.symmetric(v)
        out[land.held] = 0.0
        return out

    v = on_symmetric(np.random.default_rng(0).standard_normal(theta_p.size))
    lam = 0.0
    for _ in range(iterations):
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            break
        w = on_symmetric(land.tangent_grad(theta_p, v / norm))
        lam_next = float(np.linalg.norm(w))
        v = w
        if abs(lam_next - lam) <= 1e-4 * lam_next:
            return lam_next
        lam = lam_next
    return lam


def plateau_stability_rate(model, X, y, optimiser, frozen=()) -> float:
    """The learning rate from which the update rule circles across the symmetric plateau instead of settling on it
    (:func:`stability_limit` of :func:`equal_units_curvature` at ``θ_p``): a forecast's flag (``forecast``'s
    ``stability_lr``) where the plateau is its start."""
    land = UnitLandscape(model, X, y, tuple(frozen))
    theta_p, _ = symmetric_minimum(land, model.parameter_vector())
    return stability_limit(equal_units_curvature(land, theta_p), optimiser)


def _stall_reason(land: UnitLandscape, theta_p, optimiser, eta: float, circling: bool) -> tuple[str, bool]:
    """Why the symmetric flow does not settle, and whether the learning rate is the cause: an update rule that
    circles (its gradient not small: an orbit, not a stationary point) at a rate near or above its stability limit
    on the plateau — :func:`equal_units_curvature` at ``θ_p`` against :func:`stability_limit` — or a flow met by
    another stationary point."""
    lam = equal_units_curvature(land, theta_p)
    limit = stability_limit(lam, optimiser)
    if circling:
        where = "above" if eta >= limit else "just below"
        return (f"the update rule circles instead of settling (its gradient is not small: an orbit, not a stationary "
                f"point), at the learning rate {eta:.4g}, {where} its stability limit {limit:.4g} on the plateau "
                f"(curvature {lam:.4g} across it, within the equal-units subspace); this model follows a plateau the "
                f"rule settles on: lower training.lr"), True
    return (f"the symmetric flow stalls above the plateau at a stationary point of the equal-units subspace (the "
            f"learning rate {eta:.4g} against the stability limit {limit:.4g} there)"), False


def unstable_directions(land: UnitLandscape, theta_p):
    """The lowest eigenpairs of ``P H P`` at ``θ_p`` (module docstring, 3)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    size = theta_p.size
    dim = int(land.free.sum()) * (land.index.shape[0] - 1)    # the symmetry-breaking subspace's dimension
    k = min(EIGENPAIRS, dim)

    def hv(v):
        pv = land.breaking(np.asarray(v).reshape(-1))
        return land.breaking(land.tangent_grad(theta_p, pv))

    op = LinearOperator((size, size), matvec=hv, dtype=np.float64)
    if k >= size - 1 or size <= 60:   # small: the dense matrix (eigsh needs k < size)
        H = np.column_stack([hv(e) for e in np.eye(size)])
        vals, vecs = np.linalg.eigh(0.5 * (H + H.T))
        # the symmetric subspace's zero eigenvalues are not breaking directions: keep vectors with P v = v
        keep = np.linalg.norm(np.column_stack([land.breaking(vecs[:, j]) for j in range(size)]), axis=0) > 0.5
        vals, vecs = vals[keep][:k], vecs[:, keep][:, :k]
    else:
        start = land.breaking(np.random.default_rng(0).standard_normal(size))
        try:
            vals, vecs = eigsh(op, k=k, which="SA", v0=start, tol=1e-10)
        except ArpackNoConvergence as exc:
            raise PlateauError(f"the symmetric plateau's symmetry-breaking Hessian ({size} parameters, Lanczos): "
                               f"{exc}") from None
        order = np.argsort(vals)
        vals, vecs = vals[order], vecs[:, order]
    return vals, vecs


def line_scale(land: UnitLandscape, theta_p, L_p: float, u) -> tuple[float, float]:
    """The distance along the ray ``θ_p + s u`` at which the loss has fallen half way to its first minimum along it
    (the size of the quadratic top; the linear region of the escape is ``LINEAR_FRACTION`` of it), and that
    minimum's distance."""
    memo = land.__dict__.setdefault("_line_scales", {})
    theta_p, u = np.asarray(theta_p, dtype=np.float64), np.asarray(u, dtype=np.float64)
    key = (theta_p.tobytes(), float(L_p), u.tobytes())
    if key in memo:   # the mixture's chain asks again for the same saddle and direction (gate._exit)
        return memo[key]
    reach = max(1.0, float(np.linalg.norm(theta_p)) / math.sqrt(land.index.shape[0]))
    for _ in range(8):
        s = np.linspace(0.0, reach, LINE_POINTS)
        L = np.empty(0)
        while L.size < s.size:
            # the scan in blocks, up to the first interior minimum: the points beyond it are never read
            block = s[L.size:L.size + LINE_BLOCK]
            L = np.concatenate([L, [land.loss(theta_p + si * u) for si in block]])
            interior = np.flatnonzero((L[1:-1] <= L[:-2]) & (L[1:-1] <= L[2:])) + 1
            if interior.size:
                j = int(interior[0])
                half = L_p - 0.5 * (L_p - float(L[j]))
                memo[key] = (float(s[int(np.flatnonzero(L[: j + 1] <= half)[0])]), float(s[j]))
                return memo[key]
        reach *= 4.0
    raise PlateauError("the escape from the symmetric plateau: the loss falls without a minimum along the "
                       f"unstable direction up to the distance {reach:.3g}")


def linear_growth(components, kappas, distance: float, optimiser):
    """``(n, grown)``: the first (fractional) step at which ``Σ_j c_j² e^{2 G_j(n)}`` reaches ``distance²``
    (``G_j`` the summed per-step gains at ``κ_j``), and the components ``c_j e^{G_j}`` then (scaled to
    ``distance``); ``(inf, None)`` if never within 10⁷ steps."""
    horizon = max(int(np.asarray(optimiser.learning_rates).size), 1)
    while True:
        G = np.array([np.cumsum(optimiser.log_gains(k, horizon, from_rest=False)) for k in kappas])
        G = np.concatenate([np.zeros((len(kappas), 1)), G], axis=1)
        top = G.max(axis=0)
        logd = 0.5 * np.log(np.sum((components[:, None] ** 2) * np.exp(2.0 * (G - top)), axis=0)) + top
        hit = np.flatnonzero(logd >= math.log(distance))
        if hit.size:
            j = int(hit[0])
            n = 0.0 if j == 0 else (j - 1) + (math.log(distance) - logd[j - 1]) / (logd[j] - logd[j - 1])
            grown = components * np.exp(G[:, j] - top[j])
            return float(n), grown * (distance / np.linalg.norm(grown))
        if horizon > 10_000_000:
            return math.inf, None
        horizon *= 4


def _descent(land: UnitLandscape, theta, L_p: float, optimiser, offset: float, u):
    """The escape beyond the linear region (module docstring, 4): the update rule from ``theta`` (at the
    optimiser's rates from step ``offset`` on) until the flow stalls at the next level (the gradient below
    ``STALL`` of its largest value on the way) or ``DESCENT_BUDGET`` steps; ``(steps to half the distance from θ_p
    to that point, the next level, that half distance, the steps to the half-way loss)``."""
    rates = np.asarray(optimiser.learning_rates, dtype=np.float64)
    v = np.zeros_like(theta)
    value, g = land.loss_grad(theta)
    theta_p = land.symmetric(theta)
    losses, dist, along, peak = [value], [float(np.linalg.norm(theta - theta_p))], [float(u @ (theta - theta_p))], 0.0
    for n in range(DESCENT_BUDGET):
        i = int(offset) + n
        eta = rates[i] if i < rates.size else rates[-1]
        step, v = _update(g, v, eta, optimiser)
        theta = theta + step
        value, g = land.loss_grad(theta)
        if not math.isfinite(value):
            raise PlateauError(f"the escape from the symmetric plateau diverged {n + 1} steps into its descent")
        losses.append(value)
        dist.append(float(np.linalg.norm(theta - theta_p)))
        along.append(float(u @ (theta - theta_p)))
        norm = float(np.linalg.norm(g))
        peak = max(peak, norm)
        if value < L_p and norm < STALL * peak:
            break
    losses, dist = np.array(losses), np.array(dist)
    L_next = float(losses[-1])
    # half learned: half way in parameter distance from θ_p to where the flow stalls (as a chart's strength half way
    # from its start to its minimum, shockflow.prediction.truth); the loss's half-way step is kept beside it
    far, along = float(dist[-1]), np.array(along)
    sign = 1.0 if along[-1] >= along[0] else -1.0
    half_along = _first_crossing(sign * along, sign * 0.5 * (along[0] + along[-1]))
    return (_first_crossing(dist, 0.5 * far), L_next, 0.5 * far, _first_crossing(-losses, -(L_p - 0.5 * (L_p - L_next))),
            half_along)


def _section_escape(land: UnitLandscape, theta_p, u, start: float, line_min: float, d0: float, optimiser,
                    offset: float) -> float:
    """The landscape-only exit (docs/theory.md §6, "Plateaus away from the origin": not adopted): the steps from
    ``start`` (the end of the linear region, at step ``offset``) along the line section ``θ_p + s u`` to its half-learned
    point ``s_h = (d0 + line_min)/2`` (the chart coordinate half way from the arrival to the section's minimum), by the
    escape integral ``∫ ds/|∂_s L|`` of the real loss on the line, mapped to steps with the scheduled rates."""
    end = 0.5 * (d0 + line_min)
    if not end > start:
        return offset
    s = np.geomspace(start, end, 161)
    slope = np.array([-(u @ land.grad(theta_p + si * u)) for si in s])
    if not np.all(slope > 0):
        return math.inf     # the section turns back before its half-learned point: no escape along it
    t = float(np.sum(0.5 * (1.0 / slope[1:] + 1.0 / slope[:-1]) * np.diff(s)))
    rates = np.asarray(optimiser.effective_rates(), dtype=np.float64)
    cum = np.concatenate([[0.0], np.cumsum(rates)])
    t0 = float(np.interp(offset, np.arange(cum.size), cum)) if offset <= rates.size else \
        float(cum[-1] + (offset - rates.size) * rates[-1])
    target = t0 + t
    if target <= cum[-1]:
        return float(np.interp(target, cum, np.arange(cum.size)))
    return float(rates.size + (target - cum[-1]) / rates[-1])


def _first_crossing(series, level: float) -> float:
    """The first (fractional) index at which ``series`` reaches ``level`` (from below), linearly interpolated."""
    j = int(np.flatnonzero(series >= level)[0])
    if j == 0:
        return 0.0
    return float(j - 1 + (level - series[j - 1]) / (series[j] - series[j - 1]))


def plateau_escape(model, X, y, optimiser, *, frozen=()) -> Plateau:
    """The symmetric plateau of ``model`` (at its initial parameters) on ``(X, y)`` and its predicted exit under
    ``optimiser`` (a :class:`shockflow.prediction.mapping.Optimiser`); module docstring.  :class:`PlateauError`
    names the stage that fails (a non-finite value is one: checked, not warned about)."""
    optimiser._check()
    with np.errstate(over="ignore", invalid="ignore"):
        return _plateau_escape(model, X, y, optimiser, tuple(frozen))


def _plateau_escape(model, X, y, optimiser, frozen) -> Plateau:
    land = UnitLandscape(model, X, y, frozen)
    theta0 = model.parameter_vector()
    theta_p, L_p = symmetric_minimum(land, theta0)
    L_start = land.loss_grad(land.symmetric(theta0))[0]
    reach, delta = approach(land, theta0, L_p, optimiser, theta_p)
    vals, vecs = unstable_directions(land, theta_p)
    negative = vals < 0
    if not np.any(negative):
        raise PlateauError(f"the symmetric plateau (loss {L_p:.6g}) has no unstable symmetry-breaking direction "
                           f"(lowest eigenvalue {vals[0]:.3g}): it is a minimum, there is no exit to predict")
    V, kappas = vecs[:, negative], -vals[negative]
    c = V.T @ delta
    d0 = float(np.linalg.norm(c))
    if d0 == 0.0:
        raise PlateauError("the initial perturbation has no component on the plateau's unstable directions")
    # the direction the perturbation has grown into once the fastest rate dominates (within the degenerate cluster)
    lead = kappas >= kappas.max() * (1.0 - 1e-6)
    u = V[:, lead] @ c[lead] if np.linalg.norm(c[lead]) > 0 else V[:, 0] * np.sign(c[0] or 1.0)
    u = u / np.linalg.norm(u)
    kappa = float(-(u @ land.breaking(land.tangent_grad(theta_p, u))))
    top, line_min = line_scale(land, theta_p, L_p, u)
    if d0 >= top:
        raise PlateauError(f"the symmetric plateau (loss {L_p:.6g}): the perturbation arrives at distance {d0:.3g} "
                           f"along its unstable direction, past the quadratic top's size {top:.3g}; the run does not "
                           "wait at the equal-units point (a trainable readout's units arrive with unequal scales)")
    linear_end = LINEAR_FRACTION * top
    if d0 < linear_end:
        n_lin, grown = linear_growth(c, kappas, linear_end, optimiser)
        if not math.isfinite(n_lin):
            raise PlateauError(f"the escape from the symmetric plateau: the perturbation ({d0:.3g}) does not grow to "
                               f"{linear_end:.3g} within 10^7 steps (rates {kappas.tolist()})")
    else:
        n_lin, grown = 0.0, c
    n_desc, L_next, d_exit, n_loss, n_along = _descent(land, theta_p + V @ grown, L_p, optimiser, reach + n_lin, u)
    section = _section_escape(land, theta_p, u, max(linear_end, d0), line_min, d0, optimiser, reach + n_lin)
    return Plateau(theta=theta_p, loss=L_p, start_loss=float(L_start), reach_steps=reach, eigenvalues=vals,
                   direction=u, curvature=kappa, d0=d0, d_exit=d_exit,
                   exit_loss=L_next, escape_steps=n_lin + n_desc, loss_half_step=reach + n_lin + n_loss,
                   line_minimum=line_min, along_half_step=reach + n_lin + n_along, section_step=section)


def sloped_origin(model, X, y, frozen) -> bool:
    """Whether the automatic charts refuse ``model`` only because its loss is sloped at the origin of the free
    parameters (:func:`shockflow.geometry.auto.check_frozen_origin`'s slope check; the frozen values equal in every
    unit, not a chain): the case this module predicts instead."""
    from shockflow.geometry import GeometryError
    from shockflow.geometry.auto import _chain, _layout, _refuse_sloped_origin, free_origin

    frozen = tuple(frozen)
    if not frozen:
        return False
    try:
        if _chain(model) is not None:
            return False
        layout = _layout(model)
        origin, free = free_origin(model, layout, frozen)
    except GeometryError:
        return False
    try:
        _refuse_sloped_origin(model, origin, layout, free, frozen, np.asarray(X, dtype=np.float64), y)
    except GeometryError:
        return True
    return False


def plateau_extraction(model, X, y, optimiser, *, frozen=(), **extract_kwargs):
    """``(Extraction, Plateau)``: the plateau of :func:`plateau_escape` and one ``flat`` chart through it along the
    escape direction (``shockflow.geometry.flat``: ``θ = origin + x u``, Euclidean), extracted and solved like any
    chart (its landscape, its shock at the plateau's ridge, the run's trajectory on it for the parameter truth).
    The chart's origin is ``θ_p`` moved along ``u`` so that the initial parameters sit at ``x0 = d0``, the arrived
    distance, on the side they escape to (a shift of order ``d0``, far below the chart's width)."""
    from shockflow.prediction.extraction import extract

    plateau = plateau_escape(model, X, y, optimiser, frozen=frozen)
    u = plateau.direction
    x0 = float(u @ (model.parameter_vector() - plateau.theta))
    origin = plateau.theta + (x0 - plateau.d0) * u
    kwargs = {"directions": u[None, :], "origin": origin, "extent": 1.5 * plateau.line_minimum}
    extraction = extract(model, "flat", X, y, geometry_kwargs=kwargs, charts=(None,), frozen=frozen,
                         **extract_kwargs)
    return replace(extraction, charts=tuple(replace(c, label="plateau") for c in extraction.charts)), plateau


def plateau_transition(plateau: Plateau, shock, optimiser):
    """The :class:`shockflow.prediction.mapping.PredictedTransition` of the plateau's exit (method ``"plateau"``) on the
    chart of :func:`plateau_extraction`: the step at which the descent's coordinate along that chart is half way
    (``along_half_step``: what the chart's parameter truth reads), the chart's shock beside it."""
    from shockflow.prediction.mapping import PredictedTransition

    rates = optimiser.effective_rates()
    cum = np.concatenate([[0.0], np.cumsum(rates)])
    step = plateau.along_half_step
    t = float(np.interp(step, np.arange(cum.size), cum)) if step <= rates.size else \
        float(cum[-1] + (step - rates.size) * rates[-1])
    gamma = 1.0 / plateau.curvature
    return PredictedTransition(chart=shock.label, step=float(step), flow_step=float(step), time=t, method="plateau",
                               gamma_star=gamma, critical_lr=gamma, location=float(shock.location),
                               strength=float(shock.strength), d0=plateau.d0, d_exit=plateau.d_exit,
                               d_eff=plateau.d0, nu=float(shock.nu), escape_time=math.nan)
