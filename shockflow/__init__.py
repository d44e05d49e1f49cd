"""shockflow: shock waves on symmetry quotients, and the training runs they predict."""

__version__ = "0.1.0"
