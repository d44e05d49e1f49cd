"""The ``nqf`` case kind: one built-in neural-quadratic-form experiment per case file (docs/theory.md §2).

    kind = "nqf"
    [experiment]
    kind = "five_mode"        # five_mode | power_law | fourier | failure_modes | shock_link
    eps = 1e-6
    lr = 0.01

The runner calls the matching function of :mod:`shockflow.nqf.experiments`, writes
``<out>/<name>.h5`` (a netCDF-4/CF theory result file, :mod:`shockflow.storage.theory_results`:
the result with its curves, per-mode arrays over the dimension ``mode``; atomic) and, unless
figures are off, ``<out>/<name>.png``; ``--json`` prints the result without the curves.
Registered at import of this module (:func:`shockflow.cases.register_kind`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from shockflow.cases.kinds import CaseKind, register_kind
from shockflow.cases.schema import at_least, greater_than, interval, setting
from shockflow.storage.atomic import committed_together

__all__ = ["NQFCase", "FiveMode", "PowerLaw", "FourierExponents", "FailureModes", "ShockLink", "NQFOutcome",
           "run_nqf_case", "NQF_KIND"]

_EPS = interval(0.0, 1.0, closed="neither")


@dataclass(frozen=True)
class FiveMode:
    """Orthogonal modes with halving strengths, small init, full-batch GD: switch-on times vs the closed form."""

    TAG: ClassVar[str] = "five_mode"
    modes: int = setting(5, doc="Number of modes (strengths 1, 1/2, 1/4, …; at most 7 for the diagonal network).",
                         bounds=interval(1, 7))
    network: str = setting("diagonal", doc="`diagonal` (exact quadratic form) or `fourier` (tanh Fourier MLP).",
                           choices=("diagonal", "fourier"))
    eps: float = setting(1e-6, doc="Initial mode strength z_k(0) = ε.", bounds=_EPS)
    lr: float = setting(0.01, doc="Learning rate η (time t = η × step).", bounds=greater_than(0))
    amplitude: float = setting(1.0, doc="Multiplies the strengths (use 0.01 for the Fourier MLP to stay quadratic).",
                               bounds=greater_than(0))
    rho: float = setting(0.5, doc="Switch-on = reaching the fraction ρ of z_k(∞).", bounds=_EPS)
    optimizer: str = setting("gd", doc="Optimizer of the network run.", choices=("gd", "momentum", "nesterov", "adam"))
    momentum: float = setting(0.9, doc="Momentum coefficient (momentum, nesterov).", bounds=interval(0, 1, "left"))
    rates: tuple[float, ...] = setting((), doc="The design's Lotka–Volterra rates r_k directly (docs/theory.md §2), "
                                               "e.g. [1, 0.5, 0.25, 0.125, 0.0625]; sets the number of modes and "
                                               "replaces the halving strengths and `amplitude`.", bounds=greater_than(0))
    coupling: float | None = setting(None, doc="The self-interaction C = C_kk of every mode (diagonal network: set "
                                               "through the input scale); default: the design's own (1/2).",
                                     bounds=greater_than(0))
    grid: int = setting(16, doc="Sample points of the Fourier network's uniform grid (more than 2 × modes).",
                        bounds=at_least(3))

    #: the network run must resolve the switch-ons: at least this many steps (and the fastest mode's step
    #: lr × rate below 1, where explicit GD on its quadratic form stays close to the flow it discretises)
    MIN_STEPS: ClassVar[int] = 100

    def estimated_steps(self) -> float:
        """Steps of the network run, from the leading switch-on time ln(1/ε)/ζ of the weakest mode (strength
        amplitude · 2^-(modes-1)), the way :func:`shockflow.nqf.experiments.five_mode_switch_on` sizes it."""
        lr_eff = self.lr / (1.0 - self.momentum) if self.optimizer in ("momentum", "nesterov") else self.lr
        weakest = self.amplitude * 2.0 ** -(self.modes - 1)
        # divided one factor at a time: the product of a tiny rate and a weak mode can underflow to 0
        return 1.4 * math.log(1.0 / self.eps) / weakest / lr_eff

    def check(self):
        modes = len(self.rates) or self.modes
        if self.network == "fourier" and 2 * modes >= self.grid:
            yield "modes", f"the Fourier grid has {self.grid} points: expected fewer than {self.grid / 2:g} modes, found {modes}"
        if len(self.rates) > 7 and self.network == "diagonal":
            yield "rates", f"at most 7 modes for the diagonal network's Hadamard design, found {len(self.rates)}"
        if self.coupling is not None and self.network != "diagonal":
            yield "coupling", "C is set through the input scale, which only the diagonal network has"
        if (self.rates or self.coupling is not None) and self.amplitude != 1.0:
            yield "amplitude", "expected the default 1 when `rates` or `coupling` set the design"
        if self.optimizer != "adam":
            if not self.lr * self.amplitude < 1.0:
                yield "lr", (f"expected lr x amplitude < 1 (gradient descent on the strongest mode, strength "
                             f"{self.amplitude:g}, must follow its flow), found lr = {self.lr:g}")
            elif self.estimated_steps() < self.MIN_STEPS:
                yield "lr", (f"expected a step that resolves the switch-ons (at least {self.MIN_STEPS} steps), found "
                             f"lr = {self.lr:g}: about {self.estimated_steps():.3g} steps")


@dataclass(frozen=True)
class PowerLaw:
    """Many modes with ζ_k ∝ k^{-α2}, V_k ∝ k^{-α1}: fitted loss exponent vs (α1 − 1)/α2 and the finite-ε slope."""

    TAG: ClassVar[str] = "power_law"
    modes: int = setting(1000, doc="Number of modes.", bounds=at_least(4))
    alpha1: float = setting(2.0, doc="V_k ∝ k^{-α1} (α1 > 1).", bounds=greater_than(1))
    alpha2: float = setting(0.8, doc="ζ_k ∝ k^{-α2}.", bounds=greater_than(0))
    eps: float = setting(1e-6, doc="Initial strength scale ε.", bounds=_EPS)
    beta: float = setting(0.0, doc="z_k(0) = ε k^{-β}.", bounds=at_least(0))
    window: tuple[int, ...] = setting((10, 100), doc="Fitting window: switch-on times of modes k_lo and k_hi.",
                                      bounds=at_least(1))
    network_check: bool = setting(True, doc="Also train a diagonal network realising the modes.")
    lr: float = setting(0.05, doc="Learning rate of the network check.", bounds=greater_than(0))

    def check(self):
        if len(self.window) != 2 or not self.window[0] < self.window[1] <= self.modes:
            yield "window", f"expected [k_lo, k_hi] with k_lo < k_hi <= modes = {self.modes}, found {list(self.window)}"


@dataclass(frozen=True)
class FourierExponents:
    """Fourier-feature MLP on b_k = A k^{-β}: fitted exponents vs (2β − 1)/(θ + β)."""

    TAG: ClassVar[str] = "fourier"
    thetas: tuple[float, ...] = setting((0.0, 0.5, 1.0), doc="Feature decays θ (s_k = k^{-θ}).", bounds=at_least(0))
    beta: float = setting(1.0, doc="Target decay β (> 1/2).", bounds=greater_than(0.5))
    modes: int = setting(32, doc="Number of Fourier modes P.", bounds=at_least(4))
    eps: float = setting(1e-6, doc="Initial strength ε.", bounds=_EPS)
    amplitude: float = setting(0.01, doc="Target amplitude A.", bounds=greater_than(0))
    lr_rate: float = setting(0.1, doc="Step η = lr_rate/ζ_1.", bounds=greater_than(0))
    window: tuple[int, ...] = setting((2, 10), doc="Fitting window: switch-on times of modes k_lo and k_hi.",
                                      bounds=at_least(1))
    grid: int | None = setting(None, doc="Sample points x_i = i/grid of the uniform grid (more than 2 × modes, so that "
                                         "the P cosine features stay orthogonal; default 2 × modes + 2).",
                               bounds=at_least(1))

    def check(self):
        if len(self.window) != 2 or not self.window[0] < self.window[1] <= self.modes:
            yield "window", f"expected [k_lo, k_hi] with k_lo < k_hi <= modes = {self.modes}, found {list(self.window)}"
        if self.grid is not None and not self.grid > 2 * self.modes:
            yield "grid", f"expected more than 2 × modes = {2 * self.modes} points, found {self.grid}"


@dataclass(frozen=True)
class FailureModes:
    """The five-mode teacher on the tanh Fourier MLP with large init, Adam and momentum."""

    TAG: ClassVar[str] = "failure_modes"
    eps: float = setting(1e-6, doc="Small initial strength of the baseline.", bounds=_EPS)
    init_large: float = setting(0.3, doc="Std of the large normal initialisation.", bounds=greater_than(0))
    amplitude: float = setting(0.01, doc="Target amplitude.", bounds=greater_than(0))
    lr: float = setting(1.0, doc="GD learning rate of the baseline.", bounds=greater_than(0))
    adam_lr: float = setting(1e-3, doc="Adam learning rate.", bounds=greater_than(0))
    momentum: float = setting(0.9, doc="Heavy-ball coefficient (run with η(1 − μ)).", bounds=interval(0, 1, "left"))


@dataclass(frozen=True)
class ShockLink:
    """Closed-form switch-on times of the five-mode case and the docs/theory.md §1 escape reading γ* ln(d_exit/d_0)."""

    TAG: ClassVar[str] = "shock_link"
    eps: float = setting(1e-6, doc="Initial mode strength ε.", bounds=_EPS)
    rho: float = setting(0.5, doc="Switch-on fraction ρ.", bounds=_EPS)


@dataclass(frozen=True)
class NQFCase:
    """A neural-quadratic-form experiment: `shockflow run CASE` runs it against a NumPy training run."""

    experiment: FiveMode | PowerLaw | FourierExponents | FailureModes | ShockLink = setting(
        doc="The experiment and its settings.", tag="kind")


@dataclass(frozen=True, eq=False)
class NQFOutcome:
    """What the command line reports for an ``nqf`` case."""

    case: str
    experiment: str
    result: dict
    result_file: Path
    seconds: float
    figures: tuple[Path, ...] = field(default=())

    def as_dict(self) -> dict:
        return {"case": self.case, "experiment": self.experiment, "result_file": str(self.result_file),
                "seconds": self.seconds, "figures": [str(p) for p in self.figures], "result": self.result}

    def table(self) -> str:
        r, lines = self.result, [f"case {self.case} ({self.experiment}) in {self.seconds:.1f} s -> {self.result_file}"]
        if self.experiment in ("five_mode", "shock_link"):
            measured = r.get("t_measured", r.get("t_escape"))
            lines.append(f"{'mode':>4}  {'rate':>9}  {'t* exact':>10}  {'ln(1/eps)/zeta':>14}  {'measured':>10}  {'rel.err':>8}")
            for k, rate in enumerate(r["rates"]):
                exact = r.get("t_predicted", r.get("t_switch_on"))[k]
                rel = (measured[k] - exact) / exact
                lines.append(f"{k + 1:4d}  {rate:9.4g}  {exact:10.5g}  {r['t_leading'][k]:14.5g}  "
                             f"{measured[k]:10.5g}  {rel:8.2%}")
        elif self.experiment == "power_law":
            f = r["fit"]
            lines.append(f"fitted exponent {f['exponent']:.4f} (stderr {f['stderr']:.4f}, sub-window spread "
                         f"{f['spread']:.4f}); (α1−1)/α2 = {r['exponent_asymptotic']:.4f}; finite-ε slope "
                         f"{r['exponent_finite_eps']:.4f}; step model {r['exponent_step_model']:.4f}")
        elif self.experiment == "fourier":
            for run in r["runs"]:
                lines.append(f"θ = {run['theta']:.2f}: fitted {run['fit']['exponent']:.4f} ± {run['fit']['spread']:.4f}, "
                             f"NQF closed form {run['fit_nqf']['exponent']:.4f}, (2β−1)/(θ+β) = "
                             f"{run['exponent_predicted']:.4f}, finite-ε {run['exponent_finite_eps']:.4f}")
        else:
            for name, run in r["runs"].items():
                lines.append(f"{name:>12}: max |rel. error| {run['max_abs_relative_error']:.3g}; successive ratios "
                             f"{np.round(run['successive_ratio_measured'], 3).tolist()} (predicted "
                             f"{np.round(run['successive_ratio_predicted'], 3).tolist()})")
        lines += [f"figure: {p}" for p in self.figures]
        return "\n".join(lines)


_MODE = ("rates", "strengths", "self_interaction", "z0", "z_inf", "t_predicted", "t_leading", "t_measured",
         "relative_error", "t_loss_transitions", "loss_transition_relative_error", "t_switch_on", "gamma_star",
         "d0", "d_exit", "t_escape", "escape_relative_difference")
#: dimensions and descriptions of an nqf result file (shockflow.storage.theory_results); gradient-flow
#: time t = η × step is dimensionless, as every quantity of the quadratic form
NQF_LAYOUT_DIMS = {
    **{name: ("mode",) for name in _MODE},
    "successive_ratio_predicted": ("mode_pair",), "successive_ratio_measured": ("mode_pair",),
    "window_modes": ("bound",), "window_times": ("bound",), "exponent_finite_eps_window": ("bound",),
    "local_exponents": ("sub_window",),
    "curves/t": ("t",), "curves/z": ("t", "mode"), "curves/loss_t": ("loss_t",), "curves/loss": ("t",),
    "curves/loss_nqf": ("t",), "curves/network_t": ("network_t",), "curves/network_loss": ("network_t",),
}
NQF_DESCRIPTIONS = {
    "rates": ("Lotka-Volterra rate r_k of the mode", "1"), "strengths": ("teacher strength of the mode", "1"),
    "self_interaction": ("self-interaction C_kk", "1"), "z0": ("initial mode strength z_k(0)", "1"),
    "z_inf": ("final mode strength z_k(inf)", "1"),
    "t_predicted": ("switch-on time, closed form", "1"), "t_leading": ("switch-on time, leading term ln(1/eps)/zeta", "1"),
    "t_measured": ("switch-on time measured in the network run", "1"),
    "relative_error": ("(measured - predicted) / predicted switch-on time", "1"),
    "t_loss_transitions": ("loss transition time read from the loss curve", "1"),
    "loss_transition_relative_error": ("(loss transition - predicted) / predicted", "1"),
    "successive_ratio_predicted": ("t_{k+1} / t_k, closed form", "1"),
    "successive_ratio_measured": ("t_{k+1} / t_k, measured", "1"),
    "t_switch_on": ("switch-on time, closed form", "1"), "gamma_star": ("shock formation time of the mode", "1"),
    "d0": ("initial distance to the ridge", "1"), "d_exit": ("exit distance", "1"),
    "t_escape": ("escape time gamma* ln(d_exit / d0)", "1"),
    "escape_relative_difference": ("(escape - switch-on) / switch-on time", "1"),
    "window_modes": ("fitting window: modes k_lo, k_hi", "1"), "window_times": ("fitting window in time", "1"),
    "exponent_finite_eps_window": ("finite-eps slope at the window's ends", "1"),
    "local_exponents": ("exponent fitted on each sub-window", "1"),
    "curves/t": ("gradient-flow time t = lr x step", "1"), "curves/z": ("mode strength z_k(t)", "1"),
    "curves/loss_t": ("gradient-flow time of the logged loss", "1"), "curves/loss": ("loss", "1"),
    "curves/loss_nqf": ("loss of the NQF closed form", "1"),
    "curves/network_t": ("gradient-flow time of the network run", "1"),
    "curves/network_loss": ("loss of the network run", "1"),
}


def nqf_layout(experiment: str):
    """The :class:`~shockflow.storage.theory_results.Layout` of an ``experiment``'s result (the five-mode
    run logs its loss at its own times ``loss_t``; the power laws on the grid ``t``)."""
    from shockflow.storage.theory_results import Layout

    dims = {**NQF_LAYOUT_DIMS, **({"curves/loss": ("loss_t",)} if experiment in ("five_mode", "failure_modes") else {})}
    return Layout(dims=dims, describe=NQF_DESCRIPTIONS, labels={"bound": ("lower", "upper")})


def _document(result: dict) -> dict:
    """The result as the file keeps it, curves included.  The failure modes keep each run whole
    (``details``: the five-mode result with its curves, of which ``runs`` is a summary) under ``runs``,
    so nothing is stored twice; :func:`_from_document` gives the result back."""
    if "details" in result:
        return {**{k: v for k, v in result.items() if k not in ("runs", "details")}, "runs": result["details"]}
    return dict(result)


def _from_document(doc: dict) -> dict:
    """The experiment's result from the file's document (inverse of :func:`_document`)."""
    doc = {k: v for k, v in doc.items() if k != "experiment"}
    if doc.get("runs") and isinstance(doc["runs"], dict) and all("curves" in r for r in doc["runs"].values()):
        details = doc["runs"]
        doc["runs"] = {name: {k: run[k] for k in _RUN_SUMMARY if k in run} for name, run in details.items()}
        doc["details"] = details
    return doc


#: what :func:`shockflow.nqf.experiments.failure_modes` reports of each run
_RUN_SUMMARY = ("max_abs_relative_error", "relative_error", "t_measured", "t_predicted", "successive_ratio_measured",
                "successive_ratio_predicted", "final_loss", "z0", "steps")


def _plain(value):
    """The result without curves/details, with NaN as None (JSON)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in ("curves", "details")}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (float, np.floating)):
        return None if not math.isfinite(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _run_experiment(e):
    from shockflow.nqf import experiments as ex

    if e.TAG == "five_mode":
        strengths, scale = ex.halving_strengths(e.modes), 1.0
        if e.rates or e.coupling is not None:
            strengths, scale = ex.design_strengths(e.rates or None, e.coupling, e.network, grid=e.grid, modes=e.modes)
        return ex.five_mode_switch_on(eps=e.eps, lr=e.lr, strengths=strengths, rho=e.rho,
                                      network=e.network, optimizer=e.optimizer, momentum=e.momentum,
                                      amplitude=e.amplitude, grid=e.grid, input_scale=scale)
    if e.TAG == "power_law":
        return ex.power_law_modes_experiment(n_modes=e.modes, alpha1=e.alpha1, alpha2=e.alpha2, eps=e.eps,
                                             beta=e.beta, window_modes=tuple(e.window),
                                             network_check=e.network_check, lr=e.lr)
    if e.TAG == "fourier":
        return ex.fourier_feature_exponents(thetas=tuple(e.thetas), beta=e.beta, modes=e.modes, eps=e.eps,
                                            amplitude=e.amplitude, lr_rate=e.lr_rate, window_modes=tuple(e.window),
                                            grid=e.grid)
    if e.TAG == "failure_modes":
        return ex.failure_modes(eps_small=e.eps, init_large=e.init_large, amplitude=e.amplitude, lr=e.lr,
                                adam_lr=e.adam_lr, momentum=e.momentum)
    return ex.shock_link_reference(eps=e.eps, rho=e.rho)


def _figures(e, result, out: Path, name: str, options=None) -> tuple[Path, ...]:
    from shockflow.figures import save_figure
    from shockflow.nqf.figures import mode_strengths_figure as _modes, power_law_figure as _power

    fmt, dpi = getattr(options, "figure_format", None), getattr(options, "dpi", None)

    def mode_strengths_figure(res, path):
        return save_figure(_modes(res), path, format=fmt, dpi=dpi)

    def power_law_figure(t, loss, fit, predicted, path, **kw):
        return save_figure(_power(t, loss, fit, predicted, **kw), path, format=fmt, dpi=dpi)

    if e.TAG == "five_mode":
        return (mode_strengths_figure(result, out / f"{name}.png"),)
    if e.TAG == "power_law":
        c = result["curves"]
        extra = {"diagonal network, GD": (c["network_t"], c["network_loss"])} if "network_t" in c else None
        return (power_law_figure(c["t"], c["loss"], result["fit"],
                                 {"(α1−1)/α2": result["exponent_asymptotic"],
                                  "finite-ε": result["exponent_finite_eps"]},
                                 out / f"{name}.png", extra=extra,
                                 title=(f"{result['n_modes']} modes, V_k ∝ k^−{result['alpha1']:g}, ζ_k ∝ k^−"
                                        f"{result['alpha2']:g}, ε = {result['eps']:g}: loss exponent against "
                                        f"(α1 − 1)/α2")),)
    if e.TAG == "fourier":
        paths = []
        for run in result["runs"]:
            c = run["curves"]
            paths.append(power_law_figure(c["t"], c["loss"], run["fit"],
                                          {"(2β−1)/(θ+β)": run["exponent_predicted"],
                                           "finite-ε": run["exponent_finite_eps"]},
                                          out / f"{name}-theta{run['theta']:g}.png", label="loss, Fourier-feature MLP",
                                          title=(f"Fourier features s_k = k^−{run['theta']:g}, target b_k ∝ k^−"
                                                 f"{result['beta']:g}: loss exponent against (2β − 1)/(θ + β)"),
                                          extra={"NQF closed form": (c["t"], c["loss_nqf"])}))
        return tuple(paths)
    if e.TAG == "failure_modes":
        return tuple(mode_strengths_figure(res, out / f"{name}-{key}.png") for key, res in result["details"].items())
    return ()


@committed_together
def run_nqf_case(case, options) -> NQFOutcome:
    """Run the case's experiment; write ``<out>/<name>.h5`` (atomic) and figures; return an :class:`NQFOutcome`."""
    from shockflow.cases.errors import CaseError
    from shockflow.cases.schema import to_plain
    from shockflow.progress import status
    from shockflow.logs import package_versions
    from shockflow.storage.theory_results import write_theory_result

    show = options.progress and not options.quiet
    start = time.perf_counter()
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    e = case.settings.experiment
    with status(f"{e.TAG} experiment of {case.name}", enabled=show):
        try:
            result = _run_experiment(e)
        except ValueError as exc:
            if not str(exc).startswith("zeta:"):
                raise
            # a mode that starts at or past what it learns (ζ ≤ C z0): the initial scale eps is too large for a
            # switch-on; the case's setting, not a failure of the run
            raise CaseError.at(case, "experiment.eps", f"{e.eps:g} starts a mode at or past its learned value (ζ ≤ C "
                                                       f"z0): there is no switch-on to time; choose a smaller "
                                                       f"initial scale") from None
    path = out / f"{case.name}.h5"
    with status(f"write {path}", enabled=show):
        write_theory_result(path, {"experiment": e.TAG, **_document(result)}, nqf_layout(e.TAG), case=case,
                            seed=options.seed if options.seed is not None else case.seed,
                            settings=to_plain(case.settings), versions=package_versions(),
                            wall_time=time.perf_counter() - start)
    figures = ()
    if options.figures:
        with status("figures", enabled=show):
            figures = _figures(e, result, out, case.name, options)
    return NQFOutcome(case.name, e.TAG, _plain(result), path, time.perf_counter() - start, figures)


def reopen(result, path: Path) -> NQFOutcome:
    """The outcome of a run, from its result file (:mod:`shockflow.runners.theories`)."""
    tag = result.document["experiment"]
    return NQFOutcome(result.case_name, tag, _plain(_from_document(result.document)), path, result.wall_time)


def redraw(result, out: Path, stem: str, options) -> tuple[Path, ...]:
    """The run's figures from its result file alone."""
    from types import SimpleNamespace

    tag = result.document["experiment"]
    return _figures(SimpleNamespace(TAG=tag), _from_document(result.document), out, stem, options)


NQF_KIND = register_kind(CaseKind(
    name="nqf", settings=NQFCase, run=run_nqf_case, command="run",
    description="neural quadratic forms: switch-on times, power laws and their failure, against NumPy training",
))
