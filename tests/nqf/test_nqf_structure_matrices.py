"""Structure matrices from the models: the expansion remainder shrinks at the architecture's order,
and the differentiated A(x) matches docs/theory.md §2's closed forms where the model supplies φ'(0)."""

import numpy as np
import pytest

from shockflow import models
from shockflow.nqf.structure_matrices import (
    expansion_remainder, expected_remainder_order, mlp_structure_matrix, structure_matrices, unit_layout,
)

def _rng():
    return np.random.default_rng(0)

ARCHITECTURES = [
    ("mlp", dict(input_dim=4, width=3, activation="gelu"), (6, 4)),
    ("mlp", dict(input_dim=4, width=3, activation="tanh"), (6, 4)),
    ("mlp", dict(input_dim=4, width=3, activation="sigmoid", bias=True), (6, 4)),
    ("mean_field", dict(input_dim=3, width=3, activation="gelu"), (6, 3)),
    ("cnn1d", dict(input_size=6, in_channels=2, out_channels=3, kernel_size=3, activation="gelu"), (5, 6, 2)),
    ("cnn2d", dict(input_size=(4, 4), in_channels=1, out_channels=2, kernel_size=(2, 2), activation="gelu"),
     (5, 4, 4, 1)),
    ("attention", dict(d_model=3, heads=2, d_k=2, d_v=2), (4, 5, 3)),
    ("attention_qk", dict(d_model=3, heads=2, d_k=2), (4, 5, 3)),
    ("moe", dict(input_dim=3, experts=3), (5, 3)),
    ("moe", dict(input_dim=3, experts=3, expert="mlp", expert_width=2, activation="gelu"), (5, 3)),
    ("fourier", dict(modes=3, theta=0.5), (5, 1)),
]


@pytest.mark.parametrize("name, kwargs, shape", ARCHITECTURES, ids=lambda v: v if isinstance(v, str) else None)
def test_remainder_order(name, kwargs, shape):
    """f(sθ̂) − [f0 + g·μ + μᵀBμ + Tr(MA)] ∝ s^k with k = 3 (4 for odd φ and attention): log-log slope."""
    net = models.build(name, **kwargs)
    X = _rng().standard_normal(shape)
    fit = expansion_remainder(net, X)
    k = expected_remainder_order(net)
    assert abs(fit.slope - k) < 0.1, (name, fit.slope, k)
    assert fit.relative_floor < 0.05  # the quadratic part dominates at the smallest scale


@pytest.mark.parametrize("name, kwargs", [
    ("phase_retrieval", dict(input_dim=4)), ("diagonal", dict(input_dim=4)), ("diagonal", dict(input_dim=3, form="uv")),
    ("linear2", dict(input_dim=3, hidden=3)), ("quadratic", dict(input_dim=3, width=2, form="trace")),
])
def test_exactly_quadratic_models_have_no_remainder(name, kwargs):
    net = models.build(name, **kwargs)
    X = _rng().standard_normal((5, net.input_dim))
    fit = expansion_remainder(net, X)
    assert expected_remainder_order(net) is None
    assert fit.relative_floor < 1e-12 and np.max(fit.remainder) < 1e-12


@pytest.mark.parametrize("activation, bias", [("gelu", False), ("tanh", True), ("sigmoid", True)])
def test_mlp_matches_theory_closed_form(activation, bias):
    """A(x) = φ'(0)/2 [[0, x̃], [x̃ᵀ, 0]] (x̃ = [x; 1] with a bias) and g = φ(0) in the readout slot."""
    net = models.build("mlp", input_dim=3, width=4, activation=activation, bias=bias)
    X = _rng().standard_normal((4, 3))
    form = structure_matrices(net, X)
    phi = net.activation
    for mu in range(4):
        xt = np.r_[X[mu], 1.0] if bias else X[mu]
        assert np.allclose(form.A[mu], mlp_structure_matrix(xt, phi.grad_at_zero), atol=1e-9)
        g = np.zeros(xt.size + 1)
        g[-1] = float(phi.fn(np.array(0.0)))
        assert np.allclose(form.g[mu], g, atol=1e-12)
    assert np.max(np.abs(form.B)) < 1e-9


def test_query_key_head_matches_theory():
    """Unit (h, j) = [W_Q[h,:,j]; W_K[h,:,j]]: A = 1/(2√d_k) [[0, x̄uᵀ], [u x̄ᵀ, 0]], u = Σ_X c."""
    net = models.build("attention_qk", d_model=3, heads=1, d_k=2)
    X = _rng().standard_normal((3, 5, 3))
    form = structure_matrices(net, X)
    c = net.readout
    for mu in range(3):
        xb = X[mu].mean(axis=0)
        Sig = X[mu].T @ X[mu] / 5 - np.outer(xb, xb)
        u = Sig @ c
        A = np.zeros((6, 6))
        A[:3, 3:] = np.outer(xb, u) / (2 * np.sqrt(2))
        A[3:, :3] = A[:3, 3:].T
        assert np.allclose(form.A[mu], A, atol=1e-9)
        assert np.isclose(form.f0[mu], c @ xb)


def test_mixture_of_experts_linear_terms():
    """Softmax gate: g = [x/K; 0], A = 1/(2K) [[0, xxᵀ], [xxᵀ, 0]], B = −1/(2K²) [[0, xxᵀ], [xxᵀ, 0]]."""
    K = 3
    net = models.build("moe", input_dim=2, experts=K)
    X = _rng().standard_normal((4, 2))
    form = structure_matrices(net, X)
    assert form.has_linear_terms
    for mu in range(4):
        x = X[mu]
        blk = np.zeros((4, 4))
        blk[:2, 2:] = blk[2:, :2] = np.outer(x, x)
        assert np.allclose(form.g[mu], np.r_[x / K, 0, 0], atol=1e-12)
        assert np.allclose(form.A[mu], blk / (2 * K), atol=1e-9)
        assert np.allclose(form.B[mu], -blk / (2 * K * K), atol=1e-9)


def test_units_are_interchangeable():
    """The Hessian block of unit 2 equals that of unit 1 (permutation symmetry of the layout)."""
    net = models.build("cnn1d", input_size=5, in_channels=1, out_channels=3, kernel_size=2, activation="gelu")
    X = _rng().standard_normal((3, 5, 1))
    form = structure_matrices(net, X)
    swapped = net.copy()
    layout = unit_layout(net)
    idx = layout.index.copy()
    idx[[0, 1]] = idx[[1, 0]]
    # evaluate the form with the units relabelled: f must not change
    theta = _rng().standard_normal(net.num_parameters) * 1e-3
    W = layout.unit_matrix(theta)
    W2 = W[:, [1, 0, 2]]
    assert np.allclose(form.predict(W.sum(1), W @ W.T), form.predict(W2.sum(1), W2 @ W2.T))
    swapped.set_parameter_vector(layout.parameter_vector(W2, net.num_parameters))
    net.set_parameter_vector(theta)
    assert np.allclose(net.forward(X), swapped.forward(X), atol=1e-15)


def test_unknown_architecture_lists_the_known_ones():
    net = models.build("deep_mlp", input_dim=3, widths=[2, 2])
    with pytest.raises(ValueError, match=r"no known structure matrix for 'deep_mlp'.*mlp.*phase_retrieval"):
        structure_matrices(net, _rng().standard_normal((2, 3)))


def test_relu_is_refused():
    net = models.build("mlp", input_dim=3, width=2, activation="relu")
    with pytest.raises(ValueError, match="relu"):
        structure_matrices(net, _rng().standard_normal((2, 3)))
