"""Token sequences for attention models: X of shape (n, tokens, d_model), tokens ~ N(0, I).

Targets come from a ``teacher`` (a Model accepting (n, tokens, d_model), or a spec dict), or,
without a teacher, from the linear read-out of the mean token y = u·x̄, x̄ = X 1_N / N
(docs/theory.md §2: the value/read-out block of attention couples to x̄). ``u`` is a seeded unit
vector unless given.
"""

from __future__ import annotations

import numpy as np

from .dataset import Dataset
from .teacher_student import _resolve_teacher

__all__ = ["token_sequences"]


def token_sequences(n: int, tokens: int, d_model: int, *, teacher=None,
                    readout: np.ndarray | None = None, noise: float = 0.0, seed: int = 0) -> Dataset:
    """n sequences of ``tokens`` Gaussian tokens in R^{d_model}, labelled as described above."""
    for name, v in (("n", n), ("tokens", tokens), ("d_model", d_model)):
        if int(v) != v or v < 1:
            raise ValueError(f"token_sequences: {name} must be a positive integer, got {v!r}")
    if not noise >= 0:
        raise ValueError(f"token_sequences: noise must be >= 0, got {noise!r}")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((int(n), int(tokens), int(d_model)))
    spec = {"name": "token_sequences", "n": int(n), "tokens": int(tokens), "d_model": int(d_model),
            "noise": float(noise), "seed": int(seed)}
    if teacher is not None:
        if readout is not None:
            raise ValueError("token_sequences: give either teacher or readout, not both")
        model = _resolve_teacher(teacher, d_model=int(d_model))
        y = np.asarray(model.forward(X), dtype=np.float64)
        spec["teacher"] = model.spec() if hasattr(model, "spec") else {"name": type(model).__name__}
    else:
        if readout is None:
            u = rng.standard_normal(int(d_model))
            u /= np.linalg.norm(u)
        else:
            u = np.asarray(readout, dtype=np.float64)
            if u.shape != (d_model,):
                raise ValueError(f"token_sequences: readout must have shape ({d_model},), got {u.shape}")
        y = X.mean(axis=1) @ u
        spec["target"] = {"name": "mean_token_readout", "readout": u.tolist()}
    if noise > 0:
        y = y + noise * rng.standard_normal(y.shape)
    return Dataset(X, y, spec)
