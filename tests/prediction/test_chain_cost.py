"""The prediction's cost on the model side, each mechanism against the exact path it replaced.

- :func:`shockflow.geometry.batched_loss.line_losses`: the losses along an automatic chart's section (a line in
  parameter space) from the data products made once per line, equal to the pointwise batched losses to 1e-13;
- :func:`shockflow.geometry.chart_interpolant.interpolated_reader`: the chart loss on a bracket read from a
  Chebyshev interpolant, within its bound inside the bracket and exact outside;
- the saddle chain's minimum searches on interpolated chart losses (``Landscape._reader``) and on line losses:
  the predicted steps of ``mlp-tanh-teacher`` (reduced) within 1e-6 of the chain on direct pointwise losses, the
  saddle levels within 1e-9, in fewer network passes.
"""

import importlib

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.data import build_dataset
from shockflow.geometry.chart_interpolant import interpolated_reader
from shockflow.geometry.flat import unflatten

bl = importlib.import_module("shockflow.geometry.batched_loss")   # the module (the package exports the function)


@pytest.mark.parametrize("spec", [
    dict(name="mlp", input_dim=6, width=5, output_dim=3, activation="tanh", bias=True),
    dict(name="mlp", input_dim=6, width=5, output_dim=1, activation="erf"),
    dict(name="mean_field", input_dim=6, width=5, output_dim=2, activation="tanh"),
    dict(name="cnn2d", input_size=[4, 5], in_channels=2, out_channels=3, kernel_size=[2, 3], bias=True, output_dim=2),
    dict(name="cnn1d", input_size=6, in_channels=1, out_channels=2, kernel_size=3),
    dict(name="fourier", modes=4, theta=0.5),
    dict(name="attention_qk", d_model=4, d_k=2, heads=2),
    dict(name="attention", d_model=4, d_k=2, d_v=3, heads=2),
])
def test_line_losses_are_the_pointwise_losses(spec):
    rng = np.random.default_rng(2)
    model = models.build(**spec, init_scale=0.5, seed=1)
    X = rng.standard_normal((300, *(4 if s is None else s for s in model.input_shape)))   # attention: 4 tokens
    y = rng.standard_normal((300, model.output_dim)) if model.output_dim > 1 else rng.standard_normal(300)
    base = model.parameter_vector()
    direction = rng.standard_normal(base.size)
    r = np.linspace(0.0, 3.0, 11)
    P = unflatten(model, base[None] + r[:, None] * direction[None])
    pointwise = bl.batched_loss(model, P, X, y)
    along = bl.line_losses(model, base, direction, r, X, y)
    np.testing.assert_allclose(along, pointwise, rtol=1e-13)
    # a second call on the same line reads the kept data products: the same numbers
    np.testing.assert_array_equal(bl.line_losses(model, base, direction, r, X, y), along)


def test_line_losses_leave_moments_models_and_other_families_to_the_pointwise_path():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((50, 4)), rng.standard_normal((50, 2))
    linear = models.build("mlp", input_dim=4, width=3, output_dim=2, activation="identity", seed=0)
    theta = linear.parameter_vector()
    assert bl.line_losses(linear, theta, theta, np.ones(2), X, y) is None       # exact from the data moments
    deep = models.build("deep_mlp", input_dim=4, widths=[3, 3], output_dim=2, activation="tanh", seed=0)
    theta = deep.parameter_vector()
    assert bl.line_losses(deep, theta, theta, np.ones(2), X, y) is None         # no line form: pointwise


def test_the_interpolated_reader_is_within_its_bound_inside_and_exact_outside():
    model = models.build("mlp", input_dim=8, width=6, output_dim=2, activation="tanh", init_scale=1e-2, seed=0)
    data = build_dataset("linear_teacher", n=400, d=8, singular_values=[3.0, 1.5], noise=0.01, seed=0)
    kwargs, selectors, key = geometry.geometry_class("auto").discover_charts(model, data.X, data.y, {})
    geo = geometry.build("auto", model=model, **{**kwargs, key: selectors[0], "extent": 4.0})
    calls = []

    def loss(p):
        calls.append(len(p))
        return geo.chart_loss(np.asarray(p).reshape(-1, 1), data.X, data.y)

    read = interpolated_reader(loss, 0.5, 2.5)
    assert read is not None and sum(calls) == read.interpolant.evaluations <= 65
    x = np.linspace(0.5, 2.5, 501)
    direct = geo.chart_loss(x[:, None], data.X, data.y)
    assert np.max(np.abs(read(x) - direct)) <= 10 * max(read.interpolant.bound, 1e-15 * np.max(direct))
    before = sum(calls)
    outside = np.array([0.1, 3.0])
    np.testing.assert_array_equal(read(outside), geo.chart_loss(outside[:, None], data.X, data.y))
    assert sum(calls) == before + 2
    assert interpolated_reader(lambda p: np.abs(np.asarray(p)[:, 0] - 0.3), 0.0, 1.0) is None   # a kink: refused


MLP = ["data.n=1024", "training.steps=600", "extraction.cells=401"]


def test_the_chain_on_interpolated_line_losses_gives_the_direct_chains_steps(monkeypatch):
    import shockflow.prediction.saddle_chain as sc
    from shockflow.cases import load_case
    from shockflow.geometry.base import Geometry
    from shockflow.runners.prediction import predict_from_start
    from shockflow.runners.training import build_model_and_data

    case = load_case("mlp-tanh-teacher", overrides=MLP)
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    settings = case.settings.training.train_settings(case.seed or 0)
    passes = []
    evaluated = bl._evaluated

    def counted(model, P, X, y, batch, outputs):
        passes[-1] += batch
        return evaluated(model, P, X, y, batch, outputs)

    monkeypatch.setattr(bl, "_evaluated", counted)
    line = bl.line_losses

    def counted_line(model, base, direction, r, X, y):
        out = line(model, base, direction, r, X, y)
        if out is not None:
            passes[-1] += np.size(r)
        return out

    monkeypatch.setattr(bl, "line_losses", counted_line)
    passes.append(0)
    fast = predict_from_start(case, model.copy(), data, settings)

    def direct(self, geo, k, lo, hi, **kwargs):
        return (lambda x: Geometry.chart_loss(geo, np.abs(np.asarray(x, dtype=np.float64)).reshape(-1, 1),
                                              self.X, self.y)), False

    monkeypatch.setattr(sc.Landscape, "_reader", direct)
    monkeypatch.setattr(bl, "line_losses", lambda *args: None)
    passes.append(0)
    slow = predict_from_start(case, model.copy(), data, settings)
    assert len(fast.predicted) == len(slow.predicted) == 5
    assert [p.step for p in fast.predicted] == pytest.approx([p.step for p in slow.predicted], rel=1e-6)
    assert [s.loss for s in fast.saddles] == pytest.approx([s.loss for s in slow.saddles], rel=1e-9)
    assert passes[0] < 0.8 * passes[1]   # measured: 1600 against 2295


def test_a_newly_escaped_chart_moves_from_its_measured_minimum(monkeypatch, count_line_points):
    """Landscape._move of the chart that has just escaped searches a bracket around its minimum as the previous
    saddle measured it on the same section (_minimum_before), not the whole chart box: the same saddles and steps
    (the searches' resolution, 1e-8 relative) in fewer chart-loss points."""
    import shockflow.prediction.saddle_chain as sc
    from shockflow.cases import load_case
    from shockflow.runners.prediction import predict_from_start
    from shockflow.runners.training import build_model_and_data

    case = load_case("mlp-tanh-teacher", overrides=MLP)
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    settings = case.settings.training.train_settings(case.seed or 0)
    points = count_line_points()
    warm = predict_from_start(case, model.copy(), data, settings)
    n_warm, points[0] = points[0], 0
    monkeypatch.setattr(sc.Landscape, "_minimum_before", lambda self, active: None)
    cold = predict_from_start(case, model.copy(), data, settings)
    assert len(warm.predicted) == len(cold.predicted) == 5
    assert [p.step for p in warm.predicted] == pytest.approx([p.step for p in cold.predicted], rel=1e-8)
    assert [s.loss for s in warm.saddles] == pytest.approx([s.loss for s in cold.saddles], rel=1e-10)
    assert n_warm < points[0]
