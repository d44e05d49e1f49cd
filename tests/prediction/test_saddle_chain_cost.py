"""The saddle chain's cost mechanisms (shockflow.prediction.saddle_chain), each against the path it replaced,
patched back in: the predicted steps and saddle levels within a stated tolerance, in fewer network passes.

- ``Landscape._path_loss``: the loss on a waiting chart's escape path read from an interpolant of the path's own
  span, not of the whole chart box (``chart_loss_at``): the same steps to 1e-9, fewer parameter sets evaluated;
- ``plateau.line_scale``: the scan along an unstable direction in blocks up to its first minimum, by the loss alone
  (``UnitLandscape.loss``: no backward pass), once per saddle and direction: the mixture's chain bit for bit the one
  of the full scan by ``loss_and_grad`` at every call, in fewer forward passes.
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


def _full_scan(land, theta_p, L_p, u):
    """``line_scale`` as it was: all 257 points of every scan, by ``loss_grad``, at every call."""
    import math

    import numpy as np

    reach = max(1.0, float(np.linalg.norm(theta_p)) / math.sqrt(land.index.shape[0]))
    for _ in range(8):
        s = np.linspace(0.0, reach, 257)
        L = np.array([land.loss_grad(theta_p + si * u)[0] for si in s])
        interior = np.flatnonzero((L[1:-1] <= L[:-2]) & (L[1:-1] <= L[2:])) + 1
        if interior.size:
            j = int(interior[0])
            half = L_p - 0.5 * (L_p - float(L[j]))
            return float(s[int(np.flatnonzero(L[: j + 1] <= half)[0])]), float(s[j])
        reach *= 4.0
    raise AssertionError("no minimum")


def test_the_blocked_line_scan_gives_the_full_scans_mixture_chain_bit_for_bit(monkeypatch):
    import numpy as np

    from shockflow import models
    import shockflow.prediction.plateau as plateau
    from shockflow.prediction.gate import mixture_chain
    from shockflow.prediction.mapping import Optimiser

    net = models.build(name="moe", input_dim=6, experts=3, init_scale=1e-4, seed=1)
    teacher = models.build(name="moe", input_dim=6, experts=3, init_scale=1.5, seed=11)
    X = np.random.default_rng(3).standard_normal((1024, 6))
    y = teacher.forward(X)
    forwards = [0]
    original = type(net)._forward

    def counted(self, *args, **kwargs):
        forwards[0] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(net), "_forward", counted)
    land = plateau.UnitLandscape(net, X, y)
    theta = net.parameter_vector() + 0.3 * np.random.default_rng(0).standard_normal(net.num_parameters)
    assert land.loss(theta) == land.loss_grad(theta)[0]     # the same number, without the backward pass
    runs = []
    for scan in (plateau.line_scale, _full_scan):
        monkeypatch.setattr(plateau, "line_scale", scan)
        forwards[0] = 0
        chain = mixture_chain(net, X, y, Optimiser(np.full(2000, 0.1)))
        runs.append(([e.step for e in chain.escapes], [e.method for e in chain.escapes], forwards[0]))
    (steps, methods, passes), (full_steps, full_methods, full_passes) = runs
    assert steps == full_steps and methods == full_methods and len(steps) == 3
    assert passes < 0.8 * full_passes, (passes, full_passes)


def test_the_own_path_interpolant_gives_the_direct_paths_steps(monkeypatch):
    """``AutoGeometry.aligned_escape`` reads a chain mode's own path below r_1 (about 500 profile points) from its
    interpolant: the same steps and saddle levels as its direct evaluation at every point, in fewer passes."""
    auto = importlib.import_module("shockflow.geometry.auto")
    fits = []
    original = auto.interpolated_reader

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        fits.append(out is not None)
        return out

    monkeypatch.setattr(auto, "interpolated_reader", spy)
    steps, levels, passes = _forecast("deep-mlp-tanh", DEEP, monkeypatch)
    assert fits and all(fits)                       # the own path's interpolant converged at every profile
    monkeypatch.setattr(auto, "interpolated_reader", lambda *args, **kwargs: None)   # every point (before)
    direct_steps, direct_levels, direct_passes = _forecast("deep-mlp-tanh", DEEP, monkeypatch)
    assert steps == pytest.approx(direct_steps, rel=1e-9)
    assert levels == pytest.approx(direct_levels, rel=1e-12)
    assert passes < 0.5 * direct_passes
