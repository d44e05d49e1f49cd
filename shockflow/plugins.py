"""Plug-ins found through entry-point groups: geometries (``shockflow.geometries``), models
(``shockflow.models``) and data generators (``shockflow.data``).

:class:`PluginGroup` reads one group once, on first use, loads every entry point, checks each object
with the registry's own rule and keeps them by name; a plug-in that fails to load or to pass the check
raises the registry's error naming the entry point.  :meth:`PluginGroup.reload` forgets what was read
(a package installed while the interpreter runs)."""

from __future__ import annotations

from typing import Callable

__all__ = ["PluginGroup"]


class PluginGroup:
    """One entry-point group.  ``check(name, obj, where)`` raises ``error`` for an object the registry
    does not accept (``where`` names the entry point for the message)."""

    def __init__(self, group: str, check: Callable[[str, object, str], None], error: type[Exception] = ValueError):
        self.group, self._check, self._error = group, check, error
        self._found: dict | None = None

    def entries(self) -> dict:
        """``{name: object}`` of the group's entry points (read once)."""
        if self._found is None:
            from importlib import metadata

            found = {}
            for ep in metadata.entry_points(group=self.group):
                where = f"entry point {ep.name!r} = {ep.value!r} in group {self.group!r}"
                try:
                    obj = ep.load()
                except Exception as exc:  # a broken plug-in must say which one it is
                    raise self._error(f"{where}: failed to load ({type(exc).__name__}: {exc})") from exc
                self._check(ep.name, obj, where)
                found[ep.name] = obj
            self._found = found
        return self._found

    def reload(self) -> None:
        """Forget the plug-ins read so far; the next lookup reads the entry points again."""
        self._found = None
