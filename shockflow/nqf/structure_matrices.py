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

Unit layouts (``UNIT_LAYOUTS``; the registry names of :mod:`shockflow.models`):

=================  ==========================================================================
``mlp``            unit i = [W_i· ; b_i (if bias) ; a_i]          (scalar output)
``mean_field``     unit i = [W_i· ; a_i]
``cnn1d/cnn2d``    unit c = [vec K_c ; b_c (if bias) ; a_c]
``attention``      unit h = [vec W_Q,h ; vec W_K,h ; vec W_V,h ; v_h]   (quartic in Q, K)
``attention_qk``   unit (h, j) = [W_Q[h, :, j] ; W_K[h, :, j]]  (one query/key column pair;
                   docs/theory.md's "rows ⊗ I" form is the same matrix written for all j at once)
``moe``            unit k = [expert k parameters ; gate row Γ_k]
``linear2``        unit i = [W1_i· ; W2_·i]                       (scalar output)
``quadratic``      ``form="trace"`` only: unit i = row W_i·
``phase_retrieval``one unit w
``diagonal``       one unit [u] (``u2``) or [u ; v] (``uv``)
``fourier``        one unit [W ; a] (the P pairs are not interchangeable: s_k, ψ_k differ)
=================  ==========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "UnitLayout", "QuadraticForm", "UNIT_LAYOUTS", "supported_models", "unit_layout", "output_jacobian",
    "structure_matrices", "expansion_remainder", "RemainderFit", "mlp_structure_matrix", "unit_matrix",
    "expected_remainder_order",
]


# ----------------------------------------------------------------------------------- unit layouts
@dataclass(frozen=True)
class UnitLayout:
    """``index[i, j]`` = position in ``model.parameter_vector()`` of entry j of unit i (shape (d, p))."""

    index: np.ndarray

    @property
    def units(self) -> int:
        return int(self.index.shape[0])

    @property
    def unit_dim(self) -> int:
        return int(self.index.shape[1])

    def unit_matrix(self, theta: np.ndarray) -> np.ndarray:
        """W ∈ R^{p×d}: the units of the flat parameter vector ``theta`` as columns."""
        return np.asarray(theta)[self.index].T

    def parameter_vector(self, W: np.ndarray, size: int) -> np.ndarray:
        """Inverse of :meth:`unit_matrix` (a flat vector of length ``size``)."""
        theta = np.zeros(size)
        theta[self.index] = np.asarray(W).T
        return theta


def _offsets(model) -> dict[str, np.ndarray]:
    """Flat positions of every parameter array, shaped like the array."""
    out, start = {}, 0
    for k, p in model.params.items():
        out[k] = np.arange(start, start + p.size).reshape(p.shape)
        start += p.size
    return out


def _scalar_output(model) -> None:
    if model.output_dim != 1:
        raise ValueError(f"model: structure matrices need a scalar output, found output_dim = {model.output_dim}")


def _layout_mlp(model):
    _scalar_output(model)
    o = _offsets(model)
    cols = [o["W"]] + ([o["b"][:, None]] if "b" in o else []) + [o["a"][:, None]]
    return np.concatenate(cols, axis=1)


def _layout_cnn(model):
    _scalar_output(model)
    o = _offsets(model)
    C = model.out_channels
    cols = [o["K"].reshape(C, -1)] + ([o["b"][:, None]] if "b" in o else []) + [o["a"][:, None]]
    return np.concatenate(cols, axis=1)


def _layout_attention(model):
    o = _offsets(model)
    H = model.heads
    return np.concatenate([o[k].reshape(H, -1) for k in ("W_Q", "W_K", "W_V", "v")], axis=1)


def _layout_attention_qk(model):
    o = _offsets(model)
    q = o["W_Q"].transpose(0, 2, 1).reshape(-1, model.d_model)  # rows (h, j), entries over D
    k = o["W_K"].transpose(0, 2, 1).reshape(-1, model.d_model)
    return np.concatenate([q, k], axis=1)


def _layout_moe(model):
    o = _offsets(model)
    K = model.num_experts
    expert = [o["experts"]] if "experts" in o else [o["expert_W"].reshape(K, -1), o["expert_a"]]
    return np.concatenate(expert + [o["gate"]], axis=1)


def _layout_linear2(model):
    _scalar_output(model)
    o = _offsets(model)
    return np.concatenate([o["W1"], o["W2"].T], axis=1)


def _layout_quadratic(model):
    if model.form != "trace":
        raise ValueError("model: quadratic form='sum' is cubic at zero weights (A = 0); structure matrices "
                         "are defined for form='trace' only")
    return _offsets(model)["W"]


def _layout_single(model):
    return np.concatenate([v.ravel() for v in _offsets(model).values()])[None, :]


UNIT_LAYOUTS = {
    "mlp": _layout_mlp,
    "mean_field": _layout_mlp,
    "cnn1d": _layout_cnn,
    "cnn2d": _layout_cnn,
    "attention": _layout_attention,
    "attention_qk": _layout_attention_qk,
    "moe": _layout_moe,
    "linear2": _layout_linear2,
    "quadratic": _layout_quadratic,
    "phase_retrieval": _layout_single,
    "diagonal": _layout_single,
    "fourier": _layout_single,
}


def supported_models() -> list[str]:
    """Registry names of the models with a known unit layout."""
    return sorted(UNIT_LAYOUTS)


def unit_layout(model) -> UnitLayout:
    """The unit layout of ``model`` (see the module table); every parameter belongs to exactly one unit."""
    name = getattr(model, "name", type(model).__name__)
    if name not in UNIT_LAYOUTS:
        raise ValueError(f"model: no known structure matrix for {name!r}; architectures with one: "
                         f"{', '.join(supported_models())}")
    act = getattr(model, "activation", None)
    if act is not None and act.name == "relu":
        raise ValueError(f"model: {name!r} with activation 'relu' has no quadratic expansion at zero weights "
                         "(relu is not differentiable at 0); use gelu, tanh, sigmoid or identity")
    index = np.asarray(UNIT_LAYOUTS[name](model), dtype=np.int64)
    covered = np.sort(index.ravel())
    if not np.array_equal(covered, np.arange(model.num_parameters)):
        raise AssertionError(f"unit layout of {name!r} does not cover each parameter exactly once")
    return UnitLayout(index)


def unit_matrix(model) -> np.ndarray:
    """W ∈ R^{p×d} of the model's current parameters (units as columns)."""
    return unit_layout(model).unit_matrix(model.parameter_vector())


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
