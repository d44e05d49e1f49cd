"""The measurement operator of the trace model, A(S)_μ = Tr[S Z_μ], without forming Z_μ.

With Z_μ = (x_μ x_μᵀ − I)/√d (docs/theory.md §4) and symmetric S:

    A(S)_μ  = (x_μᵀ S x_μ − Tr S) / √d                        cost n d² (n d r if S has rank r)
    A*(r)   = Σ_μ r_μ Z_μ = (Xᵀ diag(r) X − (Σ_μ r_μ) I) / √d   cost n d²

so the least-squares term Σ_μ (y_μ − Tr[S Z_μ])² and its gradient 2 A*(A(S) − y) cost two
products with X per evaluation, against n d(d+1)/2 for the explicit design (n × d(d+1)/2) and
n d² (d+1)²/4 for its Gram. At d = 100 the explicit design of n = 10⁴ samples would hold 5·10⁷
numbers; the operator holds X only.

The largest eigenvalue of A*A (the Lipschitz constant of the least-squares gradient is
2 λ_max(A*A)) depends on X only; it is computed once by Lanczos and cached, so a λ path or a
width sweep on the same data reuses it. :meth:`QuadraticDesign.explicit` builds the explicit
design on the orthonormal basis of symmetric matrices; it is the NumPy reference the tests
compare the operator with.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh

__all__ = ["QuadraticDesign"]


class QuadraticDesign:
    """A(S) and A*(r) for inputs X (n, d); see the module docstring."""

    def __init__(self, X: np.ndarray):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise ValueError(f"X: expected inputs of shape (n, d) with n, d >= 1, found {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X: contains NaN or inf")
        self.X = np.ascontiguousarray(X)
        self.n, self.d = X.shape
        self._sqrt_d = np.sqrt(self.d)
        self._lmax: float | None = None

    def apply(self, S: np.ndarray) -> np.ndarray:
        """A(S) for a symmetric d × d matrix S (shape (n,))."""
        q = np.einsum("ij,ij->i", self.X @ S, self.X)
        return (q - np.trace(S)) / self._sqrt_d

    def apply_factored(self, U: np.ndarray, sigma: np.ndarray) -> np.ndarray:
        """A(U diag(σ) Uᵀ) for U (d, r): cost n d r."""
        if U.shape[1] == 0:
            return np.zeros(self.n)
        P = self.X @ U
        return ((P * P) @ sigma - np.sum(sigma)) / self._sqrt_d

    def adjoint(self, r: np.ndarray) -> np.ndarray:
        """A*(r) = Σ_μ r_μ Z_μ (symmetric d × d)."""
        M = (self.X * r[:, None]).T @ self.X
        M[np.diag_indices(self.d)] -= np.sum(r)
        M /= self._sqrt_d
        return 0.5 * (M + M.T)

    def normal(self, S: np.ndarray) -> np.ndarray:
        """A*A(S)."""
        return self.adjoint(self.apply(S))

    def lambda_max(self) -> float:
        """An upper bound of λ_max(A*A) on symmetric matrices: the Lanczos estimate (relative
        accuracy 1e-5, from below) times 1 + 1e-4. Cached."""
        if self._lmax is None:
            d = self.d

            def mv(v):
                S = v.reshape(d, d)
                return self.normal(0.5 * (S + S.T)).ravel()

            if d == 1:   # a 1 × 1 operator: its one eigenvalue (Lanczos needs a space larger than its one vector)
                self._lmax = float(mv(np.ones(1))[0]) * (1.0 + 1e-4)
                return self._lmax
            op = LinearOperator((d * d, d * d), matvec=mv, dtype=np.float64)
            v0 = (np.eye(d) + np.random.default_rng(0).standard_normal((d, d)) / d).ravel()
            val = eigsh(op, k=1, which="LA", tol=1e-5, v0=v0, return_eigenvectors=False)
            self._lmax = float(val[0]) * (1.0 + 1e-4)
        return self._lmax

    def explicit(self) -> np.ndarray:
        """The n × d(d+1)/2 design on the Frobenius-orthonormal basis of symmetric matrices
        (E_ii, (E_ij + E_ji)/√2 for i < j) — the NumPy reference, for small d only."""
        i, j = np.triu_indices(self.d)
        w = np.where(i == j, 1.0, np.sqrt(2.0))
        Zs = self.X[:, i] * self.X[:, j] - (i == j)
        return Zs * w / self._sqrt_d

    @staticmethod
    def vectorise(S: np.ndarray) -> np.ndarray:
        """Coordinates of symmetric S on the basis of :meth:`explicit` (an isometry)."""
        d = S.shape[0]
        i, j = np.triu_indices(d)
        return S[i, j] * np.where(i == j, 1.0, np.sqrt(2.0))
