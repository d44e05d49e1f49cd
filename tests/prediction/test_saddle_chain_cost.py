"""The saddle chain's cost mechanisms (shockflow.prediction.saddle_chain), each against the path it replaced,
patched back in: the predicted steps and saddle levels within a stated tolerance, in fewer network passes.

- ``Landscape._path_loss``: the loss on a waiting chart's escape path read from an interpolant of the path's own
  span, not of the whole chart box (``chart_loss_at``): the same steps to 1e-9, fewer parameter sets evaluated.
"""

import importlib

import pytest

bl = importlib.import_module("shockflow.geometry.batched_loss")

#: a reduced deep-mlp-tanh (the relaxing chain, escape-integral charts at every saddle)
DEEP = ["data.n=256", "training.steps=400"]


def _forecast(name, overrides, monkeypatch):
    """The forecast's predicted steps, saddle levels, and the parameter sets the chart losses evaluated."""
    from shockflow.cases import load_case
    from shockflow.runners.forecast import forecast_stage

    counted = [0]
    original = bl._evaluated

    def counting(model, P, X, y, batch, outputs):
        counted[0] += batch
        return original(model, P, X, y, batch, outputs)

    with monkeypatch.context() as m:
        m.setattr(bl, "_evaluated", counting)
        case = load_case(name, overrides)
        stage = forecast_stage(case, case.seed or 0)[0]
    return [p.step for p in stage.predicted], [s.loss for s in stage.saddles], counted[0]


@pytest.mark.slow
def test_the_escape_path_interpolant_gives_the_box_interpolants_steps(monkeypatch):
    from shockflow.prediction.saddle_chain import Landscape

    calls = []
    original = Landscape._path_loss

    def spy(self, *args):
        out = original(self, *args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(Landscape, "_path_loss", spy)
    steps, levels, passes = _forecast("deep-mlp-tanh", DEEP, monkeypatch)
    assert calls and all(calls)                     # the path's interpolant converged at every escape profile
    monkeypatch.setattr(Landscape, "_path_loss", lambda self, *args: None)   # the box's interpolant (before)
    box_steps, box_levels, box_passes = _forecast("deep-mlp-tanh", DEEP, monkeypatch)
    assert steps == pytest.approx(box_steps, rel=1e-9)
    assert levels == pytest.approx(box_levels, rel=1e-12)
    assert passes < box_passes
