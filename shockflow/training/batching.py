"""Minibatch sampling without replacement within each epoch (seeded).

Each epoch draws a fresh permutation of the n samples and cuts it into ⌊n/B⌋ batches of
exactly B samples; the n mod B leftover samples of that permutation are skipped (every batch
has size B, so the SGD temperature η σ_g²/(2B) of docs/theory.md §1 is the same at every step).
Batches are gathered into preallocated buffers (``np.take(..., out=)``): no per-step allocation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BatchSampler"]


class BatchSampler:
    """``next()`` returns (Xb, yb) views of internal buffers (valid until the next call)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator):
        self.X, self.y, self.B = X, y, int(batch_size)
        self.n = X.shape[0]
        self.full = self.B == self.n
        self.rng = rng
        self.per_epoch = self.n // self.B
        self._perm: np.ndarray | None = None
        self._pos = self.per_epoch  # forces a permutation on first use
        if not self.full:
            self._Xb = np.empty((self.B, *X.shape[1:]), dtype=X.dtype)
            self._yb = np.empty((self.B, *y.shape[1:]), dtype=y.dtype)

    def next(self) -> tuple[np.ndarray, np.ndarray]:
        if self.full:
            return self.X, self.y
        if self._pos >= self.per_epoch:
            self._perm = self.rng.permutation(self.n)
            self._pos = 0
        idx = self._perm[self._pos * self.B:(self._pos + 1) * self.B]
        self._pos += 1
        np.take(self.X, idx, axis=0, out=self._Xb)
        np.take(self.y, idx, axis=0, out=self._yb)
        return self._Xb, self._yb
