"""Sweep tasks: one parameter point of a sweep, with its hash, its seed and its file name.

A task is the case text (or, for a function sweep, the function's import name and fixed
arguments) plus the overrides of one parameter point.  Three derived quantities make a sweep
resumable and reproducible:

* ``key`` — the file stem ``t-<16 hex>``: SHA-256 of the canonical JSON of the swept parameters
  alone, so a task keeps its file when the case text changes (and the stale file is replaced);
* ``hash`` — SHA-256 of the canonical JSON of {source text, every override (fixed and swept),
  seed, shockflow version}: a finished task whose result file carries this hash is skipped;
* ``seed`` — ``SeedSequence(entropy=sweep_seed, spawn_key=words(SHA-256(params)))``, the first
  64-bit word shifted to 63 bits (a valid TOML integer): it depends on the sweep seed and on the
  task's own parameter values, never on the order of the axes' values or of submission.  A
  ``seed`` given explicitly (swept or fixed) is used as it is.

Canonical JSON: keys sorted, no whitespace, floats by ``repr`` (shortest round-trip), so the
hash is the same on every machine and Python version.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from shockflow.cases.sweep_axes import SweepAxes, toml_value

__all__ = ["Task", "canonical_json", "params_digest", "task_seed", "task_hash", "make_tasks", "SEED_KEY"]

#: the case header key (and default function argument) that carries a task's seed
SEED_KEY = "seed"
#: bump when the meaning of a task hash changes
HASH_SCHEME = 1


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    return value


def canonical_json(value) -> str:
    """Sorted-key, whitespace-free JSON (non-finite floats encoded as ``{"float": "nan"}``)."""
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def params_digest(params: dict) -> str:
    """SHA-256 (hex) of the canonical JSON of ``params``."""
    return hashlib.sha256(canonical_json(params).encode("utf-8")).hexdigest()


def task_seed(sweep_seed: int, params: dict) -> int:
    """The seed of the task at ``params`` in a sweep seeded ``sweep_seed`` (module docstring)."""
    if isinstance(sweep_seed, bool) or not isinstance(sweep_seed, (int, np.integer)) or sweep_seed < 0:
        raise ValueError(f"sweep seed: expected an integer >= 0, found {sweep_seed!r}")
    digest = bytes.fromhex(params_digest(params))
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 32, 4))
    state = np.random.SeedSequence(entropy=int(sweep_seed), spawn_key=words).generate_state(1, dtype=np.uint64)
    return int(state[0] >> np.uint64(1))


def task_hash(source: str, overrides, seed: int, version: str) -> str:
    """SHA-256 (hex) of {source, overrides, seed, version, scheme} in canonical JSON."""
    body = {"source": source, "overrides": list(overrides), "seed": int(seed), "version": str(version),
            "scheme": HASH_SCHEME}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Task:
    """One parameter point: ``params`` are the swept values (axis order), ``overrides`` the
    ``KEY=VALUE`` texts of every override (fixed first, then swept) as ``--set`` would take them."""

    index: int
    params: tuple[tuple[str, Any], ...]
    fixed: tuple[tuple[str, Any], ...]
    source: str
    seed: int
    hash: str
    key: str

    @property
    def params_dict(self) -> dict:
        return dict(self.params)

    @property
    def arguments(self) -> dict:
        """Fixed and swept values together (what a function task receives, before the seed)."""
        return {**dict(self.fixed), **dict(self.params)}

    @property
    def overrides(self) -> tuple[str, ...]:
        return tuple(f"{k}={toml_value(v)}" for k, v in (*self.fixed, *self.params))

    @property
    def filename(self) -> str:
        return f"{self.key}.h5"

    @property
    def failure_filename(self) -> str:
        return f"{self.key}.failed.json"


def make_tasks(source: str, axes: SweepAxes, sweep_seed: int, version: str, *,
               seed_key: str | None = SEED_KEY) -> tuple[Task, ...]:
    """The tasks of ``axes`` over ``source`` (case text or function name), in product order.

    ``seed_key``: the override key that sets a task's seed explicitly (``seed`` for cases);
    when it is swept or fixed, its value is the task's seed.
    """
    fixed = tuple(axes.fixed)
    fixed_seed = dict(fixed).get(seed_key) if seed_key else None
    tasks = []
    for index, point in enumerate(axes.points() if axes.axes else [{}]):
        explicit = point.get(seed_key, fixed_seed) if seed_key else None
        if explicit is not None:
            if isinstance(explicit, bool) or not isinstance(explicit, int) or explicit < 0:
                raise ValueError(f"{seed_key}: an explicit seed must be an integer >= 0, found {explicit!r}")
            seed = int(explicit)
        else:
            seed = task_seed(sweep_seed, point)
        params = tuple(point.items())
        overrides = tuple(f"{k}={toml_value(v)}" for k, v in (*fixed, *params))
        tasks.append(Task(index=index, params=params, fixed=fixed, source=source, seed=seed,
                          hash=task_hash(source, overrides, seed, version), key="t-" + params_digest(point)[:16]))
    seen: dict[str, Task] = {}
    for t in tasks:
        if t.key in seen:
            raise ValueError(f"axes: the parameter point {seen[t.key].params_dict} occurs twice "
                             f"(tasks {seen[t.key].index} and {t.index}); remove the repeated value")
        seen[t.key] = t
    return tuple(tasks)
