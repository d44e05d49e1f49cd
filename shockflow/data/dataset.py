"""The ``Dataset``: inputs X, targets y and a JSON-serialisable spec saying how they were made.

Conventions: X has samples on axis 0 ((n, d) for vectors, (n, tokens, d_model) for token
sequences); y is (n,) for scalar targets or (n, k) for k outputs, matching a model's
``forward`` (``output_dim == 1`` gives (n,)). Arrays are float64 and read-only, so a dataset
can be shared by many runs without one run changing another's data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Dataset"]


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True, order="C")
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Dataset:
    """Samples ``X`` (n, ...) and targets ``y`` (n,) or (n, k), plus ``spec`` (JSON-able dict)."""

    X: np.ndarray
    y: np.ndarray
    spec: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        X = np.asarray(self.X)
        y = np.asarray(self.y)
        if X.ndim < 2:
            raise ValueError(f"Dataset: X must have samples on axis 0 and at least 2 dimensions, got shape {X.shape}")
        if y.ndim not in (1, 2):
            raise ValueError(f"Dataset: y must have shape (n,) or (n, k), got shape {y.shape}")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"Dataset: X has {X.shape[0]} samples but y has {y.shape[0]}")
        if X.shape[0] == 0:
            raise ValueError("Dataset: X has no samples")
        for name, a in (("X", X), ("y", y)):
            if not np.issubdtype(a.dtype, np.number):
                raise ValueError(f"Dataset: {name} must be numeric, got dtype {a.dtype}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"Dataset: {name} contains NaN or inf")
        try:
            json.dumps(self.spec)
        except TypeError as exc:
            raise ValueError(f"Dataset: spec must be JSON-serialisable ({exc})") from None
        object.__setattr__(self, "X", _frozen(X))
        object.__setattr__(self, "y", _frozen(y))
        object.__setattr__(self, "spec", dict(self.spec))

    @property
    def n(self) -> int:
        """Number of samples."""
        return int(self.X.shape[0])

    @property
    def input_shape(self) -> tuple[int, ...]:
        """Shape of one input sample."""
        return tuple(self.X.shape[1:])

    @property
    def output_dim(self) -> int:
        """1 for scalar targets, else the number of target columns."""
        return 1 if self.y.ndim == 1 else int(self.y.shape[1])

    def subset(self, index, label: str = "subset") -> "Dataset":
        """The samples at ``index`` (an integer array or slice); the spec records the selection."""
        idx = np.arange(self.n)[index]
        return Dataset(self.X[idx], self.y[idx], {**self.spec, label: {"n": int(idx.size)}})

    def __repr__(self) -> str:
        return (f"Dataset(n={self.n}, input_shape={self.input_shape}, output_dim={self.output_dim}, "
                f"spec={self.spec.get('name', '?')!r})")
