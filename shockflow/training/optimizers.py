"""Optimizer update rules acting in place on ``model.params`` (float64 arrays).

Each optimizer owns preallocated state buffers of the parameters' shapes, so a step allocates
nothing beyond what NumPy's in-place ufuncs need. ``step(params, grads, lr)`` may overwrite
``grads`` (they are fresh arrays from ``model.loss_and_grad``).

  plain     θ ← θ − η g
  heavy-ball v ← μ v + g;  θ ← θ − η v
  Nesterov  v ← μ v + g;  θ ← θ − η (g + μ v)
  Adam      m ← β1 m + (1−β1) g;  s ← β2 s + (1−β2) g²;
            θ ← θ − η m̂ / (sqrt(ŝ) + ε),  m̂ = m/(1−β1^t), ŝ = s/(1−β2^t)
Weight decay λ: "l2" adds λθ to g before the rule; "decoupled" multiplies θ by (1 − ηλ) first.
"""

from __future__ import annotations

import numpy as np

from .settings import TrainSettings

__all__ = ["Optimizer", "make_optimizer"]


class Optimizer:
    """Base: weight decay handling and the (name → buffer) state layout."""

    def __init__(self, params: dict[str, np.ndarray], settings: TrainSettings):
        self.wd = float(settings.weight_decay)
        self.decoupled = settings.weight_decay_mode == "decoupled"
        self._tmp = {k: np.empty_like(p) for k, p in params.items()}
        self.frozen = frozenset(settings.frozen)   # not updated (no weight decay either): constants of the run
        self.t = 0

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray], lr: float) -> None:
        self.t += 1
        for k, p in params.items():
            if k in self.frozen:
                continue
            g = grads[k]
            if self.wd:
                if self.decoupled:
                    p *= 1.0 - lr * self.wd
                else:
                    np.multiply(p, self.wd, out=self._tmp[k])
                    g += self._tmp[k]
            self._update(k, p, g, lr)

    def _update(self, k: str, p: np.ndarray, g: np.ndarray, lr: float) -> None:
        tmp = self._tmp[k]
        np.multiply(g, lr, out=tmp)
        p -= tmp


class HeavyBall(Optimizer):
    def __init__(self, params, settings):
        super().__init__(params, settings)
        self.mu = float(settings.momentum)
        self.v = {k: np.zeros_like(p) for k, p in params.items()}

    def _update(self, k, p, g, lr):
        v, tmp = self.v[k], self._tmp[k]
        v *= self.mu
        v += g
        np.multiply(v, lr, out=tmp)
        p -= tmp


class Nesterov(HeavyBall):
    def _update(self, k, p, g, lr):
        v, tmp = self.v[k], self._tmp[k]
        v *= self.mu
        v += g
        np.multiply(v, self.mu, out=tmp)
        tmp += g
        tmp *= lr
        p -= tmp


class Adam(Optimizer):
    def __init__(self, params, settings):
        super().__init__(params, settings)
        self.b1, self.b2, self.eps = float(settings.beta1), float(settings.beta2), float(settings.eps)
        self.m = {k: np.zeros_like(p) for k, p in params.items()}
        self.s = {k: np.zeros_like(p) for k, p in params.items()}

    def _update(self, k, p, g, lr):
        m, s, tmp = self.m[k], self.s[k], self._tmp[k]
        m *= self.b1
        np.multiply(g, 1.0 - self.b1, out=tmp)
        m += tmp
        s *= self.b2
        np.multiply(g, g, out=tmp)
        tmp *= 1.0 - self.b2
        s += tmp
        c1 = 1.0 - self.b1 ** self.t
        c2 = 1.0 - self.b2 ** self.t
        # θ -= lr/c1 · m / (sqrt(s/c2) + eps)
        np.divide(s, c2, out=tmp)
        np.sqrt(tmp, out=tmp)
        tmp += self.eps
        np.divide(m, tmp, out=tmp)
        tmp *= lr / c1
        p -= tmp


_RULES = {"gd": Optimizer, "sgd": Optimizer, "momentum": HeavyBall, "nesterov": Nesterov, "adam": Adam}


def make_optimizer(params: dict[str, np.ndarray], settings: TrainSettings) -> Optimizer:
    """The update rule named by ``settings.optimizer`` with state shaped like ``params``."""
    return _RULES[settings.optimizer](params, settings)
