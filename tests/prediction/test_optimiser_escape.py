"""The linearised escape per optimiser (docs/theory.md §6, "Optimisers") against the project's own update rules.

On the exactly quadratic ridge ``L(θ) = −κθ²/2`` the iterates of every rule grow linearly in ``θ``,
so the step at which ``θ_n/θ_0`` first reaches ``exp(G)`` is a number the training code itself
computes; :meth:`Optimiser.steps_for_growth` must find it without running the optimizer.
"""

import math

import numpy as np
import pytest

from shockflow.prediction.mapping import Optimiser, PredictionError, steps_for_growth
from shockflow.training.optimizers import make_optimizer
from shockflow.training.settings import TrainSettings


def _run_rule(name: str, mu: float, rates: np.ndarray, kappa: float, growth: float) -> float:
    """The fractional step (log-linear between steps) at which the real optimizer's θ reaches exp(growth)."""
    params = {"theta": np.array([1.0])}
    opt = make_optimizer(params, TrainSettings(optimizer=name, momentum=mu, lr=float(rates[0]), steps=rates.size,
                                                batch_size=1 if name == "sgd" else None))
    logs = [0.0]
    for n in range(100000):
        grads = {"theta": -kappa * params["theta"].copy()}
        opt.step(params, grads, float(rates[min(n, rates.size - 1)]))
        logs.append(math.log(params["theta"][0]))
        if logs[-1] >= growth:
            k = len(logs) - 1
            return k - 1 + (growth - logs[k - 1]) / (logs[k] - logs[k - 1])
    raise AssertionError("the optimizer never reached the growth")


@pytest.mark.parametrize("name, mu", [("gd", 0.0), ("sgd", 0.0), ("momentum", 0.9), ("momentum", 0.5),
                                      ("nesterov", 0.9), ("nesterov", 0.3)])
@pytest.mark.parametrize("schedule", ["constant", "decaying"])
def test_steps_for_growth_match_the_update_rules(name, mu, schedule):
    kappa, growth = 1.0 / 0.25, math.log(5.65 / 1e-3)
    steps = 4000
    rates = np.full(steps, 0.004) if schedule == "constant" else 0.01 / (1.0 + np.arange(steps) / 50.0)
    predicted = Optimiser(rates, name, mu).steps_for_growth(growth, 1.0 / kappa)
    assert predicted == pytest.approx(_run_rule(name, mu, rates, kappa, growth), rel=1e-9, abs=1e-9)


def test_past_the_schedule_the_last_rate_continues():
    kappa, growth = 2.0, math.log(1e4)
    rates = np.full(30, 0.01)   # far too few steps: most of the escape happens after the schedule ends
    for name, mu in (("momentum", 0.9), ("nesterov", 0.9), ("gd", 0.0)):
        predicted = Optimiser(rates, name, mu).steps_for_growth(growth, 1.0 / kappa)
        assert predicted > rates.size
        assert predicted == pytest.approx(_run_rule(name, mu, rates, kappa, growth), rel=1e-9)


def test_momentum_is_not_its_gradient_flow_limit():
    # the old model η/(1 − μ) ignores the velocity's transient: at μ = 0.9 it is early by ~1/(1 − μ) steps
    # per e-fold of transient, and by far more when ηκ is not small against (1 − μ)²
    kappa, growth, mu = 1.0 / 0.25, math.log(5.65 / 1e-3), 0.9
    rates = np.full(2000, 0.004)
    exact = Optimiser(rates, "momentum", mu).steps_for_growth(growth, 1.0 / kappa)
    flow_limit = steps_for_growth(growth, rates / (1.0 - mu), 1.0 / kappa)
    assert exact - flow_limit > 5.0


def test_constant_rate_closed_form():
    # x_n = c1 ρ1^n + c2 ρ2^n with x_0 = 1, x_1 = 1 + ηκ (heavy ball from rest)
    eta, kappa, mu, growth = 0.01, 3.0, 0.8, math.log(1e6)
    b = 1.0 + mu + eta * kappa
    r1, r2 = (b + math.sqrt(b * b - 4 * mu)) / 2, (b - math.sqrt(b * b - 4 * mu)) / 2
    c1 = (1.0 + eta * kappa - r2) / (r1 - r2)
    # at large n the ρ2 term is negligible: n = (G − ln c1) / ln ρ1
    expected = (growth - math.log(c1)) / math.log(r1)
    got = Optimiser(np.full(10, eta), "momentum", mu).steps_for_growth(growth, 1.0 / kappa)
    assert got == pytest.approx(expected, rel=1e-6)


def test_adam_is_refused():
    with pytest.raises(PredictionError, match="adam"):
        Optimiser(np.full(5, 0.01), "adam").steps_for_growth(1.0, 1.0)


def test_adam_is_refused_by_validate_before_any_training(tmp_path, capsys):
    from shockflow.cli import main

    code = main(["validate", "two-layer-staircase", "--set", "training.optimizer=adam"])
    assert code == 2
    err = capsys.readouterr().err
    assert "two-layer-staircase.toml" in err and "training.optimizer" in err and "adam" in err
    out = tmp_path / "out"
    assert main(["run", "two-layer-staircase", "--set", "training.optimizer=adam", "--out", str(out), "--quiet"]) == 2
    assert not out.exists() or not any(out.iterdir())   # refused before the training log is written
    assert main(["validate", "two-layer-staircase", "--set", "training.optimizer=nesterov"]) == 0


def test_adam_is_refused_by_validate_on_the_automatic_charts_too(capsys):
    # no [geometry] table: `shockflow run` charts the network automatically and refuses adam before training;
    # validate said "valid" (the case's own check refuses it only beside an explicit geometry)
    from shockflow.cli import main

    assert main(["validate", "mlp-tanh-teacher", "--set", "training.optimizer=adam"]) == 2
    err = capsys.readouterr().err
    assert "mlp-tanh-teacher.toml" in err and "training.optimizer" in err and "'adam'" in err
    assert main(["validate", "mlp-tanh-teacher", "--set", "training.optimizer=momentum"]) == 0


def test_escape_rates_are_the_flow_limit_for_gd_and_the_rule_s_growth_with_momentum():
    rates = np.full(50, 0.002)
    gd = Optimiser(rates, "gd").escape_rates(0.35)
    np.testing.assert_array_equal(gd, rates)
    gamma = 0.35
    for name, mu in (("momentum", 0.9), ("nesterov", 0.9)):
        opt = Optimiser(rates, name, mu)
        got = opt.escape_rates(gamma)
        # the rule's own growth per step on the linear ridge, read off its iterated recurrence past the transient
        g1, g2 = math.log(1e3), math.log(1e3) + 10.0
        per_step = (g2 - g1) / (opt.steps_for_growth(g2, gamma) - opt.steps_for_growth(g1, gamma))
        flow = rates[0] / (1 - mu)
        # the correction: the rule's growth against that of a plain step of the flow-limit rate
        assert got[0] == pytest.approx(flow * per_step / math.log1p(flow / gamma), rel=1e-9)
        assert got[0] < flow   # here ηκ = 0.0057 is not small against (1 − μ)² = 0.01: momentum is slower
        # in the flow limit (ηκ ≪ (1 − μ)²) the correction vanishes
        tiny = Optimiser(np.full(5, 1e-7), name, mu).escape_rates(gamma)
        np.testing.assert_allclose(tiny, 1e-7 / (1 - mu), rtol=1e-4)


@pytest.mark.parametrize("command", ["validate", "run", "forecast"])
def test_weight_decay_is_refused_before_any_training(tmp_path, capsys, command):
    # no part of the prediction models it: the predicted steps were those of λ = 0 to the last decimal
    from shockflow.cli import main

    out = tmp_path / "out"
    extra = [] if command == "validate" else ["--out", str(out)]
    assert main([command, "deep-linear-3", "--set", "training.weight_decay=0.02", *extra]) == 2
    err = capsys.readouterr().err
    assert "deep-linear-3.toml" in err and "training.weight_decay" in err and "Traceback" not in err
    assert not out.exists() or not any(out.rglob("*.h5"))
