"""NumPy training: optimizers, schedules, the loop and its recorders (see loop.py)."""

from .loop import TrainingDiverged, check_shapes, resolve_model, train
from .noise import GradientNoise, gradient_noise
from .optimizers import make_optimizer
from .schedule_points import every, log_spaced
from .schedules import learning_rate
from .settings import OPTIMIZERS, SCHEDULES, WEIGHT_DECAY_MODES, TrainSettings

__all__ = ["GradientNoise", "OPTIMIZERS", "SCHEDULES", "TrainSettings", "TrainingDiverged",
           "WEIGHT_DECAY_MODES", "check_shapes", "every", "gradient_noise", "learning_rate",
           "log_spaced", "make_optimizer", "resolve_model", "train"]
