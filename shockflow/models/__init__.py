"""Torch-free NumPy networks with hand-written backward passes (docs/theory.md §2–§4).

Build a model by name::

    from shockflow import models
    m = models.build("mlp", input_dim=5, width=16, activation="gelu", init_scale=0.1, seed=0)
    loss, grads = m.loss_and_grad(X, y)

``models.available()`` lists the registered names. Every model follows the contract of
:class:`shockflow.models.base.Model`.
"""

from shockflow.models.activations import available_activations, get_activation
from shockflow.models.base import Model, parameter_gradient
from shockflow.models.losses import available_losses, get_loss
from shockflow.models.registry import available, build, model_class, register, reload_plugins

# Importing the model modules registers them.
from shockflow.models import (  # noqa: F401  (imported for registration)
    attention,
    conv,
    deep,
    diagonal,
    fourier,
    linear,
    mixture_of_experts,
    mlp,
    phase_retrieval,
    quadratic,
)

__all__ = [
    "Model",
    "build",
    "available",
    "model_class",
    "register",
    "reload_plugins",
    "parameter_gradient",
    "get_loss",
    "available_losses",
    "get_activation",
    "available_activations",
]
