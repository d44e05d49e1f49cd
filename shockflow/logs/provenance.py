"""Versions of the packages that produced a file (stored with every log and result)."""

from __future__ import annotations

import platform
from importlib import metadata

__all__ = ["package_versions"]


def package_versions() -> dict[str, str]:
    """{"python", "numpy", "scipy", "h5py", "shockflow", ...} → version strings ("absent" if missing)."""
    out = {"python": platform.python_version()}
    for name in ("numpy", "scipy", "h5py", "numba", "shockflow"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out
