"""Test-session settings shared by every test module.

BLAS threads: the test matrices are small, and on a 2-core machine OpenBLAS's thread pool makes
small ``eigh``/``matmul`` calls up to ten times slower than one thread (measured on the BBP
tests). Set before NumPy is first imported; a value the user already exported wins.
"""

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
