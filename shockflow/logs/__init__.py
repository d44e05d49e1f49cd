"""Training logs: the ``TrainingRecord``, its HDF5 file format, and imported loss curves."""

from .foreign import read_loss_curve
from .hdf5 import read_training_log, write_training_log
from .provenance import package_versions
from .record import TrainingRecord

__all__ = ["TrainingRecord", "package_versions", "read_loss_curve", "read_training_log",
           "write_training_log"]
