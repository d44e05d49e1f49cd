"""The fast chart-loss paths against the direct evaluation (one forward pass per parameter set).

- moments (shockflow.geometry.moments): every model linear in its input under a squared loss,
  exact: agreement to 1e-12 relative, including at a near-perfect fit where the raw moments are
  10⁵ times the loss;
- chunked batched evaluation (shockflow.geometry.batched_loss): the same numbers for any chunk size;
- the Chebyshev interpolant along a 1-D chart (shockflow.geometry.chart_interpolant): its error on a
  tanh network's chart is within its stated bound and below 1e-11 relative; a kinked (ReLU) loss
  is refused rather than approximated.
"""

import importlib

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry.chart_interpolant import ChartInterpolant, chart_loss_at
from shockflow.geometry.moments import moments_apply

bl = importlib.import_module("shockflow.geometry.batched_loss")   # the module (the package exports the function)


def _direct(model, P, X, y):
    """One forward call per parameter set: the reference."""
    clone = model.copy()
    out = []
    for b in range(next(iter(P.values())).shape[0]):
        for k in clone.params:
            clone.params[k][...] = P[k][b]
        out.append(clone.loss(X, y))
    return np.array(out)


LINEAR = [
    (dict(name="diagonal", input_dim=4, form="u2"), 4, 1),
    (dict(name="diagonal", input_dim=3, form="uv", loss="mse"), 3, 1),
    (dict(name="linear", input_dim=5, output_dim=3), 5, 3),
    (dict(name="linear2", input_dim=6, hidden=7, output_dim=2), 6, 2),
    (dict(name="deep_linear", input_dim=5, widths=[3, 4], output_dim=2, loss="mse"), 5, 2),
    (dict(name="mlp", input_dim=6, width=5, activation="identity", output_dim=3), 6, 3),
]


@pytest.mark.parametrize("spec,d,o", LINEAR, ids=[s["name"] + "-" + s.get("loss", "half_mse") for s, _, _ in LINEAR])
def test_moments_match_direct_evaluation(spec, d, o):
    rng = np.random.default_rng(1)
    model = models.build(**spec, seed=2)
    assert moments_apply(model)
    n = 500
    X = rng.normal(size=(n, d))
    teacher = rng.normal(size=(d, o))
    y = X @ teacher + 1e-3 * rng.normal(size=(n, o))
    y = y[:, 0] if o == 1 else y
    P = {k: v[None] * rng.normal(1.0, 0.5, size=(7, *v.shape)) for k, v in model.params.items()}
    fast = geometry.batched_loss(model, P, X, y)
    np.testing.assert_allclose(fast, _direct(model, P, X, y), rtol=1e-12, atol=0)


def test_moments_keep_precision_at_a_near_perfect_fit():
    """L̄ ≈ 1e-8 while yᵀy/n ≈ 75: raw moments (yᵀy − 2 tr(A Xᵀy) + …) would lose ~10 digits; the
    fit-centred form is as accurate as the direct sum of squared residuals (both against an
    extended-precision reference)."""
    rng = np.random.default_rng(0)
    model = models.build(name="diagonal", input_dim=4, form="u2", init="constant", init_scale=1.0)
    X = rng.normal(size=(2000, 4))
    w = np.array([8.0, 3.0, 1.0, 0.35])
    y = X @ w + 1e-4 * rng.normal(size=2000)
    u = 2.0 * np.sqrt(w) * (1.0 + np.array([[0.0], [1e-5], [-3e-5]]))
    fast = geometry.batched_loss(model, {"u": u}, X, y)
    direct = _direct(model, {"u": u}, X, y)
    Xl, yl = X.astype(np.longdouble), y.astype(np.longdouble)
    betas = (u * u / 4.0).astype(np.longdouble)    # the float64 map both evaluate, in extended precision
    exact = np.array([0.5 * np.mean((Xl @ b - yl) ** 2) for b in betas], dtype=np.float64)
    assert fast.min() < 1e-7
    err_fast = np.max(np.abs(fast - exact) / exact)
    err_direct = np.max(np.abs(direct - exact) / exact)
    assert err_fast <= max(4.0 * err_direct, 1e-13)
    assert np.mean((X @ w) ** 2) > 1e9 * fast.min()


def test_moments_notice_changed_data():
    """The moments are remembered per data array; a changed array is recomputed, not reused."""
    rng = np.random.default_rng(3)
    model = models.build(name="linear", input_dim=3, output_dim=1)
    X = rng.normal(size=(100, 3))
    y = rng.normal(size=100)
    P = {"W": model.params["W"][None]}
    first = geometry.batched_loss(model, P, X, y)
    y[5] += 1.0
    second = geometry.batched_loss(model, P, X, y)
    np.testing.assert_allclose(second, _direct(model, P, X, y), rtol=1e-12)
    assert not np.allclose(first, second)


@pytest.mark.parametrize("spec", [dict(name="mlp", input_dim=5, width=6, activation="tanh"),
                                  dict(name="mlp", input_dim=5, width=6, activation="relu"),
                                  dict(name="deep_mlp", input_dim=5, widths=[6, 4], activation="tanh", bias=True),
                                  dict(name="deep_mlp", input_dim=5, widths=[3, 6, 4], activation="gelu")],
                         ids=["mlp-tanh", "mlp-relu", "deep_mlp-tanh-bias", "deep_mlp-gelu"])
def test_chunked_evaluation_matches_direct_for_any_chunk(spec, monkeypatch):
    rng = np.random.default_rng(4)
    model = models.build(**spec, output_dim=2, seed=1)
    assert not moments_apply(model)
    X = rng.normal(size=(300, 5))
    y = rng.normal(size=(300, 2))
    P = {k: v[None] * rng.normal(1.0, 0.5, size=(9, *v.shape)) for k, v in model.params.items()}
    ref = _direct(model, P, X, y)
    for values in (1, 300 * 6 * 4 * 2, 1 << 22):   # one set per chunk, two sets, all at once
        monkeypatch.setattr(bl, "CHUNK_VALUES", values)
        np.testing.assert_allclose(geometry.batched_loss(model, P, X, y), ref, rtol=1e-12)
        per_sample = bl.batched_sample_losses(model, P, X, y)
        np.testing.assert_allclose(per_sample.mean(axis=1), ref, rtol=1e-12)


def _auto_chart(activation):
    from shockflow.data.registry import build_dataset

    model = models.build(name="mlp", input_dim=8, width=6, output_dim=2, activation=activation,
                         init_scale=1e-2, seed=0)
    data = build_dataset("linear_teacher", n=400, d=8, singular_values=[3.0, 1.5], noise=0.01, seed=0)
    kwargs, selectors, key = geometry.geometry_class("auto").discover_charts(model, data.X, data.y, {})
    geo = geometry.build("auto", model=model, **{**kwargs, key: selectors[0], "extent": 4.0})
    return geo, data


def test_chart_interpolant_is_within_its_bound_on_a_tanh_chart():
    geo, data = _auto_chart("tanh")
    fit = ChartInterpolant.fit(lambda p: geo.chart_loss(p, data.X, data.y), 0.0, 4.0)
    assert fit is not None and fit.evaluations <= 257
    x = np.linspace(0.0, 4.0, 1001)[:, None]
    direct = geo.chart_loss(x, data.X, data.y)
    err = np.max(np.abs(fit(x) - direct))
    assert err <= max(fit.bound, 1e-15 * np.max(direct)) * 10   # the estimated bound, with rounding room
    assert err <= 1e-11 * np.max(np.abs(direct))
    # what the extraction reads: the same values through chart_loss_at
    np.testing.assert_allclose(chart_loss_at(geo, x, data.X, data.y), direct, rtol=1e-11)
    # finite differences of the interpolant (the extraction's slopes) agree with those of the loss
    h = 1e-3
    xs = np.linspace(0.1, 3.9, 50)[:, None]
    slope = lambda f: (f(xs + h) - f(xs - h)) / (2 * h)
    np.testing.assert_allclose(slope(fit), slope(lambda p: geo.chart_loss(p, data.X, data.y)), rtol=1e-7, atol=1e-9)


def test_chart_interpolant_refuses_a_kinked_loss():
    """|x − 0.3| has algebraically decaying coefficients: no interpolant of the stated accuracy."""
    kink = lambda p: np.abs(p[:, 0] - 0.3) + 1.0
    assert ChartInterpolant.fit(kink, 0.0, 1.0) is None
    smooth = lambda p: np.exp(np.sin(3 * p[:, 0]))
    fit = ChartInterpolant.fit(smooth, 0.0, 1.0)
    x = np.linspace(0, 1, 333)[:, None]
    assert fit is not None and np.max(np.abs(fit(x) - smooth(x))) < 1e-12


def test_remembered_losses_are_the_evaluated_ones_and_keyed_on_the_model(monkeypatch):
    # read-only data, inside the block: a repeated call is answered from the table, bit for bit what the evaluation
    # gives (on writable copies of the data, which are never remembered); a model that differs only in its
    # activation (same parameter arrays), or is changed in place, is not answered with the other's values
    from shockflow import models as _models
    bl = importlib.import_module("shockflow.geometry.batched_loss")

    rng = np.random.default_rng(5)
    X, y = rng.standard_normal((300, 4)), rng.standard_normal((300, 2))
    X.setflags(write=False)
    y.setflags(write=False)
    tanh = _models.build("mlp", input_dim=4, width=5, output_dim=2, activation="tanh", init_scale=0.5, seed=1)
    erf = _models.build("mlp", input_dim=4, width=5, output_dim=2, activation="erf", init_scale=0.5, seed=1)
    sets = {k: np.stack([v * s for s in np.linspace(0.5, 2.0, 7)]) for k, v in tanh.params.items()}
    evaluated = []
    inner = bl._evaluated
    monkeypatch.setattr(bl, "_evaluated", lambda *a: evaluated.append(a[4]) or inner(*a))
    outside = bl.batched_loss(tanh, sets, X, y)
    assert bl._memo(tanh, X, y) is None and evaluated == [7]            # outside a block: nothing kept
    with bl.remembered_losses():
        first = bl.batched_loss(tanh, sets, X, y)
        first[0] = -1.0                                                  # the caller's copy, not the table's
        again = bl.batched_loss(tanh, sets, X, y)
        assert evaluated == [7, 7]                                       # the repeat was not evaluated
        np.testing.assert_array_equal(again, outside)                    # bit for bit
        np.testing.assert_array_equal(again, bl.batched_loss(tanh, sets, np.array(X), np.array(y)))
        mixed = {k: np.concatenate([v[::-2], 3.0 * v[:2]]) for k, v in sets.items()}   # another batch: evaluated
        np.testing.assert_array_equal(bl.batched_loss(tanh, mixed, X, y),
                                      bl.batched_loss(tanh, mixed, np.array(X), np.array(y)))
        other = bl.batched_loss(erf, sets, X, y)
        np.testing.assert_array_equal(other, bl.batched_loss(erf, sets, np.array(X), np.array(y)))
        assert np.all(np.abs(other - again) > 1e-6 * np.abs(again))      # not the tanh network's values
        tanh.activation = erf.activation                                 # changed in place: same object, same arrays
        np.testing.assert_array_equal(bl.batched_loss(tanh, sets, X, y), other)
    assert not bl._MEMOS                                                 # dropped when the block ends
