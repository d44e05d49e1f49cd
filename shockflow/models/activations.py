"""Elementwise activations φ with their derivatives φ', selected by name.

=============  ===============================  ================================  =======
name           φ(z)                             φ'(z)                             φ'(0)
=============  ===============================  ================================  =======
``tanh``       tanh z                           1 − tanh² z                       1
``relu``       max(z, 0)                        1[z > 0]  (subgradient 0 at z=0)  0
``gelu``       z Φ(z) = ½ z (1 + erf(z/√2))     Φ(z) + z e^{−z²/2}/√(2π)          ½
``sigmoid``    1/(1 + e^{−z})                   σ(z)(1 − σ(z))                    ¼
``erf``        erf(z/√2)                        √(2/π) e^{−z²/2}                  √(2/π)
``identity``   z                                1                                 1
=============  ===============================  ================================  =======

φ'(0) enters the structure matrices of docs/theory.md §2 (two-layer MLP: A(x) = φ'(0)/2 [[0, x],[xᵀ, 0]]).
``gelu`` is the exact erf form, not the tanh approximation.  ``erf`` is the committee machines' activation
of Saad & Solla (1995) (docs/theory.md §1): ``erf(z/√2) = 2Φ(z) − 1``, odd, saturating at ±1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from shockflow.models.short_axis import max_last, sum_last

# scipy.special (about 0.25 s to import) is imported by the activations that use it, on their first call; gelu and
# erf are solvers.gaussian's compiled ufuncs (one pass, no temporaries: 2.2x the scipy composition), imported likewise

__all__ = ["Activation", "get_activation", "available_activations", "softmax_in_place"]

_SQRT2 = np.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


@dataclass(frozen=True)
class Activation:
    """An activation: ``fn`` (φ) and ``grad`` (φ'), both elementwise on arrays; ``grad_from(z, h)``
    is φ'(z) given ``h = φ(z)`` too (a backward pass reuses the forward's ``h``: tanh' = 1 − h² without
    recomputing tanh)."""

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    grad: Callable[[np.ndarray], np.ndarray]
    grad_at_zero: float
    from_output: Callable[[np.ndarray], np.ndarray] | None = None

    def grad_from(self, z: np.ndarray, h: np.ndarray) -> np.ndarray:
        return self.from_output(h) if self.from_output is not None else self.grad(z)

    @property
    def homogeneous(self) -> bool:
        """Whether φ is positively homogeneous of degree one, ``φ(λz) = λφ(z)`` for ``λ > 0`` (identity, relu): a
        unit ``a φ(w·x)`` then keeps ``|a|² − |w|²`` under gradient flow, the balance its chart's section assumes
        (docs/theory.md §6, "The saddle chain").  Checked on sample points, so a user's activation is judged too."""
        z = np.array([-2.5, -0.7, -0.1, 0.3, 1.1, 3.0])
        return bool(np.allclose(np.asarray(self.fn(2.0 * z), dtype=np.float64),
                                2.0 * np.asarray(self.fn(z), dtype=np.float64), rtol=1e-12, atol=0.0))

    @property
    def needs_input(self) -> bool:
        """Whether the backward pass needs ``z`` (False when φ' follows from ``h = φ(z)`` alone)."""
        return self.from_output is None and self.name != "identity"

    def forward_owned(self, z: np.ndarray) -> np.ndarray:
        """φ(z) for a ``z`` the caller owns and will not read again when :attr:`needs_input` is False: then
        computed into ``z`` itself when φ is a NumPy ufunc (no new array of the layer's size per step)."""
        if not self.needs_input and isinstance(self.fn, np.ufunc):
            return self.fn(z, out=z)
        return self.fn(z)

    def scale_by_grad(self, g: np.ndarray, z: np.ndarray | None, h: np.ndarray) -> np.ndarray:
        """``g *= φ'(z)`` in place, from the forward's ``h`` where it suffices (tanh' = 1 − h², sigmoid' =
        h (1 − h): one temporary, no tanh recomputed); ``z`` may be None when :attr:`needs_input` is False."""
        if self.name == "identity":
            return g
        if self.name == "tanh":
            t = np.multiply(h, h)
            np.subtract(1.0, t, out=t)
        elif self.name == "sigmoid":
            t = np.subtract(1.0, h)
            t *= h
        else:
            t = self.grad_from(z, h)
        g *= t
        return g


def _tanh_grad(z):
    t = np.tanh(z)
    return 1.0 - t * t


def _tanh_grad_from_output(h):
    return 1.0 - h * h


def _sigmoid_grad_from_output(h):
    return h * (1.0 - h)


def _relu(z):
    return np.maximum(z, 0.0)


def _relu_grad(z):
    return (z > 0).astype(np.float64)


def _gelu(z):
    from solvers.gaussian import gelu

    return gelu(z)


def _gelu_grad(z):
    from solvers.gaussian import gelu_grad

    return gelu_grad(z)


def _erf(z):
    from solvers.gaussian import erf_scaled

    return erf_scaled(z)


def _erf_grad(z):
    return 2.0 * _INV_SQRT_2PI * np.exp(-0.5 * z * z)


def _sigmoid(z):
    from scipy.special import expit

    return expit(z)


def _sigmoid_grad(z):
    s = _sigmoid(z)
    return s * (1.0 - s)


def _identity(z):
    return z


def _identity_grad(z):
    return np.ones_like(z)


_ACTIVATIONS: dict[str, Activation] = {
    a.name: a
    for a in (
        Activation("tanh", np.tanh, _tanh_grad, 1.0, _tanh_grad_from_output),
        Activation("relu", _relu, _relu_grad, 0.0),
        Activation("gelu", _gelu, _gelu_grad, 0.5),
        Activation("sigmoid", _sigmoid, _sigmoid_grad, 0.25, _sigmoid_grad_from_output),
        Activation("identity", _identity, _identity_grad, 1.0),
        Activation("erf", _erf, _erf_grad, float(2.0 * _INV_SQRT_2PI)),
    )
}


def available_activations() -> list[str]:
    """Sorted names of the available activations."""
    return sorted(_ACTIVATIONS)


def get_activation(name: str) -> Activation:
    """The activation called ``name``; raises ``ValueError`` listing the valid names otherwise."""
    if name not in _ACTIVATIONS:
        raise ValueError(
            f"activation: unknown name {name!r}; valid names: {', '.join(available_activations())}"
        )
    return _ACTIVATIONS[name]


def softmax_in_place(S: np.ndarray) -> np.ndarray:
    """The softmax of ``S`` over its last axis, written over ``S`` (returned): ``scipy.special.softmax(S, axis=-1)``'s
    arithmetic, bitwise its result (a test), without its temporaries of the size of ``S`` (the attention scores of
    a batch of parameter sets: 1.5x faster) nor scipy.special's import (0.25 s).  The attention heads' weights and
    the mixture of experts' gate.  A short last axis (a few tokens, a few experts) is reduced slice by slice
    (:mod:`shockflow.models.short_axis`: NumPy's order without its per-row loop; scores of 4 tokens at
    33 x 2048 x 4 x 4: 18.0 -> 6.7 ms)."""
    S -= max_last(S)[..., None]
    np.exp(S, out=S)
    S /= sum_last(S)[..., None]
    return S
