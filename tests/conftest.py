"""Test-session settings shared by every test module.

BLAS threads: the test matrices are small, and on a 2-core machine OpenBLAS's thread pool makes
small ``eigh``/``matmul`` calls up to ten times slower than one thread (measured on the BBP
tests). Set before NumPy is first imported; a value the user already exported wins.
"""

import os

import pytest

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


@pytest.fixture
def no_children_left():
    """``check() -> bool``: no child of this process is running or waiting to be reaped (the helpers and trainings
    that shockflow forks: shockflow.forking)."""

    def check() -> bool:
        try:
            os.waitpid(-1, os.WNOHANG)   # (0, 0): one still running; (pid, status): one not reaped
        except ChildProcessError:
            return True
        return False

    return check
