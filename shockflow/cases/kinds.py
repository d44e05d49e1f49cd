"""The registry of case kinds: each kind is a settings dataclass tree plus a runner.

A kind is registered once, by name, with :func:`register_kind`; :func:`get_kind` finds it
(the error lists the valid names and suggests the closest).  The built-in kinds (``pde``;
``network``) register themselves when their module is imported; :func:`kinds` imports them
first, so every caller sees the full list.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from shockflow.cases.schema import closest

__all__ = ["CaseKind", "RunOptions", "register_kind", "get_kind", "kinds"]

#: modules that register the built-in kinds (imported on first use)
BUILTIN_KIND_MODULES = (
    "shockflow.runners.pde", "shockflow.runners.training", "shockflow.nqf.case", "shockflow.spectra.case", "shockflow.scaling.case",
)

_KINDS: dict[str, "CaseKind"] = {}
_loaded = False


@dataclass(frozen=True)
class RunOptions:
    """How a case is run: where results go, the seed (None: the case's own), output, progress, figures
    (and their format, png|svg|pdf, and resolution); ``train_beside`` (``shockflow run``): the network trains in a
    second process while this one predicts, None (default) when a core is idle, True whenever a process can be
    forked, False never (:class:`shockflow.forking.Beside`)."""

    out: str = "shockflow-results"
    seed: int | None = None
    quiet: bool = False
    progress: bool = True
    figures: bool = True
    figure_format: str = "png"
    dpi: float | None = None
    train_beside: bool | None = None


@dataclass(frozen=True)
class CaseKind:
    """``settings``: the root dataclass of the case's tables (parsed by :mod:`shockflow.cases.schema`).
    ``run(case, options)`` performs the case and returns an outcome object with ``as_dict()`` and
    ``table()``; ``command`` is the CLI command that runs it (``solve``, ``train``); ``verify(case)``
    (optional) checks what needs the file system (array files, mesh sizes) without running,
    raising :class:`~shockflow.cases.errors.CaseError`."""

    name: str
    settings: type
    run: Callable[..., Any]
    description: str
    command: str
    verify: Callable[..., Any] | None = None


def register_kind(kind: CaseKind) -> CaseKind:
    if kind.name in _KINDS and _KINDS[kind.name] is not kind:
        raise ValueError(f"register_kind: the case kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def _load_builtin() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in BUILTIN_KIND_MODULES:
            importlib.import_module(module)


def kinds() -> list[str]:
    """Sorted names of the registered case kinds."""
    _load_builtin()
    return sorted(_KINDS)


def get_kind(name: str) -> CaseKind:
    """The kind registered as ``name``; ``KeyError`` naming the valid kinds otherwise."""
    _load_builtin()
    if name not in _KINDS:
        hint = closest(name, _KINDS)
        did = f' (did you mean "{hint}"?)' if hint else ""
        raise KeyError(f'unknown case kind "{name}"{did}; expected one of ' + ", ".join(f'"{k}"' for k in sorted(_KINDS)))
    return _KINDS[name]
