"""The output directory of a command: checked before any work, watched for what a command wrote.

:func:`prepare_out` creates ``--out`` (or finds it) and proves it is a writable directory before a
command computes anything, so a bad ``--out`` is a bad-input error at once instead of a failed
write after a long run; :func:`missing_directories` / :func:`remove_empty` take the directories it created away
again when the command fails before writing into them (:func:`removed_on_failure`: the same around a block, for
the Python API).  :func:`snapshot` / :func:`written_since` let the command line say truthfully,
after an interruption, which finished files the interrupted command had already written.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["OutDirError", "missing_directories", "prepare_out", "refuse_other_kind", "remove_empty",
           "removed_on_failure", "snapshot", "written_since"]


class OutDirError(ValueError):
    """``--out`` cannot be used: not a directory, not creatable, or not writable."""


def prepare_out(out: str | os.PathLike, *, option: str = "--out") -> Path:
    """Create ``out`` if needed; :class:`OutDirError` naming ``option`` if it is not a writable directory."""
    if not str(out).strip():   # an unset shell variable: not the current directory by accident
        raise OutDirError(f"{option} {str(out)!r}: expected a directory path, found an empty one (use '.' for the "
                          f"current directory)")
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise OutDirError(f"{option} {str(out)!r}: expected a directory, found a file")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutDirError(f"{option} {str(out)!r}: cannot create the directory ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutDirError(f"{option} {str(out)!r}: the directory is not writable")
    return path


def snapshot(directory: str | os.PathLike | None) -> dict[str, tuple[int, int]]:
    """``{name: (size, mtime_ns)}`` of the visible files directly in ``directory`` (empty if it is missing)."""
    if directory is None:
        return {}
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return {}
    found = {}
    for e in entries:
        if e.name.startswith(".") or not e.is_file(follow_symlinks=False):
            continue
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        found[e.name] = (st.st_size, st.st_mtime_ns)
    return found


def written_since(directory, before: dict[str, tuple[int, int]]) -> list[str]:
    """Names of the files in ``directory`` that are new or changed since ``before`` (a :func:`snapshot`)."""
    now = snapshot(directory)
    return sorted(name for name, stamp in now.items() if before.get(name) != stamp)


def missing_directories(out: str | os.PathLike) -> list[Path]:
    """The directories :func:`prepare_out` would create for ``out``: ``out`` and its missing parents, innermost
    first (empty if ``out`` exists)."""
    path, missing = Path(out).absolute(), []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def remove_empty(directories: list[Path]) -> None:
    """Remove ``directories`` (innermost first, :func:`missing_directories`) while they are empty: what a failed
    command created and did not write into is not left behind; a directory with anything in it stays, and so do
    its parents.  The temporaries of processes that ended there go first (the live log of a training run beside
    the prediction, killed with the command: :mod:`shockflow.logs.live`)."""
    from .atomic import remove_stale_temporaries

    for path in directories:
        try:
            remove_stale_temporaries(path)
            path.rmdir()
        except OSError:   # not empty (a file written, or another process's), or gone already
            return


@contextlib.contextmanager
def removed_on_failure(out: str | os.PathLike):
    """Around a block that writes into ``out``: the directories of ``out`` missing on entry
    (:func:`missing_directories`) are removed again, while empty, if the block raises (an error, Ctrl-C); what
    existed before, and a directory anything was written into, stays.  Yields those directories."""
    created = missing_directories(out)
    try:
        yield created
    except BaseException:
        remove_empty(created)
        raise


#: what each shockflow file format is, for the messages of refuse_other_kind
KINDS = {"shockflow-result": "a result file (`run`, `solve`, `forecast`)",
         "shockflow-training-log": "a training log (`train`, or `run`'s -log.h5)"}


def refuse_other_kind(path: str | os.PathLike, format: str, command: str, case=None) -> None:
    """:class:`OutDirError` if ``path`` is a shockflow HDF5 file that ``command`` is about to replace with a file of
    ``format`` and that is not its own earlier output: of another format (``train`` writes its log as ``CASE.h5``, the
    name of ``run``'s result; into one ``--out`` it replaced the run's result), or, where ``case`` is given, written
    for another case (its ``case_name`` or ``case_kind`` differ: a network case named ``A-forecast`` replaced the
    forecast of ``A``, a PDE case named like a network case replaced its run's result).  Checked before any work."""
    from .hdf5 import file_attributes

    found = file_attributes(path, ("format", "case_name", "case_kind"))
    if found is None or not isinstance(found["format"], str) or not found["format"].startswith("shockflow-"):
        return
    held = found["format"]
    where = f"--out {str(Path(path).parent)!r} already holds {Path(path).name!r}, {KINDS.get(held, held)}"
    if held != format:
        raise OutDirError(f"{where}; `{command}` would replace it with {KINDS.get(format, format)}: choose another "
                          f"--out, or move that file")
    if case is None or not isinstance(found["case_name"], str):
        return
    if (found["case_name"], found["case_kind"]) != (case.name, case.kind):
        raise OutDirError(f"{where} of the {found['case_kind']} case {found['case_name']!r}; `{command}` of the "
                          f"{case.kind} case {case.name!r} would replace it: choose another --out, or move that file")
