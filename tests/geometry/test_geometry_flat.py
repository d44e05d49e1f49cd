"""shockflow.geometry.flat and the registry: affine slices with the Euclidean metric; lookup by name."""

import numpy as np
import pytest

from shockflow import geometry, models
from shockflow.geometry import GeometryError


def test_flat_slice_velocity_is_the_projected_gradient():
    rng = np.random.default_rng(0)
    net = models.build("mlp", input_dim=3, width=4, activation="tanh", init_scale=1.0, seed=1)
    X = rng.normal(size=(30, 3))
    y = np.sin(X[:, 0])
    n = net.num_parameters
    E, _ = np.linalg.qr(rng.normal(size=(n, 2)))
    geo = geometry.build("flat", model=net, directions=E.T, extent=0.5)
    x0 = geo.coordinates(net.params)
    np.testing.assert_allclose(x0, 0.0, atol=1e-14)
    _, grads = net.loss_and_grad(X, y)
    eta = 1e-6
    fwd = {k: v - eta * grads[k] for k, v in net.params.items()}
    measured = geo.coordinates(fwd) / eta
    np.testing.assert_allclose(geo.velocity(x0, X, y), measured, rtol=1e-6)
    np.testing.assert_allclose(geo.mobility(np.zeros((5, 2))), np.broadcast_to(np.eye(2), (5, 2, 2)))
    assert geo.conserved(net.params) == {}
    # the batched (einsum) forward equals the fallback loop for every registered fast path used here
    pts = rng.uniform(-0.5, 0.5, size=(6, 2))
    fast = geometry.batched_loss(net, geo.section(pts), X, y)
    slow = geometry.batched_loss(net, geo.section(pts), X, y, outputs=lambda m, P, X_: np.stack(
        [_single(m, {k: v[b] for k, v in P.items()}, X_) for b in range(6)]))
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


def _single(model, params, X):
    clone = model.copy()
    for k in clone.params:
        clone.params[k][...] = params[k]
    return clone._forward(X)[0]


@pytest.mark.parametrize("name, kwargs, shape", [
    ("deep_linear", dict(input_dim=3, widths=[4, 2]), (3,)),
    ("deep_mlp", dict(input_dim=3, widths=[4], bias=True), (3,)),
    ("linear", dict(input_dim=3, output_dim=2), (3,)),
    ("quadratic", dict(input_dim=3, width=2), (3,)),
    ("attention_qk", dict(d_model=3, heads=2, d_k=2), (4, 3)),
    ("attention", dict(d_model=3, heads=2, d_k=2, d_v=3), (4, 3)),
    ("mean_field", dict(input_dim=3, width=5), (3,)),
    ("cnn2d", dict(input_size=[4, 5], in_channels=2, out_channels=3, kernel_size=[2, 3], bias=True, output_dim=2),
     (4, 5, 2)),
    ("cnn1d", dict(input_size=6, in_channels=1, out_channels=2, kernel_size=3), (6, 1)),
    ("fourier", dict(modes=4, theta=0.5), (1,)),
])
def test_batched_forward_equals_the_model_forward(name, kwargs, shape):
    rng = np.random.default_rng(3)
    net = models.build(name, init_scale=0.8, seed=0, **kwargs)
    X = rng.normal(size=(7, *shape))
    params = {k: v[None] + 0.1 * rng.normal(size=(4, *v.shape)) for k, v in net.params.items()}
    F = geometry.batched_outputs(net, params, X)
    for b in range(4):
        np.testing.assert_allclose(F[b], _single(net, {k: v[b] for k, v in params.items()}, X), rtol=1e-11, atol=1e-13)


def test_registry_lists_and_names():
    names = geometry.available()
    assert {"flat", "gram", "rescaling"} <= set(names)
    for name in names:
        cls = geometry.geometry_class(name)
        assert cls.name == name and cls.symmetry
    with pytest.raises(GeometryError, match=r"unknown name 'gramm' \(did you mean 'gram'\?\); valid names: .*rescaling"):
        geometry.build("gramm")


def test_flat_bad_input():
    net = models.build("mlp", input_dim=3, width=4, seed=1)
    with pytest.raises(GeometryError, match="directions: the model has 16 parameters"):
        geometry.build("flat", model=net)
    with pytest.raises(GeometryError, match="directions: the rows must be orthonormal"):
        geometry.build("flat", model=net, directions=np.ones((1, 16)))
    with pytest.raises(GeometryError, match=r"params: missing array 'a'"):
        geometry.build("flat", model=net, directions=np.eye(16)[:1]).coordinates({"W": net.params["W"]})
