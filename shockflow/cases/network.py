"""The ``network`` case kind: a model, its data and its training, run by ``shockflow train``.

    [model]      name = "linear2" and the model's keyword arguments (shockflow.models registry)
    [data]       name = "teacher_student" and the generator's keyword arguments (shockflow.data)
    [training]   optimizer, learning rate, steps, ... (shockflow.training.TrainSettings)

With a ``[geometry]`` table the case can also be run by ``shockflow run`` (:mod:`shockflow.runners.prediction`):

    [geometry]   name = "gram" and the geometry's keyword arguments (shockflow.geometry registry)
    [extraction] which charts (one 1-D PDE per chart), grid cells, chart margin (shockflow.prediction.extraction)
    [prediction] PDE output times, matching tolerance (shockflow.prediction.mapping, shockflow.prediction.comparison)

``[model]``, ``[data]`` and ``[geometry]`` are call tables (:class:`~shockflow.cases.schema.Call`): their keys are
checked against the signature of the chosen model class or data generator, so a new model or
generator is usable from a case file as soon as it is registered.  The case's ``seed`` seeds the
model (unless ``[model]`` sets its own), the data (likewise) and the batch sampling.  The runner
(:mod:`shockflow.runners.training`) writes the training log (HDF5, docs/training-log.md), detects the
observed transitions in the loss (:func:`shockflow.prediction.transitions.find_transitions`) and draws the
loss with them marked.  Predictions from the quotient PDE join in the second half of issue 6.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from shockflow.cases.schema import Call, at_least, greater_than, interval, setting
from shockflow.training.settings import OPTIMIZERS, SCHEDULES, WEIGHT_DECAY_MODES, TrainSettings

__all__ = ["NetworkCase", "Training", "Extraction", "Prediction"]

_D = {f.name: f.default for f in fields(TrainSettings)}


def _models() -> dict:
    from shockflow.models import registry

    return {name: registry.model_class(name) for name in registry.available()}


def _geometries() -> dict:
    from shockflow import geometry

    return {name: geometry.geometry_class(name) for name in geometry.available()}


def _generators() -> dict:
    from shockflow.data.registry import generators

    return generators()


@dataclass(frozen=True)
class Training:
    """Optimizer and schedule (shockflow.training.TrainSettings; `steps` counts optimizer updates)."""

    optimizer: str = setting(_D["optimizer"], doc="`gd` (full batch), `sgd`, `momentum`, `nesterov`, `adam`.",
                             choices=OPTIMIZERS)
    lr: float = setting(_D["lr"], doc="Learning rate η.", bounds=greater_than(0))
    steps: int = setting(_D["steps"], doc="Optimizer updates.", bounds=at_least(1))
    batch_size: int | None = setting(_D["batch_size"], doc="Minibatch size (not set: full batch; `sgd` needs one).",
                                     bounds=at_least(1))
    momentum: float = setting(_D["momentum"], doc="Momentum μ (`momentum`, `nesterov`).", bounds=interval(0, 1, "left"))
    beta1: float = setting(_D["beta1"], doc="Adam β1.", bounds=interval(0, 1, "left"))
    beta2: float = setting(_D["beta2"], doc="Adam β2.", bounds=interval(0, 1, "left"))
    eps: float = setting(_D["eps"], doc="Adam ε.", bounds=greater_than(0))
    weight_decay: float = setting(_D["weight_decay"], doc="Weight decay λ (`shockflow train`; the prediction has no "
                                                          "model of it: `run` and `forecast` refuse λ > 0).",
                                  bounds=at_least(0))
    weight_decay_mode: str = setting(_D["weight_decay_mode"], doc="`decoupled` (AdamW-style) or `l2` (penalty).",
                                     choices=WEIGHT_DECAY_MODES)
    schedule: str = setting(_D["schedule"], doc="Learning-rate schedule: `constant`, `step`, `cosine`.",
                            choices=SCHEDULES)
    step_every: int = setting(_D["step_every"], doc="`step` schedule: decay period in steps.", bounds=at_least(1))
    gamma: float = setting(_D["gamma"], doc="`step` schedule: decay factor.", bounds=interval(0, 1, "right"))
    lr_min: float = setting(_D["lr_min"], doc="`cosine` schedule: final learning rate.", bounds=at_least(0))
    log_every: int = setting(_D["log_every"], doc="Loss series cadence (step 0 and the last always logged).",
                             bounds=at_least(1))
    n_snapshots: int = setting(400, doc="Parameter snapshots (log-spaced, incl. first and last); the parameter "
                                        "truth of `shockflow run` (each chart's half-learned step) is read from them.",
                               bounds=at_least(2))
    noise_every: int = setting(_D["noise_every"], doc="Gradient-noise statistics cadence (0: off).", bounds=at_least(0))
    noise_batch: int | None = setting(_D["noise_batch"], doc="Samples for per-sample gradients (not set: the batch).",
                                      bounds=at_least(2))
    frozen: tuple[str, ...] = setting((), doc="Parameters not trained (e.g. `[\"a\"]`: a readout layer held at "
                                              "its initial values); the optimiser skips them, and the prediction "
                                              "charts the free parameters only (docs/theory.md §6, \"Frozen "
                                              "parameters\": what it refuses).")
    initial: str | None = setting(None, doc="An `.npz` file of initial parameters (one array per parameter name, "
                                            "relative to the case file), loaded over the model's own initialisation.")

    def train_settings(self, seed: int) -> TrainSettings:
        return TrainSettings(**{f.name: getattr(self, f.name) for f in fields(self) if f.name != "initial"}, seed=seed)

    def check(self):
        try:
            self.train_settings(0)
        except ValueError as exc:
            text = str(exc).removeprefix("TrainSettings: ")
            names = [f.name for f in fields(self)]
            match = re.search(r"\b(" + "|".join(names) + r")\b", text)
            yield (match.group(1) if match else ""), text


@dataclass(frozen=True)
class Extraction:
    """Network -> PDE problems on quotient charts (shockflow.prediction.extraction): one 1-D chart per entry of `charts`."""

    charts: tuple[int, ...] = setting((), doc="Values of the geometry keyword `chart_key` (e.g. mode indices); "
                                              "one 1-D chart each (empty: the geometry's own chart).")
    chart_key: str = setting("modes", doc="The geometry keyword that selects a chart (`modes` for gram, `unit` "
                                          "for rescaling).")
    cells: int = setting(801, doc="Grid cells per chart.", bounds=at_least(16))
    margin: float = setting(0.25, doc="Relative margin of the chart box around the initial point and the landscape "
                                      "minimum (the prediction never reads the run's trajectory).", bounds=at_least(0))
    sequential: bool = setting(True, doc="The saddle chain: each waiting chart grows at the rate of the saddle the "
                                         "network sits at, the saddles found from the landscape "
                                         "(shockflow.prediction.saddle_chain); false: every chart escapes from "
                                         "the origin independently.")
    noise_samples: int = setting(512, doc="Samples for the per-sample chart gradients (projected temperature).",
                                 bounds=at_least(2))


@dataclass(frozen=True)
class Prediction:
    """PDE solve and the shock -> transition mapping (shockflow.prediction.mapping, shockflow.prediction.comparison)."""

    times: int = setting(41, doc="PDE output times per chart, uniform in [0, horizon x γ*] (γ* from the "
                                 "initial data).", bounds=at_least(8))
    horizon: float = setting(2.0, doc="Solve to this multiple of the initial-data γ*.", bounds=greater_than(1))
    cfl: float = setting(0.5, doc="Courant number of the chart HJ solver.", bounds=interval(0, 1, "right"))
    max_ratio: float = setting(2.0, doc="A predicted and a true step are matched only within this factor, "
                                        "either side (symmetric in log).",
                               bounds=greater_than(1))


@dataclass(frozen=True)
class NetworkCase:
    """A network case: `shockflow train CASE` trains it and reports the transitions in its loss;
    with a `[geometry]` table `shockflow run CASE` also predicts them from the quotient PDE."""

    model: Call = setting(doc="The network (shockflow.models).", callables=_models)
    data: Call = setting(doc="The training data (shockflow.data generators).", callables=_generators)
    training: Training = setting(doc="Optimizer and schedule.", factory=Training)
    geometry: Call | None = setting(None, doc="The quotient geometry (shockflow.geometry; needed by `shockflow run`).",
                                    callables=_geometries, exclude=("model",))
    extraction: Extraction = setting(doc="Which charts and how finely (shockflow run).", factory=Extraction)
    prediction: Prediction = setting(doc="PDE solve and matching (shockflow run).", factory=Prediction)

    # (an optimiser or penalty without an escape model is refused by the commands that predict, before any
    # training: shockflow.runners.training.refuse_unmodelled; `shockflow train` trains with any of them)
