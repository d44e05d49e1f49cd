"""``TrainingRecord``: what a training run leaves behind (and what a foreign log is read into).

Fields (all arrays float64 unless stated; steps are int64 counts of optimizer updates, and the
value at step s is measured on the parameters after s updates):
  series       {"step", "loss", optionally "batch_loss", "test_loss", "lr"}: one grid of steps
  snapshots    {"step", <param name>: (k, *shape)}: parameter snapshots, log-spaced steps
  observables  {"step", <name>: (k,) or (k, *shape)}: user observables
  noise        {"step", "trace", "sigma2", "temperature", "temperature_trace", "temperature_fpc"}
  model_spec, data_spec, settings : JSON-able dicts; seed : int | None
  versions     package versions that produced the record; source : "shockflow" or the file read
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["TrainingRecord"]


@dataclass(frozen=True, eq=False)
class TrainingRecord:
    series: dict[str, np.ndarray]
    snapshots: dict[str, np.ndarray] = field(default_factory=dict)
    observables: dict[str, np.ndarray] = field(default_factory=dict)
    noise: dict[str, np.ndarray] = field(default_factory=dict)
    model_spec: dict[str, Any] = field(default_factory=dict)
    data_spec: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    versions: dict[str, str] = field(default_factory=dict)
    source: str = "shockflow"
    wall_time: float = float("nan")
    start: str = ""          # digest of the initial parameters (shockflow.logs.agreement.start_digest); "": unknown

    def __post_init__(self):
        for group in ("series", "snapshots", "observables", "noise"):
            d = getattr(self, group)
            if d and "step" not in d:
                raise ValueError(f"TrainingRecord: {group} must contain a 'step' array, got keys {sorted(d)}")
            if d:
                k = len(d["step"])
                for name, a in d.items():
                    if len(a) != k:
                        raise ValueError(f"TrainingRecord: {group}/{name} has {len(a)} entries but "
                                         f"{group}/step has {k}")
        if "loss" not in self.series:
            raise ValueError("TrainingRecord: series must contain 'loss'")

    @property
    def steps(self) -> np.ndarray:
        """Steps of the loss series."""
        return self.series["step"]

    @property
    def loss(self) -> np.ndarray:
        """Training loss on ``steps``."""
        return self.series["loss"]

    @property
    def test_loss(self) -> np.ndarray | None:
        return self.series.get("test_loss")

    def parameter_names(self) -> list[str]:
        return [k for k in self.snapshots if k != "step"]

    def final_params(self) -> dict[str, np.ndarray]:
        """The last parameter snapshot (the parameters after the last step)."""
        if not self.snapshots:
            raise ValueError("TrainingRecord: no parameter snapshots in this record")
        return {k: v[-1].copy() for k, v in self.snapshots.items() if k != "step"}

    def same_as(self, other: "TrainingRecord") -> bool:
        """Bit-for-bit equality of every array and every metadata field except wall_time."""
        if not isinstance(other, TrainingRecord):
            return False
        for group in ("series", "snapshots", "observables", "noise"):
            a, b = getattr(self, group), getattr(other, group)
            if sorted(a) != sorted(b):
                return False
            for k in a:
                x, y = np.asarray(a[k]), np.asarray(b[k])
                if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                    return False
        return (self.model_spec == other.model_spec and self.data_spec == other.data_spec
                and self.settings == other.settings and self.seed == other.seed
                and self.versions == other.versions and self.source == other.source)
