"""Opening shockflow's HDF5 files for reading, with the file checked before anything is read.

shockflow's HDF5 files mark what they are with two root attributes (docs/training-log.md,
docs/result-file.md)::

    /    attrs: format          a string naming the layout, e.g. "shockflow-result"
                format_version  an integer, raised when the layout changes

:func:`open_hdf5` opens a file read-only and turns each way it can fail to be the file the caller
expects into the caller's own error type, with a message that quotes the path and says what was
expected and what was found:

1. no such file (a directory or a device counts as none) -> ``missing`` (default: ``error``)
2. not an HDF5 file (h5py cannot open it)             -> ``error``
3. root attribute ``format`` absent or not ``format`` -> ``error``      (skipped if ``format=None``)
4. ``format_version`` absent, not an integer, or
   above ``max_version``                              -> ``error``      (skipped if ``max_version=None``)

Older versions (``format_version <= max_version``) are accepted: a reader that knows version n
is expected to read every earlier one.  ``format=None`` serves readers that accept any HDF5
file and look at its contents themselves (e.g. a weight stack of unknown origin).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import h5py

__all__ = ["file_attributes", "file_format", "open_hdf5"]


@contextmanager
def open_hdf5(path: str | os.PathLike, *, format: str | None, kind: str, error: type[Exception],
              missing: type[Exception] | None = None, max_version: int | None = None) -> Iterator[h5py.File]:
    """Open ``path`` read-only as ``kind`` and yield the ``h5py.File``; it is closed on leaving.

    ``format``: the required value of the root attribute ``format`` (None: any HDF5 file).
    ``kind``: what the caller expects, with its article, for the messages ("a shockflow result file").
    ``error``: the exception raised for a file that is not HDF5 or not the expected format;
    ``missing``: the one raised for a missing file (default ``error``).
    ``max_version``: the newest ``format_version`` the caller reads (None: not checked).
    """
    from shockflow.storage.input_files import file_problem

    path = Path(path)
    where = repr(str(path))
    problem = file_problem(path)
    if problem == "no such file":
        raise (missing or error)(f"{where}: no such file (expected {kind})")
    if problem is not None:   # a directory, a device, a pipe
        raise (missing or error)(f"{where} {problem} (expected {kind})")
    try:
        f = h5py.File(path, "r")
    except OSError as exc:
        raise error(f"{where} is not an HDF5 file (expected {kind}; h5py: {exc})") from None
    with f:
        try:
            if format is not None:
                found = f.attrs.get("format")
                if not (isinstance(found, str) and found == format):
                    state = "missing" if found is None else f"{found!r}"
                    raise error(f"{where} is not {kind}: root attribute 'format' is {state}, expected {format!r}")
            if max_version is not None:
                _check_version(f.attrs.get("format_version"), max_version, where, kind, format, error)
            yield f
        except (KeyError, RuntimeError, OSError) as exc:
            if not _damaged(exc):
                raise
            # HDF5 opened the file but cannot read an object in it (zeroed or overwritten bytes): the file's fault,
            # said as such (a tester's damaged header was 'the run failed in ... KeyError: Unable to synchronously
            # open object')
            raise error(f"{where} is damaged: HDF5 cannot read it (expected {kind}; h5py: {exc})") from None


def _damaged(exc: BaseException) -> bool:
    """Whether ``exc`` is h5py's report of an object it cannot read (not a key or path the caller got wrong)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    if "doesn't exist" in text or "not found" in text:   # a name the caller asked for and the file does not hold
        return False
    return text.startswith(("Unable to", "Can't ")) and "(" in text


def _check_version(found, max_version: int, where: str, kind: str, format: str | None,
                   error: type[Exception]) -> None:
    expected = f"an integer format version up to {max_version}"
    if found is None:
        raise error(f"{where} is not {kind}: root attribute 'format_version' is missing, expected {expected}")
    try:
        version = int(found)
    except (TypeError, ValueError):
        raise error(f"{where} is not {kind}: root attribute 'format_version' is {found!r}, "
                    f"expected {expected}") from None
    if version > max_version:
        name = f"{format!r} " if format is not None else ""
        raise error(f"{where}: {name}format version {version} is newer than this shockflow reads "
                    f"(versions up to {max_version})")


def file_attributes(path: str | os.PathLike, names) -> dict | None:
    """The root attributes ``names`` of the HDF5 file at ``path`` (None for one it lacks); None where there is no such
    file or it is no HDF5 file."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        with h5py.File(path, "r") as f:
            return {name: f.attrs.get(name) for name in names}
    except (OSError, KeyError, RuntimeError):   # not HDF5, or damaged where the attributes are
        return None


def file_format(path: str | os.PathLike) -> str | None:
    """The root attribute ``format`` of the HDF5 file at ``path`` (``"shockflow-result"``, ...); None where there is
    no such file, it is no HDF5 file or it has no such attribute."""
    found = file_attributes(path, ("format",))
    return found["format"] if found is not None and isinstance(found["format"], str) else None
