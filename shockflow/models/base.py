"""The model contract shared by every torch-free network in shockflow.

A model owns named float64 parameter arrays (``params``), computes predictions, the mean
per-sample loss, its gradient by a hand-written backward pass, and per-sample gradients
(used for gradient-noise statistics). Optimizers update ``params`` *in place*, so no method
here ever rebinds a parameter array after construction.

Conventions (docs/theory.md §2):

- ``X`` has shape ``(n, *input_shape)``; ``input_shape`` is ``(d,)`` for vector models and is
  documented by each model otherwise.
- Internally every model produces outputs ``F`` of shape ``(n, output_dim)``; ``forward``
  returns ``F[:, 0]`` (shape ``(n,)``) when ``output_dim == 1``.
- ``loss(X, y) = (1/n) Σ_μ ℓ(f(x_μ), y_μ)`` with ℓ the per-sample loss of
  :mod:`shockflow.models.losses`, summed over output dimensions.
- ``per_sample_grads(X, y)[k][μ] = ∇_k ℓ(f(x_μ), y_μ)``; their mean over μ is the gradient.

A subclass implements three things:

``_forward(X) -> (F, cache)``
    outputs of shape ``(n, output_dim)`` and whatever the backward pass needs;
``_backward(cache, G, per_sample) -> grads``
    with ``G[μ, o] = w_μ ∂ℓ_μ/∂F_{μo}`` (``w_μ = 1/n`` for the batch gradient, 1 for
    per-sample gradients); it builds every parameter gradient with :func:`parameter_gradient`,
    which sums over samples or keeps the sample axis according to ``per_sample``;
``init_moments() -> {name: (mean, std)}``
    the documented distribution of each parameter entry at initialisation.
"""

from __future__ import annotations

import abc
import copy as _copy
import numbers
import weakref
from typing import Any, ClassVar

import numpy as np

from shockflow.models.losses import Loss, get_loss

__all__ = ["Model", "parameter_gradient", "check_positive_int", "check_choice"]


def _summed_product(inputs: list[str], output: str, operands) -> np.ndarray | None:
    """``Σ_n`` of a one- or two-operand product as a sum or a matrix product (``None``: not of
    that form).  ``einsum(..., optimize=True)`` spends ~10 µs per call choosing a path; a training
    step of a small model makes a few such calls."""
    if len(operands) == 1:
        (a,), (sa,) = operands, inputs
        if sa[0] == "n" and sa[1:] == output:
            return a.sum(axis=0)
        return None
    if len(operands) != 2:
        return None
    (a, b), (sa, sb) = operands, inputs
    if sa[:1] != "n" or sb[:1] != "n" or set(sa[1:]) & set(sb[1:]) or sa[1:] + sb[1:] != output:
        return None
    A = a.reshape(a.shape[0], -1)
    Bm = b.reshape(b.shape[0], -1)
    return (A.T @ Bm).reshape(a.shape[1:] + b.shape[1:])


def parameter_gradient(subscripts: str, *operands: np.ndarray, per_sample: bool) -> np.ndarray:
    """Contract ``operands`` into a parameter gradient, summed over samples or per sample.

    ``subscripts`` is an einsum expression whose inputs label the sample axis ``n`` and whose
    output omits it, e.g. ``"nm,nd->md"`` for ``Σ_μ δ_μ x_μᵀ``. With ``per_sample=True`` the
    output is prefixed with ``n`` (``"nm,nd->nmd"``): the same contraction without the sum.
    """
    inputs, output = subscripts.split("->")
    if "n" in output:
        raise ValueError(f"subscripts: the output {output!r} must not contain the sample axis 'n'")
    if not per_sample:
        fast = _summed_product(inputs.split(","), output, operands)
        if fast is not None:
            return fast
    if per_sample:
        output = "n" + output
    return np.einsum(f"{inputs}->{output}", *operands, optimize=True)


def check_positive_int(name: str, value: Any) -> int:
    """Return ``value`` as an ``int`` if it is a positive integer, else raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected a positive integer, found {value!r} ({type(value).__name__})")
    if value <= 0:
        raise ValueError(f"{name}: expected a positive integer, found {value}")
    return int(value)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise listing the valid ones."""
    if value not in choices:
        raise ValueError(f"{name}: unknown value {value!r}; valid values: {', '.join(choices)}")
    return value


def _check_init_scale(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"init_scale: expected a non-negative real number, found {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"init_scale: expected a finite non-negative number, found {value}")
    return value


def _check_seed(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"seed: expected a non-negative integer, found {value!r}")
    return int(value)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return value


#: read-only arrays already validated: [(weakref, key, result)], most recent first.  A read-only
#: array (a Dataset's X and y) cannot change, so a training loop that passes the same one every
#: step validates it once (the isfinite scan was ~1/3 of a small model's step).
_VALIDATED: list = []


def _validated(a, key):
    """The remembered result for the read-only array ``a`` under ``key`` (``True`` for inputs), else None."""
    if not isinstance(a, np.ndarray) or a.flags.writeable:
        return None
    for ref, k, result in _VALIDATED:
        if k == key and ref() is a:
            return True if result is None else result
    return None


def _remember(a, key, result=None):
    if isinstance(a, np.ndarray) and not a.flags.writeable and a.base is None:
        _VALIDATED.insert(0, (weakref.ref(a), key, result))
        del _VALIDATED[8:]
    return a


class Model(abc.ABC):
    """Abstract base of the NumPy networks (see the module docstring for the contract).

    Attributes
    ----------
    name : str
        Registry name (class attribute).
    params : dict[str, ndarray]
        Named float64 parameter arrays, updated in place by optimizers.
    output_dim : int
        Number of outputs; ``forward`` returns shape ``(n,)`` when it is 1.
    input_shape : tuple
        Shape of one sample; ``None`` entries accept any size (e.g. the number of tokens).
    init_scale : float
        The initialisation scale ε of docs/theory.md §2; what it scales is documented per model.
    seed : int
        Seed of the ``np.random.default_rng`` that drew the initial parameters.
    """

    name: ClassVar[str]
    params: dict[str, np.ndarray]
    output_dim: int
    input_shape: tuple[int | None, ...]
    init_scale: float
    seed: int

    # ----------------------------------------------------------------- construction
    def _setup(
        self,
        *,
        input_shape: tuple[int | None, ...],
        output_dim: int,
        loss: str,
        init_scale: float,
        seed: int,
        config: dict[str, Any],
    ) -> np.random.Generator:
        """Validate the common settings, record the spec, and return the parameter RNG."""
        self.input_shape = tuple(input_shape)
        self.output_dim = check_positive_int("output_dim", output_dim)
        self.loss_function: Loss = get_loss(loss)
        self.loss_function.check_output_dim(self.output_dim)
        self.init_scale = _check_init_scale(init_scale)
        self.seed = _check_seed(seed)
        self._config = {k: _jsonable(v) for k, v in config.items()}
        self._config.update(loss=loss, init_scale=self.init_scale, seed=self.seed)
        self.params = {}
        return np.random.default_rng(self.seed)

    # ----------------------------------------------------------------- subclass hooks
    @abc.abstractmethod
    def _forward(self, X: np.ndarray) -> tuple[np.ndarray, Any]:
        """Outputs ``F`` of shape ``(n, output_dim)`` and a cache for ``_backward``."""

    @abc.abstractmethod
    def _backward(self, cache: Any, G: np.ndarray, per_sample: bool) -> dict[str, np.ndarray]:
        """Parameter gradients from ``G = w_μ ∂ℓ_μ/∂F`` (shape ``(n, output_dim)``)."""

    @abc.abstractmethod
    def init_moments(self) -> dict[str, tuple[float, float]]:
        """``{name: (mean, std)}`` of each parameter entry's initial distribution."""

    # ----------------------------------------------------------------- optional hooks
    def linear_map_available(self) -> bool:
        """Whether :meth:`linear_map` applies: the model is linear in its input, ``f(x) = A(θ) x``."""
        return False

    def linear_map(self, P: dict[str, np.ndarray]) -> np.ndarray | None:
        """``A (B, output_dim, d)`` with ``f(x) = A x`` at ``B`` parameter sets (arrays with a leading
        batch axis), or ``None`` when the model is not linear in its input.  With a squared loss the
        loss then follows from data moments (:mod:`shockflow.geometry.moments`)."""
        return None

    # ----------------------------------------------------------------- public API
    def forward(self, X: np.ndarray) -> np.ndarray:
        """Predictions: shape ``(n,)`` if ``output_dim == 1`` else ``(n, output_dim)``."""
        F, _ = self._forward(self._check_inputs(X))
        return F[:, 0] if self.output_dim == 1 else F

    __call__ = forward

    def per_sample_losses(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The per-sample losses ``ℓ(f(x_μ), y_μ)``, shape ``(n,)``."""
        X = self._check_inputs(X)
        Y = self._targets(y, X.shape[0])
        F, _ = self._forward(X)
        return self.loss_function.value(F, Y)

    def loss(self, X: np.ndarray, y: np.ndarray) -> float:
        """Mean over samples of the per-sample loss."""
        return float(np.mean(self.per_sample_losses(X, y)))

    def loss_and_grad(self, X: np.ndarray, y: np.ndarray) -> tuple[float, dict[str, np.ndarray]]:
        """The loss and its gradient (same keys and shapes as ``params``)."""
        X = self._check_inputs(X)
        n = X.shape[0]
        Y = self._targets(y, n)
        F, cache = self._forward(X)
        value, G = self.loss_function.mean_and_grad(F, Y)
        G /= n
        return value, self._backward(cache, G, per_sample=False)

    def per_sample_grads(self, X: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
        """Per-sample gradients, arrays of shape ``(n, *param.shape)``; their mean is the gradient."""
        X = self._check_inputs(X)
        Y = self.loss_function.targets(y, X.shape[0], self.output_dim)
        F, cache = self._forward(X)
        return self._backward(cache, self.loss_function.grad(F, Y), per_sample=True)

    def spec(self) -> dict[str, Any]:
        """JSON-serialisable ``{"name": ..., **constructor arguments}``; ``build(**spec)`` rebuilds it."""
        return {"name": self.name, **_copy.deepcopy(self._config)}

    def copy(self) -> "Model":
        """A deep copy (independent parameter arrays)."""
        return _copy.deepcopy(self)

    @property
    def num_parameters(self) -> int:
        """Total number of scalar parameters."""
        return int(sum(p.size for p in self.params.values()))

    def parameter_vector(self) -> np.ndarray:
        """All parameters flattened and concatenated in ``params`` order (a copy)."""
        if not self.params:
            return np.zeros(0)
        return np.concatenate([p.ravel() for p in self.params.values()])

    def set_parameter_vector(self, v: np.ndarray) -> None:
        """Write a flat vector (layout of :meth:`parameter_vector`) into ``params`` in place."""
        v = np.asarray(v, dtype=np.float64)
        if v.ndim != 1 or v.size != self.num_parameters:
            raise ValueError(
                f"v: expected a flat vector of length {self.num_parameters}, found shape {v.shape}"
            )
        start = 0
        for p in self.params.values():
            p[...] = v[start : start + p.size].reshape(p.shape)
            start += p.size

    def grad_vector(self, grads: dict[str, np.ndarray]) -> np.ndarray:
        """Flatten a gradient dict in the layout of :meth:`parameter_vector`."""
        return np.concatenate([np.asarray(grads[k]).ravel() for k in self.params])

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._config.items())
        return f"{type(self).__name__}({args})"

    # ----------------------------------------------------------------- validation
    def _expected_shape_text(self) -> str:
        dims = ", ".join("any" if s is None else str(s) for s in self.input_shape)
        return f"(n, {dims})"

    def _check_inputs(self, X: np.ndarray) -> np.ndarray:
        if _validated(X, ("inputs", self.input_shape)):
            return X
        X = _remember(self._checked_inputs(X), ("inputs", self.input_shape))
        return X

    def _targets(self, y, n: int) -> np.ndarray:
        """``loss_function.targets(y, n, output_dim)``, remembered for read-only ``y`` (a Dataset's)."""
        key = ("targets", self.loss_function.name, n, self.output_dim)
        hit = _validated(y, key)
        if hit is not None and hit is not True:
            return hit
        Y = self.loss_function.targets(y, n, self.output_dim)
        _remember(y, key, Y)
        return Y

    def _checked_inputs(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        ok = X.ndim == 1 + len(self.input_shape) and all(
            s is None or s == t for s, t in zip(self.input_shape, X.shape[1:])
        )
        if not ok:
            raise ValueError(
                f"X: {type(self).__name__} expects inputs of shape {self._expected_shape_text()}, "
                f"found {X.shape}"
            )
        if X.shape[0] == 0:
            raise ValueError("X: expected at least one sample, found n = 0")
        if not np.all(np.isfinite(X)):
            raise ValueError("X: contains NaN or inf")
        return X
