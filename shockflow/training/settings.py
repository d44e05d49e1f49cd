"""``TrainSettings``: every training option, validated in one place.

Optimizers (``optimizer``):
  "gd"        full-batch gradient descent (``batch_size`` must be None or n)
  "sgd"       minibatch SGD, sampling without replacement within each epoch
  "momentum"  heavy-ball momentum  v ← μ v + g,  θ ← θ − η v
  "nesterov"  Nesterov momentum    v ← μ v + g,  θ ← θ − η (g + μ v)
  "adam"      Adam (Kingma & Ba), bias-corrected
``batch_size=None`` means full batch for every optimizer except "sgd", which needs a size.

Weight decay (``weight_decay`` λ ≥ 0, ``weight_decay_mode``):
  "decoupled" θ ← (1 − η λ) θ before the optimizer step (AdamW-style; the default)
  "l2"        g ← g + λ θ, i.e. the penalty (λ/2)‖θ‖² added to the loss
For plain GD/SGD the two coincide; for momentum and Adam they differ.

Learning-rate schedules (``schedule``): "constant"; "step" (η·gamma^⌊t/step_every⌋);
"cosine" (η_min + (η − η_min)(1 + cos(π t/steps))/2).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

__all__ = ["TrainSettings", "OPTIMIZERS", "SCHEDULES", "WEIGHT_DECAY_MODES"]

OPTIMIZERS = ("gd", "sgd", "momentum", "nesterov", "adam")
SCHEDULES = ("constant", "step", "cosine")
WEIGHT_DECAY_MODES = ("decoupled", "l2")


def _check_int(name: str, value, minimum: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"TrainSettings: {name} must be an integer >= {minimum}"
                         f"{' or None' if allow_none else ''}, got {value!r}")


def _check_float(name: str, value, *, low: float, low_open: bool, high: float | None = None,
                 high_open: bool = True) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        lo = f"{'>' if low_open else '>='} {low}"
        hi = "" if high is None else f" and {'<' if high_open else '<='} {high}"
        raise ValueError(f"TrainSettings: {name} must be a finite number {lo}{hi}, got {value!r}")


@dataclass(frozen=True)
class TrainSettings:
    """Training options (see module docstring). ``steps`` counts optimizer updates."""

    optimizer: str = "gd"
    lr: float = 0.01
    steps: int = 1000
    batch_size: int | None = None
    momentum: float = 0.9
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0
    weight_decay_mode: str = "decoupled"
    schedule: str = "constant"
    step_every: int = 1000          # "step" schedule: decay period in steps
    gamma: float = 0.1              # "step" schedule: decay factor
    lr_min: float = 0.0             # "cosine" schedule: final learning rate
    seed: int = 0                   # batch sampling, noise-statistics batches
    init_scale: float | None = None  # small-initialisation control, passed to the model builder
    log_every: int = 1              # loss / lr series cadence (step 0 and the last are always logged)
    observe_every: int = 10         # user observables cadence
    n_snapshots: int = 50           # parameter snapshots on a log-spaced schedule incl. 0 and last
    noise_every: int = 0            # gradient-noise statistics cadence (0 = off)
    frozen: tuple = ()              # parameter names the optimiser does not update (a layer not trained)
    noise_batch: int | None = None  # samples used for per-sample gradients (None = batch size)

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"TrainSettings: unknown optimizer {self.optimizer!r}; valid names: {list(OPTIMIZERS)}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"TrainSettings: unknown schedule {self.schedule!r}; valid names: {list(SCHEDULES)}")
        if self.weight_decay_mode not in WEIGHT_DECAY_MODES:
            raise ValueError(f"TrainSettings: unknown weight_decay_mode {self.weight_decay_mode!r}; "
                             f"valid names: {list(WEIGHT_DECAY_MODES)}")
        _check_float("lr", self.lr, low=0.0, low_open=True)
        _check_int("steps", self.steps, 1)
        _check_int("batch_size", self.batch_size, 1, allow_none=True)
        if self.optimizer == "sgd" and self.batch_size is None:
            raise ValueError("TrainSettings: optimizer 'sgd' needs a batch_size (use 'gd' for full batch)")
        _check_float("momentum", self.momentum, low=0.0, low_open=False, high=1.0)
        _check_float("beta1", self.beta1, low=0.0, low_open=False, high=1.0)
        _check_float("beta2", self.beta2, low=0.0, low_open=False, high=1.0)
        _check_float("eps", self.eps, low=0.0, low_open=True)
        _check_float("weight_decay", self.weight_decay, low=0.0, low_open=False)
        _check_int("step_every", self.step_every, 1)
        _check_float("gamma", self.gamma, low=0.0, low_open=True, high=1.0, high_open=False)
        _check_float("lr_min", self.lr_min, low=0.0, low_open=False)
        if self.schedule == "cosine" and self.lr_min > self.lr:
            raise ValueError(f"TrainSettings: lr_min = {self.lr_min} must be <= lr = {self.lr}")
        _check_int("seed", self.seed, 0)
        if self.init_scale is not None:
            _check_float("init_scale", self.init_scale, low=0.0, low_open=True)
        _check_int("log_every", self.log_every, 1)
        _check_int("observe_every", self.observe_every, 1)
        _check_int("n_snapshots", self.n_snapshots, 2)
        _check_int("noise_every", self.noise_every, 0)
        _check_int("noise_batch", self.noise_batch, 2, allow_none=True)
        if isinstance(self.frozen, str) or not all(isinstance(k, str) for k in self.frozen):
            raise ValueError(f"TrainSettings: frozen must be a list of parameter names, got {self.frozen!r}")
        object.__setattr__(self, "frozen", tuple(self.frozen))

    def effective_batch_size(self, n: int) -> int:
        """The batch size B used on n samples; error if it exceeds n or 'gd' is given B != n."""
        if self.batch_size is None:
            return n
        if self.batch_size > n:
            raise ValueError(f"TrainSettings: batch_size = {self.batch_size} is larger than the data set "
                             f"(n = {n} samples)")
        if self.optimizer == "gd" and self.batch_size != n:
            raise ValueError(f"TrainSettings: optimizer 'gd' is full batch; batch_size must be None or "
                             f"n = {n}, got {self.batch_size} (use 'sgd' for minibatches)")
        return self.batch_size

    def to_dict(self) -> dict:
        """JSON-serialisable dict (``frozen`` as a list, as JSON reads it back); ``TrainSettings(**d)`` rebuilds."""
        return {**asdict(self), "frozen": list(self.frozen)}
