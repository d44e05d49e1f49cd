"""The extraction's cost on the model side, each mechanism against the exact path it replaced.

- :meth:`shockflow.geometry.auto.AutoGeometry.function_strength` along a chart's section: the other modes' functions
  alone at their coordinates (constant along the section up to rounding) are evaluated once per mode, not once per
  point, and the least-squares coefficient is read from one pseudo-inverse row per section (lstsq's cutoff): the
  strengths within 1e-12 (relative; measured 1e-15) of the direct computation (one lstsq per point) in a fifth of the forward passes;
- the charts of one set of modes share the modes' functions (made once per set, not per chart);
- a network linear in its input: the same fits on ``R A(θ)ᵀ`` (``X = QR``), without passes over the data;
- :class:`shockflow.geometry.moments.SquaredMoments`'s loss against the mean squared loss over the data;
- :meth:`shockflow.geometry.base.Chart.check`'s fast path: the same points (and the same refusals) as the full checks.
"""

import numpy as np
import pytest

import shockflow.geometry.auto as auto
from shockflow.geometry.base import Chart, GeometryError


def _mlp_chart():
    from shockflow.cases import load_case
    from shockflow.geometry import geometry_class
    from shockflow.runners.training import build_model_and_data

    case = load_case("mlp-tanh-teacher", overrides=["data.n=512"])
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    kwargs, raw, key = geometry_class("auto").discover_charts(model, data.X, data.y, {})
    assert len(raw) >= 3
    return model, data, kwargs, raw, key


def _reference_strength(geo, params, X):
    """AutoGeometry.function_strength as it was: every other mode's function evaluated at every point, one
    least-squares solve per point."""
    from shockflow.geometry.flat import flatten

    f0, G, N = geo._mode_functions(X)
    k = int(geo.mode)
    net = geo.model.copy()
    net.set_parameter_vector(flatten(geo.model, geo.check_params(params)))
    F = np.asarray(net.forward(X), dtype=np.float64).reshape(-1)
    others = [j for j in range(G.shape[1]) if j != k]
    columns = [G[:, k]]
    for j in others:
        other = geo._other(j)
        net.set_parameter_vector(geo._origin_vector() + float(other.coordinates(params)[0]) * other._direction)
        columns.append(np.asarray(net.forward(X), dtype=np.float64).reshape(-1) - f0)
    columns.extend(G[:, j] for j in others)
    columns.extend(N.T)   # the intercepts (none where φ(0) = 0)
    return float(np.linalg.lstsq(np.stack(columns, axis=1), F - f0, rcond=None)[0][0])


def _counted_forwards(monkeypatch) -> list:
    """``[n]``: the forward passes of every model from here on (Model.forward counted)."""
    from shockflow.models.base import Model

    calls = [0]
    forward = Model.forward

    def counted(self, X):
        calls[0] += 1
        return forward(self, X)

    monkeypatch.setattr(Model, "forward", counted)
    return calls


def test_strengths_along_a_section_are_the_direct_ones_in_fewer_passes(monkeypatch):
    from shockflow.prediction.extraction import bind_geometry

    model, data, kwargs, raw, key = _mlp_chart()
    r = np.linspace(0.0, 0.6, 9)[:, None]
    calls = _counted_forwards(monkeypatch)
    out = {}
    for label, same in (("direct", -1.0), ("remembered", auto.SAME_COORDINATE)):
        monkeypatch.setattr(auto, "SAME_COORDINATE", same)
        # a copy of the model each: the charts of one model share their functions (AutoGeometry._set_state)
        geo = bind_geometry("auto", model.copy(), dict(kwargs, **{key: raw[1]}), data.X, data.y)
        geo.function_strength_at(r[:1], data.X)    # the modes' linear-regime functions: made once in both
        calls[0] = 0
        out[label] = (geo.function_strength_at(r, data.X), calls[0])
    (direct, n_direct), (fast, n_fast) = out["direct"], out["remembered"]
    geo = bind_geometry("auto", model, dict(kwargs, **{key: raw[1]}), data.X, data.y)
    section = geo.section(r)
    reference = np.array([_reference_strength(geo, {k: v[i] for k, v in section.items()}, data.X)
                          for i in range(r.shape[0])])
    np.testing.assert_allclose(direct, reference, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast, reference, rtol=1e-12, atol=0)
    assert np.all(np.diff(direct) > 0)   # the strength moves along the path: the comparison is not of constants
    K = len(raw)
    assert n_direct == K * r.shape[0]     # one pass for the point, one per other mode
    assert n_fast == r.shape[0]           # the other modes' functions remembered from the first call



def test_the_charts_of_one_set_of_modes_share_their_functions(monkeypatch):
    """The charts of one set of modes on one network (AutoGeometry._set_state): the modes' linear-regime functions
    and each mode's function alone at a coordinate are made once for the set.  A second chart's first strength
    costs its own point and the first chart's mode alone (2 passes, not 2K + 1 + K); the strengths are bitwise those
    of charts that share nothing, and the same modes on a network whose parameters differ make a set of their own."""
    from shockflow.prediction.extraction import bind_geometry

    model, data, kwargs, raw, key = _mlp_chart()
    r = np.array([[0.3]])
    charts = [bind_geometry("auto", model, dict(kwargs, **{key: raw[j]}), data.X, data.y) for j in (0, 1)]
    calls = _counted_forwards(monkeypatch)
    first = charts[0].function_strength_at(r, data.X)
    K = len(raw)
    assert calls[0] == (2 * K + 1) + 1 + (K - 1)   # the set's functions, the point, every other mode alone
    calls[0] = 0
    second = charts[1].function_strength_at(r, data.X)
    assert calls[0] == 2
    alone = [bind_geometry("auto", model.copy(), dict(kwargs, **{key: raw[j]}), data.X, data.y) for j in (0, 1)]
    np.testing.assert_array_equal(first, alone[0].function_strength_at(r, data.X))
    np.testing.assert_array_equal(second, alone[1].function_strength_at(r, data.X))
    moved = model.copy()   # the same modes on a network whose parameters differ: a set of its own
    moved.set_parameter_vector(1.5 * model.parameter_vector())
    calls[0] = 0
    bind_geometry("auto", moved, dict(kwargs, **{key: raw[1]}), data.X, data.y).function_strength_at(r, data.X)
    assert calls[0] == (2 * K + 1) + 1 + (K - 1)

def test_the_moments_loss_is_the_direct_loss():
    """SquaredMoments.loss (two row products on R and the cross term) against the mean squared loss over the data."""
    from shockflow.geometry.moments import SquaredMoments

    rng = np.random.default_rng(0)
    for B, o, d in [(1, 1, 4), (2, 1, 4), (129, 1, 4), (33, 10, 20), (5, 3, 64)]:
        X = rng.standard_normal((200, d))
        Y = X @ rng.standard_normal((d, o)) + 0.1 * rng.standard_normal((200, o))
        A = rng.standard_normal((B, o, d))
        direct = np.array([0.5 * np.mean(np.sum((X @ a.T - Y) ** 2, axis=1)) for a in A])
        np.testing.assert_allclose(SquaredMoments(X, Y, 0.5).loss(A), direct, rtol=1e-12)


def test_a_linear_nets_strengths_are_fitted_on_r_without_passes_over_the_data(monkeypatch):
    """A network linear in its input: the learned strength's fits on R A(θ)ᵀ (X = QR) equal the fits on the data's
    n·o rows (1e-12 relative) along a section, with no forward pass once the modes' functions are made."""
    from shockflow.cases import load_case
    from shockflow.geometry import geometry_class
    from shockflow.prediction.extraction import bind_geometry
    from shockflow.runners.training import build_model_and_data

    case = load_case("deep-linear-3", overrides=["data.n=512"])
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    kwargs, raw, key = geometry_class("auto").discover_charts(model, data.X, data.y, {})
    r = np.linspace(0.0, 0.95, 9)[:, None]
    calls = _counted_forwards(monkeypatch)
    out = {}
    for label in ("data", "reduced"):
        if label == "data":
            monkeypatch.setattr(auto.AutoGeometry, "_reduced", lambda self, X: None)
        else:
            monkeypatch.undo()
            calls = _counted_forwards(monkeypatch)
        # a copy of the model each: the charts of one model share their functions (AutoGeometry._set_state)
        geo = bind_geometry("auto", model.copy(), dict(kwargs, **{key: raw[1]}), data.X, data.y)
        geo.function_strength_at(r[:1], data.X)
        calls[0] = 0
        out[label] = (geo.function_strength_at(r, data.X), calls[0])
    (on_data, n_data), (reduced, n_reduced) = out["data"], out["reduced"]
    np.testing.assert_allclose(reduced, on_data, rtol=1e-12, atol=0)
    assert np.ptp(on_data) > 0.1 * np.max(np.abs(on_data))   # the strengths move along the section
    assert n_data >= r.shape[0] and n_reduced == 0


def _full_check(chart, p):
    """Chart.check without its fast path (the reference)."""
    lo, hi = np.array(chart.lower), np.array(chart.upper)
    closed = ~np.array(chart.periodic)
    p = np.asarray(p, dtype=np.float64)
    return np.where(closed, np.clip(p, lo, hi), p)


@pytest.mark.parametrize("periodic", [False, True])
def test_the_chart_check_keeps_its_points_and_refusals(periodic):
    chart = Chart(("a", "b"), (0.0, -1.0), (1.0, 2.0), periodic=(False, periodic))
    rng = np.random.default_rng(3)
    inside = np.stack([rng.uniform(0, 1, 50), rng.uniform(-1, 2, 50)], axis=-1)
    assert chart.check(inside) is not None
    np.testing.assert_array_equal(chart.check(inside), _full_check(chart, inside))
    hair = inside.copy()
    hair[3, 0] = -1e-9                     # a hair outside a closed end: onto the end
    np.testing.assert_array_equal(chart.check(hair), _full_check(chart, hair))
    assert chart.check(hair)[3, 0] == 0.0
    for bad in (np.nan, np.inf, 5.0):
        wrong = inside.copy()
        wrong[7, 0] = bad
        with pytest.raises(GeometryError, match=r"point \(7,\)"):
            chart.check(wrong)
    far = inside.copy()
    far[5, 1] = 40.0
    if periodic:
        np.testing.assert_array_equal(chart.check(far), far)   # a periodic axis takes any finite coordinate
    else:
        with pytest.raises(GeometryError, match=r"point \(5,\)"):
            chart.check(far)



@pytest.mark.parametrize("case_name, overrides", [
    ("mlp-tanh-teacher", ["data.n=512", "training.steps=600", "training.n_snapshots=40"]),
    ("attention-qk-4x2", ["data.n=512", "training.n_snapshots=40"]),
])
def test_every_modes_strength_at_once_is_the_direct_one_in_one_plus_k_passes(case_name, overrides, monkeypatch):
    """AutoGeometry.function_strengths (the trajectory's snapshots, every chart at once): at snapshots of a training
    run, from the modes not yet learned to learned, every mode's strength equals the direct computation (its own
    lstsq per mode) within 1e-12 of that mode's largest strength over the run (measured: 1e-14; a mode in its
    linear regime makes the fits ill-conditioned, its function alone nearly parallel to its g), in 1 + K forward
    passes a snapshot (K² for the charts one at a time).  On the attention head the modes' functions alone matter
    (a fit on the g alone is 0.09 off): the comparison would see them left out."""
    from shockflow.cases import load_case
    from shockflow.geometry import geometry_class
    from shockflow.prediction.extraction import bind_geometry
    from shockflow.runners.training import build_model_and_data
    from shockflow.training import train

    case = load_case(case_name, overrides=overrides)
    model, _, data, _ = build_model_and_data(case, case.seed or 0)
    kwargs, raw, key = geometry_class("auto").discover_charts(model, data.X, data.y, {})
    record = train(model.copy(), data, case.settings.training.train_settings(case.seed or 0), quiet=True)
    snaps, names = record.snapshots, list(model.params)
    geos = [bind_geometry("auto", model, dict(kwargs, **{key: raw[k]}), data.X, data.y) for k in range(len(raw))]
    K = len(raw)
    assert K >= 2 and all(geos[0].same_modes(g) for g in geos) and not geos[0].same_modes(
        bind_geometry("auto", model, dict(kwargs, **{key: raw[0]}, extent=2.0), data.X, data.y))
    geos[0].function_strengths({k: snaps[k][0] for k in names}, data.X)   # the linear-regime functions: once
    calls = _counted_forwards(monkeypatch)
    picked = np.linspace(1, len(snaps["step"]) - 1, 10).astype(int)   # not the warm-up's snapshot
    batched, reference = [], []
    for i in picked:
        params = {k: snaps[k][i] for k in names}
        calls[0] = 0
        batched.append(geos[0].function_strengths(params, data.X))
        assert calls[0] == 1 + K
        reference.append([_reference_strength(g, params, data.X) for g in geos])
    batched, reference = np.array(batched), np.array(reference)
    scale = np.abs(reference).max(axis=0)
    assert np.all(np.abs(batched - reference) <= 1e-12 * scale)
    assert np.ptp(reference[:, 0]) > 0.5     # the run learns: the comparison spans the escape
