"""Numba's one-time set-up, on demand.

The first call of any compiled kernel in a process (from the on-disk cache too) first sets up Numba's typing
and target contexts: it loads their registries of typed operations, about 0.2 s on the 2-vCPU VM of issue 23,
against a few milliseconds to load a cached kernel.  :func:`prepare_compiled_code` does that set-up now: a
process about to fork calls it first, so that both processes inherit it instead of each paying it.
"""

from __future__ import annotations

__all__ = ["prepare_compiled_code"]


def prepare_compiled_code() -> None:
    """Set up Numba's CPU typing and target contexts (idempotent: a second call costs microseconds)."""
    from numba.core.registry import cpu_target

    cpu_target.target_context.refresh()
    cpu_target.typing_context.refresh()
