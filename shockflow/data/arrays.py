"""Load user arrays from .npy / .npz files into a ``Dataset``.

- ``.npz``: one archive with keys ``x_key`` (default "X") and ``y_key`` (default "y").
- ``.npy``: two files, ``load_arrays("X.npy", y_path="y.npy")``.
Errors name the file and the missing key, and list the keys that are there.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from shockflow.storage.npz import open_npz

from .dataset import Dataset

__all__ = ["load_arrays"]


def _load_npy(path: Path, role: str) -> np.ndarray:
    if not path.is_file():
        raise FileNotFoundError(f"load_arrays: {role} file {str(path)!r} does not exist")
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"load_arrays: cannot read {role} array from {str(path)!r}: {exc}") from None


def load_arrays(path: str | os.PathLike, *, y_path: str | os.PathLike | None = None,
                x_key: str = "X", y_key: str = "y") -> Dataset:
    """Dataset from ``path`` (.npz with keys ``x_key``/``y_key``, or .npy plus ``y_path``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        if y_path is not None:
            raise ValueError(f"load_arrays: y_path is only used with .npy inputs, got {str(path)!r} (.npz)")
        if not path.is_file():
            raise FileNotFoundError(f"load_arrays: file {str(path)!r} does not exist")
        try:
            archive = open_npz(path)
        except (ValueError, OSError) as exc:
            raise ValueError(f"load_arrays: cannot read {str(path)!r} as .npz: {exc}") from None
        with archive:
            keys = list(archive.keys())
            for key in (x_key, y_key):
                if key not in keys:
                    raise KeyError(f"load_arrays: {str(path)!r} has no array {key!r}; it holds {keys} (name them "
                                   f"with x_key and y_key)")
            X, y = archive[x_key], archive[y_key]
        spec = {"name": "arrays", "path": str(path), "x_key": x_key, "y_key": y_key}
    elif suffix == ".npy":
        if y_path is None:
            raise ValueError(f"load_arrays: {str(path)!r} is a .npy file; pass y_path= for the targets "
                             f"(or use one .npz with keys {x_key!r} and {y_key!r})")
        X = _load_npy(path, "X")
        y = _load_npy(Path(y_path), "y")
        spec = {"name": "arrays", "path": str(path), "y_path": str(y_path)}
    else:
        raise ValueError(f"load_arrays: {str(path)!r} must end in .npz or .npy, got {suffix!r}")
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[:, None]
    try:
        return Dataset(X, y, spec)
    except ValueError as exc:
        raise ValueError(f"load_arrays: {str(path)!r}: {exc}") from None
