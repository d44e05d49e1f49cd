"""Per-sample losses ℓ(f, y), summed over output dimensions, selected by name.

=================  ========================================  ==============================
name               ℓ(f, y) for one sample                    ∂ℓ/∂f
=================  ========================================  ==============================
``half_mse``       ½ Σ_o (f_o − y_o)²   (default)            f − y
``mse``            Σ_o (f_o − y_o)²     (docs/theory.md §2: no ½)    2 (f − y)
``cross_entropy``  logsumexp(f) Σ_o y_o − Σ_o y_o f_o        softmax(f) Σ_o y_o − y
``logistic``       log(1 + exp(−y f)),  y ∈ {−1, +1}         −y σ(−y f)
=================  ========================================  ==============================

``mse`` is the docs/theory.md §2 convention L = (1/m) Σ_μ (f_μ − y_μ)². ``cross_entropy`` takes
logits f of shape ``(n, K)`` with K ≥ 2 and targets either integer class labels of shape
``(n,)`` or rows of probabilities (e.g. one-hot) of shape ``(n, K)``; for probability rows it
is −Σ_o y_o log softmax(f)_o. ``logistic`` is for scalar outputs with labels ±1.
"""

from __future__ import annotations

import abc

import numpy as np

from shockflow.models.short_axis import sum_last

__all__ = ["Loss", "HalfMSE", "MSE", "CrossEntropy", "Logistic", "get_loss", "available_losses"]


class Loss(abc.ABC):
    """A per-sample loss: ``value(F, Y) -> (n,)`` and ``grad(F, Y) -> (n, output_dim)``."""

    name: str = ""
    #: ``c`` when ``ℓ = c ‖f − y‖²`` (a squared loss: chart losses follow from data moments,
    #: :mod:`shockflow.geometry.moments`); ``None`` otherwise
    squared_scale: float | None = None

    @abc.abstractmethod
    def value(self, F: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Per-sample loss values, shape (n,); ``F`` may carry leading batch axes ``(..., n, o)``
        (``Y`` broadcasts against it), the result then has shape ``(..., n)``."""

    @abc.abstractmethod
    def grad(self, F: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """Derivative of each sample's loss with respect to its outputs, shape (n, output_dim)."""

    def mean_and_grad(self, F: np.ndarray, Y: np.ndarray) -> tuple[float, np.ndarray]:
        """``(mean_μ ℓ_μ, ∂ℓ_μ/∂F)`` in one pass (a squared loss shares the residual)."""
        return float(np.mean(self.value(F, Y))), self.grad(F, Y)

    def check_output_dim(self, output_dim: int) -> None:
        """Raise if this loss cannot be used with ``output_dim`` outputs."""

    def targets(self, y: np.ndarray, n: int, output_dim: int) -> np.ndarray:
        """Validate ``y`` for ``n`` samples; return it as float64 of shape ``(n, output_dim)``."""
        y = np.asarray(y, dtype=np.float64)
        if output_dim == 1 and y.shape == (n,):
            y = y[:, None]
        if y.shape != (n, output_dim):
            expected = f"({n},) or ({n}, 1)" if output_dim == 1 else f"({n}, {output_dim})"
            raise ValueError(f"y: expected targets of shape {expected}, found {y.shape}")
        if not np.all(np.isfinite(y)):
            raise ValueError("y: contains NaN or inf")
        return y

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class HalfMSE(Loss):
    """ℓ = ½ Σ_o (f_o − y_o)²."""

    name = "half_mse"
    squared_scale = 0.5

    def value(self, F, Y):
        R = F - Y
        R *= R      # (F − Y)², as ** 2 squares
        return 0.5 * sum_last(R)

    def grad(self, F, Y):
        return F - Y

    def mean_and_grad(self, F, Y):
        R = F - Y
        r = R.ravel()
        return 0.5 * float(r @ r) / F.shape[0], R


class MSE(Loss):
    """ℓ = Σ_o (f_o − y_o)² (docs/theory.md §2 convention, no ½)."""

    name = "mse"
    squared_scale = 1.0

    def value(self, F, Y):
        R = F - Y
        R *= R
        return sum_last(R)

    def grad(self, F, Y):
        return 2.0 * (F - Y)

    def mean_and_grad(self, F, Y):
        R = F - Y
        r = R.ravel()
        value = float(r @ r) / F.shape[0]
        R *= 2.0
        return value, R


class CrossEntropy(Loss):
    """Softmax cross-entropy on logits; targets are labels ``(n,)`` or probability rows ``(n, K)``."""

    name = "cross_entropy"

    def check_output_dim(self, output_dim: int) -> None:
        if output_dim < 2:
            raise ValueError(
                f"loss: 'cross_entropy' needs output_dim >= 2 (class logits), found output_dim = {output_dim}; "
                "use 'logistic' for a scalar output"
            )

    def targets(self, y, n, output_dim):
        y = np.asarray(y)
        if y.shape == (n,):
            if not np.issubdtype(y.dtype, np.integer):
                if not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
                    raise ValueError("y: class labels of shape (n,) must be integers")
                y = y.astype(np.int64)
            if np.any(y < 0) or np.any(y >= output_dim):
                raise ValueError(
                    f"y: class labels must lie in [0, {output_dim - 1}], "
                    f"found range [{y.min()}, {y.max()}]"
                )
            Y = np.zeros((n, output_dim))
            Y[np.arange(n), y] = 1.0
            return Y
        if y.shape != (n, output_dim):
            raise ValueError(
                f"y: expected integer labels of shape ({n},) or probability rows of shape "
                f"({n}, {output_dim}), found {y.shape}"
            )
        Y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(Y)) or np.any(Y < 0):
            raise ValueError("y: probability rows must be finite and non-negative")
        return Y

    def value(self, F, Y):
        from scipy.special import logsumexp

        return logsumexp(F, axis=-1) * Y.sum(axis=-1) - np.sum(Y * F, axis=-1)

    def grad(self, F, Y):
        from scipy.special import softmax

        return softmax(F, axis=1) * Y.sum(axis=1, keepdims=True) - Y


class Logistic(Loss):
    """ℓ = log(1 + exp(−y f)) for a scalar output and labels y = ±1."""

    name = "logistic"

    def check_output_dim(self, output_dim: int) -> None:
        if output_dim != 1:
            raise ValueError(
                f"loss: 'logistic' needs output_dim = 1, found output_dim = {output_dim}; "
                "use 'cross_entropy' for several classes"
            )

    def targets(self, y, n, output_dim):
        Y = super().targets(y, n, output_dim)
        if np.any(np.abs(Y) != 1.0):
            raise ValueError("y: logistic labels must be -1 or +1")
        return Y

    def value(self, F, Y):
        return np.logaddexp(0.0, -Y * F)[..., 0]

    def grad(self, F, Y):
        from scipy.special import expit

        return -Y * expit(-Y * F)


_LOSSES: dict[str, type[Loss]] = {c.name: c for c in (HalfMSE, MSE, CrossEntropy, Logistic)}


def available_losses() -> list[str]:
    """Sorted names of the available losses."""
    return sorted(_LOSSES)


def get_loss(name: str) -> Loss:
    """The loss called ``name``; raises ``ValueError`` listing the valid names otherwise."""
    if name not in _LOSSES:
        raise ValueError(f"loss: unknown name {name!r}; valid names: {', '.join(available_losses())}")
    return _LOSSES[name]()
