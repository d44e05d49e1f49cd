"""Seeded train/test split: a random permutation, the first n_train samples train."""

from __future__ import annotations

import numpy as np

from .dataset import Dataset

__all__ = ["train_test_split"]


def train_test_split(data: Dataset, test_fraction: float = 0.2, *, seed: int = 0) -> tuple[Dataset, Dataset]:
    """Split ``data`` into (train, test) with round(test_fraction·n) test samples (≥ 1 each side)."""
    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"train_test_split: test_fraction must be in (0, 1), got {test_fraction!r}")
    n_test = int(round(test_fraction * data.n))
    if n_test < 1 or n_test > data.n - 1:
        raise ValueError(f"train_test_split: test_fraction {test_fraction} of n = {data.n} leaves "
                         f"{n_test} test and {data.n - n_test} train samples; need at least 1 of each")
    perm = np.random.default_rng(seed).permutation(data.n)
    tr, te = np.sort(perm[n_test:]), np.sort(perm[:n_test])
    split = {"test_fraction": float(test_fraction), "seed": int(seed)}
    train = Dataset(data.X[tr], data.y[tr], {**data.spec, "split": {**split, "part": "train"}})
    test = Dataset(data.X[te], data.y[te], {**data.spec, "split": {**split, "part": "test"}})
    return train, test
