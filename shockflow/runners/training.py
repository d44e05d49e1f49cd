"""Running a ``network`` case: model + data + training settings -> training log, observed transitions, figure.

:func:`build_model_and_data` builds the model spec and the data set from a validated
:class:`~shockflow.cases.network.NetworkCase` (argument errors of a model or generator become a
:class:`~shockflow.cases.errors.CaseError` naming ``model`` or ``data``); :func:`run_network_case`
trains (:func:`shockflow.training.train`), writes ``<out>/<name>.h5`` (the training log, atomically:
an interrupted run leaves no file), finds the transitions of the loss
(:func:`shockflow.prediction.transitions.find_transitions`) and draws ``<out>/<name>-loss.png``.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shockflow.blas_threads import blas_threads
from shockflow.cases.errors import CaseError
from shockflow.storage.atomic import committed_together
from shockflow.cases.kinds import CaseKind, register_kind
from shockflow.cases.network import NetworkCase

__all__ = ["adapt_network", "build_model_and_data", "load_initial", "run_network_case", "NetworkOutcome"]


def _require_finite_arguments(case, table: str, kwargs: dict, prefix: str = "") -> None:
    """No NaN or infinity among the numbers of ``[model]`` / ``[data]``: the error names the key itself
    (``data.teacher_weights[0]``), not the table the model or generator complained about later."""
    import math

    for key, value in kwargs.items():
        where = f"{table}.{prefix}{key}"
        items = value if isinstance(value, (list, tuple)) else [value]
        numbers = any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items)
        for i, v in enumerate(items):
            index = f"[{i}]" if isinstance(value, (list, tuple)) else ""
            if isinstance(v, dict):
                _require_finite_arguments(case, table, v, prefix=f"{prefix}{key}.")
            elif isinstance(v, float) and not math.isfinite(v):
                raise CaseError.at(case, where + index, f"expected a finite number, found {v}")
            elif index and numbers and isinstance(v, str):   # [8.0, "x"]: a list of numbers with a word in it
                raise CaseError.at(case, where + index, f"expected a number, as the list's other entries are, "
                                                        f"found the string {v!r}")


def _named_argument(table: str, message: str, names) -> tuple[str, str]:
    """``(key, message)`` of an error a model or data generator raised: the argument it names first
    (``"power_law_covariance: n must be ..."``, ``"init_scale: expected ..."``) when that is one of ``names``, as
    ``table.argument`` with the generator's and the argument's names dropped; else the table itself."""
    import re

    found = re.match(r"(?:\w+: )?(\w+)(?:: | (?=must ))", message)
    if found is None or found.group(1) not in names:
        return table, message
    return f"{table}.{found.group(1)}", message[found.end():]


def adapt_network(network, X, y, label: str | None = None):
    """``(model, dataset)``: a shockflow model as it is with ``(X, y)`` as a Dataset, or a network implementing
    the protocol (:mod:`shockflow.models.protocol`) adapted, with its data as row numbers."""
    from shockflow.data.dataset import Dataset
    from shockflow.models.base import Model
    from shockflow.models.protocol import ProtocolModel

    if isinstance(network, Model):
        return network, Dataset(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64))
    adapter = ProtocolModel(network, X, y, label)
    Xi, yi = adapter.indexed()
    return adapter, Dataset(Xi, yi, {"name": "protocol", "network": adapter.label})


def _parameters(factory) -> set:
    """Keyword names ``factory`` takes (``**`` included: it takes any)."""
    target = factory.__init__ if isinstance(factory, type) else factory
    params = inspect.signature(target).parameters.values()
    return {"seed"} if any(p.kind is p.VAR_KEYWORD for p in params) else {p.name for p in params}


def build_model_and_data(case, seed: int):
    """``(model, model_spec, dataset, data_spec)`` of a network case; CaseError on bad arguments."""
    from shockflow import models
    from shockflow.data.registry import generators
    from shockflow.training import check_shapes

    s = case.settings
    _require_finite_arguments(case, "model", s.model.kwargs())
    _require_finite_arguments(case, "data", s.data.kwargs())
    spec = {"name": s.model.name, **s.model.kwargs()}
    try:
        factory = models.model_class(s.model.name)
        if "seed" in _parameters(factory):   # a plug-in's factory may take no seed
            spec.setdefault("seed", seed)
        model = models.build(**spec)
    except (TypeError, ValueError) as exc:
        raise CaseError.at(case, *_named_argument("model", str(exc), set(spec) - {"name"})) from None
    from shockflow.models.protocol import is_protocol_network

    if s.training.initial is not None and not is_protocol_network(model):
        load_initial(case, model)
    kwargs = s.data.kwargs()
    generator = generators()[s.data.name]
    params = inspect.signature(generator).parameters
    if "seed" in params:
        kwargs.setdefault("seed", seed)
    for key, value in list(kwargs.items()):  # file arguments are relative to the case file
        if (key == "path" or key.endswith("_path")) and isinstance(value, str) and not Path(value).is_absolute():
            kwargs[key] = str(case.directory / value)
    try:
        data = generator(**kwargs)
    except FileNotFoundError as exc:
        raise CaseError.at(case, "data.path", str(exc)) from None
    except KeyError as exc:   # an array the data's file does not hold (load_arrays)
        raise CaseError.at(case, "data", str(exc.args[0]) if exc.args else str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise CaseError.at(case, *_named_argument("data", str(exc), set(kwargs) | set(params))) from None
    if is_protocol_network(model):   # a third-party network implementing the protocol: adapted, on row numbers
        try:
            model, data = adapt_network(model, data.X, data.y, label=s.model.name)
        except (TypeError, ValueError) as exc:
            raise CaseError.at(case, "model", str(exc)) from None
        if s.training.initial is not None:
            load_initial(case, model)
    data = _one_column_as_scalar(model, data)
    try:
        check_shapes(model, data)
    except (TypeError, ValueError) as exc:
        raise CaseError.at(case, "model", f"does not fit the data: {exc}") from None
    batch = s.training.batch_size
    if batch is not None and batch > data.X.shape[0]:   # every command that builds the network (validate included)
        raise CaseError.at(case, "training.batch_size", f"expected at most the data set's {data.X.shape[0]} samples, "
                                                        f"found {batch}")
    data_spec = {"name": s.data.name, **{k: v for k, v in kwargs.items()}}
    return model, spec, data, data_spec


def _one_column_as_scalar(model, data):
    """Targets of one column ``(n, 1)`` (a linear teacher of one singular value, a user's ``y[:, None]``) for a
    network whose output is one number a sample (``(n,)``): the same targets as ``(n,)``.  Anything else as it is."""
    from dataclasses import replace

    y = np.asarray(data.y)
    if not (y.ndim == 2 and y.shape[1] == 1 and getattr(model, "output_dim", None) == 1):
        return data
    try:
        scalar = np.asarray(model.forward(data.X[:1])).shape == (1,)
    except Exception:   # noqa: BLE001 - the shape check below names the model's own error
        return data
    return replace(data, y=y[:, 0]) if scalar else data


def load_initial(case, model) -> None:
    """Set ``model``'s parameters from the ``.npz`` file of ``[training] initial`` (relative to the case file):
    each array names a parameter and has its shape; parameters the file does not hold keep the model's own
    initialisation.  A missing file, an unknown name or a wrong shape is a CaseError at ``training.initial``."""
    from shockflow.storage.npz import open_npz

    path = case.resolve(case.settings.training.initial)
    try:
        with open_npz(path) as arrays:
            loaded = {k: np.asarray(arrays[k]) for k in arrays.files}
    except FileNotFoundError:
        raise CaseError.at(case, "training.initial", f"no such file {str(path)!r}") from None
    except IsADirectoryError:
        raise CaseError.at(case, "training.initial", f"{str(path)!r} is a directory, not a .npz file") from None
    except (OSError, ValueError) as exc:
        raise CaseError.at(case, "training.initial", f"{str(path)!r} is not a readable .npz file ({exc})") from None
    problems = []                  # every array's problem at once, as a case file's keys are reported
    for name, value in loaded.items():
        if name not in model.params:
            problems.append(f"it holds {name!r}, which is not a parameter of the {model.name!r} model "
                            f"({', '.join(model.params)})")
        elif not (np.issubdtype(value.dtype, np.floating) or np.issubdtype(value.dtype, np.integer)):
            problems.append(f"{name!r} must be an array of real numbers, found one of dtype {value.dtype}")
        elif value.shape != model.params[name].shape or not np.all(np.isfinite(value)):
            problems.append(f"{name!r} must be a finite array of shape {model.params[name].shape}, found shape "
                            f"{value.shape}"
                            + ("" if np.all(np.isfinite(value)) else " with non-finite entries"))
    if problems:
        raise CaseError.at(case, "training.initial", f"{str(path)!r}: " + "; ".join(problems))
    for name, value in loaded.items():
        model.params[name][...] = value


@dataclass(frozen=True, eq=False)
class NetworkOutcome:
    case: str
    log_file: Path
    steps: int
    final_loss: float
    transitions: tuple
    seconds: float
    figures: tuple[Path, ...] = field(default=())

    def as_dict(self) -> dict:
        return {"case": self.case, "log_file": str(self.log_file), "steps": self.steps, "final_loss": self.final_loss,
                "observed": [{"step": t.midpoint, "onset": t.onset, "end": t.end, "drop": t.drop}
                             for t in self.transitions],
                "seconds": self.seconds, "figures": [str(p) for p in self.figures]}

    def key_figures(self) -> dict:
        """Scalars for sweeps: final loss, steps, seconds, the number of observed transitions and the
        midpoint step of each (``transition_1``, ``transition_2``, ...)."""
        out = {"final_loss": self.final_loss, "steps": self.steps, "seconds": self.seconds,
               "transition_count": len(self.transitions)}
        for k, t in enumerate(self.transitions, start=1):
            out[f"transition_{k}"] = float(t.midpoint)
        return out

    def table(self) -> str:
        lines = [f"case {self.case}: {self.steps} steps in {self.seconds:.2f} s, final loss {self.final_loss:.4g} "
                 f"-> {self.log_file}"]
        if self.transitions:
            lines.append(f"{'observed transition (midpoint step)':>36}  {'onset':>10}  {'end':>10}  {'drop':>8}")
            for t in self.transitions:
                lines.append(f"{t.midpoint:36.1f}  {t.onset:10.1f}  {t.end:10.1f}  {t.drop:8.3f}")
        else:
            lines.append("no transitions found in the loss")
        lines += [f"figure: {p}" for p in self.figures]
        return "\n".join(lines)


def observed_transitions(case, steps, loss) -> tuple:
    """The transitions the detector finds in the loss curve of ``case``'s run; a curve too short for it
    (too few logged steps, too small a span) is a :class:`CaseError` at ``training.steps``."""
    from shockflow.prediction import find_transitions
    from shockflow.prediction.transitions import CurveTooShort

    try:
        return tuple(find_transitions(steps, loss))
    except CurveTooShort as exc:
        message = str(exc).removeprefix("find_transitions: ")
        raise CaseError.at(case, "training.steps", f"the loss curve is too short for the transition detector ({message}); "
                                                   "train for more steps (or log more often: training.log_every)") from None


@committed_together
def run_network_case(case, options) -> NetworkOutcome:
    from shockflow.logs.hdf5 import FORMAT as LOG_FORMAT
    from shockflow.storage.outdir import refuse_other_kind
    from shockflow.training import train

    seed = options.seed if options.seed is not None else (case.seed or 0)
    model, spec, data, data_spec = build_model_and_data(case, seed)
    settings = case.settings.training.train_settings(seed)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / f"{case.name}.h5"
    refuse_other_kind(log_path, LOG_FORMAT, "train", case)   # a run's result of the same name, another case's log stay
    start = time.perf_counter()
    try:
        record = train(model, data, settings, log_path=log_path, quiet=options.quiet or not options.progress)
    except (TypeError, ValueError) as exc:
        raise CaseError.at(case, "training", str(exc)) from None
    seconds = time.perf_counter() - start
    steps, loss = record.series["step"], record.series["loss"]
    transitions = observed_transitions(case, steps, loss)
    figures = ()
    from shockflow.figures import can_draw

    if options.figures and can_draw():
        from shockflow.figures import loss_figure, save_figure

        fig = loss_figure(steps, loss, observed=[t.midpoint for t in transitions],
                          bands=[(t.onset, t.end) for t in transitions],
                          title=f"{case.name}: {spec['name']}, {settings.optimizer}, lr {settings.lr:g}")
        from shockflow.progress import status

        with status("figures", enabled=options.progress and not options.quiet):
            figures = (save_figure(fig, out / f"{case.name}-loss.png", format=options.figure_format, dpi=options.dpi),)
    return NetworkOutcome(case.name, log_path, int(steps[-1]), float(np.asarray(loss)[-1]), transitions, seconds, figures)


def refuse_unmodelled(case) -> None:
    """A :class:`CaseError` before any work for an optimiser without a model of its escape (docs/theory.md §6,
    "Optimisers": gd, sgd, momentum and nesterov have one; adam does not), and for weight decay, which no part of
    the prediction models (the charts' landscape is the loss without its penalty, the growth per step the rule's
    without its shrinking): it was ignored, and the predicted steps stayed those of λ = 0 to the last decimal while
    training's moved (deep-linear-3 at λ = 0.3: 208 / 494 / 1032 against 148 / 241 / 287 predicted)."""
    training = case.settings.training
    if training.optimizer == "adam":
        raise CaseError.at(case, "training.optimizer", "the prediction (shockflow run, shockflow forecast) has no "
                                                       "validated escape model for 'adam'; use gd, sgd, momentum or "
                                                       "nesterov, or `shockflow train` to only train")
    if training.weight_decay > 0:
        raise CaseError.at(case, "training.weight_decay", f"the prediction (shockflow run, shockflow forecast) has no "
                                                          f"model of weight decay (λ = {training.weight_decay:g}): its "
                                                          f"charts and escape rates are those of the loss alone; set "
                                                          f"it to 0, or use `shockflow train` to only train")


def _verify(case) -> None:
    """``shockflow validate``: every refusal of ``shockflow run`` and ``shockflow forecast`` before any training (an
    optimiser without an escape model, whatever the geometry; the charts, on the case's own data).  A case that only
    the prediction refuses says that ``shockflow train`` takes it."""
    from dataclasses import replace

    model, _, data, _ = build_model_and_data(case, seed=case.seed or 0)   # what `shockflow train` needs
    try:
        refuse_unmodelled(case)
        verify_geometry(case, model, data)
    except CaseError as exc:
        note = " (the case is valid for `shockflow train`, which trains without predicting)"
        raise CaseError(exc.file, [replace(p, message=p.message + note) for p in exc.problems], exc.missing,
                        source=exc.source) from None


@blas_threads(interleaved=True)
def verify_geometry(case, model, data=None) -> None:
    """``[geometry]`` and ``[extraction]`` checked the way ``shockflow run`` uses them: the geometry built on the
    case's network, once per chart (``extraction.chart_key = chart``), each chart 1-D; with ``[training] frozen``
    every section holding the frozen parameters (the automatic charts: on ``data``, their free origin).  Its products
    are the prediction's kind, short and between other work: one BLAS thread (:mod:`shockflow.blas_threads`; the
    intercept's QR of a 4096 × 100 matrix took 0.25–0.6 s with two threads beside another process, 11 ms with one)."""
    s = case.settings
    from shockflow import geometry
    from shockflow.prediction.plateau import PlateauError, check_plateau_start, sloped_origin

    frozen = tuple(s.training.frozen)
    unknown = [k for k in frozen if k not in model.params]
    if unknown:
        raise CaseError.at(case, "training.frozen", f"{unknown[0]!r} is not a parameter of the {model.name!r} network; "
                                                    f"its parameters are {', '.join(map(repr, model.params))}")
    if s.geometry is not None and "frozen" in s.geometry.kwargs():
        raise CaseError.at(case, "geometry.frozen", "the charts hold the parameters of [training] frozen; set them "
                                                    "there (the optimiser and the charts then agree)")
    if s.geometry is None:  # `shockflow run` charts the network automatically (shockflow.geometry.auto)
        try:
            geometry.build("auto", model=model, frozen=frozen)
            if frozen and data is not None:
                from shockflow.geometry.auto import check_frozen_origin

                if sloped_origin(model, data.X, data.y, frozen):   # the symmetric plateau is predicted instead
                    check_plateau_start(model, frozen)
                else:
                    check_frozen_origin(model, data.X, data.y, frozen)
        except PlateauError as exc:
            raise CaseError.at(case, "training.frozen", f"the loss is sloped at the origin of the free parameters "
                                                        f"and the symmetric plateau cannot be predicted: {exc}") from None
        except geometry.GeometryError as exc:
            if str(exc).startswith("frozen:"):
                raise CaseError.at(case, "training.frozen", f"`shockflow run` cannot chart the {model.name!r} "
                                                            f"network with it: {exc}") from None
            raise CaseError.at(case, "model", f"`shockflow run` finds no chart for the {model.name!r} network "
                                              f"({exc}); give a [geometry] table, or use `shockflow train` to "
                                              f"only train it") from None
        return
    kwargs = s.geometry.kwargs()
    name = kwargs.pop("name", None) or s.geometry.name
    charts = tuple(s.extraction.charts) or (None,)
    for chart in charts:
        kw = dict(kwargs)
        key = "geometry"
        if chart is not None:
            kw[s.extraction.chart_key] = chart
            key = "extraction.charts"
        try:
            geo = geometry.build(name, model=model, **kw)
        except (geometry.GeometryError, TypeError, ValueError, KeyError, IndexError) as exc:
            where = f" ({s.extraction.chart_key} = {chart!r})" if chart is not None else ""
            named = str(exc).split(":", 1)[0].strip()  # geometry errors start with the keyword they are about
            if named in kwargs:
                key = f"geometry.{named}"
            elif named != s.extraction.chart_key:
                key = "geometry"
            raise CaseError.at(case, key, f"the geometry {name!r} cannot be built{where}: {exc}") from None
        if geo.dim != 1:
            raise CaseError.at(case, key, f"each chart must be 1-D for the prediction, found a {geo.dim}-D chart "
                                          f"({', '.join(geo.chart.names)}) of the {name!r} geometry on this "
                                          f"{getattr(model, 'name', 'model')!r} model"
                                          + (f" for {s.extraction.chart_key} = {chart!r}" if chart is not None else "")
                                          + " (the chart's dimension follows from the model's settings, a bias or "
                                            "the unit's size; without a [geometry] table the automatic charts are "
                                            "1-D, one per mode)")
        if frozen:   # before any training: a section that moves a frozen parameter is refused naming it
            from shockflow.prediction.extraction import ExtractionError, check_frozen

            where = f"the {name!r} geometry" + (f" ({s.extraction.chart_key} = {chart!r})" if chart is not None else "")
            try:
                check_frozen(geo, [geo.chart.lower[0], geo.chart.upper[0], geo.coordinates(model.params)[0]],
                             model.params, frozen, where)
            except ExtractionError as exc:
                raise CaseError.at(case, "training.frozen", str(exc).removeprefix("frozen: ")) from None


NETWORK_KIND = register_kind(CaseKind(
    name="network", settings=NetworkCase, run=run_network_case, command="train", verify=_verify,
    description="a network trained from its case file: training log (HDF5), loss figure, observed transitions",
))
