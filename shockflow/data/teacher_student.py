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

__all__ = ["teacher_student", "whiten_inputs"]


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


def _resolve_teacher(teacher: Any):
    if isinstance(teacher, dict):
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
    model = _resolve_teacher(teacher)
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
