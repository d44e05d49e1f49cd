"""A two-layer linear network f(x) = A W x in plain NumPy, knowing nothing of shockflow's classes.

It implements shockflow's network protocol (get_params, set_params, loss, grad, per_sample_losses,
units): hidden unit i is row i of W with column i of A.
"""

import numpy as np


class RidgeNet:
    def __init__(self, input_dim: int = 6, hidden: int = 8, output_dim: int = 3, init_scale: float = 1e-3,
                 seed: int = 0):
        rng = np.random.default_rng(seed)
        self.W = init_scale * rng.normal(size=(hidden, input_dim))
        self.A = init_scale * rng.normal(size=(output_dim, hidden))

    def get_params(self):
        return {"W": self.W.copy(), "A": self.A.copy()}

    def set_params(self, params):
        self.W, self.A = np.array(params["W"], dtype=float), np.array(params["A"], dtype=float)

    def per_sample_losses(self, X, y):
        r = X @ self.W.T @ self.A.T - y
        return 0.5 * np.sum(r * r, axis=1)

    def loss(self, X, y):
        return float(np.mean(self.per_sample_losses(X, y)))

    def grad(self, X, y):
        H = X @ self.W.T
        R = (H @ self.A.T - y) / X.shape[0]
        return {"W": (R @ self.A).T @ X, "A": R.T @ H}

    def units(self):
        return {"W": 0, "A": 1}


def ridge_teacher(n: int = 1024, d: int = 6, strengths=(4.0, 2.0, 1.0), seed: int = 0):
    """Whitened inputs and a rotated teacher with the given singular values (a shockflow Dataset)."""
    from shockflow.data.dataset import Dataset

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    k = len(strengths)
    U, _ = np.linalg.qr(rng.normal(size=(k, k)))
    V, _ = np.linalg.qr(rng.normal(size=(d, k)))
    T = U @ np.diag(strengths) @ V.T
    return Dataset(X, X @ T.T, {"name": "ridge_teacher", "n": n, "d": d})
