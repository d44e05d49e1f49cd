"""Versions of the packages that produced a file (stored with every log and result)."""

from __future__ import annotations

import functools
import platform
from importlib import metadata

__all__ = ["package_versions"]


def package_versions() -> dict[str, str]:
    """{"python", "numpy", "scipy", "h5py", "shockflow", ...} → version strings ("absent" if missing); a fresh
    dict each call, the versions read once per process (2 ms a package from its metadata; a run writes two files)."""
    return dict(_versions())


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str], ...]:
    out = {"python": platform.python_version()}
    for name in ("numpy", "scipy", "h5py", "numba", "shockflow"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return tuple(out.items())
