"""Seeded data generators returning frozen ``Dataset`` objects (X, y, JSON spec)."""

from .arrays import load_arrays
from .dataset import Dataset
from .fourier import fourier_basis, fourier_grid
from .power_law import power_law_covariance, power_law_spectrum
from .registry import available, build_dataset, register
from .split import train_test_split
from .teacher_student import teacher_student, whiten_inputs
from .tokens import token_sequences

__all__ = ["Dataset", "available", "build_dataset", "fourier_basis", "fourier_grid", "load_arrays",
           "power_law_covariance", "power_law_spectrum", "register", "teacher_student",
           "token_sequences", "train_test_split", "whiten_inputs"]
