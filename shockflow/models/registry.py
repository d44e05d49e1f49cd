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

__all__ = ["register", "build", "available", "model_class", "reload_plugins", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "shockflow.models"

_REGISTRY: dict[str, type[Model]] = {}
_PLUGINS: dict | None = None


def _plugins() -> dict:
    global _PLUGINS
    if _PLUGINS is None:
        from importlib import metadata

        found = {}
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            where = f"entry point {ep.name!r} = {ep.value!r} in group {ENTRY_POINT_GROUP!r}"
            try:
                obj = ep.load()
            except Exception as exc:  # a broken plug-in must say which one it is
                raise ValueError(f"{where}: failed to load ({type(exc).__name__}: {exc})") from exc
            if not callable(obj):
                raise ValueError(f"{where}: expected a model class or a function returning a network, found {obj!r}")
            if ep.name in _REGISTRY:
                raise ValueError(f"{where}: the name {ep.name!r} is taken by a built-in model")
            found[ep.name] = obj
        _PLUGINS = found
    return _PLUGINS


def reload_plugins() -> None:
    """Forget the plug-ins read so far; the next lookup reads the entry points again."""
    global _PLUGINS
    _PLUGINS = None


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
    return sorted({**_REGISTRY, **_plugins()})


def model_class(name: str) -> type[Model]:
    """The class registered as ``name``; raises ``ValueError`` listing valid names otherwise."""
    found = _REGISTRY.get(name) or _plugins().get(name)
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
