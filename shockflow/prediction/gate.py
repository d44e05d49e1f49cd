"""The mixture of experts: the averaged expert, then the gate's splits, as a chain of symmetric saddles.

docs/theory.md §6 ("The mixture of experts").  A mixture ``f(x) = Σ_k softmax(Γx)_k β_k·x`` of K linear experts
has no saddle at the origin: with equal gate rows the gate is uniform and ``f = β̄·x`` exactly (``β̄`` the mean
expert), so the loss is sloped there and the experts first learn the linear fit together.  Permuting the experts
(each with its gate row: :mod:`shockflow.models.units`) leaves the loss unchanged; the parameters with every unit
equal are invariant, and that is where the run waits: the **symmetric plateau** (every expert the linear fit).
The gate learns its split when the units break away from it, along a direction ``c vᵀ`` of the units' differences
(``c`` over the units, summing to zero; ``v`` one unit-space vector): the breaking matrix ``D`` (each unit minus
the units' mean, K × p) grows rank 1.  With K experts the splits come one at a time, each a new rank of ``D``
(:func:`shockflow.prediction.truth.mixture_strengths`: the truth reads ``σ_r(D)``, the r-th singular value).

The chain [model, ours], from the landscape (the loss on the data), the initial parameters and the optimiser only:

1. **The averaged expert** (chart ``mean``).  On the symmetric subspace the loss is quadratic in the shared expert
   ``u`` and one step moves ``u`` by ``−(η/K) ∇_u L_sym``; its Hessian ``A`` gives the closed form
   ``u(n) − u* = Π_i (I − η_i A/K)(u(0) − u*)`` for gradient descent (per eigenvalue of ``A`` the rule's own
   linear recurrence from rest: heavy ball and Nesterov with their velocity, :func:`_relaxation`).  Half learned: ``|u(n)|`` half way from ``|u(0)|``
   to ``|u*|``.
2. **Split 0** (chart ``split0``): the escape from the symmetric plateau ``θ_0`` of :mod:`shockflow.prediction.plateau`
   (its L-BFGS plateau, its approach carrying the breaking part ``δ``, its Lanczos rates on Hessian-vector
   products, its linear growth on the optimiser's gains to ``LINEAR_FRACTION`` of the quadratic top), then
   **the escape integral** ``∫ ds / |∂_s L(θ_0 + s u)|`` along the unstable direction's section of the real loss
   (gradient-flow time, converted to steps by the rates) from the end of the linear region to the half point.
3. **Split r ≥ 1** (chart ``split<r>``): the saddle ``θ_r`` is the minimiser of the loss over parameters whose
   breaking matrix has rank ≤ r (units ``m + C Vᵀ``, L-BFGS from the previous saddle moved to its section's first
   minimum).  Its unstable directions are the lowest eigenpairs of the Hessian projected on the normal space of the
   rank-r matrices (``Q_C Z Q_V``); the waiting part of ``δ`` (its components off the leading group) grows at the
   previous saddle's rates until that split's predicted step, then is read on the new direction: its ``d_r``.
   The rank-r set is not invariant, so the loss has a slope ``g = −u_r·∇L(θ_r)`` there: the linear phase is
   ``ẋ = κx + g`` (``x + g/κ`` grows by the optimiser's gain per step), and ``u_r``'s sign is the side where
   ``x + g/κ`` is positive: the slope's, where it outweighs the waiting perturbation ``d_r`` (then negative: the
   mode is carried across the saddle; 4 experts on a 4-expert teacher, split 2: the slope's offset −0.33 against a
   perturbation of 0.17, the loss rising on the perturbation's side without a minimum and falling on the other,
   its minimum between 1 and 3 out: that split abstained, now 1431.5 against its truth 1385.4).  Then the escape integral along ``θ_r + s u_r``, as in 2.
4. **The half point** of split r: ``σ_r`` half way from its initial value to its value at the next saddle
   ``θ_{r+1}`` (the last: the unconstrained minimiser).  Where the straight section reaches its first minimum
   before the half point (the run's path curves), the integral has no end on it: the linear phase is run to the
   half point instead (``method = "log_form"``).  A saddle with no unstable direction (above ``−NEGATIVE_FLOOR``
   of the curvature scale) ends the chain: its split and the later ones abstain (``method = "abstain"``), their
   charts kept so that a split the run makes counts as a miss.

Measured (docs/theory.md §6, README): ``moe-experts`` at seeds 0–5, the averaged expert within 4.1 %, split 0
within 1.1 %, split 1 0 to −21 % (early).

Limits: linear experts only (an MLP expert has its own saddle at zero weights, the charts of the origin);
gradient descent and the momentum rules of ``Optimiser``; the rank-r saddles are constrained minimisers, not
exact stationary points of the full loss (the rank-r set is not invariant for r ≥ 1: its normal gradient is
reported as ``normal_slope``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Escape", "MixtureChain", "is_mixture", "mixture_chain", "mixture_extraction", "mixture_transitions"]

#: the lowest eigenpairs of each saddle's (breaking or normal-space) Hessian computed
EIGENPAIRS = 8
#: an eigenvalue is unstable below −this × the averaged expert's largest curvature (finite-difference round-off)
NEGATIVE_FLOOR = 1e-6
#: points of the escape integral's trapezoid in ln s
INTEGRAL_POINTS = 400
#: at most this many L-BFGS iterations for a rank-r saddle (its singular values matter to ~1e-3, not its loss)
MINIMISER_ITERATIONS = 2000


def is_mixture(model) -> bool:
    """Whether ``model`` is charted by this module: a mixture of linear experts with at least two experts."""
    return getattr(model, "name", None) == "moe" and getattr(model, "expert", None) == "linear" \
        and getattr(model, "num_experts", 0) >= 2


@dataclass(frozen=True, eq=False)
class Escape:
    """One transition of the chain: the saddle it leaves, its direction and its predicted half-learned step."""

    label: str
    step: float
    saddle: np.ndarray            # θ_r (the origin's symmetric part for ``mean``)
    direction: np.ndarray         # unit vector of its section
    target: np.ndarray            # the next saddle θ_{r+1} (u* embedded for ``mean``)
    kappa: float                  # the escape rate (−the lowest eigenvalue; the slowest relaxation for ``mean``)
    d0: float                     # the waiting coordinate along ``direction`` on arrival at the saddle (negative where
                                  # the saddle's slope carries the mode across it)
    half: float                   # the half-learned strength
    method: str                   # "closed_form", "escape_integral" or "log_form"
    start: float = 0.0            # the step at which the escape from this saddle starts
    normal_slope: float = 0.0     # |the loss gradient normal to the rank-r set| at θ_r
    loss: float = math.nan        # L(θ_r)
    reason: str = ""              # why this split predicts nothing (method "abstain")

    def as_dict(self) -> dict:
        return {"label": self.label, "step": self.step, "kappa": self.kappa, "d0": self.d0, "half": self.half,
                "method": self.method, "start": self.start, "normal_slope": self.normal_slope, "loss": self.loss,
                "reason": self.reason}


@dataclass(frozen=True, eq=False)
class MixtureChain:
    escapes: tuple[Escape, ...]
    experts: int
    gate_entries: np.ndarray = field(default=None)   # positions of the gate's entries in the parameter vector
    final_loss: float = math.nan                     # L at the last saddle reached (the bottom of the staircase)


class MixtureError(RuntimeError):
    """A saddle of the mixture's chain could not be found or left (names the saddle and why)."""


def _gains(optimiser, kappa: float, steps: float, start: float = 0.0) -> float:
    """Σ of the per-step signed log-gains at ``κ`` over ``steps`` steps starting at step ``start``."""
    n0, n = int(start), int(math.ceil(max(start + steps, 0.0)))
    if n <= n0:
        return 0.0
    g = optimiser.log_gains(kappa, n, from_rest=False)
    return float(np.sum(g[n0:n]))


def _steps_to(optimiser, kappa: float, log_growth: float, start: float) -> float:
    """The (fractional) number of steps from step ``start`` over which the gains at ``κ`` sum to ``log_growth``."""
    if log_growth <= 0:
        return 0.0
    horizon = max(int(np.asarray(optimiser.learning_rates).size), int(start) + 16)
    while horizon < 10 ** 8:
        g = optimiser.log_gains(kappa, horizon, from_rest=False)[int(start):]
        cum = np.concatenate([[0.0], np.cumsum(g)])
        if cum[-1] >= log_growth:
            k = int(np.searchsorted(cum, log_growth))
            return float(k - 1 + (log_growth - cum[k - 1]) / (cum[k] - cum[k - 1]))
        horizon *= 4
    return math.inf


def _relaxation(optimiser, curvatures, steps: int) -> np.ndarray:
    """``(len(curvatures), steps + 1)``: the signed factor ``e_n / e_0`` of a quadratic's error along each curvature
    under the update rule from rest (the linear recurrence of gd, heavy ball or Nesterov: ``v ← μv + g``,
    ``Δθ = −ηv`` or ``−η(g + μv)``; exact on a quadratic, its overshoot included), the schedule's last rate
    continuing past its end."""
    optimiser._check()
    rates = np.asarray(optimiser.learning_rates, dtype=np.float64)
    mu = float(optimiser.momentum) if optimiser.name in ("momentum", "nesterov") else 0.0
    nesterov = optimiser.name == "nesterov"
    c = np.asarray(curvatures, dtype=np.float64)
    e, v = np.ones_like(c), np.zeros_like(c)
    out = np.empty((c.size, steps + 1))
    out[:, 0] = e
    for n in range(steps):
        eta = rates[n] if n < rates.size else rates[-1]
        g = c * e
        v = mu * v + g
        e = e - eta * (g + mu * v if nesterov else v)
        out[:, n + 1] = e
    return out


def _breaking_matrix(land, theta) -> np.ndarray:
    U = np.asarray(theta)[land.index]
    return U - U.mean(axis=0, keepdims=True)


def _sigma(land, theta, r: int) -> float:
    s = np.linalg.svd(_breaking_matrix(land, theta), compute_uv=False)
    return float(s[r]) if r < s.size else 0.0


def _rank_minimiser(land, theta_init, r: int):
    """The minimiser of the loss over parameters whose breaking matrix has rank ≤ r (units ``m + C Vᵀ``, columns of
    C summing to zero), by L-BFGS from ``theta_init``'s truncated SVD: ``(θ_r, L(θ_r))``."""
    from scipy.optimize import minimize

    K, p = land.index.shape
    U = np.asarray(theta_init)[land.index]
    m = U.mean(axis=0)
    Uc, S, Vt = np.linalg.svd(U - m, full_matrices=False)
    C0, V0 = Uc[:, :r] * S[:r], Vt[:r].T

    def embed(z):
        C = z[p:p + K * r].reshape(K, r)
        C = C - C.mean(axis=0)
        V = z[p + K * r:].reshape(p, r)
        theta = np.zeros_like(theta_init)
        theta[land.index] = z[:p][None] + C @ V.T
        return theta, C, V

    def fun(z):
        theta, C, V = embed(z)
        value, g = land.loss_grad(theta)
        G = g[land.index]
        gC = G @ V
        return value, np.concatenate([G.sum(axis=0), (gC - gC.mean(axis=0)).ravel(), (G.T @ C).ravel()])

    z0 = np.concatenate([m, C0.ravel(), V0.ravel()])
    res = minimize(fun, z0, jac=True, method="L-BFGS-B", options={"maxiter": MINIMISER_ITERATIONS, "ftol": 1e-12, "gtol": 1e-8})
    if not np.all(np.isfinite(res.x)):
        raise MixtureError(f"the saddle of rank {r}: the constrained minimisation failed ({res.message})")
    return embed(res.x)[0], float(res.fun)


def _normal_projector(land, theta, r: int):
    """``v ↦ Q_C Z Q_V`` on the units' entries: the normal space of the rank-r breaking matrices at ``θ``."""
    K, p = land.index.shape
    Uc, _, Vt = np.linalg.svd(_breaking_matrix(land, theta))
    a, b = Uc[:, :r], Vt[:r].T
    Qa = np.eye(K) - a @ a.T - np.full((K, K), 1.0 / K)
    Qb = np.eye(p) - b @ b.T

    def project(v):
        out = np.zeros_like(np.asarray(v, dtype=np.float64))
        out[land.index] = Qa @ np.asarray(v)[land.index] @ Qb
        return out

    return project


def _lowest(land, theta, project, k: int = EIGENPAIRS):
    """The lowest eigenpairs of ``P H P`` at ``θ`` (``P = project``; Hessian-vector products of the real loss)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    size = theta.size

    def hv(v):
        pv = project(np.asarray(v).reshape(-1))
        return project(land.tangent_grad(theta, pv))

    if size <= 400:
        H = np.column_stack([hv(e) for e in np.eye(size)])
        vals, vecs = np.linalg.eigh(0.5 * (H + H.T))
        keep = np.linalg.norm(np.column_stack([project(vecs[:, j]) for j in range(size)]), axis=0) > 0.5
        return vals[keep][:k], vecs[:, keep][:, :k]
    op = LinearOperator((size, size), matvec=hv, dtype=np.float64)
    start = project(np.random.default_rng(0).standard_normal(size))
    try:
        vals, vecs = eigsh(op, k=k, which="SA", v0=start, tol=1e-10)
    except ArpackNoConvergence as exc:
        raise MixtureError(f"the Hessian's lowest eigenpairs ({size} parameters, Lanczos): {exc}") from None
    order = np.argsort(vals)
    return vals[order], vecs[:, order]


def _exit(land, optimiser, theta_r, u, L_r, d0: float, kappa: float, half: float, r: int, start: float):
    """Steps from ``start`` to the half point of split ``r`` along ``θ_r + s u`` (module docstring, 2–4):
    ``(steps, method, line minimum, the forcing offset b)``.

    The linear phase near ``θ_r`` is ``ẋ = κ x + g`` with ``g = −u·∇L(θ_r)``, the loss's slope along the section
    (zero at the symmetric plateau, a stationary point; nonzero at a rank-r saddle, the rank-r set not being
    invariant): ``x + b`` with ``b = g/κ`` grows by the optimiser's gain at ``κ`` per step (exact for the discrete
    rule too: ``x_{n+1} + b = (1 + ηκ)(x_n + b)``)."""
    from shockflow.prediction.plateau import LINEAR_FRACTION, line_scale

    top, line_min = line_scale(land, theta_r, L_r, u)
    b = -float(u @ land.grad(theta_r)) / kappa
    grid = np.linspace(0.0, line_min, 257)
    sig = np.array([_sigma(land, theta_r + s * u, r) for s in grid])
    reached = np.flatnonzero(sig >= half)
    linear_end = LINEAR_FRACTION * top
    rates = optimiser.effective_rates()

    def linear_steps(distance):
        a = d0 + b
        growth = (distance + b) / a if a > 0 else (distance - b) / -a
        return _steps_to(optimiser, kappa, math.log(max(growth, 1.0)), start)

    if reached.size and grid[reached[0]] > linear_end > d0:
        j = int(reached[0])
        s_half = float(np.interp(half, sig[j - 1:j + 1], grid[j - 1:j + 1])) if j > 0 else float(grid[0])
        n_lin = linear_steps(linear_end)
        s = np.geomspace(linear_end, s_half, INTEGRAL_POINTS)
        slope = np.array([abs(float(u @ land.grad(theta_r + x * u))) for x in s])
        t = float(np.trapezoid(1.0 / slope, s))
        i = int(start + n_lin)
        cum = np.concatenate([[0.0], np.cumsum(rates[i:])]) if i < rates.size else np.zeros(1)
        if cum[-1] >= t:    # the flow time t in steps of the scheduled rates from step i on
            k = int(np.searchsorted(cum, t))
            n_int = float(k - 1 + (t - cum[k - 1]) / (cum[k] - cum[k - 1]))
        else:
            n_int = float(cum.size - 1 + (t - cum[-1]) / rates[-1])
        return n_lin + n_int, "escape_integral", line_min, b
    # the straight section does not reach the half point before its first minimum: the linear phase to it
    # (σ_r(θ_r + s u) = s + O(s²): u is normal to the rank-r matrices)
    return linear_steps(half), "log_form", line_min, b


def mixture_chain(model, X, y, optimiser) -> MixtureChain:
    """The chain of the mixture ``model`` (at its initial parameters) on ``(X, y)`` under ``optimiser`` (module
    docstring); :class:`MixtureError` or :class:`shockflow.prediction.plateau.PlateauError` names what fails."""
    from shockflow.prediction.plateau import approach, UnitLandscape, symmetric_minimum, unstable_directions

    optimiser._check()
    land = UnitLandscape(model, X, y, ())
    K, p = land.index.shape
    d = model.input_dim
    expert = np.zeros(p, dtype=bool)
    expert[:p - d] = True                     # unit k = [expert k ; gate row k] (shockflow.models.units)
    theta0 = model.parameter_vector()
    theta_p, L_p = symmetric_minimum(land, theta0)
    escapes = []

    # 1. the averaged expert: the closed form of the symmetric flow
    cols = np.flatnonzero(expert)
    u_star, u0 = theta_p[land.index[0, cols]], land.symmetric(theta0)[land.index[0, cols]]

    def shared_grad(u):
        theta = theta_p.copy()
        theta[land.index[:, cols]] = u[None, :]
        return land.grad(theta)[land.index[:, cols]].sum(axis=0)

    h = 1e-5 * max(1.0, float(np.linalg.norm(u_star)))
    A = np.column_stack([(shared_grad(u_star + h * e) - shared_grad(u_star - h * e)) / (2 * h) for e in np.eye(cols.size)])
    a, Q = np.linalg.eigh(0.5 * (A + A.T))
    horizon = max(int(np.asarray(optimiser.learning_rates).size), 16)
    path = u_star[:, None] + Q @ ((Q.T @ (u0 - u_star))[:, None] * _relaxation(optimiser, a / K, horizon))
    norm = np.linalg.norm(path, axis=0)
    half = 0.5 * (float(np.linalg.norm(u0)) + float(np.linalg.norm(u_star)))
    hit = np.flatnonzero(norm >= half)
    if not hit.size:
        raise MixtureError("the averaged expert: its symmetric flow does not reach half its linear fit within the run")
    j = int(hit[0])
    step = 0.0 if j == 0 else (j - 1) + (half - norm[j - 1]) / (norm[j] - norm[j - 1])
    mean_dir = np.zeros_like(theta0)
    mean_dir[land.index[:, cols]] = (u_star - u0)[None, :]
    mean_dir /= np.linalg.norm(mean_dir)
    escapes.append(Escape("mean", float(step), land.symmetric(theta0), mean_dir, theta_p, float(a.min() / K),
                          float(np.linalg.norm(u0)), half, "closed_form", loss=float(land.loss_grad(land.symmetric(theta0))[0])))

    gates = land.index[:, ~expert].ravel()

    def abstain(first: int, saddle, loss: float, direction, reason: str) -> MixtureChain:
        """Splits ``first`` … K−2 predict nothing (a chart with no unstable direction): their charts stay (the
        line through the saddle along its least stable direction), so a split the run makes is a miss."""
        for r in range(first, K - 1):
            escapes.append(Escape(f"split{r}", math.nan, saddle, direction, saddle, math.nan, math.nan, math.nan,
                                  "abstain", loss=loss, reason=reason))
        return MixtureChain(tuple(escapes), K, gates, loss)

    # 2. split 0: the symmetric plateau
    reach, delta = approach(land, theta0, L_p, optimiser, theta_p)
    vals, vecs = unstable_directions(land, theta_p)
    # unstable: below the finite differences' round-off against the landscape's curvature scale
    floor = NEGATIVE_FLOOR * float(np.abs(a).max())
    negative = vals < -floor
    if not np.any(negative):
        return abstain(0, theta_p, L_p, vecs[:, 0],
                       f"the symmetric plateau (loss {L_p:.6g}) has no unstable direction (lowest eigenvalue "
                       f"{vals[0]:.3g}): the experts stay equal, the gate does not split")
    V, kappas = vecs[:, negative], -vals[negative]
    c = V.T @ delta
    lead = kappas >= kappas.max() * (1.0 - 1e-6)
    u = V[:, lead] @ c[lead]
    if not np.linalg.norm(u) > 0:
        raise MixtureError("the initial perturbation has no component on the symmetric plateau's unstable directions")
    d0 = float(np.linalg.norm(c[lead]))
    u = u / np.linalg.norm(u)
    waiting = V[:, ~lead] @ c[~lead]
    waiting_rates = (V[:, ~lead], kappas[~lead], c[~lead])
    saddle, L_s, kappa, start = theta_p, L_p, float(kappas.max()), float(reach)
    sigma0 = [_sigma(land, theta0, r) for r in range(K - 1)]
    from shockflow.prediction.plateau import PlateauError, line_scale

    for r in range(K - 1):
        try:
            line_min = line_scale(land, saddle, L_s, u)[1]
        except PlateauError as exc:   # the loss keeps falling along the section (a gate row running off)
            return abstain(r, saddle, L_s, u, f"the saddle of rank {r} (loss {L_s:.6g}): its section along the "
                                              f"unstable direction has no minimum ({exc})")
        nxt, L_next = _rank_minimiser(land, saddle + line_min * u, r + 1)
        half = 0.5 * (sigma0[r] + _sigma(land, nxt, r))
        n, method, _, offset = _exit(land, optimiser, saddle, u, L_s, d0, kappa, half, r, start)
        slope = 0.0
        if r > 0:
            slope = float(np.linalg.norm(_normal_projector(land, saddle, r)(land.grad(saddle))))
        escapes.append(Escape(f"split{r}", start + n, saddle, u, nxt, kappa, d0, half, method, start=start,
                              normal_slope=slope, loss=L_s))
        if r == K - 2:
            break
        # the next saddle: the waiting part, grown at this saddle's rates until this split's step, on its direction
        Vw, kw, cw = waiting_rates
        grown = Vw @ (cw * np.exp([_gains(optimiser, k, n, start) for k in kw])) if kw.size else waiting
        project = _normal_projector(land, nxt, r + 1)
        vals, vecs = _lowest(land, nxt, project)
        if not vals.size or vals[0] >= -floor:
            if not vals.size:
                raise MixtureError(f"the saddle of rank {r + 1}: no direction normal to it")
            return abstain(r + 1, nxt, L_next, vecs[:, 0],
                           f"the saddle of rank {r + 1} (loss {L_next:.6g}) has no unstable direction normal to it "
                           f"(lowest eigenvalue {vals[0]:.3g}): the gate stops at {r + 1} split(s)")
        negative = vals < -floor
        Vn, kn = vecs[:, negative], -vals[negative]
        cn = Vn.T @ grown
        kappa = float(kn[0])
        # the side the split escapes to: x + g/κ grows (module docstring, 3), so the saddle's slope decides it where
        # it outweighs the waiting perturbation (d0 then negative: the slope carries the mode across the saddle)
        offset = -float(Vn[:, 0] @ land.grad(nxt)) / kappa
        if not abs(cn[0] + offset) > 0:
            raise MixtureError(f"the saddle of rank {r + 1}: the waiting perturbation has no component on its "
                               f"unstable direction")
        side = 1.0 if cn[0] + offset > 0 else -1.0
        u, d0 = Vn[:, 0] * side, float(cn[0] * side)
        waiting_rates = (Vn[:, 1:], kn[1:], cn[1:])
        saddle, L_s, start = nxt, L_next, start + n
    return MixtureChain(tuple(escapes), K, gates, L_next if K > 1 else L_p)


def mixture_saddles(chain: MixtureChain) -> tuple:
    """The saddles the mixture's chain visits, as :class:`shockflow.prediction.saddle_chain.Saddle` rows (the
    ``/chain`` group, ``--json saddles``, the staircase figure): per escape the point it leaves (the initial
    symmetric point for ``mean``, the symmetric plateau for ``split0``, the rank-r saddle for ``split<r>``), reached
    at the escape's start step, with the escaping chart's rate κ (for ``mean`` the slowest relaxation rate of the
    symmetric flow) and the log of its distance to the next saddle;
    then the last saddle reached, everything before it learned.  A split with no unstable direction ends the chain
    at its saddle (nothing waits there)."""
    from shockflow.prediction.saddle_chain import Saddle

    out, learned = [], ()
    for esc in chain.escapes:
        if esc.method == "abstain":
            out.append(Saddle(learned, esc.loss, _reached(chain, learned)))
            return tuple(out)
        distance = float(np.linalg.norm(esc.target - esc.saddle))
        out.append(Saddle(learned, esc.loss, float(esc.start), {esc.label: float(esc.kappa)},
                          {esc.label: math.log(distance)} if distance > 0 else {}))
        learned = learned + (esc.label,)
    out.append(Saddle(learned, chain.final_loss, _reached(chain, learned)))
    return tuple(out)


def _reached(chain: MixtureChain, learned) -> float:
    """The step the chain reaches the saddle after the escapes ``learned``: the latest of their predicted steps."""
    steps = [e.step for e in chain.escapes if e.label in learned]
    return float(max(steps)) if steps else 0.0


def mixture_extraction(model, X, y, optimiser, **extract_kwargs):
    """``(Extraction, MixtureChain)``: the charts of :class:`shockflow.geometry.mixture.MixtureGeometry`, one per
    escape of :func:`mixture_chain` (the line through its saddle along its direction; its coordinate the order
    parameter the truth reads, :func:`shockflow.prediction.truth.mixture_strengths`), extracted and solved like any
    chart."""
    from shockflow.prediction.extraction import extract

    chain = mixture_chain(model, X, y, optimiser)
    origins, directions = [], []
    for esc in chain.escapes:
        origin = esc.saddle.copy()
        if esc.label == "mean":    # the averaged expert's chart starts where the mean expert is zero
            origin[~np.isin(np.arange(origin.size), chain.gate_entries)] = 0.0
        origins.append(origin)
        directions.append(esc.direction)
    reach = max(float(np.linalg.norm(e.target - o)) for e, o in zip(chain.escapes, origins))
    kwargs = {"origins": np.array(origins), "directions": np.array(directions), "extent": 2.0 * reach}
    extraction = extract(model, "mixture", X, y, geometry_kwargs=kwargs, charts=(None,), **extract_kwargs)
    return extraction, chain


def mixture_transitions(chain: MixtureChain, shocks, optimiser):
    """``(predicted, abstained)``: one :class:`shockflow.prediction.mapping.PredictedTransition` per escape of
    ``chain`` that predicts (method: the escape's; the chart's shock beside it), one
    :class:`shockflow.prediction.mapping.Abstention` per split with no unstable direction."""
    from shockflow.prediction.mapping import Abstention, PredictedTransition

    rates = optimiser.effective_rates()
    cum = np.concatenate([[0.0], np.cumsum(rates)])
    out, abstained = [], []
    for k, (esc, shock) in enumerate(zip(chain.escapes, shocks)):
        if esc.method == "abstain":
            abstained.append(Abstention(esc.label, f"chart {esc.label}: {esc.reason}", "no unstable direction"))
            continue
        step = esc.step
        t = float(np.interp(step, np.arange(cum.size), cum)) if step <= rates.size else \
            float(cum[-1] + (step - rates.size) * rates[-1])
        gamma = 1.0 / abs(esc.kappa) if esc.kappa else math.inf
        out.append(PredictedTransition(chart=esc.label, step=float(step), flow_step=float(step), time=t,
                                       method=esc.method, gamma_star=gamma, critical_lr=gamma,
                                       location=float(shock.location), strength=float(shock.strength), d0=esc.d0,
                                       d_exit=esc.half, d_eff=esc.d0, nu=float(shock.nu), escape_time=math.nan,
                                       saddle=k))
    return out, abstained
