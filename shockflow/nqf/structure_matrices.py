"""Structure matrices A(x) of neural quadratic forms, computed by differentiating the models (docs/theory.md §2).

Near zero weights a permutation-symmetric layer with units w_1 … w_d ∈ R^p (the columns of
W ∈ R^{p×d}) expands as

    f_x(W) = f_x(0) + g(x)·μ + μᵀ B(x) μ + Tr[W Wᵀ A(x)] + O(‖W‖³),    μ = Σ_i w_i,      (1)

the most general permutation-symmetric second-order polynomial. docs/theory.md §2 writes the case
g = 0, B = 0 ("each unit's gradient vanishes at zero weights"); the order-parameter update of
docs/theory.md §2 (``v = Σ_B ℓ'_x (g + 2Bμ)``) already carries g and B, and the softmax-gated mixture of
experts needs them (its gate is 1/K at zero weights, so the experts enter linearly).

Nothing here copies an architecture's formula. For a model and a unit layout (which flat
parameters form unit i) we take, at θ = 0,

    g   = ∂f/∂w_1                            (the hand-written backward pass, G = 1 per sample)
    2B  = ∂²f/∂w_1∂w_2                       (d ≥ 2; for d = 1 B is absorbed into A)
    2A  = ∂²f/∂w_1² − 2B

the Hessian blocks by central differences of the model's own per-sample gradient, with one
Richardson step (error O(h⁴) in the step h). Exact closed forms where the model supplies the
ingredients (``mlp_structure_matrix`` from φ'(0)) serve as cross-checks in the tests.

Unit layouts: :mod:`shockflow.models.units`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shockflow.models.units import UNIT_LAYOUTS, UnitLayout, supported_models, unit_layout, unit_matrix

__all__ = [
    "UnitLayout", "QuadraticForm", "UNIT_LAYOUTS", "supported_models", "unit_layout", "output_jacobian",
    "structure_matrices", "expansion_remainder", "RemainderFit", "mlp_structure_matrix", "unit_matrix",
    "expected_remainder_order",
]


def _scalar_output(model) -> None:
    if model.output_dim != 1:
        raise ValueError(f"model: structure matrices need a scalar output, found output_dim = {model.output_dim}")


def _expandable(model) -> None:
    act = getattr(model, "activation", None)
    if act is not None and act.name == "relu":
        name = getattr(model, "name", type(model).__name__)
        raise ValueError(f"model: {name!r} with activation 'relu' has no quadratic expansion at zero weights "
                         "(relu is not differentiable at 0); use gelu, tanh, sigmoid or identity")


# ----------------------------------------------------------------------------------- derivatives
def output_jacobian(model, X: np.ndarray, theta: np.ndarray | None = None) -> np.ndarray:
    """∂f(x_μ)/∂θ of shape (n, P) from the model's hand-written backward pass (at ``theta`` if given)."""
    _scalar_output(model)
    if theta is not None:
        model = model.copy()
        model.set_parameter_vector(theta)
    X = model._check_inputs(X)
    F, cache = model._forward(X)
    grads = model._backward(cache, np.ones((X.shape[0], 1)), per_sample=True)
    return np.concatenate([np.asarray(grads[k]).reshape(X.shape[0], -1) for k in model.params], axis=1)


def _hessian_block(model, X, rows: np.ndarray, cols: np.ndarray, h: float) -> np.ndarray:
    """∂²f/∂θ_r∂θ_c at θ = 0 for r in ``rows``, c in ``cols``: (n, len(rows), len(cols)).

    Column c by central differences of the gradient, D(h) = [∇f(h e_c) − ∇f(−h e_c)]/(2h), and one
    Richardson step (4 D(h/2) − D(h))/3, exact for polynomials of degree ≤ 4 in θ_c.
    """
    P = model.num_parameters
    out = np.empty((np.asarray(X).shape[0], len(rows), len(cols)))
    for j, c in enumerate(cols):
        est = []
        for step in (h, h / 2):
            e = np.zeros(P)
            e[c] = step
            Jp = output_jacobian(model, X, e)[:, rows]
            Jm = output_jacobian(model, X, -e)[:, rows]
            est.append((Jp - Jm) / (2 * step))
        out[:, :, j] = (4 * est[1] - est[0]) / 3
    return out


@dataclass(frozen=True)
class QuadraticForm:
    """The expansion (1) on n samples: f0 (n,), g (n, p), B (n, p, p), A (n, p, p); d units.

    ``layout`` maps model parameters to units. ``predict(mu, M)`` evaluates (1) without the
    remainder; the model's own ``loss`` convention is kept in ``loss`` (``mse`` or ``half_mse``).
    """

    f0: np.ndarray
    g: np.ndarray
    B: np.ndarray
    A: np.ndarray
    units: int
    layout: UnitLayout
    loss: str

    @property
    def unit_dim(self) -> int:
        return int(self.A.shape[1])

    @property
    def samples(self) -> int:
        return int(self.A.shape[0])

    def predict(self, mu: np.ndarray, M: np.ndarray) -> np.ndarray:
        """f0 + g·μ + μᵀBμ + Tr[M A] for every sample (shape (n,))."""
        return (self.f0 + self.g @ mu + np.einsum("i,nij,j->n", mu, self.B, mu, optimize=True)
                + np.einsum("ij,nij->n", M, self.A, optimize=True))

    def order_parameters(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(μ, M) = (Σ_i w_i, W Wᵀ) of a flat parameter vector."""
        W = self.layout.unit_matrix(theta)
        return W.sum(axis=1), W @ W.T

    def subset(self, index) -> "QuadraticForm":
        """The same form on the samples ``index``."""
        return QuadraticForm(self.f0[index], self.g[index], self.B[index], self.A[index], self.units,
                             self.layout, self.loss)

    @property
    def has_linear_terms(self) -> bool:
        """True if g or B is non-zero (beyond round-off) on some sample."""
        scale = max(float(np.max(np.abs(self.A))), 1e-300)
        return bool(np.max(np.abs(self.g)) > 1e-8 * scale or np.max(np.abs(self.B)) > 1e-8 * scale)


def structure_matrices(model, X: np.ndarray, *, h: float = 1e-3) -> QuadraticForm:
    """The quadratic form (1) of ``model`` on the inputs ``X``, by differentiating the model at θ = 0.

    Cost: 4 p (d = 1) or 8 p gradient evaluations on X (p = parameters per unit).
    """
    _scalar_output(model)
    _expandable(model)
    layout = unit_layout(model)
    zero = model.copy()
    zero.set_parameter_vector(np.zeros(model.num_parameters))
    X = zero._check_inputs(X)
    f0 = zero.forward(X)
    J0 = output_jacobian(zero, X)
    u0 = layout.index[0]
    g = J0[:, u0]
    H00 = _hessian_block(zero, X, u0, u0, h)
    H00 = 0.5 * (H00 + H00.transpose(0, 2, 1))
    if layout.units >= 2:
        u1 = layout.index[1]
        B = 0.5 * _hessian_block(zero, X, u0, u1, h)
        B = 0.5 * (B + B.transpose(0, 2, 1))
        g1 = J0[:, u1]
        if not np.allclose(g, g1, rtol=1e-8, atol=1e-12 * (1 + np.max(np.abs(g)))):
            raise ValueError("model: units 1 and 2 have different gradients at zero weights; the layout is "
                             "not permutation-symmetric")
    else:
        B = np.zeros_like(H00)
    A = 0.5 * H00 - B
    return QuadraticForm(f0=f0, g=g, B=B, A=A, units=layout.units, layout=layout,
                         loss=model.loss_function.name)


# ----------------------------------------------------------------------------------- remainder
@dataclass(frozen=True)
class RemainderFit:
    """max_μ |f_x(sW) − expansion(sW)| against the scale s, and its log-log slope (≈ 3, or 4 for odd φ)."""

    scales: np.ndarray
    remainder: np.ndarray
    slope: float
    relative_floor: float  # remainder / |quadratic part| at the smallest scale

    def as_dict(self) -> dict:
        return {"scales": self.scales.tolist(), "remainder": self.remainder.tolist(), "slope": self.slope,
                "relative_floor": self.relative_floor}


def expansion_remainder(model, X: np.ndarray, form: QuadraticForm | None = None,
                        scales=(0.1, 0.05, 0.025, 0.0125, 0.00625), seed: int = 0) -> RemainderFit:
    """Fit the order of the remainder of (1) along a random direction θ̂ (‖θ̂‖ = 1): θ = s θ̂."""
    form = structure_matrices(model, X) if form is None else form
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal(model.num_parameters)
    direction /= np.linalg.norm(direction)
    net = model.copy()
    scales = np.asarray(scales, dtype=np.float64)
    rem, quad = [], []
    for s in scales:
        theta = s * direction
        net.set_parameter_vector(theta)
        mu, M = form.order_parameters(theta)
        pred = form.predict(mu, M)
        rem.append(np.max(np.abs(net.forward(X) - pred)))
        quad.append(np.max(np.abs(pred - form.f0)))
    rem = np.asarray(rem)
    slope = float(np.polyfit(np.log(scales), np.log(np.maximum(rem, 1e-300)), 1)[0])
    return RemainderFit(scales, rem, slope, float(rem[-1] / max(quad[-1], 1e-300)))


def _second_derivative_at_zero(activation) -> float:
    h = 1e-4
    return float((activation.grad(np.array(h)) - activation.grad(np.array(-h))) / (2 * h))


def expected_remainder_order(model) -> int | None:
    """Leading order of the remainder of (1), from the architecture.

    None for exactly quadratic models (phase retrieval, diagonal, linear2, quadratic trace); 4 for
    attention (Q and K enter at quartic order), the Fourier MLP (tanh is odd) and activations with
    phi''(0) = 0 (tanh, sigmoid: the cubic term a phi''(0) (w.x)^2 / 2 vanishes); 3 otherwise.
    """
    name = model.name
    if name in ("phase_retrieval", "diagonal", "quadratic", "linear2"):
        return None
    if name in ("attention", "attention_qk", "fourier"):
        return 4
    if name == "moe" and model.expert == "linear":
        return 3  # softmax gate: (Γx)² terms times the linear experts
    act = getattr(model, "activation", None)
    if act is not None and abs(_second_derivative_at_zero(act)) < 1e-8:
        return 4
    return 3


# ----------------------------------------------------------------------------------- closed forms
def mlp_structure_matrix(x: np.ndarray, grad_at_zero: float) -> np.ndarray:
    """docs/theory.md §2 closed form for the two-layer MLP unit [u; v]: φ'(0)/2 · [[0, x], [xᵀ, 0]] (cross-check)."""
    x = np.asarray(x, dtype=np.float64)
    p = x.size + 1
    A = np.zeros((p, p))
    A[:-1, -1] = A[-1, :-1] = 0.5 * grad_at_zero * x
    return A
