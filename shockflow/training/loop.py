"""The training loop: ``train(model, data, settings, ...) -> TrainingRecord``.

One loop, many recorders on their own schedules (all on steps 0..steps, step s = parameters
after s updates; see schedule_points.py):
  series       every ``log_every`` steps: training loss on the full training set (free for
               full-batch runs: it is the loss of the gradient evaluation), the minibatch loss,
               the test loss (if a test set is given) and the learning rate of the next update;
  snapshots    parameters on a log-spaced schedule of ``n_snapshots`` steps;
  observables  user callables model -> float | array every ``observe_every`` steps;
  noise        every ``noise_every`` steps (0 = off): per-sample gradient covariance trace and
               the temperature T = η σ_g²/(2B), σ_g² = tr Σ / P (docs/theory.md §1; training/noise.py).
A non-finite loss stops the run with ``TrainingDiverged`` naming the step, the quantity and
the parameter/gradient arrays that went non-finite.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import numpy as np

from shockflow.blas_threads import blas_threads
from shockflow.data import Dataset
from shockflow.logs import TrainingRecord, package_versions, write_training_log
from shockflow.logs.agreement import start_digest
from shockflow.logs.hdf5 import run_attributes
from shockflow.logs.live import live_log
from shockflow.progress import progress

from .batching import BatchSampler
from .noise import gradient_noise
from .optimizers import make_optimizer
from .schedule_points import every, log_spaced
from .schedules import learning_rate
from .settings import TrainSettings

__all__ = ["train", "TrainingDiverged", "check_shapes", "resolve_model"]

Observable = Callable[[Any], Any]


class TrainingDiverged(FloatingPointError):
    """A loss, parameter or gradient became NaN/inf. Attributes: ``step``, ``quantity``, ``value`` (the loss)."""

    def __init__(self, message: str, step: int, quantity: str, value: float = float("nan")):
        super().__init__(message)
        self.step = step
        self.quantity = quantity
        self.value = value

    @property
    def diverged_at(self) -> tuple[float, float]:
        """``(step, value)``: what the run's live file records (shockflow.logs.live)."""
        return float(self.step), float(self.value)

    def __reduce__(self):   # pickled with its fields (a run trains in a second process: shockflow.forking)
        return type(self), (str(self.args[0]), self.step, self.quantity, self.value), self.__dict__


def resolve_model(model, settings: TrainSettings):
    """A Model instance: ``model`` itself, or ``shockflow.models.build(**spec)`` for a spec dict.

    ``settings.init_scale`` (small-initialisation control) is passed to the builder together
    with ``seed`` (the spec's own seed wins if it has one). Given an instance whose spec has a
    different init_scale, this refuses rather than silently ignoring the setting.
    """
    if isinstance(model, Mapping):
        from shockflow import models

        spec = dict(model)
        if settings.init_scale is not None:
            spec["init_scale"] = settings.init_scale
        spec.setdefault("seed", settings.seed)
        return models.build(**spec)
    for attr in ("params", "loss_and_grad", "loss", "forward", "spec"):
        if not hasattr(model, attr):
            raise TypeError(f"train: model must implement the shockflow Model interface (missing "
                            f"{attr!r}) or be a model spec dict; got {type(model).__name__}")
    if settings.init_scale is not None:
        have = model.spec().get("init_scale")
        if have is None or not np.isclose(have, settings.init_scale, rtol=1e-12, atol=0.0):
            raise ValueError(f"train: settings.init_scale = {settings.init_scale} but the model instance was "
                             f"built with init_scale = {have}; pass the model spec dict to build it with "
                             f"the setting, or leave settings.init_scale as None")
    return model


def check_shapes(model, data: Dataset, role: str = "training data") -> None:
    """Forward and score one sample; error before training if the model and the data do not fit.

    The output for one sample must have the targets' shape, except class logits (1, K) against
    integer labels (1,), which the model's loss decides on.
    """
    name = getattr(model, "name", type(model).__name__)
    try:
        out = np.asarray(model.forward(data.X[:1]))
    except Exception as exc:  # the model's own error, re-raised with the shapes involved
        raise ValueError(f"train: model {name!r} cannot take {role} inputs of shape {data.input_shape} "
                         f"per sample (one sample forwarded): {type(exc).__name__}: {exc}") from exc
    expected = data.y[:1].shape
    logits_vs_labels = out.ndim == 2 and len(expected) == 1 and out.shape[0] == 1
    if out.shape != expected and not logits_vs_labels:
        raise ValueError(f"train: model {name!r} output for one sample has shape {out.shape} but {role} "
                         f"targets have shape {expected} (data output_dim {data.output_dim}, model "
                         f"output_dim {getattr(model, 'output_dim', '?')})")
    try:
        value = float(model.loss(data.X[:1], data.y[:1]))
    except Exception as exc:
        raise ValueError(f"train: model {name!r} cannot score {role} targets of shape {expected}: "
                         f"{type(exc).__name__}: {exc}") from exc
    if not np.isfinite(value):
        raise ValueError(f"train: model {name!r} loss on the first {role} sample is {value} before training")


def _nonfinite(arrays: Mapping[str, np.ndarray]) -> list[str]:
    return [k for k, a in arrays.items() if not np.all(np.isfinite(a))]


def _diverged(step: int, quantity: str, value: float, model, grads) -> TrainingDiverged:
    bad_p = _nonfinite(model.params)
    bad_g = _nonfinite(grads) if grads is not None else []
    with np.errstate(all="ignore"):
        sizes = {k: float(np.max(np.abs(p))) if p.size else 0.0 for k, p in model.params.items()}
    largest = max(sizes, key=lambda k: sizes[k]) if sizes else None
    msg = (f"training diverged at step {step}: {quantity} is {value}; non-finite parameter arrays: "
           f"{bad_p or 'none'}; non-finite gradient arrays: {bad_g or 'none'}; largest parameter "
           f"array: {largest!r} (max |entry| {sizes.get(largest, float('nan')):.3g})")
    return TrainingDiverged(msg, step, quantity, float(value))


def _observe(observables: Mapping[str, Observable], model, store: dict[str, list], step: int) -> None:
    for name, fn in observables.items():
        try:
            v = np.asarray(fn(model), dtype=np.float64)
        except Exception as exc:
            raise RuntimeError(f"train: observable {name!r} failed at step {step}: "
                               f"{type(exc).__name__}: {exc}") from exc
        if store[name] and v.shape != store[name][0].shape:
            raise ValueError(f"train: observable {name!r} returned shape {v.shape} at step {step}, "
                             f"but {store[name][0].shape} before")
        store[name].append(v.copy())


@blas_threads()
def train(model, data: Dataset, settings: TrainSettings, observables: Mapping[str, Observable] | None = None,
          *, test: Dataset | None = None, log_path=None, live_path=None, quiet: bool = False) -> TrainingRecord:
    """Train ``model`` (updated in place) on ``data``; return (and optionally write) the record.

    Parameters
    ----------
    model : Model instance, or a model spec dict built with ``settings.init_scale`` and seed.
    data : training ``Dataset``.  test : optional held-out ``Dataset`` (test loss in the series).
    settings : ``TrainSettings``.
    observables : {name: callable(model) -> float | array}, recorded every ``observe_every`` steps.
    log_path : if given, the record is written there as HDF5 (atomically) at the end; while training, the logged
        rows go to a live file beside it that ``shockflow monitor`` follows (:mod:`shockflow.logs.live`).
    live_path : without ``log_path``, the path of a log the caller will write: the live file is kept beside it while
        training (removed at the end of training; ``shockflow run``, which trains beside its prediction).
    quiet : no progress bar.
    """
    if not isinstance(settings, TrainSettings):
        raise TypeError(f"train: settings must be a TrainSettings, got {type(settings).__name__}")
    if not isinstance(data, Dataset):
        raise TypeError(f"train: data must be a shockflow.data.Dataset, got {type(data).__name__}")
    if test is not None and not isinstance(test, Dataset):
        raise TypeError(f"train: test must be a Dataset or None, got {type(test).__name__}")
    observables = dict(observables or {})
    for name, fn in observables.items():
        if not callable(fn):
            raise TypeError(f"train: observable {name!r} must be callable(model), got {type(fn).__name__}")
    model = resolve_model(model, settings)
    for k, p in model.params.items():
        if not (isinstance(p, np.ndarray) and p.dtype == np.float64):
            raise TypeError(f"train: model parameter {k!r} must be a float64 ndarray, got "
                            f"{type(p).__name__} {getattr(p, 'dtype', '')}")
    unknown = [k for k in settings.frozen if k not in model.params]
    if unknown:
        raise ValueError(f"train: frozen: {unknown[0]!r} is not a parameter of the {getattr(model, 'name', 'model')!r} "
                         f"model; its parameters are {', '.join(model.params)}")
    n = data.n
    B = settings.effective_batch_size(n)
    check_shapes(model, data)
    if test is not None:
        check_shapes(model, test, "test data")
    noise_m = 0
    if settings.noise_every:
        noise_m = settings.noise_batch if settings.noise_batch is not None else max(B, 2)
        if noise_m > n:
            raise ValueError(f"train: noise_batch = {noise_m} exceeds the data set size n = {n}")

    S = settings.steps
    start = start_digest(model.params)   # where the run begins, recorded for the forecast's check
    seeds = np.random.SeedSequence(settings.seed).spawn(2)
    sampler = BatchSampler(data.X, data.y, B, np.random.default_rng(seeds[0]))
    noise_rng = np.random.default_rng(seeds[1])
    opt = make_optimizer(model.params, settings)

    log_pts = every(settings.log_every, S)
    snap_pts = log_spaced(settings.n_snapshots, S)
    obs_pts = every(settings.observe_every, S) if observables else np.zeros(0, np.int64)
    noise_pts = (np.arange(0, S + 1, settings.noise_every, dtype=np.int64)
                 if settings.noise_every else np.zeros(0, np.int64))
    flags = np.zeros((4, S + 1), dtype=bool)
    for row, pts in enumerate((log_pts, snap_pts, obs_pts, noise_pts)):
        flags[row, pts] = True
    is_log, is_snap, is_obs, is_noise = flags

    full = B == n
    k_log = len(log_pts)
    series = {"step": log_pts.copy(), "loss": np.empty(k_log), "batch_loss": np.empty(k_log),
              "lr": np.empty(k_log)}
    if test is not None:
        series["test_loss"] = np.empty(k_log)
    snaps = {k: np.empty((len(snap_pts), *p.shape)) for k, p in model.params.items()}
    obs_store: dict[str, list] = {name: [] for name in observables}
    noise_rows: list[tuple] = []

    i_log = i_snap = 0
    t0 = time.perf_counter()

    def record_point(step: int, batch_loss: float, full_loss: float | None, grads) -> None:
        nonlocal i_log, i_snap
        lr = learning_rate(settings, step)
        if is_log[step]:
            if full_loss is None:
                full_loss = float(model.loss(data.X, data.y))
                if not np.isfinite(full_loss):
                    raise _diverged(step, "training loss", full_loss, model, grads)
            series["loss"][i_log] = full_loss
            series["batch_loss"][i_log] = batch_loss
            series["lr"][i_log] = lr
            if test is not None:
                series["test_loss"][i_log] = model.loss(test.X, test.y)
            if live is not None:
                live.append([series[c][i_log] for c in series])
            i_log += 1
        if is_snap[step]:
            for k, p in model.params.items():
                snaps[k][i_snap] = p
            i_snap += 1
        if is_obs[step]:
            _observe(observables, model, obs_store, step)
        if is_noise[step]:
            idx = np.sort(noise_rng.choice(n, size=noise_m, replace=False))
            g = gradient_noise(model.per_sample_grads(data.X[idx], data.y[idx]), lr, B, n)
            noise_rows.append((step, g.trace, g.sigma2, g.temperature, g.temperature_trace, g.temperature_fpc))

    any_flag = flags.any(axis=0)
    postfix_every = max(S // 100, 1)
    live_for = log_path if log_path is not None else live_path
    data_spec = {"train": data.spec, "test": None if test is None else test.spec}
    described = {} if live_for is None else run_attributes(model.spec(), data_spec, settings.to_dict(), settings.seed,
                                                          start)
    with live_log(live_for, series, S, described, with_commit=log_path is not None) as live, \
            progress(S, "train", enabled=not quiet, unit="step") as bar:
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite values are caught below
            for t in range(S):
                Xb, yb = sampler.next()
                loss_b, grads = model.loss_and_grad(Xb, yb)
                loss_b = float(loss_b)
                if not np.isfinite(loss_b):
                    raise _diverged(t, "training loss" if full else "minibatch loss", loss_b, model, grads)
                if any_flag[t]:
                    record_point(t, loss_b, loss_b if full else None, grads)
                opt.step(model.params, grads, learning_rate(settings, t))
                bar.update(1)
                if t % postfix_every == 0:
                    bar.set_postfix_str(f"loss {loss_b:.3e}", refresh=False)
            final = float(model.loss(data.X, data.y))
            if not np.isfinite(final):
                raise _diverged(S, "training loss", final, model, None)
            record_point(S, final, final, None)
            if live is not None:
                live.flush()              # the last rows now; the status once the log is there (shockflow.logs.live)
        wall = time.perf_counter() - t0
        record = _record(model, data_spec, settings, series, snap_pts, snaps, obs_pts, obs_store, noise_rows, wall,
                         start)
        if log_path is not None:      # inside the live log's block: it is removed with the log's commit
            write_training_log(record, log_path)
    return record


def _record(model, data_spec, settings, series, snap_pts, snaps, obs_pts, obs_store, noise_rows,
            wall, start: str) -> TrainingRecord:
    """The :class:`TrainingRecord` of a finished run from what :func:`train` collected."""
    noise = {}
    if noise_rows:
        cols = np.array(noise_rows, dtype=np.float64)
        noise = {"step": cols[:, 0].astype(np.int64), "trace": cols[:, 1], "sigma2": cols[:, 2],
                 "temperature": cols[:, 3], "temperature_trace": cols[:, 4], "temperature_fpc": cols[:, 5]}
    obs = {}
    if obs_store:
        obs = {"step": obs_pts.copy(), **{k: np.stack(v) for k, v in obs_store.items()}}
    return TrainingRecord(
        series=series,
        snapshots={"step": snap_pts.copy(), **snaps},
        observables=obs,
        noise=noise,
        model_spec=model.spec(),
        data_spec=data_spec,
        settings=settings.to_dict(),
        seed=settings.seed,
        versions=package_versions(),
        source="shockflow",
        wall_time=wall,
        start=start,
    )
