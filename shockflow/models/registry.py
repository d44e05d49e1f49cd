"""The registry of models by name: ``register`` (class decorator), ``build``, ``available``.

Another package adds a model without touching shockflow through an entry point in the group
``shockflow.models`` (read on first use, as ``shockflow.geometries`` is): its object is a
:class:`~shockflow.models.base.Model` subclass or any callable returning a network that implements
:class:`shockflow.models.protocol.NetworkProtocol`; its keyword arguments are what a case's
``[model]`` table may set::

    [project.entry-points."shockflow.models"]
    ridge_net = "my_package.nets:RidgeNet"
"""

from __future__ import annotations

from typing import Any

from shockflow.models.base import Model
from shockflow.plugins import PluginGroup

__all__ = ["register", "build", "available", "model_class", "reload_plugins", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "shockflow.models"

_REGISTRY: dict[str, type[Model]] = {}


def _check_plugin(name: str, obj, where: str) -> None:
    if not callable(obj):
        raise ValueError(f"{where}: expected a model class or a function returning a network, found {obj!r}")
    if name in _REGISTRY:
        raise ValueError(f"{where}: the name {name!r} is taken by a built-in model")


_PLUGINS = PluginGroup(ENTRY_POINT_GROUP, _check_plugin)
reload_plugins = _PLUGINS.reload


def register(cls: type[Model]) -> type[Model]:
    """Register a :class:`Model` subclass under its ``name`` class attribute."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"register: {cls.__name__} needs a non-empty class attribute 'name'")
    if name in _REGISTRY and _REGISTRY[name] is not cls:
        raise ValueError(f"register: the name {name!r} is already taken by {_REGISTRY[name].__name__}")
    _REGISTRY[name] = cls
    return cls


def available() -> list[str]:
    """Sorted names of the registered models (plug-ins included)."""
    return sorted({**_REGISTRY, **_PLUGINS.entries()})


def model_class(name: str) -> type[Model]:
    """The class registered as ``name``; raises ``ValueError`` listing valid names otherwise."""
    found = _REGISTRY.get(name) or _PLUGINS.entries().get(name)
    if found is None:
        raise ValueError(f"model: unknown name {name!r}; valid names: {', '.join(available())}")
    return found


def build(name: str, **kwargs: Any) -> Model:
    """Construct the model registered as ``name`` with constructor arguments ``kwargs``.

    ``build(**model.spec())`` rebuilds ``model``'s architecture and initial parameters.
    """
    cls = model_class(name)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc) or "missing" in str(exc):
            raise TypeError(f"model {name!r}: {exc}") from exc
        raise
