"""File plumbing: the one atomic writer, HDF5 opening with format checks, and result files.

- :mod:`~shockflow.storage.atomic` — :func:`atomic_path` / :func:`atomic_open` / :func:`commit_file`:
  every file shockflow writes appears whole or not at all, and inside :func:`confine_writes` never outside
  its root (``--out``); :func:`remove_stale_temporaries` clears what killed runs left;
- :mod:`~shockflow.storage.hdf5` — :func:`open_hdf5`, the checked opening every reader uses;
- :mod:`~shockflow.storage.results` — result files (layout: docs/result-file.md);
- :mod:`~shockflow.storage.surfaces` — surface solutions (``.npz``) and XDMF time series for ParaView
  (imported by name: it loads :mod:`solvers.surfaces`).
"""

from shockflow.storage.atomic import (WriteOutsideError, atomic_group, atomic_open, atomic_path, commit_file, complete_commits,
                                      confine_writes, ensure_inside, recover_commits, remove_stale_temporaries)
from shockflow.storage.hdf5 import open_hdf5
from shockflow.storage.results import FORMAT, FORMAT_VERSION, Result, ResultFileError, read_result, write_result

__all__ = ["FORMAT", "FORMAT_VERSION", "Result", "ResultFileError", "WriteOutsideError", "atomic_group", "atomic_open",
           "atomic_path", "complete_commits", "recover_commits",
           "commit_file", "confine_writes", "ensure_inside", "open_hdf5", "remove_stale_temporaries", "read_result", "write_result"]
