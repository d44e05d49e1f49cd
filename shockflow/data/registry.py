"""Data generators by name: ``build_dataset(name, **kwargs)``, ``available()``."""

from __future__ import annotations

from typing import Callable

from shockflow.plugins import PluginGroup

from .arrays import load_arrays
from .committee import committee_teacher
from .dataset import Dataset
from .fourier import fourier_grid
from .images import gaussian_images
from .power_law import power_law_covariance
from .sklearn_tables import sklearn_table
from .teacher_student import linear_teacher, teacher_student
from .tokens import token_sequences

__all__ = ["GENERATORS", "ENTRY_POINT_GROUP", "available", "build_dataset", "generators", "register", "reload_plugins"]

#: third-party data generators: entry points whose object is a function returning a Dataset
ENTRY_POINT_GROUP = "shockflow.data"

GENERATORS: dict[str, Callable[..., Dataset]] = {
    "teacher_student": teacher_student,
    "linear_teacher": linear_teacher,
    "committee_teacher": committee_teacher,
    "power_law_covariance": power_law_covariance,
    "fourier_grid": fourier_grid,
    "gaussian_images": gaussian_images,
    "token_sequences": token_sequences,
    "arrays": load_arrays,
    "sklearn_table": sklearn_table,
}


def _check_plugin(name: str, obj, where: str) -> None:
    if not callable(obj) or name in GENERATORS:
        raise ValueError(f"{where}: expected a data generator function under a new name, found {obj!r}")


_PLUGINS = PluginGroup(ENTRY_POINT_GROUP, _check_plugin)
reload_plugins = _PLUGINS.reload


def generators() -> dict[str, Callable[..., Dataset]]:
    """Every data generator by name: the built-in ones and those of the ``shockflow.data`` entry points."""
    return {**GENERATORS, **_PLUGINS.entries()}


def available() -> list[str]:
    """Names of the registered data generators (plug-ins included)."""
    return sorted(generators())


def register(name: str, generator: Callable[..., Dataset]) -> None:
    """Add a generator under ``name`` (refuses to overwrite an existing one)."""
    if name in GENERATORS:
        raise ValueError(f"register: a data generator named {name!r} already exists")
    GENERATORS[name] = generator


def build_dataset(name: str, **kwargs) -> Dataset:
    """Call the generator registered as ``name`` with ``kwargs``."""
    try:
        gen = generators()[name]
    except KeyError:
        raise ValueError(f"build_dataset: unknown data generator {name!r}; valid names: {available()}") from None
    return gen(**kwargs)
