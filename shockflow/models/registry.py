"""The registry of models by name: ``register`` (class decorator), ``build``, ``available``."""

from __future__ import annotations

from typing import Any

from shockflow.models.base import Model

__all__ = ["register", "build", "available", "model_class"]

_REGISTRY: dict[str, type[Model]] = {}


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
    """Sorted names of the registered models."""
    return sorted(_REGISTRY)


def model_class(name: str) -> type[Model]:
    """The class registered as ``name``; raises ``ValueError`` listing valid names otherwise."""
    if name not in _REGISTRY:
        raise ValueError(f"model: unknown name {name!r}; valid names: {', '.join(available())}")
    return _REGISTRY[name]


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
