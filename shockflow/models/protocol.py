"""A user's own network in shockflow: the protocol it implements and the adapter that runs it (issue 20).

A model written outside shockflow (plain NumPy, its own backward pass) is forecast, trained and
monitored by shockflow if it implements :class:`NetworkProtocol`:

=========================  ===========================================================================
``get_params()``            ``{name: float64 array}``: the current parameters (copies or views)
``set_params(params)``      set them from such a dict
``loss(X, y)``              the mean training loss on the samples ``X`` with targets ``y`` (a float)
``grad(X, y)``              its gradient: ``{name: array}``, the shapes of ``get_params()``
``per_sample_losses(X, y)`` optional: the ``(n,)`` losses whose mean is ``loss`` (without it, one
                            ``loss`` call per sample; SGD's gradient-noise temperature needs them)
``units()``                 optional: ``{name: axis}`` — the axis of each parameter along which the
                            interchangeable units (hidden neurons, channels) are stacked; every
                            parameter must have one, all of the same length (the number of units).
                            The automatic charts (docs/theory.md §6) need it.
=========================  ===========================================================================

:class:`ProtocolModel` adapts such an object to :class:`~shockflow.models.base.Model`.  The geometry
and the training work on *sample indices*: :meth:`ProtocolModel.indexed` gives the data ``(X, y)`` as
row numbers (``shockflow.runners.training.adapt_network`` makes a Dataset of them), and the adapter
evaluates the user's network on the rows they name — so minibatches, the chart losses and the
per-sample losses of the extraction all reach the user's ``loss`` with the real ``X`` and ``y``.
The adapter's "outputs" are the per-sample losses (its loss function is their value), which is all
the chart losses of :mod:`shockflow.geometry.batched_loss` use.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from shockflow.models.base import Model

__all__ = ["NetworkProtocol", "ProtocolError", "ProtocolModel", "is_protocol_network"]

REQUIRED = ("get_params", "set_params", "loss", "grad")


class ProtocolError(ValueError):
    """A user's network answered a protocol method with something the protocol does not allow (a gradient without
    a parameter, a loss that is not a number, per-sample losses of the wrong length, a unit axis it does not have,
    a network that cannot be copied): names the network and the method.  Bad input: the API raises it as a
    :class:`~shockflow.cases.CaseError` at ``model``, the command line exits 2."""


@runtime_checkable
class NetworkProtocol(Protocol):
    """What a user's network implements (module docstring); ``per_sample_losses`` and ``units`` are optional."""

    def get_params(self) -> dict: ...

    def set_params(self, params: dict) -> None: ...

    def loss(self, X, y) -> float: ...

    def grad(self, X, y) -> dict: ...


def is_protocol_network(obj) -> bool:
    return not isinstance(obj, Model) and all(callable(getattr(obj, k, None)) for k in REQUIRED)


class _GivenLoss:
    """The adapter's loss function: its outputs already are the per-sample losses."""

    name = "given"

    def targets(self, y, n, output_dim):
        return np.zeros((n, 1))

    def value(self, F, Y):
        # the Loss contract: F may carry leading batch axes (..., n, 1); the result is (..., n)
        return np.asarray(F, dtype=np.float64)[..., 0]

    def check_output_dim(self, output_dim):
        return None


def _unit_index(model: "ProtocolModel") -> np.ndarray:
    """``(units, p)`` flat-vector indices of each unit (the layout ``shockflow.models.units`` expects)."""
    axes = model.unit_axes
    if axes is None:
        raise ValueError(f"the network {model.label!r} has no units() (the axis of each parameter that stacks "
                         f"its interchangeable units)")
    counts = {k: model.params[k].shape[a] for k, a in axes.items()}
    d = next(iter(counts.values()))
    start, rows = 0, [[] for _ in range(d)]
    for k, p in model.params.items():
        idx = (start + np.arange(p.size)).reshape(p.shape)
        moved = np.moveaxis(idx, axes[k], 0).reshape(d, -1)
        for i in range(d):
            rows[i].extend(moved[i].tolist())
        start += p.size
    return np.array(rows, dtype=np.int64)


class ProtocolModel(Model):
    """A :class:`NetworkProtocol` object as a shockflow model (module docstring)."""

    name = "protocol"

    def __init__(self, network, X, y, label: str | None = None):
        missing = [k for k in REQUIRED if not callable(getattr(network, k, None))]
        if missing:
            raise TypeError(f"model: {type(network).__name__} does not implement the network protocol "
                            f"(shockflow.models.protocol): missing {', '.join(missing)}")
        self.network = network
        self.label = label or type(network).__name__
        self._X, self._y = np.asarray(X), np.asarray(y)
        self.input_shape = (1,)
        self.output_dim = 1
        self.loss_function = _GivenLoss()
        self.init_scale, self.seed = 1.0, 0
        self._config = {"network": self.label}
        params = network.get_params()
        if not isinstance(params, dict) or not params:
            raise TypeError(f"model: {self.label}.get_params() must return a non-empty dict of arrays")
        self.params = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
        units = getattr(network, "units", None)
        self.unit_axes = None
        if callable(units):
            axes = dict(units())
            if set(axes) != set(self.params):
                raise ValueError(f"model: {self.label}.units() must give an axis for every parameter "
                                 f"({', '.join(self.params)}), found {', '.join(axes)}")
            for k, a in axes.items():
                ndim = self.params[k].ndim
                if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -ndim <= a < ndim:
                    raise ValueError(f"model: {self.label}.units()[{k!r}] must be an axis of the parameter (a whole "
                                     f"number from {-ndim} to {ndim - 1}: it has shape {self.params[k].shape}), "
                                     f"found {a!r}")
            sizes = {self.params[k].shape[a] for k, a in axes.items()}
            if len(sizes) != 1:
                raise ValueError(f"model: {self.label}.units(): the unit axes have different lengths {sorted(sizes)}")
            self.unit_axes = axes
            from shockflow.models.units import UNIT_LAYOUTS

            UNIT_LAYOUTS.setdefault(self.name, _unit_index)

    def indexed(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)`` of the data as row numbers (what the adapter is trained and charted on: a Dataset of them)."""
        n = self._X.shape[0]
        return np.arange(n, dtype=np.float64)[:, None], np.zeros(n)

    # -- the user's network on the rows named by X ---------------------------------------------------
    def _rows(self, X):
        idx = np.asarray(X, dtype=np.float64).reshape(-1)
        rows = idx.astype(np.int64)
        if not np.array_equal(rows, idx) or rows.min(initial=0) < 0 or rows.max(initial=0) >= self._X.shape[0]:
            raise ValueError(f"model {self.label!r}: inputs must be the row numbers of its data (ProtocolModel.indexed)")
        return self._X[rows], self._y[rows]

    def _sync(self):
        self.network.set_params({k: v.copy() for k, v in self.params.items()})

    def _check_inputs(self, X):
        return np.asarray(X, dtype=np.float64).reshape(-1, 1)

    def _forward(self, X):
        Xr, yr = self._rows(X)
        self._sync()
        per = getattr(self.network, "per_sample_losses", None)
        if callable(per):
            ell = self._numbers(per(Xr, yr), "per_sample_losses()").reshape(-1)
            if ell.size != Xr.shape[0]:
                raise ProtocolError(f"model {self.label!r}: per_sample_losses() on {Xr.shape[0]} samples must give "
                                    f"{Xr.shape[0]} losses, found {ell.size}")
        else:
            ell = np.array([self._loss(Xr[i:i + 1], yr[i:i + 1]) for i in range(Xr.shape[0])])
        return ell[:, None], None

    def _numbers(self, value, method: str) -> np.ndarray:
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise ProtocolError(f"model {self.label!r}: {method} must give numbers, found "
                                f"{type(value).__name__} {str(value)[:60]!r}") from None

    def _loss(self, Xr, yr) -> float:
        value = self._numbers(self.network.loss(Xr, yr), "loss()")
        if value.ndim != 0 and value.size != 1:
            raise ProtocolError(f"model {self.label!r}: loss() must give one number (the mean loss), found an array "
                                f"of shape {value.shape}")
        return float(value.reshape(()))

    def _backward(self, cache, G, per_sample):
        raise NotImplementedError("ProtocolModel: gradients come from the network's own grad (loss_and_grad)")

    def init_moments(self) -> dict[str, tuple[float, float]]:
        return {k: (float(np.mean(v)), float(np.std(v))) for k, v in self.params.items()}

    def loss_and_grad(self, X, y):
        Xr, yr = self._rows(X)
        self._sync()
        value = self._loss(Xr, yr)
        grads = self.network.grad(Xr, yr)
        if not hasattr(grads, "keys") or not hasattr(grads, "__getitem__"):
            raise ProtocolError(f"model {self.label!r}: grad() must give a dict {{name: array}} like get_params(), "
                                f"found {type(grads).__name__}")
        missing = [k for k in self.params if k not in grads]
        if missing:
            raise ProtocolError(f"model {self.label!r}: grad() must give every parameter of get_params() "
                                f"({', '.join(self.params)}); it lacks {', '.join(missing)}")
        out = {}
        for k, p in self.params.items():
            g = self._numbers(grads[k], f"grad()[{k!r}]")
            if g.shape != p.shape:
                raise ProtocolError(f"model {self.label!r}: grad()[{k!r}] has shape {g.shape}, expected {p.shape}")
            out[k] = g
        return value, out

    def per_sample_grads(self, X, y):
        rows = np.asarray(X, dtype=np.float64).reshape(-1)
        parts = [self.loss_and_grad(rows[i:i + 1], None)[1] for i in range(rows.size)]
        return {k: np.stack([g[k] for g in parts]) for k in self.params}

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "network": self.label}

    def __deepcopy__(self, memo):
        import copy

        clone = ProtocolModel.__new__(ProtocolModel)
        clone.__dict__.update({k: v for k, v in self.__dict__.items() if k != "params"})
        clone.params = {k: v.copy() for k, v in self.params.items()}
        try:
            clone.network = copy.deepcopy(self.network, memo)
        except Exception as exc:   # noqa: BLE001 - whatever the user's object holds (a lock, an open file)
            raise ProtocolError(f"model {self.label!r}: the network cannot be copied with copy.deepcopy "
                                f"({type(exc).__name__}: {exc}); shockflow copies it to evaluate it at other "
                                f"parameters while keeping its start: give it no locks, open files or "
                                f"sockets, or a __deepcopy__") from None
        return clone
