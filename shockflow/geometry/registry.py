"""The registry of quotient geometries by name, with third-party plug-ins via entry points.

Built-in geometries register with the :func:`register` class decorator.  Another package adds a
geometry without touching shockflow by declaring an entry point in the group
``shockflow.geometries`` whose name is the geometry's name and whose object is its class::

    [project.entry-points."shockflow.geometries"]
    cone = "my_package.cone:ConeGeometry"

Entry points are read (with :func:`importlib.metadata.entry_points`) the first time a name is
looked up or listed, and again after :func:`reload_plugins`.  A plug-in that fails to load, is not
a :class:`~shockflow.geometry.base.Geometry` subclass, or whose ``name`` differs from its entry
point name raises :class:`~shockflow.geometry.base.GeometryError` naming the entry point.
"""

from __future__ import annotations

import difflib
from typing import Any

from shockflow.geometry.base import Geometry, GeometryError
from shockflow.plugins import PluginGroup

__all__ = ["register", "available", "geometry_class", "build", "reload_plugins", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "shockflow.geometries"

_BUILTIN: dict[str, type[Geometry]] = {}


def register(cls: type[Geometry]) -> type[Geometry]:
    """Register a built-in :class:`Geometry` subclass under its ``name``."""
    _check_class(cls, f"register: {getattr(cls, '__name__', cls)!r}")
    if cls.name in _BUILTIN and _BUILTIN[cls.name] is not cls:
        raise GeometryError(f"register: the name {cls.name!r} is already taken by {_BUILTIN[cls.name].__name__}")
    _BUILTIN[cls.name] = cls
    return cls


def _check_class(cls, where: str) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Geometry)):
        raise GeometryError(f"{where}: expected a subclass of shockflow.geometry.Geometry, found {cls!r}")
    for attr in ("name", "symmetry"):
        value = getattr(cls, attr, None)
        if not isinstance(value, str) or not value:
            raise GeometryError(f"{where}: the class {cls.__name__} needs a non-empty class attribute {attr!r}")


def _check_plugin(name: str, cls, where: str) -> None:
    _check_class(cls, where)
    if cls.name != name:
        raise GeometryError(f"{where}: the class's name is {cls.name!r}, expected {name!r}")
    if name in _BUILTIN:
        raise GeometryError(f"{where}: the name {name!r} is taken by a built-in geometry")


_PLUGINS = PluginGroup(ENTRY_POINT_GROUP, _check_plugin, GeometryError)
reload_plugins = _PLUGINS.reload


def _all() -> dict[str, type[Geometry]]:
    return {**_BUILTIN, **_PLUGINS.entries()}


def available() -> list[str]:
    """Sorted names of the built-in and plug-in geometries."""
    return sorted(_all())


def geometry_class(name: str) -> type[Geometry]:
    """The class registered as ``name``; the error lists the valid names."""
    table = _all()
    if name not in table:
        close = difflib.get_close_matches(str(name), list(table), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise GeometryError(f"geometry: unknown name {name!r}{hint}; valid names: {', '.join(sorted(table))}")
    return table[name]


def build(name: str, **kwargs: Any) -> Geometry:
    """Construct the geometry ``name`` with ``kwargs`` (``model=...`` and its settings)."""
    return geometry_class(name)(**kwargs)
