"""Gaussian teacher–student data: x ~ N(0, I_d), y = teacher(x) + σ ξ, ξ ~ N(0, 1).

The teacher is any model implementing the shockflow Model interface (``forward``, ``spec``),
or a model spec dict that ``shockflow.models.build`` accepts. With ``whiten=True`` the sample
is made exactly white, X^T X / n = I_d (the Saxe et al. setting of docs/theory.md §2, "Two-layer
linear nets (whitened inputs)"); this needs n ≥ d.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dataset import Dataset

__all__ = ["linear_teacher", "teacher_student", "whiten_inputs"]


def whiten_inputs(X: np.ndarray) -> np.ndarray:
    """Return X' with the same column space and X'^T X' / n = I exactly (symmetric whitening)."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if n < d:
        raise ValueError(f"whiten_inputs: need at least d = {d} samples to whiten, got n = {n}")
    cov = X.T @ X / n
    evals, evecs = np.linalg.eigh(cov)
    if evals[0] <= 1e-12 * evals[-1]:
        raise ValueError("whiten_inputs: sample covariance is singular; cannot whiten")
    return X @ (evecs / np.sqrt(evals)) @ evecs.T


def _resolve_teacher(teacher: Any, **inputs):
    """The teacher Model; a spec dict is built after its input size keys (``inputs``: e.g. ``input_dim=d``)
    are checked against the data's, so that a mismatched size is an error, not an allocation."""
    if isinstance(teacher, dict):
        for key, expected in inputs.items():
            if key in teacher and teacher[key] != expected:
                raise ValueError(f"teacher: its {key} = {teacher[key]!r} does not match the data's {expected!r} "
                                 f"(the teacher reads the same inputs as the student)")
        from shockflow import models  # imported here: data must not require models at import time

        return models.build(**teacher)
    if not hasattr(teacher, "forward"):
        raise TypeError(
            f"teacher_student: teacher must be a Model (with .forward) or a model spec dict, "
            f"got {type(teacher).__name__}")
    return teacher


def teacher_student(n: int, d: int, teacher, *, noise: float = 0.0, whiten: bool = False,
                    seed: int = 0) -> Dataset:
    """n Gaussian inputs in R^d labelled by ``teacher``, with optional Gaussian label noise.

    Parameters
    ----------
    n, d : sample count and input dimension (the teacher must accept (n, d) inputs).
    teacher : Model or spec dict (``{"name": "mlp", ...}``) built with ``shockflow.models.build``.
    noise : standard deviation σ ≥ 0 of additive label noise.
    whiten : make the sample covariance exactly the identity (needs n ≥ d).
    seed : seeds inputs and noise (the teacher carries its own seed).
    """
    if int(n) != n or n < 1:
        raise ValueError(f"teacher_student: n must be a positive integer, got {n!r}")
    if int(d) != d or d < 1:
        raise ValueError(f"teacher_student: d must be a positive integer, got {d!r}")
    if not noise >= 0:
        raise ValueError(f"teacher_student: noise must be >= 0, got {noise!r}")
    model = _resolve_teacher(teacher, input_dim=int(d))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((int(n), int(d)))
    if whiten:
        X = whiten_inputs(X)
    y = np.asarray(model.forward(X), dtype=np.float64)
    if y.shape[0] != n:
        raise ValueError(f"teacher_student: teacher returned shape {y.shape} for {n} inputs")
    if noise > 0:
        y = y + noise * rng.standard_normal(y.shape)
    teacher_spec = model.spec() if hasattr(model, "spec") else {"name": type(model).__name__}
    spec = {"name": "teacher_student", "n": int(n), "d": int(d), "noise": float(noise),
            "whiten": bool(whiten), "seed": int(seed), "teacher": teacher_spec}
    return Dataset(X, y, spec)


def linear_teacher(n: int, d: int, singular_values, *, noise: float = 0.0, whiten: bool = False,
                   seed: int = 0) -> Dataset:
    """x ~ N(0, I_d), y = W* x + σ ξ with ``W* = U diag(s) Vᵀ`` of the given singular values ``s``
    (one output per value) and Haar-random orthogonal ``U``, ``V`` (seeded): the modes of a network
    trained on it are rotated away from every coordinate axis, as in real data."""
    if int(n) != n or n < 1:
        raise ValueError(f"linear_teacher: n must be a positive integer, got {n!r}")
    if int(d) != d or d < 1:
        raise ValueError(f"linear_teacher: d must be a positive integer, got {d!r}")
    s = np.asarray(singular_values, dtype=np.float64).reshape(-1)
    if s.size < 1 or s.size > d or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise ValueError(f"linear_teacher: singular_values must be 1..d = {d} positive numbers, got {s.tolist()}")
    if not noise >= 0:
        raise ValueError(f"linear_teacher: noise must be >= 0, got {noise!r}")
    rng = np.random.default_rng(seed)

    def haar(rows: int, cols: int) -> np.ndarray:
        Q, R = np.linalg.qr(rng.standard_normal((rows, cols)))
        return Q * np.sign(np.diag(R))

    o = s.size
    W = haar(o, o) @ np.diag(s) @ haar(int(d), o).T
    X = rng.standard_normal((int(n), int(d)))
    if whiten:
        X = whiten_inputs(X)
    y = X @ W.T
    if noise > 0:
        y = y + noise * rng.standard_normal(y.shape)
    spec = {"name": "linear_teacher", "n": int(n), "d": int(d), "singular_values": s.tolist(),
            "noise": float(noise), "whiten": bool(whiten), "seed": int(seed)}
    return Dataset(X, y, spec)
