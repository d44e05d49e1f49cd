"""Small Gaussian images for convolutional networks: X of shape (n, height, width, channels), pixels ~ N(0, 1).

Targets come from a ``teacher`` (a Model accepting such images, or a spec dict such as a ``cnn2d``
of the same input shape), with optional Gaussian label noise.
"""

from __future__ import annotations

import numpy as np

from .dataset import Dataset
from .teacher_student import _resolve_teacher

__all__ = ["gaussian_images"]


def gaussian_images(n: int, height: int, width: int, channels: int = 1, *, teacher, noise: float = 0.0,
                    seed: int = 0) -> Dataset:
    """n images of ``height × width × channels`` Gaussian pixels labelled by ``teacher`` (+ σ ξ)."""
    for name, v in (("n", n), ("height", height), ("width", width), ("channels", channels)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"gaussian_images: {name} must be a positive integer, got {v!r}")
    if not noise >= 0:
        raise ValueError(f"gaussian_images: noise must be >= 0, got {noise!r}")
    model = _resolve_teacher(teacher, in_channels=int(channels))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((int(n), int(height), int(width), int(channels)))
    y = np.asarray(model.forward(X), dtype=np.float64)
    if noise > 0:
        y = y + noise * rng.standard_normal(y.shape)
    spec = {"name": "gaussian_images", "n": int(n), "height": int(height), "width": int(width),
            "channels": int(channels), "noise": float(noise), "seed": int(seed),
            "teacher": model.spec() if hasattr(model, "spec") else {"name": type(model).__name__}}
    return Dataset(X, y, spec)
