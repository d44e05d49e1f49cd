"""File plumbing: the one atomic writer, HDF5 opening with format checks, and result files.

- :mod:`~shockflow.storage.atomic` — :func:`atomic_path` / :func:`atomic_open` / :func:`commit_file`:
  every file shockflow writes appears whole or not at all, and inside :func:`confine_writes` never outside
  its root (``--out``); :func:`remove_stale_temporaries` clears what killed runs left;
- :mod:`~shockflow.storage.hdf5` — :func:`open_hdf5`, the checked opening every reader uses;
- :mod:`~shockflow.storage.results` — result files (layout: docs/result-file.md);
- :mod:`~shockflow.storage.npz` — :func:`open_npz`, ``.npz`` archives of named arrays read with one error for every
  way a file is none;
- :mod:`~shockflow.storage.input_files` — :func:`file_problem`, what a path given to be read is when it is no regular
  file (missing, a directory, a device, a pipe), in one wording for every reader;
- :mod:`~shockflow.storage.surfaces` — surface solutions (``.npz``) and XDMF time series for ParaView
  (imported by name: it loads :mod:`solvers.surfaces`).
"""

from shockflow.storage.atomic import (WriteOutsideError, atomic_group, atomic_open, atomic_path, commit_file, complete_commits,
                                      confine_writes, ensure_inside, recover_commits, remove_stale_temporaries)

# h5py is imported when a file is read or written (PEP 562): the atomic writer and confine_writes alone
# (``shockflow validate``, ``shockflow init``, a run's figures) do not pay for it
_LAZY = {"open_hdf5": "hdf5", **dict.fromkeys(("FORMAT", "FORMAT_VERSION", "Result", "ResultFileError", "read_result",
                                               "write_result"), "results")}

__all__ = ["FORMAT", "FORMAT_VERSION", "Result", "ResultFileError", "WriteOutsideError", "atomic_group", "atomic_open",
           "atomic_path", "complete_commits", "recover_commits",
           "commit_file", "confine_writes", "ensure_inside", "open_hdf5", "remove_stale_temporaries", "read_result", "write_result"]


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'shockflow.storage' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"shockflow.storage.{_LAZY[name]}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
