"""Soft committee teacher data (Saad & Solla 1995): ``y = Σ_m φ(B_m·x) + σ ξ``, ``x ~ N(0, I_d)``.

The ``units`` teacher vectors ``B_m`` are orthonormal (a Haar-random orthonormal frame, seeded), so every
teacher unit's pre-activation has unit variance and the teacher is symmetric under permutations of its
units (``T_nm = B_n·B_m = δ_nm``): the setting of the committee machine's symmetric plateau
(docs/theory.md §6, "Plateaus away from the origin").  ``teacher_vectors(d, units, seed)`` returns the
frame (what a test reads the student's overlaps against).
"""

from __future__ import annotations

import numpy as np

from .dataset import Dataset

__all__ = ["committee_teacher", "teacher_vectors"]


def teacher_vectors(d: int, units: int, seed: int = 0) -> np.ndarray:
    """The ``(units, d)`` orthonormal teacher frame of :func:`committee_teacher` with this ``seed``."""
    if int(units) != units or units < 1 or int(d) != d or units > d:
        raise ValueError(f"committee_teacher: units must be an integer in 1..d = {d}, got {units!r}")
    rng = np.random.default_rng(seed)
    Q, R = np.linalg.qr(rng.standard_normal((int(d), int(units))))
    return (Q * np.sign(np.diag(R))).T


def committee_teacher(n: int, d: int, units: int = 3, *, activation: str = "erf", noise: float = 0.0,
                      seed: int = 0) -> Dataset:
    """``n`` Gaussian inputs in R^d labelled by a soft committee machine of ``units`` orthonormal teacher units
    with readout 1 and ``activation`` (a name of :mod:`shockflow.models.activations`), plus noise ``σ``."""
    from shockflow.models.activations import get_activation  # data must not require models at import time

    if int(n) != n or n < 1:
        raise ValueError(f"committee_teacher: n must be a positive integer, got {n!r}")
    if int(d) != d or d < 1:
        raise ValueError(f"committee_teacher: d must be a positive integer, got {d!r}")
    if not noise >= 0:
        raise ValueError(f"committee_teacher: noise must be >= 0, got {noise!r}")
    phi = get_activation(activation)
    B = teacher_vectors(int(d), units, seed)
    rng = np.random.default_rng([int(seed), 1])
    X = rng.standard_normal((int(n), int(d)))
    y = phi.fn(X @ B.T).sum(axis=1)
    if noise > 0:
        y = y + noise * rng.standard_normal(y.shape)
    spec = {"name": "committee_teacher", "n": int(n), "d": int(d), "units": int(units), "activation": phi.name,
            "noise": float(noise), "seed": int(seed)}
    return Dataset(X, y, spec)
