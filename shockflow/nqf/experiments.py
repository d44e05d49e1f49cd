"""The built-in neural-quadratic-form experiments (issue 7), each a function returning a dict with stable keys.

Every experiment builds the NQF prediction from the model itself (structure matrices → shared
eigenbasis → Lotka–Volterra coefficients → closed forms) and compares it with a NumPy training run
of the actual network (:func:`shockflow.training.train`). Times are gradient-flow times t = η × step.

* :func:`five_mode_switch_on` — five orthogonal modes with strengths halving, small init, full-batch GD:
  measured against exact switch-on times (relative errors; goal < 2 %).
* :func:`power_law_modes_experiment` — many modes with ζ_k ∝ k^{-α2}, V_k ∝ k^{-α1}: fitted decay exponent
  against (α1 − 1)/α2 and the finite-ε slope (closed form for all modes, a diagonal network as check).
* :func:`fourier_feature_exponents` — the Fourier-feature MLP with b_k = k^{-β}: fitted exponent against
  (2β − 1)/(θ + β) for several θ.
* :func:`failure_modes` — the five-mode teacher on the tanh Fourier MLP with large initialisation, Adam and
  heavy-ball momentum.
* :func:`shock_link_reference` — the closed-form switch-on times of the five-mode case and the docs/theory.md §1
  escape-time reading t ≈ γ* ln(d_exit/d_0), for the main job's shock pipeline to compare against.

Plus :func:`order_parameters_vs_network`: the closed (μ, M) SGD dynamics against SGD on the network.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import hadamard

from shockflow import models
from shockflow.data import Dataset, fourier_grid
from shockflow.nqf.lotka_volterra import (
    lv_coefficients, mode_strengths, orthogonal_features_solution, shared_eigenbasis,
)
from shockflow.nqf.order_parameters import OrderState, simulate_order_parameters
from shockflow.nqf.power_law import (
    asymptotic_exponent, excess_loss, finite_eps_slope, fit_power_law, power_law_modes, switch_on_window,
)
from shockflow.nqf.structure_matrices import structure_matrices, unit_layout
from shockflow.nqf.switch_on import escape_time_prediction, leading_switch_on_time, measured_switch_on, switch_on_time
from shockflow.training import TrainSettings, train
from shockflow.training.batching import BatchSampler

__all__ = ["mode_analysis", "five_mode_switch_on", "power_law_modes_experiment", "fourier_feature_exponents",
           "failure_modes", "shock_link_reference", "order_parameters_vs_network", "five_mode_data",
           "HALVING_STRENGTHS", "halving_strengths"]

HALVING_STRENGTHS = (1.0, 0.5, 0.25, 0.125, 0.0625)


def halving_strengths(n: int) -> tuple[float, ...]:
    """(1, 1/2, 1/4, …) with n entries."""
    return tuple(2.0 ** -k for k in range(int(n)))


# ----------------------------------------------------------------------------------- shared pieces
def mode_analysis(model, X, y, tol: float = 1e-8) -> dict:
    """NQF reduction of ``model`` on (X, y): eigenbasis P, eigenvalues λ (m, p), LV rates r and C, z0."""
    form = structure_matrices(model, X)
    if form.has_linear_terms:
        raise ValueError(f"model: {model.name!r} has linear terms (g or B) at zero weights; the LV reduction "
                         "needs g = B = 0")
    P, lam = shared_eigenbasis(form.A, tol=tol)
    r, C = lv_coefficients(lam, y, form.loss)
    theta = model.parameter_vector()
    W = form.layout.unit_matrix(theta)
    return {"form": form, "P": P, "lam": lam, "r": r, "C": C, "z0": mode_strengths(W @ W.T, P)}


def design_strengths(rates=None, coupling: float | None = None, network: str = "diagonal", grid: int = 16,
                     modes: int | None = None):
    """The teacher strengths (and the diagonal network's input scale) whose Lotka–Volterra rates are
    ``rates`` (r_k in mode order; None: the rates of the halving strengths of ``modes`` modes) and, if
    given, whose self-interaction is C_kk = ``coupling``.

    Read off :func:`mode_analysis` of the unit design rather than from a formula: r_k is linear in the
    strength s_k (y is), and for the diagonal network A(x) = Diag(x)/4 is linear in x, so scaling the
    inputs by c multiplies r_k and C_kk by c².  Returns ``(strengths, input_scale)``."""
    K = len(rates) if rates is not None else int(modes)
    if K < 1:
        raise ValueError(f"rates: expected at least one mode, found {K}")
    if coupling is not None and network != "diagonal":
        raise ValueError("coupling: C is set through the input scale, which only the diagonal network has")
    unit = five_mode_data(np.ones(K), network, grid=grid)
    an = mode_analysis(_five_mode_model(network, K, 1e-6), unit.X, unit.y)
    P = an["P"]
    # the eigenbasis may be permuted: mode k of the design is the eigenvector on input feature k
    feature = np.argmax(np.abs(P), axis=0)[: an["r"].size]
    r_unit = np.zeros(K)
    c_unit = np.zeros(K)
    for j, k in enumerate(feature):
        if k < K:
            r_unit[k], c_unit[k] = an["r"][j], an["C"][j, j]
    if not np.all(r_unit > 0):
        raise ValueError("rates: the unit design has a mode without a positive rate")
    r_target = r_unit * np.asarray(halving_strengths(K)) if rates is None else np.asarray(rates, float)
    if not np.all(r_target > 0):
        raise ValueError(f"rates: expected positive numbers, found {list(r_target)}")
    scale2 = 1.0
    if coupling is not None:
        if not coupling > 0 or not np.allclose(c_unit, c_unit[0], rtol=1e-12):
            raise ValueError(f"coupling: expected a positive number for a design with one C_kk, found {coupling!r}")
        scale2 = float(coupling) / c_unit[0]
    return tuple((r_target / (scale2 * r_unit)).tolist()), float(np.sqrt(scale2))


def _mode_observable(model, P):
    layout = unit_layout(model)

    def z(net):
        W = layout.unit_matrix(net.parameter_vector())
        return mode_strengths(W @ W.T, P)

    return z


def five_mode_data(strengths=HALVING_STRENGTHS, network: str = "diagonal", grid: int = 16,
                   input_scale: float = 1.0) -> Dataset:
    """Orthogonal five-mode teacher data.

    ``diagonal``: inputs = ``input_scale`` × 5 columns of the 8×8 Hadamard matrix (XᵀX = 8 c² I), y = X β*
    with β* = strengths.  ``fourier``: a uniform grid of ``grid`` points, y = Σ_k b_k ψ_k(x) with b_k = strengths.
    """
    s = np.asarray(strengths, float)
    K = s.size
    if network == "diagonal":
        Hm = hadamard(8).astype(float)
        if K > 7:
            raise ValueError(f"strengths: at most 7 modes for the Hadamard design, found {K}")
        X = float(input_scale) * Hm[:, 1:K + 1]
        return Dataset(X, X @ s, {"name": "nqf_five_mode", "network": network, "strengths": s.tolist()})
    if network == "fourier":
        if input_scale != 1.0:
            raise ValueError("input_scale: the Fourier features fix the input scale; it applies to the diagonal network")
        if not 2 * K < grid:
            raise ValueError(f"grid: expected more than {2 * K} points for {K} orthogonal modes, found {grid}")
        x = np.arange(grid) / grid
        k = np.arange(1, K + 1)
        y = np.sqrt(2.0) * np.cos(2 * np.pi * np.outer(x, k)) @ s
        return Dataset(x[:, None], y, {"name": "nqf_five_mode", "network": network, "strengths": s.tolist(),
                                       "grid": int(grid)})
    raise ValueError(f"network: expected 'diagonal' or 'fourier', found {network!r}")


def _five_mode_model(network: str, K: int, eps: float, init: str = "constant", seed: int = 0):
    if network == "diagonal":
        # z_k(0) = u_k² = ε
        return models.build("diagonal", input_dim=K, init=init, loss="mse", init_scale=math.sqrt(eps), seed=seed)
    # fourier: "+" mode z_k = (W_k + a_k)²/2 = 2 init_scale² = ε
    return models.build("fourier", modes=K, init=init, loss="mse", init_scale=math.sqrt(eps / 2), seed=seed)


def _growing(r, C, z0):
    return (r > 0) & (np.diag(C) > 0) & (z0 > 0) & (r > np.diag(C) * z0)


def _loss_transitions(steps, loss, lr_eff: float, t_pred: np.ndarray) -> dict:
    """Midpoints of :func:`shockflow.prediction.transitions.find_transitions` on the loss curve (the s = 1/2 point of
    each drop, i.e. ρ = 1/2), in time units, matched to the nearest predicted switch-on (in ln t)."""
    from shockflow.prediction import find_transitions

    steps, loss = np.asarray(steps, float), np.asarray(loss, float)
    keep = steps > 0
    try:
        found = find_transitions(steps[keep], loss[keep])
    except ValueError:
        found = []
    mids = np.array([tr.midpoint * lr_eff for tr in found])
    matched, rel = [], []
    for tp in t_pred:
        if mids.size == 0:
            matched.append(float("nan"))
            rel.append(float("nan"))
            continue
        tm = float(mids[np.argmin(np.abs(np.log(mids / tp)))])
        matched.append(tm)
        rel.append((tm - tp) / tp)
    return {"matched": matched, "relative_error": rel, "count": int(mids.size)}


# ----------------------------------------------------------------------------------- experiment 1
def five_mode_switch_on(eps: float = 1e-6, lr: float = 0.01, strengths=HALVING_STRENGTHS, rho: float = 0.5,
                        network: str = "diagonal", optimizer: str = "gd", init: str = "constant",
                        steps_factor: float = 1.4, momentum: float = 0.9, seed: int = 0,
                        amplitude: float = 1.0, steps: int | None = None, grid: int = 16,
                        input_scale: float = 1.0) -> dict:
    """Switch-on times of the network against the exact closed form (and the ln(1/ε) leading term).

    ``amplitude`` multiplies the strengths (the tanh Fourier MLP stays in its quadratic regime only for
    small targets: its learned W_k a_k = √P b_k/s_k, and tanh's cubic term couples mode k to mode 3k).

    For momentum the prediction uses the effective step η/(1 − μ) (heavy ball in the gradient-flow limit);
    for Adam no NQF prediction exists: time is step × lr, and what is comparable is the ratio of successive
    switch-on times (``successive_ratio_*``; ≈ ζ_k/ζ_{k+1} = 2 for halving strengths under gradient flow).
    ``steps`` overrides the run length (default: ``steps_factor`` × the last predicted switch-on).
    ``grid``: the Fourier network's sample points; ``input_scale`` multiplies the diagonal network's
    inputs (see :func:`design_strengths` for strengths and scale from given rates r_k and C).
    """
    strengths = tuple(float(amplitude) * np.asarray(strengths, float))
    data = five_mode_data(strengths, network, grid=grid, input_scale=input_scale)
    K = len(strengths)
    model = _five_mode_model(network, K, eps, init=init, seed=seed)
    an = mode_analysis(model, data.X, data.y)
    r, C, z0 = an["r"], an["C"], an["z0"]
    grow = _growing(r, C, z0)
    Ckk = np.diag(C)
    z_inf = np.where(r > 0, r / np.where(Ckk > 0, Ckk, 1.0), 0.0)
    t_pred = np.full(r.size, np.nan)
    t_pred[grow] = switch_on_time(r[grow], Ckk[grow], z0[grow], rho)
    t_lead = np.full(r.size, np.nan)
    t_lead[grow] = leading_switch_on_time(r[grow], eps)
    lr_eff = lr / (1.0 - momentum) if optimizer in ("momentum", "nesterov") else lr
    t_max = float(np.nanmax(t_pred)) if np.any(grow) else 10.0 / lr_eff
    steps = int(math.ceil(steps_factor * t_max / lr_eff)) if steps is None else int(steps)
    settings = TrainSettings(optimizer=optimizer, lr=lr, steps=steps, momentum=momentum, observe_every=1,
                             log_every=1, n_snapshots=2, seed=seed)
    rec = train(model, data, settings, {"z": _mode_observable(model, an["P"])}, quiet=True)
    t = rec.observables["step"] * lr_eff
    z = rec.observables["z"]
    t_meas = measured_switch_on(t, z, np.where(grow, z_inf, np.inf), rho)
    order = np.argsort(-np.where(grow, r, -np.inf))[: int(np.count_nonzero(grow))]
    rel = (t_meas[order] - t_pred[order]) / t_pred[order]
    t_loss = _loss_transitions(rec.series["step"], rec.series["loss"], lr_eff, t_pred[order])
    return {
        "network": network, "optimizer": optimizer, "amplitude": float(amplitude), "eps": eps, "lr": lr, "lr_effective": lr_eff, "rho": rho,
        "strengths": list(map(float, strengths)), "steps": steps,
        "rates": r[order].tolist(), "self_interaction": Ckk[order].tolist(), "z0": z0[order].tolist(),
        "z_inf": z_inf[order].tolist(),
        "t_predicted": t_pred[order].tolist(), "t_leading": t_lead[order].tolist(),
        "t_measured": t_meas[order].tolist(), "relative_error": rel.tolist(),
        "max_abs_relative_error": float(np.nanmax(np.abs(rel))) if rel.size else float("nan"),
        "t_loss_transitions": t_loss["matched"], "loss_transitions_detected": t_loss["count"],
        "loss_transition_relative_error": t_loss["relative_error"],
        "successive_ratio_predicted": (t_pred[order][1:] / t_pred[order][:-1]).tolist(),
        "successive_ratio_measured": (t_meas[order][1:] / t_meas[order][:-1]).tolist(),
        "final_loss": float(rec.series["loss"][-1]),
        "curves": {"t": t, "z": z[:, order], "loss_t": rec.series["step"] * lr_eff, "loss": rec.series["loss"]},
    }


# ----------------------------------------------------------------------------------- experiment 2
def _diagonal_power_law_run(spec, lr: float, t_end: float, log_points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Diagonal network with one-hot inputs x_k = s_k e_k realising the modes of ``spec`` (mse):
    λ_k = s_k/4, r_k = 2 s_k y_k/m, C_kk = s_k²/(2m), V_k = y_k²/m, z_k = u_k²."""
    m = spec.zeta.size
    y = np.sqrt(m * spec.V)
    s = m * spec.zeta / (2 * y)
    data = Dataset(np.diag(s), y, {"name": "nqf_power_law_modes", "modes": int(m)})
    net = models.build("diagonal", input_dim=m, init="constant", loss="mse", init_scale=1.0)
    net.params["u"][:] = np.sqrt(spec.z0)
    steps = int(math.ceil(t_end / lr))
    rec = train(net, data, TrainSettings(optimizer="gd", lr=lr, steps=steps, log_every=max(1, steps // 4000),
                                         n_snapshots=2), quiet=True)
    L = rec.series["loss"]
    return rec.series["step"] * lr, L


def power_law_modes_experiment(n_modes: int = 1000, alpha1: float = 2.0, alpha2: float = 0.8, eps: float = 1e-6,
                               beta: float = 0.0, window_modes=(10, 100), network_check: bool = True,
                               lr: float = 0.05) -> dict:
    """Closed-form excess loss of ``n_modes`` modes, the fitted exponent and its predictions.

    Predictions reported: (α1 − 1)/α2 (ε → 0, infinitely many modes), the finite-ε slope at the window's
    geometric-middle mode, and the exponent of the step model Σ_{k: t_k > t} V_k with the exact switch-on
    times (finite ε and finite K, no logistic widths), fitted on the same window.
    """
    spec = power_law_modes(n_modes, alpha1, alpha2, eps, beta=beta)
    k_lo, k_hi = window_modes
    if not 1 <= k_lo < k_hi <= n_modes:
        raise ValueError(f"window_modes: expected 1 <= k_lo < k_hi <= n_modes = {n_modes}, found {window_modes}")
    t_lo, t_hi = switch_on_window(spec, k_lo, k_hi)
    t = np.logspace(np.log10(t_lo) - 1.5, np.log10(t_hi) + 0.5, 3000)
    E = excess_loss(t, spec)
    fit = fit_power_law(t, E, t_lo, t_hi)
    t_k = np.log((spec.zeta - spec.C * spec.z0) / (spec.C * spec.z0)) / (spec.a * spec.zeta)
    order = np.argsort(t_k)
    tail = np.cumsum(spec.V[order][::-1])[::-1]  # Σ of V over modes not yet on, in switch-on order
    step_E = np.interp(np.log(t), np.log(t_k[order]), np.r_[tail[1:], 0.0], left=tail[0], right=0.0)
    step_fit = fit_power_law(t, np.maximum(step_E, 1e-300), t_lo, t_hi)
    k_mid = int(round(math.sqrt(k_lo * k_hi)))
    log_ratio = float(np.log(spec.z_inf[k_mid - 1] / spec.z0[k_mid - 1]))
    out = {
        "n_modes": int(n_modes), "alpha1": alpha1, "alpha2": alpha2, "eps": eps, "beta": beta,
        "window_modes": [int(k_lo), int(k_hi)], "window_times": [t_lo, t_hi],
        "fit": fit.as_dict(), "exponent_asymptotic": asymptotic_exponent(alpha1, alpha2),
        "exponent_finite_eps": float(finite_eps_slope(alpha1, alpha2, log_ratio, beta)),
        "exponent_finite_eps_window": [float(finite_eps_slope(alpha1, alpha2, np.log(spec.z_inf[k - 1] / spec.z0[k - 1]),
                                                              beta)) for k in (k_lo, k_hi)],
        "exponent_step_model": step_fit.exponent,
        "curves": {"t": t, "loss": E},
    }
    if network_check:
        tn, Ln = _diagonal_power_law_run(spec, lr, 1.2 * t_hi)
        Lc = excess_loss(tn, spec)
        sel = (tn >= t_lo) & (tn <= t_hi)
        out["network_max_relative_deviation"] = float(np.max(np.abs(Ln[sel] / Lc[sel] - 1.0)))
        out["network_fit"] = fit_power_law(tn, Ln, t_lo, t_hi).as_dict()
        out["curves"]["network_t"], out["curves"]["network_loss"] = tn, Ln
    return out


# ----------------------------------------------------------------------------------- experiment 3
def fourier_feature_exponents(thetas=(0.0, 0.5, 1.0), beta: float = 1.0, modes: int = 32, eps: float = 1e-6,
                              amplitude: float = 0.01, lr_rate: float = 0.1, window_modes=(2, 10),
                              grid: int | None = None) -> dict:
    """Fourier-feature MLP f = P^{-1/2} Σ_k W_k tanh(k^{-θ} a_k ψ_k(x)) on b_k = A k^{-β} (mse, GD, W = a = √(ε/2)).

    The learned weights are W_k a_k = √P b_k/s_k, so the amplitude A keeps tanh in its linear range (the
    exponent does not depend on A; A = 1 with P = 64 drives tanh to saturation and the harmonics of mode k
    feed mode 3k). The step is η = ``lr_rate``/ζ_1. Fitting window: NQF switch-on times of modes k_lo … k_hi.
    Reported per θ: the network's fitted exponent, the fitted exponent of the NQF closed-form loss
    Σ_k V_k (1 − z_k/z_k∞)² on the same times (the theory without its asymptotics), the step model
    Σ_{t_k > t} V_k, (2β − 1)/(θ + β), and the finite-ε slope (α1 = 2β, α2 = θ + β).
    """
    grid = 2 * modes + 2 if grid is None else grid
    base = fourier_grid(grid, modes, beta)
    data = Dataset(base.X, amplitude * base.y, {**base.spec, "amplitude": float(amplitude)})
    out = {"beta": beta, "modes": modes, "grid": grid, "eps": eps, "amplitude": amplitude, "window_modes": list(window_modes),
           "runs": []}
    k_lo, k_hi = window_modes
    for theta in thetas:
        net = models.build("fourier", modes=modes, theta=float(theta), init="constant", loss="mse",
                           init_scale=math.sqrt(eps / 2))
        an = mode_analysis(net, data.X, data.y)
        r, C, z0 = an["r"], np.diag(an["C"]), an["z0"]
        grow = _growing(r, an["C"], z0)
        order = np.argsort(-r[grow])
        rg, Cg, zg = r[grow][order], C[grow][order], z0[grow][order]
        V = rg ** 2 / (8 * Cg)
        t_on = switch_on_time(rg, Cg, zg)
        t_lo, t_hi = float(t_on[k_lo - 1]), float(t_on[k_hi - 1])
        lr = lr_rate / rg[0]
        steps = int(math.ceil(1.3 * t_hi / lr))
        rec = train(net, data, TrainSettings(optimizer="gd", lr=lr, steps=steps, log_every=max(1, steps // 5000),
                                             n_snapshots=2), quiet=True)
        t, L = rec.series["step"] * lr, rec.series["loss"]
        fit = fit_power_law(t, L, t_lo, t_hi)
        z = orthogonal_features_solution(t, rg, Cg, zg)
        L_nqf = np.sum(V * (1 - z * Cg / rg) ** 2, axis=1)
        steps_model = np.array([V[t_on > s].sum() for s in t])
        k_mid = int(round(math.sqrt(k_lo * k_hi)))
        sel = (t >= t_lo) & (t <= t_hi)
        out["runs"].append({
            "theta": float(theta), "lr": lr, "steps": steps, "fit": fit.as_dict(),
            "fit_nqf": fit_power_law(t, L_nqf, t_lo, t_hi).as_dict(),
            "exponent_step_model": fit_power_law(t, np.maximum(steps_model, 1e-300), t_lo, t_hi).exponent,
            "exponent_predicted": (2 * beta - 1) / (theta + beta),
            "exponent_finite_eps": float(finite_eps_slope(2 * beta, theta + beta,
                                                          np.log(rg[k_mid - 1] / Cg[k_mid - 1] / zg[k_mid - 1]))),
            "network_vs_nqf_max_relative_deviation": float(np.max(np.abs(L[sel] / L_nqf[sel] - 1))),
            "window_times": [t_lo, t_hi],
            "curves": {"t": t, "loss": L, "loss_nqf": L_nqf},
        })
    return out


# ----------------------------------------------------------------------------------- experiment 4
def failure_modes(eps_small: float = 1e-6, init_large: float = 0.3, amplitude: float = 0.01, lr: float = 1.0,
                  adam_lr: float = 1e-3, momentum: float = 0.9) -> dict:
    """The five-mode teacher (b_k = A·2^{-(k-1)}) on the tanh Fourier MLP: small init + GD (baseline, where the
    NQF prediction holds), large initialisation, Adam, heavy-ball momentum.

    ``init_large`` is the std of a normal initialisation of W and a (z0 = O(init_large²), compared with the
    target's z∞ = 2√P b_k); the prediction then uses the measured z0 (modes that start above half strength
    have no switch-on). Momentum is run with η(1 − μ) so that its effective step equals the baseline's.
    Adam runs as many steps as the baseline; its times are step × adam_lr.
    """
    base = five_mode_switch_on(eps=eps_small, lr=lr, network="fourier", amplitude=amplitude)
    runs = {
        "baseline_gd": base,
        "momentum": five_mode_switch_on(eps=eps_small, lr=lr * (1 - momentum), network="fourier",
                                        amplitude=amplitude, optimizer="momentum", momentum=momentum),
        "adam": five_mode_switch_on(eps=eps_small, lr=adam_lr, network="fourier", amplitude=amplitude,
                                    optimizer="adam", steps=base["steps"]),
        "large_init": five_mode_switch_on(eps=2 * init_large ** 2, lr=lr, network="fourier", amplitude=amplitude,
                                          init="normal", steps=base["steps"]),
    }
    summary = {}
    for name, res in runs.items():
        summary[name] = {k: res[k] for k in ("max_abs_relative_error", "relative_error", "t_measured", "t_predicted",
                                             "successive_ratio_measured", "successive_ratio_predicted",
                                             "final_loss", "z0", "steps")}
    return {"runs": summary, "details": runs}


# ----------------------------------------------------------------------------------- experiment 5
def shock_link_reference(eps: float = 1e-6, strengths=HALVING_STRENGTHS, rho: float = 0.5) -> dict:
    """Closed-form switch-on times of the five-mode diagonal case and the docs/theory.md §1 escape reading.

    ``t_switch_on``: exact t*(ρ); ``t_leading``: ln(1/ε)/ζ; ``t_escape``: γ* ln(d_exit/d_0) from the flat
    coordinate r = √z of each mode (γ* = −1/L̄''(0), d_exit = argmin L̄, d_0 = √z0), computed from the loss
    by finite differences; ``escape_relative_difference`` = (t_escape − t_switch_on)/t_switch_on.
    The main job's shock-predicted transitions (gradient-flow time) are to be compared with ``t_switch_on``.
    """
    data = five_mode_data(strengths, "diagonal")
    model = _five_mode_model("diagonal", len(strengths), eps)
    an = mode_analysis(model, data.X, data.y)
    r, C, z0, lam = an["r"], np.diag(an["C"]), an["z0"], an["lam"]
    order = np.argsort(-r)
    t_exact = switch_on_time(r[order], C[order], z0[order], rho)
    esc = [escape_time_prediction(lam[:, k], data.y, z0[k], an["form"].loss) for k in order]
    t_esc = np.array([e.time for e in esc])
    return {
        "eps": eps, "rho": rho, "strengths": list(map(float, strengths)),
        "rates": r[order].tolist(), "t_switch_on": t_exact.tolist(),
        "t_leading": leading_switch_on_time(r[order], eps).tolist(),
        "gamma_star": [e.gamma_star for e in esc], "d0": [e.d0 for e in esc], "d_exit": [e.d_exit for e in esc],
        "t_escape": t_esc.tolist(), "escape_relative_difference": ((t_esc - t_exact) / t_exact).tolist(),
    }


# ----------------------------------------------------------------------------------- (μ, M) vs network
def order_parameters_vs_network(model, data: Dataset, lr: float, steps: int, batch_size: int | None = None,
                                weight_decay: float = 0.0, seed: int = 0, threshold: float = 0.1) -> dict:
    """SGD on the network (training loop) against the closed (μ, M) update on the same batches.

    Returns the relative Frobenius error ‖M_net − M_nqf‖/‖M_net‖ per step, the largest unit norm of the
    network, and where the error first exceeds ``threshold`` (step and unit norm there).
    """
    form = structure_matrices(model, data.X)
    layout = form.layout
    W0 = layout.unit_matrix(model.parameter_vector())
    n = data.n
    B = n if batch_size is None else int(batch_size)
    opt = "gd" if B == n else "sgd"
    settings = TrainSettings(optimizer=opt, lr=lr, steps=steps, batch_size=None if B == n else B,
                             weight_decay=weight_decay, observe_every=1, n_snapshots=2, seed=seed)
    # the same batch sequence as the training loop (training/loop.py: SeedSequence(seed).spawn(2)[0])
    sampler = BatchSampler(np.arange(n, dtype=np.float64)[:, None], np.zeros(n), B,
                           np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[0]))
    batches = [sampler.next()[0][:, 0].astype(np.int64).copy() for _ in range(steps)]

    def M_of(net):
        W = layout.unit_matrix(net.parameter_vector())
        return np.concatenate([(W @ W.T).ravel(), [np.max(np.linalg.norm(W, axis=0))]])

    rec = train(model.copy(), data, settings, {"M": M_of}, quiet=True)
    obs = rec.observables["M"]
    p = form.unit_dim
    M_net = obs[:, :-1].reshape(-1, p, p)
    unit_norm = obs[:, -1]
    traj = simulate_order_parameters(form, np.asarray(data.y, float), OrderState.from_units(W0), lr, steps,
                                     batches=batches, weight_decay=weight_decay)
    err = np.linalg.norm(M_net - traj.M, axis=(1, 2)) / np.maximum(np.linalg.norm(M_net, axis=(1, 2)), 1e-300)
    bad = np.nonzero(err > threshold)[0]
    first = int(bad[0]) if bad.size else None
    return {
        "steps": rec.observables["step"].tolist(), "relative_error": err.tolist(), "unit_norm": unit_norm.tolist(),
        "threshold": threshold, "first_step_above": first,
        "unit_norm_at_departure": None if first is None else float(unit_norm[first]),
        "initial_unit_norm": float(unit_norm[0]),
        "max_error_while_small": float(np.max(err[: first if first else len(err)])),
    }
