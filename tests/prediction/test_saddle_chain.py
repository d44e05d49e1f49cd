"""The saddle chain's event loop (shockflow.prediction.saddle_chain) on landscapes written down by hand,
and on the default network with correlated inputs against its training run."""

import math
from dataclasses import dataclass

import numpy as np
import pytest

from shockflow.prediction.mapping import ChartShock, Optimiser, predict_transitions
from shockflow.prediction.saddle_chain import SaddleData, chain_transitions


@dataclass
class _Chart:
    label: str
    x0: float
    mirrored: bool = True


class _Landscape:
    """Saddles given as tables: ``curvature[active]`` and ``exits[active]`` per chart index; a saddle not in
    the table has the values of its longest listed prefix."""

    def __init__(self, shocks, curvature, exits=None, profiles=None):
        self.shocks = shocks
        self.charts = [_Chart(s.label, s.x0) for s in shocks]
        self._curvature, self._exits, self._profiles = curvature, exits or {}, profiles or {}

    def saddle(self, active):
        waiting = [k for k in range(len(self.shocks)) if k not in active]
        prefix = next(active[:i] for i in range(len(active), -1, -1) if active[:i] in self._curvature)
        kappa = self._curvature[prefix]
        exits = self._exits.get(prefix, {})
        return SaddleData(active, {}, 0.0, {k: kappa[k] for k in waiting},
                          {k: exits.get(k, self.shocks[k].distance(self.shocks[k].x_min)) for k in waiting}, {},
                          self._profiles.get(active, {}))


def _shock(label, gamma, x0=1e-3, x_min=1.0):
    x = np.geomspace(x0, x_min, 50)   # a linear landscape up to its minimum: the log form's exit is the minimum
    return ChartShock(label=label, x0=x0, x_min=x_min, nu=0.0, mobility_at_ridge=1.0, gamma_star=gamma,
                      location=0.0, strength=1.0, escape_x=x, escape_rate=x / gamma)


@pytest.mark.parametrize("name, momentum", [("gd", 0.0), ("momentum", 0.9), ("nesterov", 0.9)])
def test_independent_modes_give_the_single_escape_prediction(name, momentum):
    shocks = [_shock("a", 2.0), _shock("b", 5.0), _shock("c", 11.0)]
    opt = Optimiser(np.full(4000, 0.05), name, momentum)
    first = predict_transitions(shocks, opt)
    by = {p.chart: p for p in first}
    first = [by[s.label] for s in shocks]
    land = _Landscape(shocks, {(): [0.5, 0.2, 1 / 11.0]})   # the same curvature at every saddle
    steps, saddle_of, saddles, _ = chain_transitions(land, first, opt)
    # gd: exact; with momentum the later saddles use the settled root instead of the transient from rest
    assert steps == pytest.approx([p.step for p in first], rel=1e-9 if name == "gd" else 1e-3)
    assert saddle_of == [0, 1, 2] and [s.active for s in saddles] == [(), ("a",), ("a", "b"), ("a", "b", "c")]


def test_a_waiting_mode_accumulates_the_rate_of_each_saddle_it_sits_at():
    """Chart b grows at κ = 0.2 while a escapes, then at κ = 0.5 (gd: ln(1 + ηκ) per step)."""
    eta = 0.05
    shocks = [_shock("a", 2.0), _shock("b", 5.0)]
    opt = Optimiser(np.full(4000, eta))
    first = predict_transitions(shocks, opt)
    first = sorted(first, key=lambda p: p.chart)
    land = _Landscape(shocks, {(): [0.5, 0.2], (0,): [0.5, 0.5]})
    steps, _, _, _ = chain_transitions(land, first, opt)
    need = math.log(1.0 / 1e-3)
    n_a = need / math.log1p(eta * 0.5)
    covered = n_a * math.log1p(eta * 0.2)
    assert steps[0] == pytest.approx(n_a, rel=1e-9)
    assert steps[1] == pytest.approx(n_a + (need - covered) / math.log1p(eta * 0.5), rel=1e-9)


def test_a_mode_pushed_back_at_the_saddle_does_not_escape_and_a_moved_exit_counts():
    eta = 0.05
    shocks = [_shock("a", 2.0), _shock("b", 5.0), _shock("c", 8.0)]
    opt = Optimiser(np.full(2000, eta))
    first = sorted(predict_transitions(shocks, opt), key=lambda p: p.chart)
    # at the saddle of a: b is pushed back (κ < 0) and c's minimum moves twice as far from the ridge
    land = _Landscape(shocks, {(): [0.5, 0.2, 0.125], (0,): [0.5, -0.3, 0.125]}, exits={(0,): {2: 2.0}})
    steps, saddle_of, saddles, _ = chain_transitions(land, first, opt)
    assert math.isinf(steps[1])
    n_c = (math.log(2.0 / 1e-3)) / math.log1p(eta * 0.125)
    assert steps[2] == pytest.approx(n_c, rel=1e-9)
    assert saddles[1].rates["b"] == pytest.approx(-0.3 * 5.0 * 0.2, rel=1e-12)   # κ(S)/κ(∅) · 1/γ*


def test_escape_integral_charts_move_along_each_saddles_profile():
    """Two escape-integral charts with rate |a L̄'| = k x from 1e-6 to 1: a fast (k = 1); b at k = 0.1·s on the
    origin's profile and k = 0.1 once a is learned.  b covers ln(1e6)·0.1·s of its log-distance while a
    escapes, the rest at 0.1 (the former head start, now one step of the chain)."""
    x = np.geomspace(1e-6, 1.0, 4000)
    common = dict(x_min=1.2, nu=0.0, mobility_at_ridge=0.0, gamma_star=math.inf, location=0.0, strength=0.0, x0=1e-6)
    L = math.log(1e6)
    for scale in (1.0, 3.0):
        a = ChartShock(label="a", escape_x=x, escape_rate=1.0 * x, **common)
        b = ChartShock(label="b", escape_x=x, escape_rate=scale * 0.1 * x, **common)
        opt = Optimiser(np.full(10, 0.01))
        first = sorted(predict_transitions([a, b], opt), key=lambda p: p.chart)
        land = _Landscape([a, b], {(): [0.0, 0.0]}, profiles={(0,): {1: (x, 0.1 * x)}})
        steps, _, _, _ = chain_transitions(land, first, opt, horizon_factor=1e5)
        assert steps[0] * 0.01 == pytest.approx(L, rel=1e-4)
        covered = L * scale * 0.1
        assert steps[1] * 0.01 == pytest.approx(L + (L - covered) / 0.1, rel=1e-3)


# -- against training runs ------------------------------------------------------------------------------

def _run(name, overrides, tmp_path):
    from shockflow.cases import RunOptions, load_case
    from shockflow.runners.prediction import run_prediction_case

    return run_prediction_case(load_case(name, overrides=overrides),
                               RunOptions(out=str(tmp_path), quiet=True, progress=False, figures=False))


SMALL = ["data.n=2048", "data.d=3", "model.input_dim=3", "data.teacher_weights=[8.0, 3.0, 1.0]", "training.steps=2000",
         "extraction.cells=401"]


def test_correlated_inputs_three_modes_against_the_parameter_truth(tmp_path):
    """ρ = 0.3, three modes at reduced size: every mode within 10 % of its half-learned step with the chain;
    the chart of the slowest mode escapes from the saddle of the other two, and its rate there is lower
    than at the origin (the faster modes took part of its signal).  Without the chain (every chart
    escaping from the origin, extraction.sequential = false) the slowest mode comes far too early."""
    out = _run("diagonal-correlated", SMALL, tmp_path / "chain")
    c = out.comparison
    assert c.truth == "parameters" and c.recall == 1.0 and c.precision == 1.0
    assert max(m.relative_error for m in c.matches) <= 0.10
    last = max(out.stage.predicted, key=lambda p: p.step)
    assert last.saddle == 2
    origin, final = out.stage.saddles[0], out.stage.saddles[2]
    assert 0 < final.rates[last.chart] < 0.8 * origin.rates[last.chart]
    # the loss level of each saddle falls, and the last is the least-squares fit on every mode
    losses = [s.loss for s in out.stage.saddles]
    assert all(b < a for a, b in zip(losses, losses[1:])) and losses[-1] < 1e-3
    true = {t.chart: t.step for t in out.truth.transitions}
    alone = _run("diagonal-correlated", SMALL + ["extraction.sequential=false"], tmp_path / "alone")
    assert alone.stage.saddles == ()
    step = {p.chart: p.step for p in alone.stage.predicted}[last.chart]
    assert step < 0.7 * true[last.chart]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["diagonal-correlated", "diagonal-noncommuting"])
def test_saddle_chain_suite_cases_recall_and_median(name, tmp_path):
    """The issue's bar on the full-size suite cases: recall >= 90 %, median relative error <= 10 % over all
    true transitions (measured: correlated +2.0/+0.9/-0.8/-3.2 %, non-commuting +1.4/+0.8/-2.6/+1.1 %)."""
    out = _run(name, [], tmp_path)
    c = out.comparison
    assert c.truth == "parameters" and len(c.observed) == 4
    assert c.recall >= 0.9 and c.median_relative_error_all <= 0.10
    assert max(m.relative_error for m in c.matches) <= 0.10
